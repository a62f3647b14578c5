#include "loaders/hf_config.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/checked.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/architecture.h"
#include "loaders/config_fields.h"
#include "loaders/hf_quantization.h"
#include "loaders/hf_rope.h"
#include "loaders/json_reader.h"
#include "loaders/modelopt_quantization.h"
#include "loaders/param_count.h"

namespace kvplan {

namespace {

std::uint32_t narrow(ConfigFields& fields, const std::string& key, std::uint64_t value) {
  if (value > 0xFFFF'FFFFu) fields.fail(key, "is larger than 2^32 - 1");
  return static_cast<std::uint32_t>(value);
}

const Dtype& model_dtype(ConfigFields& fields) {
  const auto text = fields.string("torch_dtype");
  const auto newer = fields.string("dtype");
  if (text) return parse_torch_dtype(*text);
  if (newer) return parse_torch_dtype(*newer);
  return parse_weight_dtype("bf16");
}

/// The fixed per-sequence state of one linear layer, as the family sizes it (vLLM's
/// MambaStateShapeCalculator and MambaStateDtypeCalculator, per family in src/loaders/arch/).
std::vector<StateTensor> linear_state(ConfigFields& fields, const arch::Layout& layout, const Dtype& dtype) {
  const arch::Family* family = fields.family();
  if (!family || !family->linear_state)
    throw unsupported_architecture(fmt::format("{}: model_type", fields.origin()),
                                   fields.model_type() + " (linear layers of a kind kvplan cannot size)");
  return family->linear_state(fields, layout, dtype);
}

/// Multi-token-prediction layers, in each family's spelling: num_nextn_predict_layers (DeepSeek,
/// GLM, Step), mtp_num_hidden_layers (Qwen3.5), num_mtp_modules x mtp_transformer_layers (MiniMax,
/// with use_mtp). Not cached unless speculative decoding uses them (--mtp-layers).
/// NemotronH describes each MTP module's blocks (mtp_layers_block_type, or the
/// mtp_hybrid_override_pattern string); only attention blocks keep a cache, MoE and MLP blocks
/// none. A Mamba block would keep a state kvplan does not price for MTP, so it is refused.
std::uint64_t mtp_attention_blocks(ConfigFields& fields) {
  std::vector<std::string> blocks;
  std::string key = "mtp_layers_block_type";
  if (const nlohmann::json* list = fields.find(key)) {
    if (!list->is_array()) fields.fail(key, "must be a list of block types");
    for (const nlohmann::json& block : *list) blocks.push_back(block.is_string() ? block.get<std::string>() : block.dump());
  } else if (const auto pattern = fields.string("mtp_hybrid_override_pattern")) {
    key = "mtp_hybrid_override_pattern";
    for (const char c : *pattern)
      blocks.emplace_back(c == '*' ? "attention" : c == 'E' ? "moe" : c == '-' ? "mlp" : std::string(1, c));
  } else {
    return 1;  // every other family: an MTP layer is one transformer layer
  }
  std::uint64_t attention = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i] == "attention") ++attention;
    else if (blocks[i] != "moe" && blocks[i] != "mlp")
      throw unsupported_architecture(fmt::format("{}: {}[{}]", fields.origin(), key, i), blocks[i]);
  }
  return attention;
}

std::uint64_t read_mtp_layers(ConfigFields& fields) {
  const std::uint64_t cached_per_module = mtp_attention_blocks(fields);
  const auto nextn = fields.uint("num_nextn_predict_layers");
  const auto qwen = fields.uint("mtp_num_hidden_layers");
  const auto modules = fields.uint("num_mtp_modules");
  const std::uint64_t per_module = fields.uint("mtp_transformer_layers").value_or(1);
  const bool used = fields.boolean("use_mtp").value_or(true);
  if (nextn) return checked_mul(*nextn, cached_per_module, "MTP layers");
  if (qwen) return *qwen;
  return modules && used ? checked_mul(*modules, per_module, "MTP layers") : 0;
}

