#include "loaders/ollama_tags.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "kvplan/units.h"
#include "model/checked.h"
#include "model/ggml_type.h"
#include "model/gguf_mix.h"
#include "model/suggest.h"
#include "model/text.h"

namespace kvplan {

namespace {

enum class Family { dense, deepseek2, gptoss };

/// The shapes of one tag's GGUF that a catalog spec does not carry (config.json of the model, and
/// the GGUF's own keys where Ollama's blob differs from the Hugging Face checkpoint).
struct TagShape {
  std::string_view name;        ///< "llama3.1:8b" (the size tag; variants and quantizations add to it)
  std::string_view catalog_id;  ///< the catalog model it is
  std::string_view gguf_arch;   ///< general.architecture of the blob
  Family family = Family::dense;
  std::uint64_t n_embd = 0;
  std::uint64_t n_ff = 0;       ///< dense feed-forward width
  std::uint64_t n_tokens = 0;   ///< tokenizer.ggml.tokens (the output head's rows)
  bool tied = false;            ///< no output.weight: token_embd is the output head
  bool qkv_bias = false;        ///< qwen2: attn_q/k/v biases
  bool qk_norm = false;         ///< qwen3, gemma3: attn_q_norm and attn_k_norm
  bool post_norms = false;      ///< gemma3: post_attention_norm and post_ffw_norm
  bool is_70b = false;          ///< llama.cpp's LLM_TYPE_70B (80 layers of llama / qwen2): attn_v one step up
  std::uint64_t vision_bytes = 0;  ///< v.* tensors of the vision tower in the same blob (F16)
  bool exact = true;            ///< false: some tensor types are assumed, not computed from the recipe
};

/// gemma3's SigLIP tower (27 layers, hidden 1152, F16) as the Ollama blobs carry it: 834,531,264 B,
/// the printed projector.weights 795.9 MiB of records O2-O4 and O13 (vectors-ollama-vllmpp.jsonl).
constexpr std::uint64_t kGemma3VisionBytes = 834'531'264;

// config.json of each model (/work/shared/reference/models.jsonl) and the token counts of the GGUF.
constexpr std::array<TagShape, 16> kTags = {{
    {"llama3.1:8b", "llama3.1-8b", "llama", Family::dense, 4096, 14336, 128256},
    {"llama3.1:70b", "llama3.1-70b", "llama", Family::dense, 8192, 28672, 128256, false, false, false, false, true},
    {"llama3.3:70b", "llama3.3-70b", "llama", Family::dense, 8192, 28672, 128256, false, false, false, false, true},
    {"llama3.2:1b", "llama3.2-1b", "llama", Family::dense, 2048, 8192, 128256, true},
    {"llama3.2:3b", "llama3.2-3b", "llama", Family::dense, 3072, 8192, 128256, true},
    {"qwen2.5:7b", "qwen2.5-7b", "qwen2", Family::dense, 3584, 18944, 152064, false, true},
    {"qwen2.5:14b", "qwen2.5-14b", "qwen2", Family::dense, 5120, 13824, 152064, false, true},
    {"qwen2.5:32b", "qwen2.5-32b", "qwen2", Family::dense, 5120, 27648, 152064, false, true},
    {"qwen2.5:72b", "qwen2.5-72b", "qwen2", Family::dense, 8192, 29568, 152064, false, true, false, false, true},
    {"qwen3:8b", "qwen3-8b", "qwen3", Family::dense, 4096, 12288, 151936, false, false, true},
    {"qwen3:14b", "qwen3-14b", "qwen3", Family::dense, 5120, 17408, 151936, false, false, true},
    {"qwen3:32b", "qwen3-32b", "qwen3", Family::dense, 5120, 25600, 151936, false, false, true},
    {"gemma3:12b", "gemma3-12b", "gemma3", Family::dense, 3840, 15360, 262144, true, false, true, true, false,
     kGemma3VisionBytes},
    {"gemma3:27b", "gemma3-27b", "gemma3", Family::dense, 5376, 21504, 262144, true, false, true, true, false,
     kGemma3VisionBytes},
    {"deepseek-r1:671b", "deepseek-r1", "deepseek2", Family::deepseek2, 7168, 18432, 129280},
    {"gpt-oss:20b", "gpt-oss-20b", "gptoss", Family::gptoss, 2880, 2880, 201088, false, false, false, false, false, 0,
     false},
}};

/// The blob's tensors in the order of the GGUF (token_embd, the blocks, output_norm, output).
std::vector<MixTensor> tensors_of(const TagShape& s, const ModelSpec& model) {
  if (s.family == Family::dense)
    return dense_decoder_tensors({s.n_embd, s.n_ff, s.n_tokens, s.tied, s.qkv_bias, s.qk_norm, s.post_norms},
                                 model.attention_heads, model.layers);
  const std::uint64_t e = s.n_embd;
  const std::uint64_t nh = model.attention_heads;
  std::vector<MixTensor> out;
  out.push_back({ModelFileTensor::input, MixRole::token_embd, e, s.n_tokens});
  for (std::uint32_t il = 0; il < model.layers.size(); ++il) {
    const auto layer = static_cast<std::int32_t>(il);
    const auto add = [&](MixRole role, std::uint64_t ne0, std::uint64_t rows = 1) { out.push_back({layer, role, ne0, rows}); };
    // DeepSeek-V3 / R1: q_lora_rank 1536, kv_lora_rank 512, qk_nope 128 + qk_rope 64, v_head 128,
    // 3 dense layers then 256 routed experts of 2048 and one shared expert (config.json).
    add(MixRole::f32, e);
    add(MixRole::f32, e);
    add(MixRole::f32, 1536);
    add(MixRole::f32, 512);
    add(MixRole::matrix, e, 1536);             // attn_q_a
    add(MixRole::matrix, 1536, nh * 192);      // attn_q_b
    add(MixRole::matrix, e, 512 + 64);         // attn_kv_a_mqa
    add(MixRole::matrix, 512, nh * (128 + 128));  // attn_kv_b
    add(MixRole::matrix, nh * 128, e);         // attn_output
    if (il < 3) {
      add(MixRole::matrix, e, s.n_ff);
      add(MixRole::matrix, e, s.n_ff);
      add(MixRole::ffn_down, s.n_ff, e);
    } else {
      add(MixRole::f32, e, 256);  // ffn_gate_inp stays F32
      add(MixRole::f32, 256);     // exp_probs_b
      add(MixRole::matrix, e, 2048 * 256);
      add(MixRole::matrix, e, 2048 * 256);
      add(MixRole::ffn_down, 2048, e * 256);
      add(MixRole::matrix, e, 2048);
      add(MixRole::matrix, e, 2048);
      add(MixRole::ffn_down, 2048, e);
    }
  }
  out.push_back({ModelFileTensor::output, MixRole::f32, e, 1});  // output_norm
  if (!s.tied) out.push_back({ModelFileTensor::output, MixRole::output, e, s.n_tokens});
  return out;
}

/// gpt-oss:20b's blob is not a llama.cpp quantization: attention, router and embeddings BF16,
/// experts MXFP4, biases, sinks and norms F32 (ASSUMED, as record O10 reproduces with them).
std::uint64_t gptoss_layer_bytes(const TagShape& s) {
  const std::uint64_t h = s.n_embd, experts = 32, inter = 2880;
  const std::uint64_t mxfp4 = ggml_type_by_name("mxfp4").id;
  return 2 * (h * 4096) * 2 + 2 * (h * 512) * 2 + (4096 + 1024 + 2880) * 4 + 64 * 4 + h * experts * 2 + experts * 4 +
         ggml_row_bytes(static_cast<std::uint32_t>(mxfp4), experts * 2 * inter * h) +
         ggml_row_bytes(static_cast<std::uint32_t>(mxfp4), experts * inter * h) + (experts * 2 * inter + experts * h) * 4 +
         2 * h * 4;
}

/// The tensors' sizes under one mix, remembered: a dense tag repeats the same ten or so tensors in
/// every layer, and sizing one (its type by llama.cpp's rules, then its bytes) is what loading a
/// tag costs. gguf_mix_type reads the layer only for attn_v and ffn_down, so their type is chosen
/// for each layer and only its size is remembered. Only sizes that were computed are kept: a
/// tensor that throws throws at its first occurrence, as without the memory.
class MixSizes {
 public:
  MixSizes(GgufMix mix, const MixModel& model) : mix_(mix), model_(model) {}

