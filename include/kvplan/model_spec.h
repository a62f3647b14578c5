#pragma once
/// What kvplan knows about a model: its layers, each with the cache it keeps, and its weights.
/// Loaders (kvplan spec JSON, Hugging Face config.json, GGUF) all produce this one struct; the
/// budget engine reads nothing else.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvplan/dtype.h"

#include "kvplan/export.h"

namespace kvplan {

/// What one layer keeps per sequence.
enum class LayerKind {
  full,     ///< K and V of every token
  sliding,  ///< K and V of the last `window` tokens
  chunked,  ///< K and V of the tokens in the current chunk of `window` tokens (Llama 4 local layers)
  mla,      ///< one compressed latent per token (kv_lora_rank + qk_rope_head_dim), no separate V
  linear,   ///< a fixed-size recurrent state per sequence (Mamba, Gated DeltaNet, ...), no per-token cache
  none,     ///< no cache at all (e.g. an MTP layer an engine skips)
  shared,   ///< reads the cache of an earlier layer (Gemma 3n / Gemma 4 num_kv_shared_layers): costs nothing
  cross,    ///< K and V of `window` image tokens, whatever the context (Llama 3.2 Vision's cross-attention layers)
};

KVPLAN_API std::string_view to_string(LayerKind kind);

/// A fixed-size tensor a recurrent layer keeps per sequence, e.g. Mamba's conv or SSM state.
struct StateTensor {
  std::string name;            ///< "conv" or "ssm" / "recurrent": printed in the breakdown
  std::uint64_t elements = 0;  ///< per sequence per layer
  const Dtype* dtype = nullptr;  ///< stored at its own dtype, not the KV cache dtype
  /// How tensor parallelism splits it, as the engines' state-shape rules do: its `shards` (heads,
  /// or channels) are divided over the ranks, each holding elements / TP; of `elements`,
  /// `group_elements` belong to `groups` groups (Mamba2's B and C projections), which the ranks
  /// replicate up to the TP size where the groups do not divide it. shards 0: not stated (a plan
  /// across several ranks is refused).
  std::uint64_t shards = 0;
  std::uint64_t groups = 0;
  std::uint64_t group_elements = 0;
};

struct LayerSpec {
  LayerKind kind = LayerKind::full;
  /// Cached heads and their widths. For MLA: one "head" of kv_lora_rank + qk_rope_head_dim, v = 0.
  std::uint32_t kv_heads = 0;
  std::uint32_t k_head_dim = 0;
  std::uint32_t v_head_dim = 0;
  /// MLA only: the rotary part of k_head_dim (k_head_dim = kv_lora_rank + this).
  std::uint32_t mla_rope_dim = 0;
  /// DSA lightning indexer (DeepSeek-V3.2, GLM-5): one key of this many values per token beside
  /// the layer's own cache, stored at the K cache dtype in the generic profile; 0 = no indexer.
  std::uint32_t index_head_dim = 0;
  /// DeepSeek-V4 (llama.cpp's deepseek4): besides its window, the layer keeps one K entry per this
  /// many tokens of the whole context: 4 (CSA, whose layers carry the indexer key above at the same
  /// ratio) or 128 (HCA); 0 = no compressed cache. Only the llama.cpp profile sizes it.
  std::uint32_t compress_ratio = 0;
  /// Tokens held by a sliding or chunked layer; the image tokens a cross layer holds.
  std::uint64_t window = 0;
  /// Fixed state of a linear layer; also of an attention layer in a parallel hybrid (Falcon-H1).
  std::vector<StateTensor> state;

