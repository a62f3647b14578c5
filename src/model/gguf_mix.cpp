#include "model/gguf_mix.h"

#include <array>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/ggml_type.h"
#include "model/text.h"

namespace kvplan {

namespace {

// The ftypes' default tensor types (llama.cpp's llama_model_quantize_impl, `switch (ftype)`).
constexpr std::array kMixes = {
    GgufMixInfo{"f16", GgufMix::f16, "f16"},         GgufMixInfo{"q8_0", GgufMix::q8_0, "q8_0"},
    GgufMixInfo{"q6_k", GgufMix::q6_k, "q6_K"},      GgufMixInfo{"q5_k_m", GgufMix::q5_k_m, "q5_K"},
    GgufMixInfo{"q5_k_s", GgufMix::q5_k_s, "q5_K"},  GgufMixInfo{"q4_k_m", GgufMix::q4_k_m, "q4_K"},
    GgufMixInfo{"q4_k_s", GgufMix::q4_k_s, "q4_K"},  GgufMixInfo{"q3_k_l", GgufMix::q3_k_l, "q3_K"},
    GgufMixInfo{"q3_k_m", GgufMix::q3_k_m, "q3_K"},  GgufMixInfo{"q3_k_s", GgufMix::q3_k_s, "q3_K"},
    GgufMixInfo{"q2_k", GgufMix::q2_k, "q2_K"},      GgufMixInfo{"q5_1", GgufMix::q5_1, "q5_1"},
    GgufMixInfo{"q5_0", GgufMix::q5_0, "q5_0"},      GgufMixInfo{"q4_1", GgufMix::q4_1, "q4_1"},
    GgufMixInfo{"q4_0", GgufMix::q4_0, "q4_0"},      GgufMixInfo{"iq4_xs", GgufMix::iq4_xs, "iq4_xs"},
    GgufMixInfo{"iq4_nl", GgufMix::iq4_nl, "iq4_nl"},
};

/// use_more_bits in llama-quant.cpp: the first and last eighth, and every third layer between.
bool use_more_bits(std::uint64_t i, std::uint64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

std::uint64_t block_of(std::string_view type) { return ggml_type_by_name(type).block_elements; }

/// llama_tensor_get_type_impl for one tensor, before the shape fallback.
std::string_view chosen_type(const MixTensor& t, GgufMix mix, const MixModel& m, std::string_view type) {
  const std::uint64_t i = t.layer >= 0 ? static_cast<std::uint64_t>(t.layer) : 0;
  const std::uint64_t n = m.n_layer;
  const bool gqa4 = m.n_gqa >= 4;
  switch (t.role) {
    case MixRole::f32: return "f32";
    case MixRole::matrix: return type;
    case MixRole::token_embd:
      if (!m.tied) return type;  // an untied embedding keeps the ftype's type
      [[fallthrough]];
    case MixRole::output:
      // The output head (and a tied embedding): q8_0 when its rows do not fit the blocks, else q6_K.
      if (t.ne0 % block_of(type) != 0) return "q8_0";
      return type == "q8_0" ? type : "q6_K";
    case MixRole::attn_v: {
      std::string_view v = type;
      if (mix == GgufMix::q2_k) v = gqa4 ? "q4_K" : "q3_K";
      else if (mix == GgufMix::q3_k_m) v = i < 2 ? "q5_K" : "q4_K";
      else if (mix == GgufMix::q3_k_l) v = "q5_K";
      else if ((mix == GgufMix::iq4_nl || mix == GgufMix::iq4_xs) && gqa4) v = "q5_K";
      else if ((mix == GgufMix::q4_k_m || mix == GgufMix::q5_k_m) && use_more_bits(i, n)) v = "q6_K";
      else if (mix == GgufMix::q4_k_s && i < 4) v = "q5_K";
      if (m.is_70b && (v == "q3_K" || v == "q4_K")) v = "q5_K";
      return v;
    }
    case MixRole::ffn_down:
      if (mix == GgufMix::q2_k) return "q3_K";
      if (mix == GgufMix::q3_k_m) return i < n / 16 ? "q5_K" : "q4_K";
      if (mix == GgufMix::q3_k_l) return "q5_K";
      if (mix == GgufMix::q4_k_m) return use_more_bits(i, n) ? "q6_K" : type;
      // Without an importance matrix (the larger choice): the first eighth one step up.
      if ((mix == GgufMix::iq4_nl || mix == GgufMix::iq4_xs) && i < n / 8) return "q5_K";
      if (mix == GgufMix::q5_k_m) return use_more_bits(i, n) ? "q6_K" : type;
      if (mix == GgufMix::q4_k_s && i < n / 8) return "q5_K";
      // With an importance matrix (the larger choice): q4_0 / q5_0 keep the first eighth at q4_1 / q5_1.
      if (mix == GgufMix::q4_0 && i < n / 8) return "q4_1";
      if (mix == GgufMix::q5_0 && i < n / 8) return "q5_1";
      return type;
    case MixRole::attn_output:
      if (mix == GgufMix::q2_k) return "q3_K";
      if (mix == GgufMix::q3_k_m) return "q4_K";
      if (mix == GgufMix::q3_k_l) return "q5_K";
      return type;
  }
  return type;
}

/// tensor_type_fallback: a row that is not a whole number of blocks takes the nearest 32-value type.
std::string_view fallback(const MixTensor& t, std::string_view type) {
  if (t.ne0 % block_of(type) == 0) return type;
  std::string_view to;
  if (type == "q2_K" || type == "q3_K") to = "q4_0";
  else if (type == "q4_K") to = "q5_0";
  else if (type == "q5_K") to = "q5_1";
  else if (type == "q6_K") to = "q8_0";
  else if (type == "iq4_xs") to = "iq4_nl";
  else
    throw Error(fmt::format("llama.cpp cannot quantize a row of {} values to {} (no fallback type)", t.ne0, type),
                ExitCode::unsupported_architecture);
  return t.ne0 % block_of(to) == 0 ? to : "f16";
}

}  // namespace

std::span<const GgufMixInfo> gguf_mixes() { return kMixes; }

const GgufMixInfo* find_gguf_mix(std::string_view name) {
  const std::string lower = ascii_lower(name);
  for (const GgufMixInfo& info : kMixes)
    if (info.name == lower) return &info;
  return nullptr;
}

std::string_view gguf_mix_type(const MixTensor& tensor, GgufMix mix, const MixModel& model) {
  if (tensor.role == MixRole::f32) return "f32";  // 1-D tensors (norms, biases) are never quantized
  const GgufMixInfo* info = nullptr;
  for (const GgufMixInfo& candidate : kMixes)
    if (candidate.mix == mix) info = &candidate;
  if (mix == GgufMix::f16) return "f16";  // not a quantized type: no rule applies
  return fallback(tensor, chosen_type(tensor, mix, model, info->default_type));
}

std::uint64_t mix_tensor_bytes(const MixTensor& tensor, std::string_view type) {
  const GgmlType& g = ggml_type_by_name(type);
  return checked_mul(ggml_row_bytes(g.id, tensor.ne0), tensor.rows, "weight size");
}

std::vector<MixTensor> dense_decoder_tensors(const DenseShape& s, std::uint32_t heads, std::span<const LayerSpec> layers) {
  const std::uint64_t e = s.n_embd;
  std::vector<MixTensor> out;
  out.push_back({ModelFileTensor::input, MixRole::token_embd, e, s.n_tokens});
  for (std::size_t il = 0; il < layers.size(); ++il) {
    const auto layer = static_cast<std::int32_t>(il);
    const auto add = [&](MixRole role, std::uint64_t ne0, std::uint64_t rows = 1) { out.push_back({layer, role, ne0, rows}); };
    const LayerSpec& l = layers[il];
    const std::uint64_t q = std::uint64_t{heads} * l.k_head_dim;
    const std::uint64_t k = std::uint64_t{l.kv_heads} * l.k_head_dim;
    const std::uint64_t v = std::uint64_t{l.kv_heads} * l.v_head_dim;
    add(MixRole::f32, e);  // attn_norm
    add(MixRole::matrix, e, q);
    add(MixRole::matrix, e, k);
    add(MixRole::attn_v, e, v);
    add(MixRole::attn_output, std::uint64_t{heads} * l.v_head_dim, e);
    if (s.qkv_bias) {
      add(MixRole::f32, q);
      add(MixRole::f32, k);
      add(MixRole::f32, v);
    }
    if (s.qk_norm) {
      add(MixRole::f32, l.k_head_dim);
      add(MixRole::f32, l.k_head_dim);
    }
    if (s.post_norms) {
      add(MixRole::f32, e);
      add(MixRole::f32, e);
    }
    add(MixRole::f32, e);  // ffn_norm
    add(MixRole::matrix, e, s.n_ff);
    add(MixRole::matrix, e, s.n_ff);
    add(MixRole::ffn_down, s.n_ff, e);
  }
  out.push_back({ModelFileTensor::output, MixRole::f32, e, 1});  // output_norm
  if (!s.tied) out.push_back({ModelFileTensor::output, MixRole::output, e, s.n_tokens});
  return out;
}

}  // namespace kvplan
