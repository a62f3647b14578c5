#include "loaders/gguf_model.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "model/checked.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "model/ggml_type.h"
#include "kvplan/units.h"
#include "model/wide_int.h"
#include "loaders/gguf_hparams.h"
#include "model/text.h"

namespace kvplan {

namespace {

using gguf_keys::Hparams;
using gguf_keys::KeyReader;
using gguf_keys::kLlamaCppMaxLayers;
using gguf_keys::starts_with;

/// The architectures kvplan reads, each checked against its llama.cpp source file
/// (src/models/<arch>.cpp, load_arch_hparams) in release v0.4.0. The second row on are those whose
/// cache is llama's (create_memory's default branch, no window, no recurrent layer): only their
/// tensors differ, and the sum of the tensors is read whatever they are.
constexpr std::array<std::string_view, 124> kArchitectures = {
    "llama",      "qwen2",       "qwen2moe",   "qwen3",     "qwen3moe", "phi3",        "gemma",     "gemma2",
    "gemma3",     "deepseek2",   "mamba2",     "granitehybrid", "lfm2", "qwen3next",   "gpt-oss",   "llama4",
    "glm4moe",    "gemma3n",     "cohere2",    "olmo2",     "exaone4",  "ernie4_5",    "ernie4_5-moe",
    "hunyuan-moe", "smollm3",    "granite",    "starcoder2", "command-r", "nemotron_h",
    "falcon-h1",  "olmoe",       "seed_oss",   "granitemoe", "minicpm3", "hunyuan-dense", "dots1",
    "bailingmoe", "apertus",     "arcee",      "qwen35",    "qwen35moe",
    "gemma4",     "kimi-linear", "deepseek32", "glm-dsa",
    "mistral3",   "exaone",      "internlm2",  "minicpm",   "qwen2vl",  "qwen3vl",     "qwen3vlmoe", "glm4",
    "chatglm",    "phi2",        "stablelm",   "gptneox",   "starcoder", "gpt2",       "falcon",    "olmo",
    "nemotron",   "phimoe",      "minimax-m2", "bailingmoe2", "deepseek", "dbrx",      "qwen",      "baichuan",
    "orion",      "xverse",      "refact",     "codeshell", "mpt",      "bloom",       "jais",      "grok",
    "arctic",     "bitnet",      "maincoder",
    "nemotron_h_moe", "lfm2moe",     "mamba",      "jamba",     "exaone-moe", "afmoe",     "smallthinker",
    "mellum",     "laguna",      "mimo2",      "step35",    "jais2",    "openelm",
    "pangu-embedded", "plamo",   "talkie",     "hunyuan_vl", "cogvlm",   "deepseek2-ocr", "deci",
    "cohere2moe", "granite_swa", "plamo3",     "hy_v3",     "mistral4",
    "rwkv6",      "rwkv7",       "arwkv7",
    "paddleocr",  "plm",         "grovemoe",   "chameleon", "muse-glimmer", "nanbeige",
    "graniteswitch", "rwkv6qwen2", "plamo2", "bailingmoe3", "kimi-k3", "minimax-01",
    "minimax-m3", "qwen4exp", "dots3note", "deepseek4"};

/// Keys llama.cpp requires of an architecture that change no cache (a rope, an expert router, a
/// clamp): without one llama.cpp does not load the file, so kvplan does not answer for it either.
struct RequiredKey {
  std::string_view arch;
  std::string_view key;
};
constexpr std::array<RequiredKey, 66> kRequiredKeys = {{
    {"qwen2vl", "rope.dimension_sections"},
    {"qwen3vl", "rope.dimension_sections"},
    {"qwen3vlmoe", "rope.dimension_sections"},
    {"minimax-m2", "expert_feed_forward_length"},
    {"bailingmoe2", "expert_feed_forward_length"},
    {"bailingmoe2", "expert_shared_count"},
    {"bailingmoe2", "expert_gating_func"},
    {"deepseek", "expert_feed_forward_length"},
    {"deepseek", "expert_shared_count"},
    {"dbrx", "attention.clamp_kqv"},
    {"gptneox", "use_parallel_residual"},
    {"lfm2moe", "expert_feed_forward_length"},
    {"lfm2moe", "expert_gating_func"},
    {"exaone-moe", "expert_feed_forward_length"},
    {"exaone-moe", "expert_gating_func"},
    {"afmoe", "expert_feed_forward_length"},
    {"afmoe", "expert_shared_count"},
    {"mellum", "expert_feed_forward_length"},
    {"laguna", "leading_dense_block_count"},
    {"laguna", "expert_feed_forward_length"},
    {"mimo2", "expert_feed_forward_length"},
    {"step35", "expert_feed_forward_length"},
    {"talkie", "logit_scale"},
    {"deepseek2-ocr", "expert_feed_forward_length"},
    {"deepseek2-ocr", "expert_shared_count"},
    {"cohere2moe", "logit_scale"},
    {"cohere2moe", "leading_dense_block_count"},
    {"cohere2moe", "expert_feed_forward_length"},
    {"granite_swa", "logit_scale"},
    {"hy_v3", "expert_feed_forward_length"},
    {"rwkv6", "time_mix_extra_dim"},
    {"rwkv6", "time_decay_extra_dim"},
    {"rwkv6qwen2", "time_mix_extra_dim"},
    {"rwkv6qwen2", "time_decay_extra_dim"},
    {"rwkv7", "attention.decay_lora_rank"},
    {"rwkv7", "attention.iclr_lora_rank"},
    {"rwkv7", "attention.value_residual_mix_lora_rank"},
    {"arwkv7", "attention.decay_lora_rank"},
    {"arwkv7", "attention.iclr_lora_rank"},
    {"arwkv7", "attention.value_residual_mix_lora_rank"},
    {"grovemoe", "expert_feed_forward_length"},
    {"grovemoe", "expert_group_scale"},
    {"grovemoe", "experts_per_group"},
    {"muse-glimmer", "logit_scale"},
    {"graniteswitch", "logit_scale"},
    {"bailingmoe3", "leading_dense_block_count"},
    {"minimax-01", "residual_scale"},
    {"minimax-m3", "expert_feed_forward_length"},
    {"minimax-m3", "expert_shared_count"},
    {"minimax-m3", "expert_gating_func"},
    {"dots3note", "expert_feed_forward_length"},
    {"dots3note", "expert_shared_count"},
    {"dots3note", "expert_gating_func"},
    {"dots3note", "leading_dense_block_count"},
    {"dots3note", "rope.freq_base_swa"},
    {"deepseek4", "attention.layer_norm_rms_epsilon"},
    {"deepseek4", "expert_feed_forward_length"},
    {"deepseek4", "expert_weights_scale"},
    {"deepseek4", "expert_weights_norm"},
    {"deepseek4", "swiglu_clamp_exp"},
    {"deepseek4", "attention.compress_rope_freq_base"},
    {"deepseek4", "hyper_connection.epsilon"},
    {"graniteswitch", "adapters.count"},
    {"graniteswitch", "adapters.lora_rank"},
    {"graniteswitch", "adapters.token_ids_activate"},
    {"graniteswitch", "adapters.token_ids_substitute"},
}};

/// "blk.12.attn_q.weight" -> 12; nullopt for tensors outside the repeating layers.
std::optional<std::uint64_t> block_index(std::string_view name) {
  if (!starts_with(name, "blk.")) return std::nullopt;
  const std::string_view rest = name.substr(4);
  std::uint64_t index = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.') return std::nullopt;
  return index;
}

/// The input layer of llama.cpp (LLM_TENSOR_LAYER_INPUT): always in host memory.
bool is_input_tensor(std::string_view name) {
  return starts_with(name, "token_embd.") || starts_with(name, "position_embd.") ||
         starts_with(name, "token_types.") || starts_with(name, "per_layer_token_embd.");
}

/// The routed experts' shape from their stacked tensors (ne0 the input width, ne1 the intermediate
/// width, ne2 the experts): ffn_up_exps, or a fused ffn_gate_up_exps (ne1 twice the width); gated
/// when there is a gate. The widest layer's.
class ExpertTensors {
 public:
  void add(const GgufTensorInfo& t) {
    const bool fused = std::string_view(t.name).ends_with("ffn_gate_up_exps.weight");
    if (fused || std::string_view(t.name).ends_with("ffn_gate_exps.weight")) gated_ = true;
    if ((!fused && !std::string_view(t.name).ends_with("ffn_up_exps.weight")) || t.dims.size() < 2) return;
    const std::uint64_t intermediate = fused ? t.dims[1] / 2 : t.dims[1];
    if (intermediate > intermediate_) {
      intermediate_ = intermediate;
      input_width_ = t.dims[0];
    }
  }
  /// nullopt when no expert tensor says, or its widths are beyond what a spec may state (the
  /// model still loads: only an engine's MoE buffers read this).
  std::optional<RoutedExperts> routed(std::uint32_t per_token) const {
    if (!routed_experts_in_bounds(per_token, input_width_, intermediate_)) return std::nullopt;
    return RoutedExperts{per_token, input_width_, intermediate_, gated_};
  }

