#pragma once
// The architecture registry: what kvplan knows about each model family of Hugging Face
// config.json, keyed by model_type. One file per family under src/loaders/arch/ defines a Family
// (the registry is generated from that folder: a new file is all it takes); its config fields and
// their spellings, its layer layout, its cache kinds, its parameter count and the real config it is
// tested on. The layout is read once (read_layout) and shared by the cache reader (hf_config.cpp)
// and the counter. Internal to kvplan's loaders.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/model_spec.h"
#include "loaders/config_fields.h"
#include "loaders/param_count.h"

namespace kvplan::arch {

using u64 = std::uint64_t;

/// One decoder layer as the config describes it.
struct LayerPlan {
  LayerKind kind = LayerKind::full;  ///< full, sliding, chunked, mla, linear or none (sharing: kv_shared)
  bool kv_shared = false;            ///< reads an earlier layer's cache (Gemma 3n / Gemma 4 num_kv_shared_layers)
  std::string block;                 ///< the config's own word for the layer ("mamba", "moe", "conv"), "" when none
  u64 kv_heads = 0;                  ///< attention layers: the heads the cache keeps
  u64 k_dim = 0;                     ///< attention layers: K width per head
  u64 v_dim = 0;                     ///< attention layers: V width per head
  u64 window = 0;                    ///< sliding / chunked layers: tokens held (0 = the config gives none)
  u64 index_head_dim = 0;            ///< DSA lightning-indexer key width (0 = no indexer)

  LayerKind cache_kind() const { return kv_shared ? LayerKind::shared : kind; }
  bool attends() const { return kind == LayerKind::full || kind == LayerKind::sliding || kind == LayerKind::chunked; }
};

/// The layer layout and attention geometry, read once from the config.
struct Layout {
  u64 hidden = 0;
  u64 heads = 0;               ///< query heads
  u64 head_dim = 0;            ///< head_dim, else the config class default, else hidden / heads
  bool head_dim_stated = false;  ///< head_dim (or a class default) rather than hidden / heads
  u64 mla_rank = 0;            ///< MLA: kv_lora_rank (0 = no MLA)
  u64 mla_rope = 0;            ///< MLA: qk_rope_head_dim
  bool state_on_every_layer = false;  ///< parallel hybrids (Falcon-H1): attention and state in every layer
  std::vector<LayerPlan> layers;

  u64 count() const { return layers.size(); }
  bool any(LayerKind kind) const;
};

/// One model_type a family reads, with the defaults its config class gives.
struct ModelType {
  std::string_view name;
  bool ties = false;            ///< tie_word_embeddings when the config leaves it out
  std::string_view note = {};   ///< e.g. "original remote-code spelling of hunyuan_v1_moe"
  bool cache_only = false;      ///< the family sizes its cache but does not count its parameters
};

/// Another spelling of a standard field: transformers' attribute_map or a remote-code name.
struct Spelling {
  std::string_view field;  ///< the standard name ("num_hidden_layers")
  std::string_view other;  ///< this family's ("n_layer")
};

/// A value a config class gives a field that official config.json files may leave out.
struct FieldDefault {
  std::string_view model_type;  ///< "" = every type of the family
  std::string_view field;
  u64 value;
  /// Only in a multimodal wrapper's text_config (LlavaConfig builds it from LlamaConfig's
  /// defaults); a top-level config without the field stays an error.
  bool nested_only = false;
};

/// Everything kvplan knows about one model family.
struct Family {
  std::string_view name;                  ///< the file's name under src/loaders/arch/
  std::vector<ModelType> types;           ///< model_type values, aliases included
  std::string_view gguf;                  ///< llama.cpp's general.architecture for it
  std::vector<std::string_view> fixtures;  ///< tests/fixtures/hf/<id> it is tested on
  std::string_view rules;                 ///< what kvplan reads and how, in words (docs/architectures.md)
  std::string_view unverified;            ///< what no published figure confirms ("" = nothing)
  std::vector<Spelling> spellings;
  std::vector<FieldDefault> defaults;
  bool state_on_every_layer = false;      ///< every layer keeps the linear state beside its attention
  /// The kinds when the config lists none: the config class's own default layout. Returns false to
  /// leave the standard rules (sliding_window on every layer, Qwen's use_sliding_window) in charge.
  bool (*default_kinds)(ConfigFields&, Layout&) = nullptr;
  /// The KV heads of the attention layers by the family's own rule (Falcon's multi_query).
  std::optional<u64> (*kv_heads)(ConfigFields&, const Layout&) = nullptr;
  /// After the standard reading: the family's own cache fields (DeepSeek's DSA indexer keys in
  /// LayerPlan::index_head_dim, refusals such as Hunyuan's use_cla, fields read only to be known).
  void (*finish_layout)(ConfigFields&, Layout&) = nullptr;
  /// The fixed state one linear layer keeps per sequence.
  std::vector<StateTensor> (*linear_state)(ConfigFields&, const Layout&, const Dtype& model_dtype) = nullptr;
  /// Every parameter of the language model its modelling code creates; null: not counted.
  ParamCount (*count)(ConfigFields&, const Layout&) = nullptr;
  /// model_type values of the multimodal wrappers (the top level of config.json) whose towers the
  /// family counts: gemma3, llava, qwen2_vl, ...
  std::vector<std::string_view> wrappers = {};
  /// The text_config's model_type when a wrapper's config.json leaves it out, as the wrapper's
  /// config class assumes it (KimiVLConfig builds a DeepseekV3Config from the bare dict).
  std::string_view wrapper_text_type = {};
  /// The parts beside the language model, counted from vision_config (and audio_config) by the
  /// tensors their modelling code creates; `fields` reads the whole config.json, `layout` is the
  /// language model's. Bytes are filled in by the caller.
  std::vector<ModelPart> (*towers)(ConfigFields& fields, const Layout& layout) = nullptr;
  /// A draft head's parts beside its decoder layers, counted at the model dtype (EAGLE-3's fc,
  /// which reads the target's hidden states and which every tensor-parallel rank holds whole).
  std::vector<ModelPart> (*draft_parts)(ConfigFields& fields, const Layout& layout) = nullptr;

  const ModelType* type(std::string_view model_type) const;
};

/// Every registered family (generated from src/loaders/arch/*.cpp), in file-name order.
std::span<const Family* const> families();

/// The family reading `model_type`; nullptr for one kvplan does not know.
const Family* find_family(std::string_view model_type);

/// The family counting the towers of the multimodal wrapper `model_type`; nullptr when none does.
const Family* find_wrapper(std::string_view model_type);

/// The language model's model_type (text_config's, else the top level's), or an Error.
std::string language_model_type(ConfigFields& fields);

/// Reads the layout: the layer count, every layer's kind from the first layout spelling the config
/// uses (the family's default layout when it lists none), KV sharing, head shapes, MLA and the
/// DSA indexer. Throws an Error naming the field, and an unsupported-architecture Error (exit 3)
/// for a layer kind kvplan does not know.
Layout read_layout(ConfigFields& fields);

/// The registry as Markdown (`kvplan models --architectures`, docs/architectures.md): every
/// model_type with its family, llama.cpp's name and the fixtures it is tested on, then each
/// family's rules and what is unverified.
std::string architectures_markdown();

/// Spellings of `layer_types` entries across model families; nullopt for one kvplan does not know.
std::optional<LayerKind> kind_from_layer_type(const std::string& type);

}  // namespace kvplan::arch