std::string display_name(ConfigFields& fields, std::string_view origin) {
  if (const auto name = fields.string("_name_or_path"); name && !name->empty()) return *name;
  std::filesystem::path path(origin);
  if (path.filename() == "config.json" && path.has_parent_path()) return path.parent_path().filename().string();
  return path.filename().string();
}

/// One decoder layer of the spec from its plan: the cache shape (narrowed to the spec's widths),
/// the window a sliding or chunked layer holds, the indexer key, the linear state.
LayerSpec layer_spec(ConfigFields& fields, const arch::Layout& layout, const arch::LayerPlan& plan, std::size_t index,
                     const std::vector<StateTensor>& state) {
  LayerSpec layer;
  layer.kind = plan.cache_kind();
  if ((plan.attends() || plan.kind == LayerKind::cross) && !plan.kv_shared) {
    layer.kv_heads = narrow(fields, "num_key_value_heads", plan.kv_heads);
    layer.k_head_dim = narrow(fields, "head_dim", plan.k_dim);
    layer.v_head_dim = narrow(fields, "v_head_dim", plan.v_dim);
  }
  if (plan.kind == LayerKind::mla) {
    layer.kv_heads = 1;
    layer.k_head_dim = narrow(fields, "kv_lora_rank", layout.mla_rank + layout.mla_rope);
    layer.mla_rope_dim = narrow(fields, "qk_rope_head_dim", layout.mla_rope);
  }
  if (plan.kind == LayerKind::linear || layout.state_on_every_layer) layer.state = state;
  if (plan.index_head_dim) {
    if (plan.kind != LayerKind::mla) fields.fail("index_head_dim", fmt::format("layer {} has an indexer but no MLA cache", index));
    layer.index_head_dim = static_cast<std::uint32_t>(plan.index_head_dim);
  }
  if (layer.kind == LayerKind::sliding) {
    if (plan.window == 0) fields.fail("sliding_window", "is missing or zero for a sliding layer");
    layer.window = plan.window;
  }
  if (layer.kind == LayerKind::chunked) {
    if (plan.window == 0) fields.fail("attention_chunk_size", "is missing or zero for a chunked layer");
    layer.window = plan.window;
  }
  if (layer.kind == LayerKind::cross) layer.window = plan.window;
  return layer;
}

/// The MTP layers' weights priced as the checkpoint's quantization prices the model: what lies
/// beside each one's decoder layer (the embedding and head copies, eh_proj, its norms: DeepSeek-V3's
/// fp8 checkpoint stores them in bf16) at the model's dtype, as its embeddings are, the decoder
/// layer as the trunk's. Nothing when the family did not count them.
void price_mtp_layers(ConfigFields& fields, const ParamCount& count, const Dtype& dtype, ModelSpec& spec) {
  if (count.mtp == 0) return;
  spec.mtp_replicated_bytes = weight_bytes_at(count.mtp_replicated, dtype);
  const nlohmann::json* quantization = fields.find("quantization_config");
  // ModelOpt's lists name the MTP layers they keep; kvplan keeps the rest of its MTP layers at
  // the model dtype too (it does not count their modules apart): an upper bound at worst.
  if (quantization && is_modelopt_quantization(*quantization)) {
    spec.mtp_weights_bytes = weight_bytes_at(count.mtp, dtype);
    return;
  }
  // Each MTP layer priced alone: its decoder layer as the trunk's are, what lies beside it
  // (eh_proj, the norms, the copies) kept unquantized, as a model's embeddings are. Without the
  // decoder layer counted apart, the unquantized part is the count's word for it.
  const std::uint64_t each = spec.mtp_layers ? count.mtp / spec.mtp_layers : 0;
  if (count.mtp_layer && each * spec.mtp_layers == count.mtp && each >= count.mtp_layer->params) {
    ParamCount layer;
    layer.total = each;
    layer.layers = {*count.mtp_layer};
    layer.embedding = each - count.mtp_layer->params;
    spec.mtp_weights_bytes =
        checked_mul(weights_from_quantization(quantization, layer, dtype, fields.origin()).bytes, spec.mtp_layers, "MTP weights");
    return;
  }
  ParamCount layers;
  layers.total = count.mtp;
  layers.embedding = count.mtp_unquantized;  // kept unquantized, as a model's embeddings are
  spec.mtp_weights_bytes = weights_from_quantization(quantization, layers, dtype, fields.origin()).bytes;
}

