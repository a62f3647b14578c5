#pragma once
/// llama.cpp's quantizer mixes: which ggml type each tensor of a model gets when `llama-quantize`
/// writes a GGUF of a named ftype (Q4_K_M, Q8_0, IQ4_XS, ...). The rules are llama.cpp's
/// `llama_tensor_get_type_impl` and `tensor_type_fallback` (src/llama-quant.cpp) for models with
/// at most one expert per layer; the sizes are ggml's blocks (model/ggml_type.h). Shared by the
/// Ollama tags (a blob's tensors) and `--weight-dtype q4_k_m` (any dense decoder's tensors).

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kvplan/model_spec.h"

namespace kvplan {

/// The ftypes kvplan prices (llama.cpp's LLAMA_FTYPE_MOSTLY_*).
enum class GgufMix { f16, q8_0, q6_k, q5_k_m, q5_k_s, q4_k_m, q4_k_s, q3_k_l, q3_k_m, q3_k_s, q2_k, q5_1, q5_0, q4_1, q4_0,
                     iq4_xs, iq4_nl };

struct GgufMixInfo {
  std::string_view name;          ///< as users type it: "q4_k_m"
  GgufMix mix = GgufMix::q8_0;
  std::string_view default_type;  ///< the ggml type of the tensors no rule raises: "q4_K"
};

/// Every mix, in the order of the table (f16 first).
std::span<const GgufMixInfo> gguf_mixes();
/// The mix named `name` case-insensitively ("Q4_K_M", "q4_k_m"), or nullptr.
const GgufMixInfo* find_gguf_mix(std::string_view name);

/// What a tensor is, for the quantizer's choice.
enum class MixRole { f32, matrix, attn_v, attn_output, ffn_down, output, token_embd };

/// One tensor as llama.cpp lays it out: `ne0` values a row (the row length the blocks divide), `rows` rows.
struct MixTensor {
  std::int32_t layer = ModelFileTensor::output;
  MixRole role = MixRole::matrix;
  std::uint64_t ne0 = 0;
  std::uint64_t rows = 1;
};

/// The model-wide facts the rules read.
struct MixModel {
  std::uint64_t n_layer = 0;
  bool tied = false;     ///< no output.weight: token_embd is quantized as the output head
  bool is_70b = false;   ///< llama.cpp's LLM_TYPE_70B: attn_v one step up from q3_K / q4_K
  std::uint64_t n_gqa = 1;  ///< attention heads per KV head (hparams.n_gqa())
};

/// The ggml type llama-quantize gives `tensor` under `mix`, after the fallback for rows that are
/// not a whole number of blocks. Where llama.cpp's choice depends on an importance matrix the
/// larger choice is taken (q4_0 / q5_0: with one; iq4_xs / iq4_nl: without). Throws an
/// unsupported-architecture Error for a row llama.cpp cannot quantize.
std::string_view gguf_mix_type(const MixTensor& tensor, GgufMix mix, const MixModel& model);

/// Bytes of `tensor` stored as ggml type `type`.
std::uint64_t mix_tensor_bytes(const MixTensor& tensor, std::string_view type);

/// The widths a dense decoder's GGUF tensors need beyond the layers' cache shapes.
struct DenseShape {
  std::uint64_t n_embd = 0;
  std::uint64_t n_ff = 0;      ///< the MLP's intermediate width (gate, up and down)
  std::uint64_t n_tokens = 0;  ///< token_embd rows (and output rows when not tied)
  bool tied = false;
  bool qkv_bias = false;   ///< attn_q/k/v biases (qwen2)
  bool qk_norm = false;    ///< attn_q_norm and attn_k_norm (qwen3, gemma3)
  bool post_norms = false; ///< post_attention_norm and post_ffw_norm (gemma2, gemma3)
};

/// A dense decoder's tensors in GGUF order: token_embd, per block attn_norm, attn_q, attn_k, attn_v,
/// attn_output (and the optional biases and norms), ffn_norm, ffn_gate, ffn_up, ffn_down, then
/// output_norm and output. attn_q has `heads` x k_head_dim rows, attn_k / attn_v kv_heads x the
/// layer's head widths, as llama.cpp's llm_build_* create them.
std::vector<MixTensor> dense_decoder_tensors(const DenseShape& shape, std::uint32_t heads, std::span<const LayerSpec> layers);

}  // namespace kvplan