  /// Elements of K plus V (and the indexer key) cached per token (0 for linear, none and shared layers).
  std::uint64_t elements_per_token() const;
};

/// A part of a multimodal checkpoint beside its language model: a vision or audio tower, or the
/// projector from it into the language model. Counted from the config's vision_config /
/// audio_config by the tensors its modelling code creates.
struct ModelPart {
  std::string name;             ///< "vision tower", "projector", "audio tower"
  std::uint64_t params = 0;     ///< 0: present in the config but not counted by kvplan
  std::uint64_t bytes = 0;      ///< stored at the checkpoint's own dtype (towers are not quantized)
};

/// The rotary position embedding of the attention layers, as the config states it: what an engine
/// that precomputes a cos/sin table per distinct rope sizes it by (vLLM's `cos_sin_cache`). The
/// table's positions follow from `type`, `factor_millionths`, `original_positions` and the model's
/// `max_context` by the engine's own rule; a loader only records the config.
struct RotarySpec {
  /// rope_scaling's `rope_type` (or `type`): "default" when unscaled, else "linear", "llama3",
  /// "yarn", "dynamic", "longrope", ... as the config spells it.
  std::string type = "default";
  std::uint64_t factor_millionths = 1'000'000;  ///< rope_scaling's `factor` x 10^6 (1.0 when none)
  std::uint64_t original_positions = 0;  ///< original_max_position_embeddings; 0 when not stated
  std::uint32_t rotary_dim = 0;          ///< the rotated width: head_dim x partial_rotary_factor (MLA: qk_rope_head_dim)
  /// The sliding layers have a rope of their own (Gemma 3's rope_local_base_freq, an unscaled rope
  /// of another base): a second, unscaled table of max_context positions.
  bool local = false;
};

/// One weight tensor of a model file, with the layer it belongs to: what places weights layer by
/// layer (llama.cpp's -ngl) and sizes a memory-mapped file exactly.
struct ModelFileTensor {
  static constexpr std::int32_t input = -1;   ///< token embeddings
  static constexpr std::int32_t output = -2;  ///< output head and final norm
  std::int32_t layer = output;  ///< block index (blk.N), or input / output
  std::uint32_t file = 0;       ///< split part holding the data
  std::uint64_t offset = 0;     ///< of the data within its part's data section
  std::uint64_t bytes = 0;
};

/// What a model file says beyond the layers (a GGUF file's tensors and widths).
struct ModelFile {
  std::uint64_t n_embd = 0;    ///< hidden width
  std::uint64_t n_ff_max = 0;  ///< widest feed-forward
  std::vector<ModelFileTensor> tensors;
  bool output_tied = false;            ///< no output tensor: the output layer reuses the token embeddings
  std::uint64_t token_embd_bytes = 0;  ///< size of the token embeddings
  /// Tensors of a vision tower stored in the same file (an Ollama blob's v.*), which llama.cpp does
  /// not load from it; 0 when none.
  std::uint64_t vision_bytes = 0;
  std::vector<std::string> notes;      ///< how the file's keys were read, in words
  /// Layers without K/V heads that llama.cpp still gives a cache slot of width 0 (deci's linear-
  /// and no-attention layers): with V stored transposed, their V rows are padded like any other.
  /// The spec's layer is LayerKind::none for every other engine.
  std::vector<std::uint32_t> empty_kv_layers;
};

/// The most layers and state tensors a spec may have, from any input: real models have under 200
/// layers and two or three state tensors a layer; beyond these an input is refused (exit 2) before
/// anything is allocated for it (docs/hardening.md, "Limits").
inline constexpr std::uint64_t kMaxLayers = 4096;
inline constexpr std::uint64_t kMaxStateTensors = 16;
/// The most experts a token may be routed to, and the widest a routed expert may be: far beyond
/// any model (22 experts, 16,384 wide), and small enough that the buffers engines size from them
/// stay far inside 64 bits.
inline constexpr std::uint64_t kMaxExpertsPerToken = 1024;
inline constexpr std::uint64_t kMaxExpertWidth = std::uint64_t{1} << 24;

/// The routed experts of a mixture-of-experts model, as one token passes through them: how many
/// experts it is routed to, their input width (the hidden size, or a latent width) and their
/// intermediate width. Engines size the buffers of their fused MoE kernels from these.
struct RoutedExperts {
  std::uint32_t per_token = 0;      ///< experts a token is routed to (num_experts_per_tok)
  std::uint64_t input_width = 0;    ///< the width each expert reads and writes
  std::uint64_t intermediate = 0;   ///< one expert's intermediate width (moe_intermediate_size)
  bool gated = true;                ///< gate and up projections (3 matrices), else up and down (2)
  bool operator==(const RoutedExperts&) const = default;
};

/// Whether a routed-expert shape is one the spec format states: 1 to kMaxExpertsPerToken experts a
/// token, widths 1 to kMaxExpertWidth.
inline bool routed_experts_in_bounds(std::uint64_t per_token, std::uint64_t input_width, std::uint64_t intermediate) {
  return per_token != 0 && per_token <= kMaxExpertsPerToken && input_width != 0 && input_width <= kMaxExpertWidth &&
         intermediate != 0 && intermediate <= kMaxExpertWidth;
}

struct ModelSpec {
  std::string id;       ///< catalog id or file path it came from
  std::string name;     ///< human name, "Llama 3.1 8B"
  std::vector<std::string> aliases;
  std::string source;   ///< where the figures came from (URL or file)
  std::string architecture;  ///< Hugging Face model_type or GGUF general.architecture, when known