/// The checkpoint's weights priced from its quantization_config (none: every parameter at
/// `dtype`), or nullopt with `unpriced` saying why when kvplan does not price its format (an
/// unknown quant_method, a bit width it does not read). A malformed field is still an Error.
std::optional<QuantizedWeights> price_checkpoint(ConfigFields& fields, const ParamCount& count, const Dtype& dtype,
                                                 std::string& unpriced) {
  try {
    return weights_from_quantization(fields.find("quantization_config"), count, dtype, fields.origin());
  } catch (const OverflowError&) {
    throw;
  } catch (const Error& error) {
    if (error.code() != ExitCode::unsupported_architecture) throw;
    // "unsupported architecture: <origin>: quantization_config.quant_method = x": the field and value.
    std::string_view what = error.what();
    const std::string origin = fields.origin() + ": ";
    for (const std::string_view prefix : {std::string_view("unsupported architecture: "), std::string_view(origin)})
      if (what.starts_with(prefix)) what.remove_prefix(prefix.size());
    unpriced = what;
    return std::nullopt;
  }
}

/// The parameter count of the config's family; an unsupported-architecture Error when kvplan does
/// not count its model_type.
ParamCount count_family(ConfigFields& fields, const arch::Layout& layout) {
  const arch::Family* family = fields.family();
  if (!family || !family->count) throw unsupported_architecture("model_type", fields.model_type());
  return family->count(fields, layout);
}

/// The parts of a multimodal checkpoint beside its language model: the towers and projectors the
/// wrapper's family counts from vision_config / audio_config (arch::Family::towers), at the
/// checkpoint's own dtype (towers are kept unquantized); a tower kvplan does not count is a part of
/// 0 parameters, shown as not counted.
std::vector<ModelPart> read_parts(ConfigFields& fields, const arch::Layout& layout, const Dtype& dtype) {
  const nlohmann::json& root = fields.root();
  const auto present = [&](const char* key) {
    const auto it = root.find(key);
    return it != root.end() && it->is_object();
  };
  if (const arch::Family* own = fields.family(); own && own->draft_parts) {
    std::vector<ModelPart> parts = own->draft_parts(fields, layout);
    for (ModelPart& part : parts) part.bytes = weight_bytes_at(part.params, dtype);
    return parts;
  }
  if (!present("vision_config") && !present("audio_config")) return {};
  const std::string wrapper = root.contains("model_type") && root["model_type"].is_string() ? root["model_type"].get<std::string>() : "";
  const arch::Family* family = arch::find_wrapper(wrapper);
  std::vector<ModelPart> parts = family && family->towers ? family->towers(fields, layout) : std::vector<ModelPart>{};
  const auto named = [&](const std::string& name) {
    return std::any_of(parts.begin(), parts.end(), [&](const ModelPart& part) { return part.name == name; });
  };
  if (present("vision_config") && !named("vision tower")) parts.push_back({"vision tower", 0, 0});
  if (present("audio_config") && !named("audio tower")) parts.push_back({"audio tower", 0, 0});
  for (ModelPart& part : parts) part.bytes = weight_bytes_at(part.params, dtype);
  return parts;
}

/// vision_config's num_hidden_layers and hidden_size, each 0 where the config does not state a
/// positive integer (the engine then falls to its own default, which kvplan does not guess).
std::optional<ModelSpec::VisionEncoder> read_vision_encoder(const nlohmann::json& root) {
  const auto vision = root.find("vision_config");
  if (vision == root.end() || !vision->is_object()) return std::nullopt;
  const auto positive = [&](const char* key) -> std::uint64_t {
    const auto it = vision->find(key);
    if (it == vision->end() || !it->is_number_unsigned()) return 0;
    return it->get<std::uint64_t>();
  };
  return ModelSpec::VisionEncoder{positive("num_hidden_layers"), positive("hidden_size")};
}

}  // namespace