  std::uint64_t bytes(const MixTensor& t) {
    const bool by_layer = t.role == MixRole::attn_v || t.role == MixRole::ffn_down;
    const std::string_view type = by_layer ? gguf_mix_type(t, mix_, model_) : std::string_view{};
    for (const Known& k : known_)
      if (k.role == t.role && k.ne0 == t.ne0 && k.rows == t.rows && k.type == type) return k.bytes;
    const std::uint64_t bytes = mix_tensor_bytes(t, by_layer ? type : gguf_mix_type(t, mix_, model_));
    known_.push_back({t.role, t.ne0, t.rows, type, bytes});
    return bytes;
  }

 private:
  struct Known {
    MixRole role;
    std::uint64_t ne0;
    std::uint64_t rows;
    std::string_view type;  ///< attn_v and ffn_down only (a type name of static storage); else empty
    std::uint64_t bytes;
  };
  GgufMix mix_;
  MixModel model_;
  std::vector<Known> known_;
};

GgufMix mix_of(OllamaQuant q) {
  switch (q) {
    case OllamaQuant::q4_k_m: return GgufMix::q4_k_m;
    case OllamaQuant::q4_k_s: return GgufMix::q4_k_s;
    case OllamaQuant::q8_0: return GgufMix::q8_0;
    case OllamaQuant::f16: return GgufMix::f16;
  }
  return GgufMix::q4_k_m;
}

std::string_view quant_name(OllamaQuant q) {
  switch (q) {
    case OllamaQuant::q4_k_m: return "Q4_K_M";
    case OllamaQuant::q4_k_s: return "Q4_K_S";
    case OllamaQuant::q8_0: return "Q8_0";
    case OllamaQuant::f16: return "F16";
  }
  return "Q4_K_M";
}

}  // namespace

bool looks_like_ollama_tag(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return false;
  if (text.find('/') != std::string_view::npos || text.find('\\') != std::string_view::npos) return false;
  const std::string t = ascii_lower(text);
  const auto ends = [&](std::string_view s) { return t.size() >= s.size() && t.compare(t.size() - s.size(), s.size(), s) == 0; };
  return !ends(".gguf") && !ends(".json");
}

std::vector<std::string> ollama_tag_names() {
  std::vector<std::string> names;
  for (const TagShape& tag : kTags) names.emplace_back(tag.name);
  return names;
}

std::vector<OllamaVariant> ollama_variants(std::string_view catalog_id) {
  std::vector<OllamaVariant> out;
  for (const TagShape& tag : kTags) {
    if (tag.catalog_id != catalog_id) continue;
    if (tag.family == Family::gptoss) {
      out.push_back({std::string(tag.name), "mxfp4"});
      continue;
    }
    for (const std::string_view suffix : {"q4_K_M", "q4_K_S", "q8_0", "fp16"})
      out.push_back({fmt::format("{}-{}", tag.name, suffix), suffix == "fp16" ? "f16" : ascii_lower(suffix)});
  }
  return out;
}

ModelSpec load_ollama_tag(std::string_view text, const ModelCatalog& catalog) {
  // name:size[-variant...][-quantization]: the size tag is the blob of name:size-...-q4_K_M.
  const std::string tag = ascii_lower(text);
  OllamaQuant quant = OllamaQuant::q4_k_m;
  std::string base = tag;
  static constexpr std::array<std::pair<std::string_view, OllamaQuant>, 5> kQuants = {{
      {"-q4_k_m", OllamaQuant::q4_k_m}, {"-q4_k_s", OllamaQuant::q4_k_s}, {"-q8_0", OllamaQuant::q8_0},
      {"-fp16", OllamaQuant::f16}, {"-f16", OllamaQuant::f16}}};
  for (const auto& [suffix, q] : kQuants)
    if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
      quant = q;
      base.resize(base.size() - suffix.size());
      break;
    }
  for (std::string_view variant : {"-instruct", "-text", "-it", "-qat"})
    if (base.size() > variant.size() && base.compare(base.size() - variant.size(), variant.size(), variant) == 0)
      base.resize(base.size() - variant.size());
  const TagShape* shape = nullptr;
  for (const TagShape& s : kTags)
    if (s.name == base) shape = &s;
  if (!shape) {
    const std::size_t dash = tag.find('-', tag.find(':'));
    if (dash != std::string::npos && shape == nullptr)
      throw Error(fmt::format("--model: Ollama tag '{}': kvplan sizes the quantizations q4_K_M (the default), q4_K_S, "
                              "q8_0 and fp16 of {}",
                              text, fmt::join(ollama_tag_names(), ", ")),
                  ExitCode::unsupported_architecture);
    throw Error(fmt::format("--model: unknown Ollama tag '{}' (kvplan sizes {}){}", text, fmt::join(ollama_tag_names(), ", "),
                            did_you_mean(text, ollama_tag_names())),
                ExitCode::unsupported_architecture);
  }
  const ModelSpec* found = catalog.find(shape->catalog_id);
  if (!found) throw Error(fmt::format("--model: the catalog has no {} for the tag {}", shape->catalog_id, shape->name));
  ModelSpec spec = *found;
  spec.id = std::string(text);
  spec.aliases.clear();
  spec.architecture = std::string(shape->gguf_arch);
  spec.vocab_size = shape->n_tokens;
  spec.mtp_layers = 0;  // Ollama's blobs carry no nextn layers
  if (shape->family == Family::deepseek2) {
    // Ollama's deepseek-r1 blob predates llama.cpp's MLA cache: head_count_kv 128, key 192, value
    // 128 (no key_length_mla), so llama.cpp caches full K and V per head.
    for (LayerSpec& layer : spec.layers) {
      layer = LayerSpec{};
      layer.kv_heads = spec.attention_heads;
      layer.k_head_dim = 192;
      layer.v_head_dim = 128;
    }
  }
  if (shape->family == Family::gptoss && quant != OllamaQuant::q4_k_m)
    throw Error(fmt::format("--model: {} is served as its own MXFP4 blob; kvplan does not size other quantizations of it",
                            shape->name),
                ExitCode::unsupported_architecture);

