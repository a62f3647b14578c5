#include "engines/core/gguf_repo.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "engines/core/weight_formats.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "model/gguf_mix.h"
#include "model/text.h"

namespace kvplan {

namespace {

/// The catalog entries whose Hugging Face id has `name` after its organisation ("Qwen3-8B" for
/// Qwen/Qwen3-8B): GGUF repositories keep the model's name and change the organisation.
std::vector<const ModelSpec*> entries_named(std::string_view name, const ModelCatalog& catalog) {
  const std::string wanted = ascii_lower(name);
  std::vector<const ModelSpec*> found;
  for (const ModelSpec& model : catalog.models)
    for (const std::string& alias : model.aliases) {
      const std::size_t slash = alias.find('/');
      if (slash != std::string::npos && ascii_lower(std::string_view(alias).substr(slash + 1)) == wanted &&
          std::find(found.begin(), found.end(), &model) == found.end())
        found.push_back(&model);
    }
  return found;
}

const ModelSpec& base_model(const GgufRepoRef& ref, const ModelCatalog& catalog) {
  // bartowski's newer repositories spell the organisation into the name: Qwen_Qwen3-8B-GGUF.
  std::vector<std::string> names = {ref.model_name};
  if (const std::size_t underscore = ref.model_name.find('_'); underscore != std::string::npos)
    names.push_back(ref.model_name.substr(underscore + 1));
  for (const std::string& name : names) {
    const std::vector<const ModelSpec*> found = entries_named(name, catalog);
    if (found.size() == 1) return *found.front();
    if (found.size() > 1)
      throw Error(fmt::format("--model: {}: '{}' is the name of {} catalog models ({}, ...): give the GGUF file", ref.repo,
                              name, found.size(), found.front()->id),
                  ExitCode::unsupported_architecture);
  }
  throw Error(fmt::format("--model: {}: a repository of GGUF files of '{}', which is not in the catalog (kvplan models "
                          "lists it): give the GGUF file itself (--model FILE.gguf)",
                          ref.repo, ref.model_name));
}

/// The plain dtype standing for a GGUF type in the spec, as Ollama's tags do: its size is the
/// weights' figure, this only the class (fp16, 8-bit, 4-bit and below).
const Dtype& dtype_class(std::string_view mix) {
  if (mix == "f16") return parse_weight_dtype("fp16");
  if (mix == "q8_0") return parse_weight_dtype("int8");
  return parse_weight_dtype("int4");
}

}  // namespace

std::optional<GgufRepoRef> parse_gguf_repo(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || text.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  const std::size_t colon = text.find(':');
  const std::string_view repo = text.substr(0, colon);
  constexpr std::string_view kSuffix = "-gguf";
  if (repo.size() <= slash + 1 + kSuffix.size() || ascii_lower(repo.substr(repo.size() - kSuffix.size())) != kSuffix)
    return std::nullopt;
  GgufRepoRef ref;
  ref.repo = std::string(repo);
  ref.model_name = std::string(repo.substr(slash + 1, repo.size() - slash - 1 - kSuffix.size()));
  if (colon != std::string_view::npos) ref.quant = std::string(text.substr(colon + 1));
  return ref;
}

ModelSpec load_gguf_repo_model(const GgufRepoRef& ref, const ModelCatalog& catalog, std::string_view quant) {
  if (!quant.empty() && !ref.quant.empty() && ascii_lower(quant) != ascii_lower(ref.quant))
    throw Error(fmt::format("--model {}:{} names the quantization, and --weight-dtype {} another", ref.repo, ref.quant, quant));
  const std::string named = !ref.quant.empty() ? ref.quant : !quant.empty() ? std::string(quant) : "Q4_K_M";
  const GgufMixInfo* mix = find_gguf_mix(named);
  if (mix == nullptr)
    throw Error(fmt::format("--model: {}: '{}' is not a type llama.cpp's quantizer lays out by its own rules (q4_k_m, "
                            "q5_k_m, q6_k, q8_0, iq4_xs, ...; Unsloth's UD-* and bartowski's *_L files mix types their "
                            "own way): give the GGUF file itself (--model FILE.gguf)",
                            ref.repo, named),
                ExitCode::unsupported_architecture);
  ModelSpec spec = base_model(ref, catalog);
  const Dtype& format = parse_requested_weight_dtype(mix->name);
  std::optional<WeightsEstimate> weights;
  try {
    weights = price_weight_format(spec, format);
  } catch (const Error& error) {
    // Only dense decoders are laid out tensor by tensor: the way forward names this model.
    if (error.code() != ExitCode::unsupported_architecture) throw;
    throw Error(fmt::format("--model: {}: kvplan lays out a GGUF's tensors only for dense decoders, and {} is {}: give "
                            "the GGUF file itself (--model FILE.gguf), or the file's size (--model {} --weights SIZE)",
                            ref.repo, spec.id, spec.architecture, spec.id),
                ExitCode::unsupported_architecture);
  }
  if (!weights) throw Error(fmt::format("--model: {}: {} is not a GGUF quantization", ref.repo, named));
  spec.source = fmt::format("{}; {}:{} as llama.cpp's quantizer lays out {} (the file itself, --model FILE.gguf, is "
                            "exact)",
                            spec.source, ref.repo, named, ascii_lower(named));
  spec.id = ref.repo + ":" + named;
  spec.aliases.clear();
  spec.weights_bytes = weights->bytes;
  spec.weights_source = fmt::format("{}:{}: {}", ref.repo, named, weights->rule);
  spec.weight_dtype = &dtype_class(mix->name);
  // The repository's model file holds the language model; a vision tower is a separate mmproj file.
  spec.parts.clear();
  spec.mtp_layers = 0;
  return spec;
}

ModelSpec load_model_or_gguf_repo(std::string_view text, std::string_view hf_hub_cache, std::string_view quant) {
  if (const std::optional<GgufRepoRef> repo = parse_gguf_repo(text)) return load_gguf_repo_model(*repo, builtin_models(), quant);
  return load_model(text, hf_hub_cache);
}

}  // namespace kvplan