bool is_hf_config(const nlohmann::json& document) {
  return document.is_object() &&
         (document.contains("model_type") || document.contains("architectures") || document.contains("num_hidden_layers"));
}

ModelSpec model_spec_from_hf_config(const nlohmann::json& config, std::string_view origin,
                                    std::optional<std::uint64_t> safetensors_total_size) {
  if (!config.is_object()) throw Error(fmt::format("{}: expected a JSON object", origin));
  ConfigFields fields(config, std::string(origin));
  fields.ignore({"use_cache", "cache_implementation", "rope_local_base_freq", "chunk_size_feed_forward",
                 "sliding_window_size", "q_lora_rank", "_kvplan_fixture_note", "index_file"});
  // Fields whose names sound like the cache but that only shape weights or compute: which MLPs
  // are MoE, attention-sink biases (parameters), RoPE of the sliding layers, NoPE position
  // embeddings (Granite 4, Kimi MLA: the latent is cached the same), Gemma 3n's FFN sparsity,
  // Kimi K3's activation, Qwen3.5's MTP embedding choice.
  fields.ignore({"mlp_layer_types", "add_swa_attention_sink_bias", "add_full_attention_sink_bias", "swa_rope_theta",
                 "position_embedding_type", "mla_use_nope", "activation_sparsity_pattern", "activation_situ_linear_beta",
                 "mtp_use_dedicated_embeddings", "swa_num_attention_heads"});

  ModelSpec spec;
  spec.id = std::string(origin);
  spec.source = std::string(origin);
  spec.architecture = arch::language_model_type(fields);
  fields.set_family(arch::find_family(spec.architecture), spec.architecture);
  spec.name = display_name(fields, origin);

  const arch::Layout layout = arch::read_layout(fields);
  spec.attention_heads = narrow(fields, "num_attention_heads", layout.heads);
  const Dtype& dtype = model_dtype(fields);
  const std::vector<StateTensor> state = layout.any(LayerKind::linear) || layout.state_on_every_layer
                                             ? linear_state(fields, layout, dtype)
                                             : std::vector<StateTensor>{};
  for (std::size_t i = 0; i < layout.count(); ++i) spec.layers.push_back(layer_spec(fields, layout, layout.layers[i], i, state));

  spec.mtp_layers = narrow(fields, "num_nextn_predict_layers", read_mtp_layers(fields));
  // Kimi Linear states its context as model_max_length only.
  spec.max_context = fields.uint("max_position_embeddings").value_or(fields.uint("model_max_length").value_or(0));
  // The language model's vocabulary (the rows of its output head), else the config class default
  // the parameter count also assumes (gemma-3-27b-it states none: Gemma3TextConfig's 262,208).
  spec.vocab_size = fields.uint("vocab_size").value_or(fields.default_of("vocab_size").value_or(0));
  spec.rope = read_hf_rope(fields, spec.layers);
  fields.reject_unread_cache_fields();

  // Weights: the exact checkpoint size when the index gives it, else counted from the shapes.
  ParamCount count;
  std::string not_counted;
  try {
    count = count_family(fields, layout);
  } catch (const OverflowError&) {
    throw;  // an absurd size is an error whatever else is known
  } catch (const Error& error) {
    // The exact size from the index makes a count that cannot be done unnecessary. Without it, an
    // architecture the counter does not know gives way to the user's --weights or --params; a
    // malformed field does not.
    if (!safetensors_total_size && error.code() != ExitCode::unsupported_architecture) throw;
    not_counted = error.what();
  }
  if (!not_counted.empty() && !safetensors_total_size) {
    // The cache is understood; the weights are not. Planning asks for them (estimate_weights).
    spec.params = 0;
    spec.weight_dtype = &dtype;
    spec.params_source = "not counted: " + not_counted;
    validate(spec);
    return spec;
  }
  std::string unpriced;
  const std::optional<QuantizedWeights> quantized = price_checkpoint(fields, count, dtype, unpriced);
  if (!quantized) {
    // The count is right, but not what its format stores per parameter, nor what an engine makes
    // of it on load (even beside an index's total_size): the weights ask for the user's --weights.
    spec.params = 0;
    spec.weight_dtype = &dtype;
    spec.params_source = fmt::format("not priced: {} params counted, in a format kvplan does not price ({})",
                                     billions(count.total), unpriced);
    validate(spec);
    return spec;
  }
  spec.params = count.total;
  spec.active_params = count.active != count.total ? count.active : 0;
  spec.routed_experts = count.routed_experts;
  // What a weight format priced tensor by tensor needs (--weight-dtype q4_k_m): the widths of a
  // dense decoder; none for MoE, whose expert widths have other names.
  spec.embedding_params = count.embedding;
  spec.lm_head_params = count.lm_head;
  if (count.expert == 0 && count.total) {
    spec.hidden_size = fields.uint("hidden_size").value_or(0);
    spec.intermediate_size = fields.uint("intermediate_size").value_or(0);
  }
  spec.parts = read_parts(fields, layout, dtype);
  spec.vision_encoder = read_vision_encoder(fields.root());
  spec.weight_dtype = count.total ? quantized->dtype : &dtype;
  if (safetensors_total_size) {
    spec.weights_bytes = *safetensors_total_size;
    spec.weights_source = fmt::format("safetensors total_size ({})", spec.weight_dtype->name);
  } else {
    spec.weights_bytes = checked_add(quantized->bytes, parts_bytes(spec), "weight size");
    spec.weights_source = quantized->rule;
  }
  price_mtp_layers(fields, count, dtype, spec);
  if (const nlohmann::json* quantization = fields.find("quantization_config");
      quantization && is_modelopt_quantization(*quantization))
    spec.checkpoint_kv_dtype = modelopt_kv_dtype(*quantization);
  validate(spec);
  return spec;
}

