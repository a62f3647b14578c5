#include "engines/core/weight_formats.h"

#include <algorithm>
#include <array>
#include <deque>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/ggml_type.h"
#include "model/gguf_mix.h"
#include "model/suggest.h"
#include "model/text.h"

namespace kvplan {

namespace {

/// Integer group quantization as AutoAWQ and GPTQ store a linear layer of `in` inputs and `out`
/// outputs: 4-bit weights packed in int32 (in x out / 2 B), per group of `group` inputs an fp16
/// scale per output (2 B) and a 4-bit zero point per output packed in int32 (1/2 B); GPTQ adds
/// g_idx, an int32 group index per input (4 B).
struct GroupFormat {
  std::string_view name;
  bool gptq = false;
  std::uint64_t group = 128;
};
constexpr std::array kGroupFormats = {
    GroupFormat{"awq", false, 128},   GroupFormat{"awq-g64", false, 64},   GroupFormat{"awq-g32", false, 32},
    GroupFormat{"gptq", true, 128},   GroupFormat{"gptq-g64", true, 64},   GroupFormat{"gptq-g32", true, 32},
};

/// The model types whose GGUF and safetensors tensors are exactly the dense decoder of
/// dense_decoder_tensors: separate q, k, v and output projections, a gated MLP of gate, up and
/// down, RMSNorms (and qwen2's q/k/v biases, qwen3's and gemma3's q/k norms, gemma2/3's extra norms,
/// which are 1-D). Others fuse projections (phi3's attn_qkv) or are not one MLP per layer.
constexpr std::array<std::string_view, 8> kDenseTypes = {"llama", "mistral", "qwen2", "qwen3",
                                                         "gemma", "gemma2", "gemma3", "gemma3_text"};

constexpr std::string_view kNvfp4 = "nvfp4";

struct Table {
  std::deque<std::string> texts;  // stable storage for the Dtypes' names and descriptions
  std::vector<Dtype> types;
};

const Table& table() {
  static const Table built = [] {
    Table t;
    for (const GgufMixInfo& mix : gguf_mixes()) {
      const GgmlType& g = ggml_type_by_name(mix.default_type);
      const std::string& text = t.texts.emplace_back(
          fmt::format("GGUF {}: llama.cpp's quantizer mix, mostly {} ({} B per {} values)", mix.name, g.name,
                      g.block_bytes, g.block_elements));
      t.types.push_back(Dtype{mix.name, g.block_elements, g.block_bytes, text});
    }
    for (const GroupFormat& f : kGroupFormats) {
      const std::string& text = t.texts.emplace_back(
          fmt::format("{} w4a16: 4-bit weights, an fp16 scale and 4-bit zero per {} inputs{}", f.gptq ? "GPTQ" : "AWQ",
                      f.group, f.gptq ? ", an int32 g_idx per input" : ""));
      t.types.push_back(Dtype{f.name, 2, 1, text});
    }
    const std::string& nvfp4 = t.texts.emplace_back("NVFP4 weights (ModelOpt): 4-bit floats, an fp8 scale per 16 values");
    t.types.push_back(Dtype{kNvfp4, 16, 9, nvfp4});
    return t;
  }();
  return built;
}

/// Whether `lower` is the name of one of table()'s formats, asked without building the table (its
/// 23 descriptions were a twentieth of the headline command's start-up, issue #10).
bool names_a_format(std::string_view lower) {
  for (const GgufMixInfo& mix : gguf_mixes())
    if (mix.name == lower) return true;
  for (const GroupFormat& f : kGroupFormats)
    if (f.name == lower) return true;
  return lower == kNvfp4;
}

const Dtype* find_format(std::string_view name) {
  const std::string lower = ascii_lower(name);
  for (const Dtype& type : table().types)
    if (type.name == lower) return &type;
  return nullptr;
}

/// A dense decoder's tensors from the model's widths, and the parameters the layout leaves out
/// (biases and norms it does not list, all 1-D in these families).
struct DenseTensors {
  std::vector<MixTensor> tensors;
  std::uint64_t rest = 0;
  bool tied = false;
};

[[noreturn]] void refuse(const ModelSpec& model, const Dtype& format, const std::string& why) {
  throw Error(fmt::format("{}: kvplan prices {} tensor by tensor only for dense decoders ({}) whose widths it "
                          "knows; {}. Give the size of the {} file as the weights instead (--weights SIZE, "
                          "without --weight-dtype)",
                          model.id, format.name, fmt::join(kDenseTypes, ", "), why, format.name),
              ExitCode::unsupported_architecture);
}

DenseTensors dense_tensors(const ModelSpec& m, const Dtype& format) {
  if (std::find(kDenseTypes.begin(), kDenseTypes.end(), m.architecture) == kDenseTypes.end())
    refuse(m, format, fmt::format("its model_type is {}", m.architecture.empty() ? "unknown" : m.architecture));
  if (m.hidden_size == 0 || m.intermediate_size == 0 || m.embedding_params == 0 || m.params == 0 ||
      m.embedding_params % m.hidden_size != 0)
    refuse(m, format, "its hidden, intermediate and embedding widths are not all known");
  if (m.lm_head_params != 0 && m.lm_head_params != m.embedding_params)
    refuse(m, format, "its output head is not the embedding's shape");
  for (const LayerSpec& layer : m.layers)
    if ((layer.kind != LayerKind::full && layer.kind != LayerKind::sliding) || layer.kv_heads == 0 || layer.k_head_dim == 0 ||
        layer.v_head_dim == 0)
      refuse(m, format, fmt::format("it has {} layers", to_string(layer.kind)));
  DenseTensors out;
  out.tied = m.lm_head_params == 0;
  out.tensors = dense_decoder_tensors({m.hidden_size, m.intermediate_size, m.embedding_params / m.hidden_size, out.tied},
                                      m.attention_heads, m.layers);
  std::uint64_t listed = 0;
  for (const MixTensor& t : out.tensors) listed = checked_add(listed, checked_mul(t.ne0, t.rows, "weight size"), "weight size");
  // What the layout does not list must be small (biases, norms): otherwise the widths are not this model's.
  if (listed > m.params || m.params - listed > m.params / 100)
    refuse(m, format, fmt::format("its widths give {} parameters, its count {}", listed, m.params));
  out.rest = m.params - listed;
  return out;
}

WeightsEstimate price_gguf(const ModelSpec& m, const Dtype& format, const GgufMixInfo& mix) {
  const DenseTensors dense = dense_tensors(m, format);
  const std::uint64_t heads_per_kv = m.attention_heads / m.layers.front().kv_heads;
  // llama.cpp calls an 80-layer llama or qwen2 with grouped KV heads LLM_TYPE_70B and raises its
  // attn_v; kvplan raises it for every 80-layer GQA model of these families (the larger choice).
  const MixModel model{m.layers.size(), dense.tied, m.layers.size() == 80 && heads_per_kv > 1, heads_per_kv};
  std::uint64_t bytes = 0;
  std::vector<std::pair<std::string_view, std::uint64_t>> by_type;  // tensors of each ggml type, first seen first
  for (const MixTensor& t : dense.tensors) {
    const std::string_view type = gguf_mix_type(t, mix.mix, model);
    bytes = checked_add(bytes, mix_tensor_bytes(t, type), "weight size");
    auto it = std::find_if(by_type.begin(), by_type.end(), [&](const auto& entry) { return entry.first == type; });
    if (it == by_type.end()) by_type.emplace_back(type, 1);
    else ++it->second;
  }
  bytes = checked_add(bytes, checked_mul(dense.rest, 4, "weight size"), "weight size");  // 1-D: f32 in GGUF
  std::vector<std::string> counts;
  for (const auto& [type, n] : by_type) counts.push_back(fmt::format("{} {}", n, type));
  return {bytes, fmt::format("GGUF {}: llama.cpp's quantizer mix (llama_tensor_get_type) over {} tensors, {}{}; "
                             "ggml block sizes",
                             mix.name, dense.tensors.size(), fmt::join(counts, " + "),
                             dense.rest ? fmt::format(" + {} bias/norm values f32", dense.rest) : "")};
}

/// AWQ / GPTQ / NVFP4: every linear layer quantized, embeddings, output head and 1-D tensors at 2 B.
WeightsEstimate price_linear(const ModelSpec& m, const Dtype& format) {
  const DenseTensors dense = dense_tensors(m, format);
  const GroupFormat* group = nullptr;
  for (const GroupFormat& f : kGroupFormats)
    if (f.name == format.name) group = &f;
  std::uint64_t bytes = checked_mul(dense.rest, 2, "weight size");
  std::uint64_t linear = 0;
  for (const MixTensor& t : dense.tensors) {
    const std::uint64_t values = checked_mul(t.ne0, t.rows, "weight size");
    if (t.role == MixRole::f32 || t.role == MixRole::token_embd || t.role == MixRole::output) {
      bytes = checked_add(bytes, checked_mul(values, 2, "weight size"), "weight size");
      continue;
    }
    ++linear;
    std::uint64_t b = 0;
    if (group) {
      if (t.ne0 % group->group != 0 || t.rows % 8 != 0)
        refuse(m, format, fmt::format("a linear layer of {} inputs is not a whole number of {}-input groups", t.ne0, group->group));
      const std::uint64_t groups = t.ne0 / group->group * t.rows;
      b = values / 2 + groups / 2 + groups * 2 + (group->gptq ? t.ne0 * 4 : 0);
    } else {
      if (t.ne0 % 16 != 0) refuse(m, format, fmt::format("a linear layer of {} inputs is not a whole number of 16-value blocks", t.ne0));
      b = values / 2 + values / 16 + 8;  // + weight_scale_2 and input_scale, one fp32 each
    }
    bytes = checked_add(bytes, b, "weight size");
  }
  const std::string layout =
      group ? fmt::format("{} w4a16, group {}: {} linear layers at 4 bits + an fp16 scale and a 4-bit zero per group{}",
                          group->gptq ? "GPTQ" : "AWQ", group->group, linear, group->gptq ? " + an int32 g_idx per input" : "")
            : fmt::format("NVFP4 (ModelOpt): {} linear layers at 4 bits + an fp8 scale per 16 values + two fp32 scales", linear);
  return {bytes, fmt::format("{}; embeddings, output head, norms and biases 16-bit", layout)};
}

}  // namespace

std::span<const Dtype> weight_formats() { return table().types; }

const Dtype& parse_requested_weight_dtype(std::string_view text) {
  if (const Dtype* format = find_format(text)) return *format;
  try {
    return parse_weight_dtype(text);
  } catch (const Error&) {
    std::vector<std::string> names;
    for (const Dtype& type : weight_dtypes()) names.emplace_back(type.name);
    for (const Dtype& type : weight_formats()) names.emplace_back(type.name);
    throw Error(fmt::format("unknown weight dtype '{}'{}", text, did_you_mean(text, names)));
  }
}

std::optional<WeightsEstimate> price_weight_format(const ModelSpec& model, const Dtype& format) {
  // A plain dtype (the headline table's "with fp8 weights") is answered before the table is built.
  if (!names_a_format(ascii_lower(format.name)) || find_format(format.name) != &format) return std::nullopt;
  if (const GgufMixInfo* mix = find_gguf_mix(format.name)) return price_gguf(model, format, *mix);
  return price_linear(model, format);
}

}  // namespace kvplan