 private:
  std::uint64_t input_width_ = 0;
  std::uint64_t intermediate_ = 0;
  bool gated_ = false;
};

std::uint64_t element_count(const GgufTensorInfo& tensor) {
  std::uint64_t n = 1;
  for (const std::uint64_t d : tensor.dims) n = checked_mul(n, d, "tensor element count");
  return n;
}

/// kvplan's nearest weight dtype for a file of mixed ggml types: by bits per weight (exact bytes
/// come from the tensors; this label only names the checkpoint's precision).
const Dtype& nearest_weight_dtype(const GgufHeader& header, std::uint64_t bytes, std::uint64_t params) {
  std::map<std::uint32_t, std::uint64_t> by_type;
  for (const GgufTensorInfo& t : header.tensors) by_type[t.type] = checked_add(by_type[t.type], t.bytes, "weight size");
  const auto dominant = std::max_element(by_type.begin(), by_type.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
  if (dominant != by_type.end()) {
    const std::string_view name = ggml_type_by_id(dominant->first).name;
    if (name == "f32" || name == "f64") return parse_weight_dtype("fp32");
    if (name == "f16") return parse_weight_dtype("fp16");
    if (name == "bf16") return parse_weight_dtype("bf16");
    if (name == "mxfp4") return parse_weight_dtype("mxfp4");
  }
  if (params == 0) return parse_weight_dtype("fp16");
  // bits per weight x 1000, compared with int8 (8) and int4 (4): the nearer wins.
  const u128 milli_bits = static_cast<u128>(bytes) * 8000 / params;
  if (milli_bits >= 12000) return parse_weight_dtype("fp16");
  return milli_bits >= 6000 ? parse_weight_dtype("int8") : parse_weight_dtype("int4");
}

std::string model_name(const GgufHeader& header) {
  if (const GgufValue* v = header.find("general.name"); v && v->type == GgufType::string && v->kept &&
                                                          !v->string_value.empty())
    return v->string_value;
  return std::filesystem::path(header.path).stem().string();
}

}  // namespace

std::vector<std::string_view> gguf_supported_architectures() {
  return {kArchitectures.begin(), kArchitectures.end()};
}

bool is_gguf_path(std::string_view path) {
  if (path.size() < 5) return false;
  return ascii_lower(path.substr(path.size() - 5)) == ".gguf";
}

GgufModel gguf_model_from_header(const GgufHeader& header) {
  const GgufValue* arch_value = header.find("general.architecture");
  if (arch_value == nullptr) throw Error(fmt::format("{}: metadata 'general.architecture' is missing", header.path));
  const std::string arch = *header.get_string("general.architecture");
  if (std::find(kArchitectures.begin(), kArchitectures.end(), arch) == kArchitectures.end()) {
    std::string known;
    for (const std::string_view name : kArchitectures) known += (known.empty() ? "" : ", ") + std::string(name);
    throw unsupported_architecture("general.architecture", fmt::format("{} (kvplan reads: {})", arch, known));
  }
  KeyReader r(header, arch);
  Hparams hp;

  // llama_model_base::load_hparams: the keys every architecture shares.
  const std::uint32_t n_layer_all = r.required_u32("block_count", "the number of layers");
  if (n_layer_all == 0 || n_layer_all > kLlamaCppMaxLayers)
    r.fail("block_count", fmt::format("is {}; llama.cpp accepts 1 to {}", n_layer_all, kLlamaCppMaxLayers));
  hp.n_layer_all = n_layer_all;
  hp.n_embd = r.required_u32("embedding_length", "the hidden size");
  if (hp.n_embd == 0) r.fail("embedding_length", "is 0");
  hp.n_ctx_train = r.required_u32("context_length", "the trained context");
  hp.n_nextn = r.u32("nextn_predict_layers").value_or(0);
  if (hp.n_nextn > n_layer_all)
    r.fail("nextn_predict_layers", fmt::format("is {}, more than block_count {}", hp.n_nextn, n_layer_all));
  hp.n_layer = n_layer_all - hp.n_nextn;
  hp.n_ff = r.per_layer("feed_forward_length", n_layer_all).value_or(std::vector<std::uint32_t>(n_layer_all, 0));
  hp.n_head = r.per_layer("attention.head_count", n_layer_all).value_or(std::vector<std::uint32_t>(n_layer_all, 0));
  hp.n_head_kv = r.per_layer("attention.head_count_kv", n_layer_all).value_or(hp.n_head);  // defaults to n_head
  hp.n_expert = r.u32("expert_count").value_or(0);
  if (const auto used = r.per_layer("expert_used_count", n_layer_all))
    hp.n_expert_used = *std::max_element(used->begin(), used->end());
  if (hp.n_expert_used > hp.n_expert)
    r.fail("expert_used_count", fmt::format("is {}, more than expert_count {}", hp.n_expert_used, hp.n_expert));

  // Head sizes: n_embd / n_head(0) unless given; 0 for models without attention heads.
  if (hp.n_head[0] > 0) {
    hp.head_k = r.u32("attention.key_length").value_or(hp.n_embd / hp.n_head[0]);
    hp.head_v = r.u32("attention.value_length").value_or(hp.n_embd / hp.n_head[0]);
    hp.n_rot = r.u32("rope.dimension_count").value_or(hp.head_k);
  } else {
    r.mark_read("attention.key_length");
    r.mark_read("attention.value_length");
  }
  hp.head_k_swa = r.u32("attention.key_length_swa").value_or(hp.head_k);
  hp.head_v_swa = r.u32("attention.value_length_swa").value_or(hp.head_v);
  if (arch == "nanbeige") gguf_keys::read_loops(r, hp);
  hp.swa.assign(hp.n_layer_all, false);
  hp.recr.assign(hp.n_layer_all, false);

  for (const RequiredKey& required : kRequiredKeys)
    if (required.arch == arch && !r.has(required.key))
      r.fail(required.key, fmt::format("is missing (llama.cpp requires it for {})", arch));
  gguf_keys::read_architecture(r, hp);
  gguf_keys::reject_unread_cache_keys(r);

  const bool any_swa = std::find(hp.swa.begin(), hp.swa.end(), true) != hp.swa.end();
  if (!any_swa && (r.has("attention.key_length_swa") || r.has("attention.value_length_swa")))
    hp.notes.push_back(fmt::format("{}: the _swa head sizes are unused: no layer is sliding", arch));
  if (hp.n_nextn > 0)
    hp.notes.push_back(fmt::format("{}: the last {} of {} blocks are nextn (MTP) layers", arch, hp.n_nextn,
                                   hp.n_layer_all));

  GgufModel model;
  ModelSpec& spec = model.spec;
  spec.id = header.path;
  spec.name = model_name(header);
  spec.source = header.path;
  spec.architecture = arch;
  spec.max_context = hp.n_ctx_train;
  spec.mtp_layers = hp.n_nextn;
  // Pure SSM models have no attention heads; their SSM heads stand in so the spec validates.
  spec.attention_heads = hp.n_head[0] > 0 ? hp.n_head[0] : std::max<std::uint32_t>(hp.ssm_heads, 1);

  const Dtype& fp32 = parse_weight_dtype("fp32");
  std::vector<std::uint32_t> empty_kv_layers;
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) {
    LayerSpec layer;
    if (hp.recr[il]) {
      // Recurrent state, f32 as llama.cpp stores it (create_memory: GGML_TYPE_F32 for r and s).
      layer.kind = LayerKind::linear;
      if (hp.n_embd_r) layer.state.push_back({"conv", hp.n_embd_r, &fp32});
      if (hp.n_embd_s) layer.state.push_back({"ssm", hp.n_embd_s, &fp32});
    } else if (!hp.no_cache.empty() && hp.no_cache[il]) {
      layer.kind = LayerKind::none;
    } else if (hp.kv_from_start && il >= *hp.kv_from_start) {
      layer.kind = LayerKind::shared;
    } else if (hp.n_head_kv[il] == 0 && arch == "deci") {
      // deci (Nemotron Super/Ultra): a linear replacement (heads, no KV heads) or no attention at
      // all; llama_kv_cache still creates the layer's K and V, 0 wide.
      layer.kind = LayerKind::none;
      empty_kv_layers.push_back(il);
    } else if (hp.n_head_kv[il] == 0) {
      throw unsupported_architecture(r.key("attention.head_count_kv"),
                                     fmt::format("0 for layer {} of a {} model (a layer without KV heads)", il, arch));
    } else if (hp.mla && !hp.swa[il]) {  // dots3note's sliding MLA layers are K-only sliding layers below
      layer.kind = LayerKind::mla;
      layer.kv_heads = hp.n_head_kv[il];
      layer.k_head_dim = hp.head_k;
      layer.mla_rope_dim = std::min(hp.n_rot, hp.head_k);
      if (!hp.indexer.empty() && hp.indexer[il]) layer.index_head_dim = hp.indexer_head;
    } else {
      layer.kind = !hp.swa[il] ? LayerKind::full : hp.chunked ? LayerKind::chunked : LayerKind::sliding;
      layer.kv_heads = hp.n_head_kv[il];
      layer.k_head_dim = hp.swa[il] ? hp.head_k_swa : hp.head_k;
      layer.v_head_dim = hp.swa[il] ? hp.head_v_swa : hp.head_v;
      if (hp.swa[il]) layer.window = hp.n_swa;
      if (!hp.indexer.empty() && hp.indexer[il]) layer.index_head_dim = hp.indexer_head;  // minimax-m3
      if (!hp.compress_ratio.empty()) {  // deepseek4: the CSA layers keep the lightning indexer's key
        layer.compress_ratio = hp.compress_ratio[il];
        if (layer.compress_ratio == 4) layer.index_head_dim = hp.indexer_head;
      }
      if (hp.parallel_state) {
        if (hp.n_embd_r) layer.state.push_back({"conv", hp.n_embd_r, &fp32});
        if (hp.n_embd_s) layer.state.push_back({"ssm", hp.n_embd_s, &fp32});
      }
      if (layer.k_head_dim == 0)
        r.fail(hp.swa[il] ? "attention.key_length_swa" : "attention.key_length", "gives a head size of 0");
    }
    spec.layers.push_back(std::move(layer));
  }
  if (hp.router_layer) {
    LayerSpec router;
    router.kind = LayerKind::full;
    router.kv_heads = 1;
    router.k_head_dim = hp.head_k;
    router.v_head_dim = hp.head_v;
    spec.layers.push_back(router);
  }
  // A hybrid's attention layers must be able to hold a token: a recurrent model whose layers all
  // came out recurrent and whose state is empty has nothing llama.cpp would allocate.
  for (const LayerSpec& layer : spec.layers)
    if (layer.kind == LayerKind::linear && layer.state.empty())
      r.fail("ssm.inner_size", "gives recurrent layers an empty state");