namespace {

/// Whether config.json (or its language model's text_config) holds a quantization_config.
bool has_quantization_config(const nlohmann::json& config) {
  if (config.contains("quantization_config")) return true;
  const auto text = config.find("text_config");
  return text != config.end() && text->is_object() && text->contains("quantization_config");
}

/// NVIDIA ModelOpt checkpoints made before ModelOpt wrote its scheme into config.json state it in
/// hf_quant_config.json beside it; vLLM and TensorRT-LLM read that file then, and so does kvplan:
/// `config` with the file's scheme as its quantization_config.
nlohmann::json with_modelopt_scheme(nlohmann::json config, const std::filesystem::path& quant_path) {
  std::error_code ec;
  if (!config.is_object() || has_quantization_config(config) || !std::filesystem::exists(quant_path, ec)) return config;
  const std::string origin = quant_path.string();
  config["quantization_config"] =
      modelopt_config_from_hf_quant_config(parse_json_document(read_text_file(origin), origin), origin);
  return config;
}

}  // namespace

ModelSpec load_hf_model(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path config_path(path);
  if (fs::is_directory(config_path, ec)) {
    config_path /= "config.json";
    if (!fs::exists(config_path, ec))
      throw Error(fmt::format("{}: no config.json in this folder (expected a Hugging Face model folder)", path));
  }
  const std::string origin = config_path.string();
  const nlohmann::json config =
      with_modelopt_scheme(parse_json_document(read_text_file(origin), origin), config_path.parent_path() / "hf_quant_config.json");

  std::optional<std::uint64_t> total_size;
  const fs::path index_path = config_path.parent_path() / "model.safetensors.index.json";
  if (fs::exists(index_path, ec)) {
    const std::string index_origin = index_path.string();
    const nlohmann::json index = parse_json_document(read_text_file(index_origin), index_origin);
    JsonObjectReader reader(index, index_origin);
    if (const nlohmann::json* metadata = reader.find("metadata")) {
      JsonObjectReader meta(*metadata, index_origin + ": metadata");
      total_size = meta.optional_uint("total_size");
    }
  }
  return model_spec_from_hf_config(config, origin, total_size);
}

}  // namespace kvplan
