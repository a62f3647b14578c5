// vLLM's --speculative-config, read from vllm-project/vllm config/speculative.py (SpeculativeConfig at
// 002e77c1: MTPModelTypes, SpeculativeMethod, __post_init__, _verify_args), down to what changes the
// memory vLLM allocates. The draft's layers themselves are priced by rules.cpp.

#include "engines/vllm/speculative.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"

namespace kvplan {

namespace {

// config/speculative.py, MTPModelTypes: every one is folded into "mtp" ("method `%s` is deprecated
// and replaced with mtp").
constexpr std::array<std::string_view, 27> kMtpMethods = {
    "deepseek_mtp",   "dots3_note_mtp",      "mimo_mtp",          "mimo_v2_mtp",           "glm4_moe_mtp",
    "glm4_moe_lite_mtp", "glm_ocr_mtp",      "ernie_mtp",         "nemotron_h_mtp",        "exaone_moe_mtp",
    "exaone4_5_mtp",  "qwen3_next_mtp",      "qwen4_exp_mtp",     "qwen3_5_mtp",           "longcat_flash_mtp",
    "bailing_hybrid_v3_mtp", "minimax_m3_mtp", "bailing_hybrid_mtp", "mtp",                "kimi_k3_mtp",
    "pangu_ultra_moe_mtp", "step3p5_mtp",    "hy_v3_mtp",         "hy_v4_mtp",             "gemma4_mtp",
    "inkling_mtp",    "glm5_next_mtp"};

// The other SpeculativeMethod values. Each but ngram and suffix builds a draft from a checkpoint
// (or GPU buffers) the flag alone does not describe.
constexpr std::array<std::string_view, 12> kOtherMethods = {
    "ngram", "medusa", "mlp_speculator", "draft_model", "suffix", "custom_class",
    "eagle", "eagle3", "extract_hidden_states", "dflash", "ngram_gpu", "dspark"};

// The model types whose MTP draft layers were read in vLLM's source: hf_config_override turns
// deepseek_v3 into deepseek_mtp (DeepSeekMTP: one DeepseekV2DecoderLayer per
// num_nextn_predict_layers, MLA attention like the target's; models/deepseek_mtp.py) and
// Glm4MoeForCausalLM into glm4_moe_mtp (one Glm4MoeDecoderLayer each, the target's grouped-query
// attention; models/glm4_moe_mtp.py), and Qwen3.5 (qwen3_5, qwen3_5_moe and their _text types)
// into qwen3_5_mtp (n_predict = mtp_num_hidden_layers, one Qwen3_5DecoderLayer each built with
// layer_type "full_attention": a full-attention layer like the target's, in a hybrid of Gated
// DeltaNet and full attention; models/qwen3_5_mtp.py, Qwen3_5MultiTokenPredictor), and
// Glm4MoeLiteForCausalLM (GLM-4.7-Flash) into glm4_moe_lite_mtp (one Glm4MoeLiteDecoderLayer each,
// built from the target's config: the target's MLA; models/glm4_moe_lite_mtp.py, read at 055e47c2;
// hf_config_override at 002e77c1), and qwen3_next into qwen3_next_mtp (Qwen3NextDecoderLayer with
// layer_type "full_attention", as Qwen3.5's; models/qwen3_next_mtp.py at 055e47c2), and
// deepseek_v32 and glm_moe_dsa into deepseek_mtp (DeepseekV32MTPModel: a decoder layer with its
// MLA latent and an indexer cache of its own), and
// ernie4_5_moe into ernie_mtp (ErnieMultiTokenPredictorLayer: a LlamaDecoderLayer from the
// target's config, its grouped-query attention; models/ernie_mtp.py), and nemotron_h with
// num_nextn_predict_layers into nemotron_h_mtp (NemotronHMultiTokenPredictor: one step, asserted,
// of mtp_hybrid_override_pattern's layers, '*' a NemotronHAttentionDecoderLayer like the
// target's, 'E' a MoE layer without a cache; models/nemotron_h_mtp.py at 01ca2773). deepseek_v32
// and glm_moe_dsa map to deepseek_mtp too (above).
constexpr std::array<std::string_view, 12> kMtpFamilies = {
    "deepseek_v3", "glm4_moe",         "glm4_moe_lite", "qwen3_next",   "qwen3_5",
    "qwen3_5_moe", "qwen3_5_text",     "qwen3_5_moe_text", "ernie4_5_moe", "nemotron_h", "deepseek_v32", "glm_moe_dsa"};

bool speculative_list_has(std::string_view name, auto const& list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

/// SpeculativeConfig._is_custom_proposer_path: no URL, no '/', two or more identifiers joined by '.'.
bool speculative_custom_proposer_path(std::string_view model) {
  if (model.find("://") != std::string_view::npos || model.find('/') != std::string_view::npos) return false;
  std::size_t parts = 0;
  for (std::size_t start = 0;;) {
    const std::size_t dot = model.find('.', start);
    const std::string_view part = model.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    const bool identifier = !part.empty() && (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_') &&
                            std::all_of(part.begin(), part.end(), [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                            });
    if (!identifier) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts >= 2;
}

/// The method __post_init__ infers when none is given.
std::string speculative_method_implied_by(const std::optional<std::string>& model) {
  if (model && speculative_custom_proposer_path(*model)) return "custom_class";
  if (model && (*model == "ngram" || *model == "[ngram]")) return "ngram";
  return "draft_model";
}

}  // namespace

std::optional<std::string> vllm_speculative_draft_name(std::string_view text) {
  const nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
  if (!config.is_object()) return std::nullopt;
  const auto method = config.find("method");
  const auto model = config.find("model");
  if (model == config.end() || !model->is_string()) return std::nullopt;
  const std::string name = model->get<std::string>();
  const bool unnamed = method == config.end() || method->is_null();
  if (!unnamed && !method->is_string()) return std::nullopt;
  const std::string chosen = unnamed ? speculative_method_implied_by(name) : method->get<std::string>();
  if (chosen != "eagle3" && chosen != "eagle" && chosen != "draft_model") return std::nullopt;
  return name;
}

VllmSpeculative parse_vllm_speculative_config(std::string_view text, std::string_view flag, const ModelSpec& model,
                                              std::uint32_t tp, std::shared_ptr<const DraftModel> draft_checkpoint) {
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw Error(fmt::format("{} {}: not JSON (vLLM reads it with json.loads: '{{\"method\": \"mtp\", "
                            "\"num_speculative_tokens\": 1}}')",
                            flag, text));
  }
  if (!config.is_object())
    throw Error(fmt::format("{}: a JSON object of SpeculativeConfig's fields ('{{\"method\": \"mtp\", "
                            "\"num_speculative_tokens\": 1}}')",
                            flag));
  const auto not_modelled = [&](const std::string& what) {
    return Error(fmt::format("{}: {}", flag, what), ExitCode::unsupported_architecture);
  };
  // Each field the profile reads; anything else may change the draft's memory.
  for (const auto& [key, value] : config.items()) {
    if (key == "tensor_parallel_size")
      throw Error(fmt::format("{}: vLLM refuses it: 'tensor_parallel_size' is not a valid argument in the "
                              "speculative_config. Please pass 'draft_tensor_parallel_size' instead.",
                              flag));
    constexpr std::array<std::string_view, 7> known = {"method", "num_speculative_tokens", "model",
                                                       "draft_tensor_parallel_size", "prompt_lookup_max",
                                                       "prompt_lookup_min", "disable_padded_drafter_batch"};
    if (!speculative_list_has(std::string_view(key), known))
      throw not_modelled(fmt::format("the vLLM profile does not model the field {} (it may change the draft's memory); "
                                     "plan without it",
                                     key));
  }
  const auto positive = [&](std::string_view key) -> std::optional<std::uint64_t> {
    const auto it = config.find(std::string(key));
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 || it->get<std::int64_t>() > 1'000'000)
      throw Error(fmt::format("{}: vLLM refuses it: {} must be an integer greater than zero (got {})", flag, key,
                              it->dump()));
    return it->get<std::uint64_t>();
  };
  const auto string_field = [&](std::string_view key) -> std::optional<std::string> {
    const auto it = config.find(std::string(key));
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw Error(fmt::format("{}: {} must be a string (got {})", flag, key, it->dump()));
    return it->get<std::string>();
  };
  if (const auto it = config.find("disable_padded_drafter_batch"); it != config.end() && !it->is_boolean())
    throw Error(fmt::format("{}: disable_padded_drafter_batch must be true or false (got {})", flag, it->dump()));

  const std::optional<std::uint64_t> tokens = positive("num_speculative_tokens");
  // _verify_args' refusal of a draft without k (its n_predict would give it).
  const auto tokens_missing = [&] {
    return Error(fmt::format("{}: vLLM refuses it: num_speculative_tokens must be provided with speculative model "
                             "unless the draft model config contains an n_predict parameter.",
                             flag));
  };
  const std::optional<std::string> draft = string_field("model");
  std::string method = string_field("method").value_or("");
  const std::optional<std::uint64_t> draft_tp = positive("draft_tensor_parallel_size");
  if (draft_tp && *draft_tp != 1 && *draft_tp != tp)
    throw Error(fmt::format("{}: vLLM refuses it: speculative_draft_tensor_parallel_size={} cannot be other value than "
                            "1 or target model tensor_parallel_size",
                            flag, *draft_tp));

  // __post_init__ without a method: a dotted import path is a custom_class proposer, "ngram" the
  // ngram method, anything else (no model too) draft_model.
  if (method.empty()) method = speculative_method_implied_by(draft);
  if (speculative_list_has(std::string_view(method), kMtpMethods)) method = "mtp";
  else if (!speculative_list_has(std::string_view(method), kOtherMethods))
    throw Error(fmt::format("{}: method '{}' is not one of vLLM's speculative methods (mtp, ngram, suffix, eagle, "
                            "eagle3, draft_model, medusa, mlp_speculator, dflash, dspark, ngram_gpu, custom_class, "
                            "extract_hidden_states, or an MTP model type)",
                            flag, method));

  VllmSpeculative spec;
  spec.method = method;
  if (method == "mtp") {
    // The draft is the target checkpoint itself (model = target_model_config.model) only when no
    // model is named and num_speculative_tokens is given; otherwise _verify_args refuses.
    if (draft)
      throw not_modelled(fmt::format("method mtp with model {}: the vLLM profile reads MTP layers from the served "
                                     "checkpoint only (leave model out)",
                                     *draft));
    if (!tokens) throw tokens_missing();
    const std::string name = model.id.empty() ? model.name : model.id;
    // Qwen3-Next's config states no MTP layer count: its draft builds getattr(config,
    // "num_nextn_predict_layers", 1) layers, and n_predict stays None (qwen3_next_mtp.py).
    const bool unstated_qwen3_next = model.mtp_layers == 0 && model.architecture == "qwen3_next";
    const std::uint32_t layers = unstated_qwen3_next ? 1 : model.mtp_layers;
    if (layers == 0)
      throw Error(fmt::format("{}: method mtp needs the checkpoint's MTP layers; {} declares none "
                              "(num_nextn_predict_layers)",
                              flag, name));
    // n_predict = num_nextn_predict_layers; k may exceed it only by whole cycles of the layers.
    // Nemotron-H's draft asserts one MTP step (n_predict 1) whose pattern may hold several
    // attention layers (mtp_layers counts those).
    const std::uint32_t n_predict = model.architecture == "nemotron_h" ? 1 : layers;
    if (!unstated_qwen3_next && *tokens > n_predict && *tokens % n_predict != 0)
      throw Error(fmt::format("{}: vLLM refuses it: num_speculative_tokens:{} must be divisible by n_predict={}", flag,
                              *tokens, n_predict));
    if (!speculative_list_has(std::string_view(model.architecture), kMtpFamilies))
      throw not_modelled(fmt::format("method mtp for model type {}: which layers vLLM's draft builds for it (and their "
                                     "cache) is not modelled; the vLLM profile derives DeepSeek-V3 (deepseek_mtp), "
                                     "GLM-4.5 (glm4_moe_mtp), GLM-4.7-Flash (glm4_moe_lite_mtp), Qwen3-Next (qwen3_next_mtp), Qwen3.5 "
                                     "(qwen3_5_mtp), ERNIE 4.5 MoE (ernie_mtp), Nemotron-H (nemotron_h_mtp) and the DSA models (deepseek_mtp)",
                                     model.architecture.empty() ? std::string("unknown") : model.architecture));
    if (draft_tp && *draft_tp != tp)
      throw not_modelled(fmt::format("draft_tensor_parallel_size {} beside -tp {}: a draft unsplit across the ranks is "
                                     "not modelled",
                                     *draft_tp, tp));
    spec.num_speculative_tokens = static_cast<std::uint32_t>(*tokens);
    spec.draft_layers = layers;
    return spec;
  }
  if (method == "ngram" || method == "suffix") {
    if (method == "ngram") {
      // Defaults 5 and 5; one given stands for both (__post_init__).
      const std::uint64_t lookup_max = positive("prompt_lookup_max").value_or(positive("prompt_lookup_min").value_or(5));
      const std::uint64_t lookup_min = positive("prompt_lookup_min").value_or(lookup_max);
      if (lookup_min > lookup_max)
        throw Error(fmt::format("{}: vLLM refuses it: prompt_lookup_min={} must be <= prompt_lookup_max={}", flag,
                                lookup_min, lookup_max));
      if (!tokens) throw tokens_missing();
    }
    // Suffix decoding treats k as a limit, by default its tree depth (24).
    spec.num_speculative_tokens = static_cast<std::uint32_t>(tokens.value_or(24));
    return spec;
  }
  // EAGLE-3 (__post_init__: the draft's own config, EAGLEConfig): a head of Llama's layout, whose
  // layers are attention layers of their own shape and whose weights are the draft checkpoint's.
  // draft_model (DraftModelProposer, v1/spec_decode/draft_model.py): a whole model of its own,
  // loaded with its own config at the target's dtype and parallel layout, its attention layers
  // beside the target's.
  if ((method == "eagle3" || method == "eagle" || method == "draft_model") && draft) {
    if (!tokens) throw tokens_missing();
    if (!draft_checkpoint)
      throw not_modelled(fmt::format("method {} with model {}: the draft's config.json was not read here; give model "
                                     "as the path of the draft's folder (its config.json), a draft in the Hugging "
                                     "Face cache or a catalog model",
                                     method, *draft));
    const ModelSpec& head = draft_checkpoint->spec;
    const bool eagle3_head = head.architecture == "llama_eagle3";
    if (method == "eagle3" && !eagle3_head)
      throw not_modelled(fmt::format("method eagle3 with model {}: its config is {}, not an EAGLE-3 head of Llama's layout "
                                     "(architectures LlamaForCausalLMEagle3), the one the vLLM profile prices",
                                     *draft, head.architecture.empty() ? "of no known type" : head.architecture));
    // EAGLE-1 (EAGLEConfig: "Eagle" + the draft config's architecture): a head whose config is a
    // Llama's (LlamaForCausalLM, one decoder layer), built as EagleLlamaForCausalLM.
    if (method == "eagle") {
      if (eagle3_head)
        throw Error(fmt::format("{}: {} is an EAGLE-3 head: give \"method\": \"eagle3\"", flag, *draft));
      if (head.architecture != "llama" || !head.parts.empty() || head.hidden_size == 0)
        throw not_modelled(fmt::format("method eagle with model {}: its config is {}, not an EAGLE-1 head of Llama's "
                                       "layout (a LlamaForCausalLM config), the one the vLLM profile prices",
                                       *draft, head.architecture.empty() ? "of no known type" : head.architecture));
    }
    if (method == "draft_model") {
      if (eagle3_head)
        throw Error(fmt::format("{}: {} is an EAGLE-3 head, not a model to draft with: give \"method\": \"eagle3\"", flag,
                                *draft));
      if (!model.parts.empty())
        throw Error(fmt::format("{}: vLLM refuses it: Speculative Decoding with draft models does not support multimodal "
                                "models yet ({} has {})",
                                flag, model.id.empty() ? model.name : model.id, model.parts.front().name));
      if (!head.parts.empty())
        throw not_modelled(fmt::format("method draft_model with model {}: a multimodal draft is not modelled", *draft));
      // verify_equal_vocab_size_if_draft_model: one vocabulary for both.
      if (head.vocab_size && model.vocab_size && head.vocab_size != model.vocab_size)
        throw Error(fmt::format("{}: vLLM refuses it: the draft model's vocab size ({}) must equal the target's ({})", flag,
                                head.vocab_size, model.vocab_size));
      if (head.params == 0 && !head.weights_bytes)
        throw not_modelled(fmt::format("method draft_model with model {}: the draft's weights are not known ({})", *draft,
                                       head.params_source.empty() ? "its parameters are not counted" : head.params_source));
    }
    if (draft_tp && *draft_tp != tp)
      throw not_modelled(fmt::format("draft_tensor_parallel_size {} beside -tp {}: a draft unsplit across the ranks is "
                                     "not modelled",
                                     *draft_tp, tp));
    spec.num_speculative_tokens = static_cast<std::uint32_t>(*tokens);
    spec.draft_layers = head.layer_count();
    spec.draft = std::move(draft_checkpoint);
    return spec;
  }
  if ((method == "draft_model" || method == "eagle3" || method == "eagle") && !draft) {
    if (!tokens) throw tokens_missing();
    throw Error(fmt::format("{}: vLLM refuses it: num_speculative_tokens was provided but without speculative model.", flag));
  }
  throw not_modelled(fmt::format("method {}{}: its draft is a checkpoint (or GPU buffers) of its own, whose weights and KV "
                                 "cache the vLLM profile does not derive (it reads EAGLE-1 and EAGLE-3 heads and draft models); the "
                                 "target's figures would leave them out",
                                 method, draft ? " with model " + *draft : std::string()));
}

}  // namespace kvplan