  auto file = std::make_shared<ModelFile>();
  file->n_embd = shape->n_embd;
  file->n_ff_max = shape->n_ff;
  file->output_tied = shape->tied;
  file->vision_bytes = shape->vision_bytes;
  spec.layer_weights_bytes.assign(spec.layers.size(), 0);
  std::uint64_t offset = 0;
  std::uint64_t total = 0;
  const auto place = [&](std::int32_t layer, std::uint64_t bytes) {
    file->tensors.push_back({layer, 0, offset, bytes});
    offset = checked_add(offset, round_up_to(bytes, 32, "tag weights"), "tag weights");  // GGUF's alignment of 32 B
    total = checked_add(total, bytes, "tag weights");
    if (layer >= 0) {
      std::uint64_t& sum = spec.layer_weights_bytes[static_cast<std::size_t>(layer)];
      sum = checked_add(sum, bytes, "tag weights");
    }
  };
  if (shape->family == Family::gptoss) {
    const std::uint64_t embd = shape->n_tokens * shape->n_embd * 2;
    file->token_embd_bytes = embd;
    place(ModelFileTensor::input, embd);
    for (std::uint32_t il = 0; il < spec.layers.size(); ++il) place(static_cast<std::int32_t>(il), gptoss_layer_bytes(*shape));
    place(ModelFileTensor::output, shape->n_embd * 4);
    place(ModelFileTensor::output, shape->n_tokens * shape->n_embd * 2);
  } else {
    const std::uint64_t n_layer = spec.layers.size();
    const MixModel mix_model{n_layer, shape->tied, shape->is_70b, spec.attention_heads / std::max<std::uint32_t>(1, spec.layers.front().kv_heads)};
    const std::vector<MixTensor> tensors = tensors_of(*shape, spec);
    file->tensors.reserve(tensors.size());
    MixSizes sizes(mix_of(quant), mix_model);
    for (const MixTensor& t : tensors) {
      const std::uint64_t bytes = sizes.bytes(t);
      if (t.role == MixRole::token_embd) file->token_embd_bytes = bytes;
      place(t.layer, bytes);
    }
  }
  const std::string_view blob = shape->family == Family::gptoss ? "MXFP4" : quant_name(quant);
  file->notes.push_back(fmt::format("Ollama tag {}: the {} blob of {} ({}), tensor sizes from ggml's block sizes{}", text,
                                    blob, shape->catalog_id, shape->gguf_arch,
                                    shape->exact ? " and llama.cpp's quantizer mix"
                                                 : "; tensor types ASSUMED (BF16 attention and embeddings, MXFP4 experts)"));
  if (shape->vision_bytes)
    file->notes.push_back(fmt::format("the blob holds a vision tower of {} B (v.*, F16) that llama.cpp does not load",
                                      shape->vision_bytes));
  spec.weights_bytes = total + shape->vision_bytes;
  spec.weight_dtype = &parse_weight_dtype(quant == OllamaQuant::q8_0 ? "int8" : quant == OllamaQuant::f16 ? "fp16" : "int4");
  spec.weights_source = fmt::format("{}Ollama {} blob, {} tensors sized from ggml's block sizes{}",
                                    shape->exact ? "" : "estimate: ", blob, file->tensors.size(),
                                    shape->exact ? " and llama.cpp's quantizer mix" : " (tensor types assumed)");
  spec.source = fmt::format("{} (Ollama tag {})", spec.source, text);
  spec.file = std::move(file);
  validate(spec);
  return spec;
}

}  // namespace kvplan