  // Weights: the exact sum of the tensors; per layer by the blk.N. prefix.
  auto file = std::make_shared<ModelFile>();
  file->n_embd = hp.n_embd;
  file->empty_kv_layers = std::move(empty_kv_layers);
  if (!file->empty_kv_layers.empty())
    hp.notes.push_back(fmt::format("deci: {} of {} layers have no KV heads (a linear replacement or no attention); "
                                   "llama.cpp still gives each a cache slot of width 0",
                                   file->empty_kv_layers.size(), hp.n_layer));
  file->n_ff_max = *std::max_element(hp.n_ff.begin(), hp.n_ff.end());
  std::uint64_t n_vocab = 0;
  spec.layer_weights_bytes.assign(spec.layers.size(), 0);  // the router layer owns no tensor
  std::uint64_t params = 0;
  std::uint64_t expert_params = 0;
  ExpertTensors experts;
  bool has_output = false;
  for (const GgufTensorInfo& t : header.tensors) {
    const std::uint64_t elements = element_count(t);
    params = checked_add(params, elements, "parameter count");
    if (t.name.find("_exps.") != std::string::npos) {
      expert_params = checked_add(expert_params, elements, "parameter count");
      experts.add(t);
    }
    ModelFileTensor placed{ModelFileTensor::output, t.split, t.offset, t.bytes};
    if (const std::optional<std::uint64_t> block = block_index(t.name)) {
      if (*block >= n_layer_all)
        throw Error(fmt::format("{}: tensor '{}' belongs to block {}, but block_count is {}", header.path, t.name,
                                *block, n_layer_all));
      placed.layer = static_cast<std::int32_t>(*block);
      if (*block < hp.n_layer)
        spec.layer_weights_bytes[*block] = checked_add(spec.layer_weights_bytes[*block], t.bytes, "weight size");
    } else if (is_input_tensor(t.name)) {
      placed.layer = ModelFileTensor::input;
      if (t.name == "token_embd.weight") {
        file->token_embd_bytes = t.bytes;
        if (n_vocab == 0 && t.dims.size() >= 2) n_vocab = t.dims[1];
      }
    } else if (t.name == "rope_freqs.weight" ||
               ((arch == "bloom" || arch == "rwkv6" || arch == "rwkv7") && starts_with(t.name, "token_embd_norm."))) {
      // rope_freqs: created with layer 0 (other layers use duplicates of it); bloom's and
      // rwkv's token_embd_norm: a repeating tensor llama.cpp creates with layer 0 ("do the norms on the
      // first layer"). lfm2's tensor of that name is its output norm (OUTPUT_NORM_LFM2): output.
      placed.layer = 0;
    }
    if (t.name == "output.weight") has_output = true;
    file->tensors.push_back(placed);
  }
  file->output_tied = !has_output && file->token_embd_bytes > 0;
  // n_vocab as llama.cpp's vocabulary counts it: the token list (or <arch>.vocab_size).
  if (const std::optional<std::uint32_t> vocab = r.u32("vocab_size"); vocab && *vocab > 0) {
    n_vocab = *vocab;
  } else if (const GgufValue* tokens = header.find("tokenizer.ggml.tokens"); tokens && tokens->is_array()) {
    n_vocab = tokens->count;
  }
  spec.vocab_size = n_vocab;

  spec.params = params;
  if (hp.n_expert > 0 && hp.n_expert_used > 0 && expert_params > 0) {
    // Active per token: everything but the routed experts, plus expert_used_count of expert_count.
    const std::uint64_t active_experts =
        static_cast<std::uint64_t>(static_cast<u128>(expert_params) * hp.n_expert_used / hp.n_expert);
    spec.active_params = params - expert_params + active_experts;
    spec.routed_experts = experts.routed(hp.n_expert_used);
  }
  spec.weights_bytes = header.tensor_data_bytes();
  spec.weight_dtype = &nearest_weight_dtype(header, *spec.weights_bytes, params);
  spec.weights_source = "sum of GGUF tensor sizes";
  file->notes = std::move(hp.notes);
  spec.file = std::move(file);
  validate(spec);
  return model;
}

GgufModel load_gguf_model(const std::string& path) {
  GgufModel model = gguf_model_from_header(read_gguf_model(path));
  model.spec.id = path;
  return model;
}

ModelSpec load_gguf_model_spec(const std::string& path) { return load_gguf_model(path).spec; }

}  // namespace kvplan