  std::uint32_t attention_heads = 0;
  std::uint64_t params = 0;         ///< the language model's parameters (all experts for MoE); parts aside
  std::uint64_t active_params = 0;  ///< per token, for MoE; 0 when the same as params
  const Dtype* weight_dtype = nullptr;
  /// The KV-cache quantization the checkpoint declares (NVIDIA ModelOpt's kv_cache_quant_algo or
  /// kv_cache_scheme: fp8, nvfp4), with scales for it: what TensorRT-LLM caches at when its KV
  /// dtype is auto. Null when it declares none.
  const Dtype* checkpoint_kv_dtype = nullptr;
  /// Exact checkpoint size when known (e.g. safetensors total_size); otherwise params x dtype,
  /// plus the parts' bytes.
  std::optional<std::uint64_t> weights_bytes;
  /// The checkpoint's parts beside the language model (vision / audio towers, projectors), in
  /// weights_bytes, not in params. Empty for a text-only model (or with --text-only).
  std::vector<ModelPart> parts;
  /// A multimodal checkpoint's vision encoder as its config.json's vision_config states it
  /// (num_hidden_layers, hidden_size; 0 where it does not say); empty without a vision_config.
  /// Kept when --text-only takes the towers' weights out: an engine still sees a multimodal model
  /// (SGLang lowers its default memory fraction by the encoder's size).
  struct VisionEncoder {
    std::uint64_t layers = 0;
    std::uint64_t hidden_size = 0;
    bool operator==(const VisionEncoder&) const = default;
  };
  std::optional<VisionEncoder> vision_encoder;
  /// How weights_bytes was obtained, in words ("safetensors total_size", "sum of GGUF tensors").
  /// "estimate: ..." marks figures that are not exact (a vendor's rounded count).
  std::string weights_source;
  /// Where `params` came from when not from the model's own files ("--params 32.5B, given").
  std::string params_source;
  /// Weight bytes of each decoder layer, when the file says (GGUF); empty otherwise. What is not
  /// in a layer (embeddings, output head, final norm) is weights_bytes minus their sum.
  std::vector<std::uint64_t> layer_weights_bytes;
  /// Multi-token-prediction layers beyond `layers` (DeepSeek-V3's num_nextn_predict_layers).
  /// Engines skip them unless speculative decoding uses them; they are not in `layers`.
  std::uint32_t mtp_layers = 0;
  /// The MTP layers' weights as the checkpoint stores them (each with its copies of the embedding
  /// and output head), priced like weights_bytes and not in it; nullopt when kvplan did not count
  /// them. An engine that drafts with these layers (SGLang's NEXTN) loads them beside the target.
  std::optional<std::uint64_t> mtp_weights_bytes;
  /// Of mtp_weights_bytes, what each tensor-parallel rank holds whole: the eh_proj projections
  /// (2 x hidden -> hidden), which vLLM and SGLang build as a plain nn.Linear. 0 when not counted.
  std::uint64_t mtp_replicated_bytes = 0;
  std::uint64_t max_context = 0;    ///< 0 when unknown
  std::uint64_t vocab_size = 0;  ///< rows of the output head (logits per token); 0 = unknown
  /// The widths a weight format prices tensor by tensor (`--weight-dtype q4_k_m`, awq, nvfp4): the
  /// hidden width, the dense MLP's intermediate width (0 for MoE and hybrids) and the embedding and
  /// output head parameters (lm_head 0 when tied). 0 = unknown: such formats are then refused.
  std::uint64_t hidden_size = 0;
  std::uint64_t intermediate_size = 0;
  std::uint64_t embedding_params = 0;
  std::uint64_t lm_head_params = 0;

