#pragma once
// The tensor blocks several families share (attention, gated MLPs, routed experts, MLA, Mamba2),
// each counted as transformers' modelling code creates it, and the sum every counter ends with.
// Norm weights are vectors of their width; biases count only where the module is built with
// bias=True. Internal to the architecture registry.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "kvplan/units.h"
#include "loaders/architecture.h"
#include "loaders/config_fields.h"
#include "loaders/param_count.h"

namespace kvplan::arch {

/// The product of `factors`, or an Error naming `what` when it passes 2^64.
u64 product(std::initializer_list<u64> factors, std::string_view what);

/// Running sum that names what it was adding when it overflows.
struct Sum {
  u64 value = 0;
  void add(u64 term, std::string_view what);
};

/// One layer as a family's counter adds it up: what the quantization rules read of it
/// (LayerCount: its parameters, routed experts, router, vectors, attention, shared experts), and
/// beside that what the totals need, the routed-expert parameters a token does not use and the
/// routed-expert block's shape. Families leave vectors, attention and shared at 0 where they do
/// not count them apart (their norms are then priced with the matrices, docs/limits.md).
struct LayerParams : LayerCount {
  u64 inactive = 0;
  std::optional<RoutedExperts> routed;  ///< the routed-expert block's shape, for MoE layers
};

/// A layer of `params` parameters without routed experts, counted whole.
LayerParams layer_of(u64 params);

/// What a family's counter adds up beside the embedding and the output head.
struct Counted {
  std::vector<LayerParams> layers;
  u64 final_norm = 0;   ///< the final norm's parameters (hidden for an RMSNorm, 2 hidden with a bias)
  u64 model_extra = 0;  ///< other tensors beside the layers (per-layer embedding tables, position tables)
  std::string extra_note;  ///< what model_extra is, for the notes ("" = per-layer embeddings / projections)
  u64 head_bias = 0;    ///< lm_head.bias (Phi-2)
  u64 experts = 0;      ///< routed experts per MoE layer, for the notes
  u64 top_k = 0;
};

/// The count's start: the input embedding of `rows` x hidden (rows 0 = vocab_size) and the output
/// head unless tied (tie_word_embeddings, else the model_type's default, noted). Computed first, so
/// that an absurd vocabulary is named as the embedding that overflows.
ParamCount start_count(ConfigFields& fields, const Layout& layout, u64 rows = 0);

/// Adds the layers and the rest to `count`: total, active (total minus the idle experts), expert
/// matrices, notes.
void finish_count(ParamCount& count, ConfigFields& fields, const Counted& counted);

/// The attention block of one layer, q_proj, k_proj, v_proj, o_proj, and what families add.
struct Attention {
  bool qkv_bias = false;   ///< biases on q, k and v
  bool o_bias = false;     ///< bias on o_proj
  u64 q_multiplier = 1;    ///< 2: an output gate doubles q_proj (Qwen3-Next, Qwen3.5 attn_output_gate)
  u64 qk_norm = 0;         ///< q/k norm weights (2 x head_dim per head, or the full widths)
  bool sinks = false;      ///< a learned sink logit per head (gpt-oss)
};
/// `shapes`, when given, receives q_proj, k_proj, v_proj and o_proj as Block::attention.
u64 attention_params(const Layout& layout, const LayerPlan& layer, const Attention& attention,
                     std::vector<MatrixShape>* shapes = nullptr);
/// Of attention_params, the vectors: biases, q/k norms, sinks.
u64 attention_vectors(const Layout& layout, const LayerPlan& layer, const Attention& attention);

/// q, k, v and o projections of grouped-query attention with K width `k_dim` and V width `v_dim`
/// (o_proj reads heads x v_dim); `k_and_v` false drops k and v (Gemma 4's KV-shared layers),
/// `separate_v` false drops v alone (Gemma 4's K=V global layers).
u64 gqa_params(u64 hidden, u64 heads, u64 kv_heads, u64 k_dim, u64 v_dim, bool k_and_v = true, bool separate_v = true);

/// A gated MLP (gate_proj, up_proj, down_proj: 3 x H x I), or a two-matrix one (up and down, or
/// fc1 and fc2); `bias` adds each projection's bias.
u64 mlp_params(u64 hidden, u64 intermediate, bool gated, bool bias);
/// Of mlp_params, the biases.
u64 mlp_vectors(u64 hidden, u64 intermediate, bool gated, bool bias);
/// The weight matrices of `copies` such MLPs (gate and up: intermediate x hidden, down: hidden x
/// intermediate), added to `shapes` as `block`.
void add_mlp_shapes(std::vector<MatrixShape>& shapes, u64 hidden, u64 intermediate, bool gated, Block block, u64 copies = 1);

/// A routed-expert block: `experts` gated MLPs of width `intermediate` (3 matrices each) on
/// `width`-wide inputs, of which `top_k` run per token; `always` is what every token uses beside
/// them (router, biases, shared experts). `matrices` 2: two-matrix experts. The experts' shapes
/// are recorded in the layer.
LayerParams moe_layer(u64 experts, u64 top_k, u64 width, u64 intermediate, u64 always, u64 matrices = 3);

/// The shape of a routed-expert block, for ParamCount::routed_experts.
RoutedExperts routed_experts(u64 top_k, u64 width, u64 intermediate, bool gated);

/// A layer of `params` beside an optional routed-expert block.
LayerParams plus(LayerParams moe, u64 params);

/// A decoder whose every layer is attention, a dense MLP and its norms: Llama and its descendants.
struct DenseDecoder {
  Attention attention;
  u64 intermediate = 0;  ///< MLP width
  bool gated = true;     ///< gate, up, down (else up and down, or fc1 and fc2)
  bool mlp_bias = false;
  u64 layer_norms = 0;   ///< norm parameters per layer (2 x hidden for two RMSNorms)
  u64 layer_extra = 0;   ///< other per-layer parameters (Apertus's xIELU scalars)
};
/// Its layers; an unsupported-architecture Error names a layer that does not attend.
Counted dense_decoder(const Layout& layout, const DenseDecoder& decoder);

/// Of an MLA block, what quantization lists name apart: its vectors (q_a_layernorm,
/// kv_a_layernorm, with attention_bias the biases), no scheme quantizes, and its output
/// projection, which NVIDIA's DeepSeek-V3.1 NVFP4 quantizes while keeping the others.
struct MlaParts {
  u64 vectors = 0;
  u64 o_proj = 0;
  std::vector<MatrixShape> shapes;  ///< its projections, o_proj as Block::mla_o_proj
};

/// Of a DSA indexer: k_norm's weight and bias (vectors), and weights_proj (H x n heads), which
/// checkpoints keep at the model dtype (DeepSeek-V3.2's builds it so; GLM-5's FP8 lists it).
struct IndexerParts {
  u64 vectors = 0;
  u64 weights_proj = 0;
  std::vector<MatrixShape> shapes;  ///< wq_b and wk (Block::indexer); weights_proj is not quantized
};

/// DeepSeek multi-head latent attention (DeepseekV2Attention / DeepseekV3Attention):
///   q_lora_rank set:  q_a_proj H x q_lora, q_a_layernorm q_lora, q_b_proj q_lora x heads*(nope+rope)
///   q_lora_rank null: q_proj H x heads*(nope+rope)
///   kv_a_proj_with_mqa H x (kv_lora + rope), kv_a_layernorm kv_lora,
///   kv_b_proj kv_lora x heads*(nope + v), o_proj heads*v x H.
/// attention_bias adds biases to q_a_proj (or q_proj), kv_a_proj_with_mqa and o_proj.
/// `v_default`: v_head_dim when the config leaves it out (MiniMax3: hidden / heads).
/// `parts`, when given, receives what quantization lists treat apart.
u64 mla_params(ConfigFields& fields, u64 hidden, std::optional<u64> v_default = std::nullopt, MlaParts* parts = nullptr);

/// DeepSeek-V3.2's sparse-attention indexer (DeepseekV32Indexer; GLM-5's GlmMoeDsaIndexer is the
/// same module): wq_b q_lora x n*d, wk H x d, k_norm (LayerNorm) weight + bias d each, weights_proj H x n.
/// `parts`, when given, receives k_norm's 2 x d and weights_proj's H x n.
u64 indexer_params(ConfigFields& fields, u64 hidden, IndexerParts* parts = nullptr);

/// A Mamba2 mixer's shapes: d_inner, conv_dim = d_inner + 2 groups state, its heads.
struct Mamba2Shape {
  u64 d_inner = 0;
  u64 groups = 0;
  u64 state = 0;
  u64 heads = 0;
  u64 conv_kernel = 0;
  bool proj_bias = false;   ///< in_proj (and out_proj) bias
  bool out_bias = false;    ///< out_proj bias (Falcon-H1's projectors_bias)
  bool conv_bias = true;
  bool gated_norm = true;   ///< the gated RMSNorm over d_inner (Falcon-H1: only with mamba_rms_norm)
};
/// in_proj H x (d_inner + conv_dim + heads), depthwise conv1d conv_dim x kernel (+ bias), dt_bias,
/// A_log, D (heads each), the gated norm d_inner, out_proj d_inner x H.
u64 mamba2_params(u64 hidden, const Mamba2Shape& shape);

/// Qwen3-Next Gated DeltaNet (Qwen3NextGatedDeltaNet; Qwen3.5 splits the same projections into
/// in_proj_qkv/in_proj_z/in_proj_b/in_proj_a): key_dim = nk*dk, value_dim = nv*dv;
///   in_proj_qkvz H x (2 key_dim + 2 value_dim), in_proj_ba H x 2 nv,
///   conv1d depthwise (2 key_dim + value_dim) x kernel without bias, dt_bias nv, A_log nv,
///   norm (gated RMSNorm) dv, out_proj value_dim x H.
u64 gated_deltanet_params(ConfigFields& fields, u64 hidden);

/// The Mamba2 state a layer keeps per sequence (vLLM mamba2_state_shape): conv (d_conv - 1) x
/// (d_inner + 2 n_groups d_state) at the model dtype, ssm heads x head_dim x d_state at `ssm`.
std::vector<StateTensor> mamba2_state(u64 d_inner, u64 groups, u64 state, u64 heads, u64 head_dim, u64 d_conv,
                                      const Dtype& dtype, const Dtype& ssm);

/// The Mamba2 state of NemotronH, Granite 4.0-H, Falcon-H1 and Bamba, whose configs spell the same
/// sizes differently (NemotronH: mamba_num_heads, mamba_head_dim, n_groups, ssm_state_size,
/// conv_kernel; the others mamba_n_heads, mamba_d_head, mamba_n_groups, mamba_d_state,
/// mamba_d_conv); d_inner is mamba_d_ssm when given. The ssm state at mamba_ssm_cache_dtype /
/// mamba_ssm_dtype when the config names one, else `ssm_fallback`.
std::vector<StateTensor> mamba2_config_state(ConfigFields& fields, const Dtype& dtype, const Dtype& ssm_fallback);

/// The dtype a recurrent state is kept in: the config's own field when it names one, else `fallback`.
const Dtype& state_dtype(ConfigFields& fields, std::initializer_list<const char*> keys, const Dtype& fallback);

/// A reader of one nested block of config.json (vision_config, audio_config); nullopt when the
/// config has none. Its errors name "<origin>: <key>: field ...".
std::optional<ConfigFields> nested_fields(ConfigFields& fields, const char* key);

/// A transformer layer of a vision encoder as CLIP, SigLIP and Llama 4 build it: q, k, v, o of
/// h x h with biases, two LayerNorms with biases, fc1 h x i + i and fc2 i x h + h.
u64 vit_layer_params(u64 hidden, u64 intermediate);

/// CLIP's vision transformer (CLIPVisionModel): class_embedding h, patch_embedding h x C x p x p
/// (no bias), position_embedding ((image / p)^2 + 1) x h, pre_layrnorm, num_hidden_layers ViT
/// layers, post_layernorm. num_channels defaults to 3.
u64 clip_vision_params(ConfigFields& vision);

/// SigLIP's (SiglipVisionModel): patch_embedding with bias, position_embedding (image / p)^2 x h,
/// the ViT layers, post_layernorm, and with vision_use_head (default true) the attention-pooling
/// head: probe h, in_proj 3h x h + 3h, out_proj h x h + h, a LayerNorm and an fc1 / fc2 MLP.
u64 siglip_vision_params(ConfigFields& vision);

/// The attention geometry a counter relies on: KV heads and head widths of at least 1, and without
/// an explicit head_dim, a hidden_size that num_attention_heads divides.
void check_attention(ConfigFields& fields, const Layout& layout);

/// The decoder layers of an EAGLE draft head of Llama's layout (SGLang's LlamaForCausalLMEagle,
/// vLLM's Eagle3LlamaForCausalLM): per layer the attention (biases with attention_bias), a gated
/// MLP (+ mlp_bias), and `norms(i)` parameters of norms for layer i; `extra(i)` what layer i adds
/// (EAGLE-3's wider first q/k/v). A layer that does not attend fails naming num_hidden_layers.
Counted eagle_draft_layers(ConfigFields& fields, const Layout& layout, u64 (*norms)(const Layout&, std::size_t),
                           u64 (*extra)(const Layout&, std::size_t) = nullptr);

/// The unsupported-architecture Error for a model_type of a family that does not count it.
[[noreturn]] void not_counted(ConfigFields& fields);

}  // namespace kvplan::arch