  /// The routed-expert block of a MoE model (the widest, when layers differ); nullopt for a dense
  /// model, or one whose input does not say.
  std::optional<RoutedExperts> routed_experts;

  std::vector<LayerSpec> layers;    ///< in model order, one per decoder layer
  /// The rotary embedding, when the config states one (rope_theta, rope_scaling or rope_parameters);
  /// nullopt for models without one, or whose input does not say (GGUF, spec files without it).
  std::optional<RotarySpec> rope;

  /// The model file's own layout, when it came from one that has it (GGUF); null otherwise.
  std::shared_ptr<const ModelFile> file;

  std::uint32_t layer_count() const { return static_cast<std::uint32_t>(layers.size()); }
};

/// Throws an Error naming the first field that makes `spec` unusable: zero layers or heads,
/// heads not divisible by KV heads, missing dtype, a window of zero, ...
KVPLAN_API void validate(const ModelSpec& spec);

/// "32 full" or "40 sliding(1024) + 8 full": the layer layout in one phrase.
KVPLAN_API std::string describe_layers(const ModelSpec& spec);

/// The layer an MTP layer is counted as when speculative decoding caches it (--mtp-layers): the
/// model's last full-attention or MLA layer (the kind that grows with the context), else its last
/// layer that holds tokens; nullptr when no layer holds tokens.
KVPLAN_API const LayerSpec* mtp_cache_layer(const ModelSpec& spec);

/// The bytes of the parts beside the language model (0 for a text-only model).
std::uint64_t parts_bytes(const ModelSpec& spec);

/// The MTP layers' weights on one of `tensor_parallel` ranks: the replicated eh_proj whole, the rest
/// split evenly (rounded up); nullopt when the spec does not count them.
KVPLAN_API std::optional<std::uint64_t> mtp_weights_per_rank(const ModelSpec& spec, std::uint32_t tensor_parallel);

/// True when the spec's weights are an estimate (weights_source starts with "estimate:").
KVPLAN_API bool weights_are_estimate(const ModelSpec& spec);

/// True when the user gave the weights' size (--weights: weights_source says "(given: ...)").
KVPLAN_API bool weights_are_given(const ModelSpec& spec);

/// True when the spec's weights are a quantized Hugging Face checkpoint, sized from its
/// quantization_config or safetensors index (weights_source "computed (...)" or "safetensors
/// total_size") in a format GGUF has no type for as is (fp8, int8, int4, nvfp4; not mxfp4, which
/// gpt-oss's GGUF files keep): what a GGUF runtime cannot load without converting it.
KVPLAN_API bool weights_are_quantized_safetensors(const ModelSpec& spec);

/// The MTP layers `--mtp-layers` asks to count as cached: "" or "0" none, "all" every one the model
/// declares, N at most that many. Throws an Error naming `flag` otherwise.
KVPLAN_API std::uint32_t resolve_mtp_layers(std::string_view text, const ModelSpec& spec, std::string_view flag = "--mtp-layers");

/// True when every layer is full attention with the same heads and widths: the plain
/// 2 x layers x kv_heads x head_dim formula is exact for it.
KVPLAN_API bool is_uniform_full_attention(const ModelSpec& spec);

/// A speculative-decoding draft checkpoint (an EAGLE-3 head, a draft model), as a loader read it.
struct DraftModel {
  ModelSpec spec;
  /// Whether the checkpoint stores token embeddings (embed_tokens) and an output head (lm_head) of
  /// its own, from its safetensors' tensor names; nullopt when no safetensors were read. An engine
  /// may share the target's in their place.
  std::optional<bool> stores_embeddings;
  std::optional<bool> stores_lm_head;
};

}  // namespace kvplan
