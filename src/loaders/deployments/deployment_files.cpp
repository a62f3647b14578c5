#include "loaders/deployments/deployment_files.h"

#include <algorithm>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/deployments/shell_words.h"
#include "loaders/deployments/yaml_loader.h"
#include "model/suggest.h"

namespace kvplan {

using nlohmann::json;

std::string SourceLocation::text() const {
  if (file == "--cmd") return fmt::format("--cmd {}", index);
  if (line > 0) return fmt::format("{}:{}", file, line);
  if (index > 0) return fmt::format("{} (deployment {})", file, index);
  return file;
}

namespace {

constexpr std::string_view kGpuResource = "nvidia.com/gpu";
constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";
constexpr std::string_view kGpuAnnotation = "kvplan.io/gpu";
constexpr std::string_view kModelAnnotation = "kvplan.io/model";

/// A scalar as the text it was written as: "65536", "0.9", "fp8". Objects and arrays are not.
std::optional<std::string> scalar_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_unsigned()) return std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number_float()) return value.dump();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  return std::nullopt;
}

const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(key));
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const json* path(const json& root, std::initializer_list<std::string_view> keys) {
  const json* node = &root;
  for (const std::string_view key : keys)
    if (!(node = member(*node, key))) return nullptr;
  return node;
}

std::string text_at(const json& root, std::initializer_list<std::string_view> keys) {
  const json* node = path(root, keys);
  return node ? scalar_text(*node).value_or("") : "";
}

/// One file's documents and how to say where a node is.
struct Source {
  std::string file;
  std::string text;  ///< the whole file: JSON lines are found in it
  const TreeDocument* doc = nullptr;
  std::uint64_t count = 0;  ///< deployments read so far, for their index

  SourceLocation at(const std::string& pointer, std::string_view name) {
    SourceLocation where{file, doc->line_of(pointer), ++count};
    if (where.line == 0 && !name.empty()) {
      // JSON has no marks: the line where the entry's name is written, if it is written once.
      const std::string quoted = json(std::string(name)).dump();
      const std::size_t first = text.find(quoted);
      if (first != std::string::npos && text.find(quoted, first + 1) == std::string::npos)
        where.line = 1 + static_cast<std::uint64_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(first), '\n'));
    }
    return where;
  }
};

// --- kvplan's own deployments list --------------------------------------------------------------

constexpr std::string_view kEntryKeys[] = {"name",    "model",        "gpu",         "count",  "gpus",    "runtime",
                                           "ctx",     "batch",        "concurrency", "kv_dtype", "weight_dtype",
                                           "utilization", "margin",   "options",     "command", "env"};

std::vector<std::string> command_words(const json& command) {
  if (command.is_string()) return split_shell_words(command.get<std::string>());
  std::vector<std::string> words;
  if (!command.is_array()) throw Error("command: a string or a list of words");
  for (const json& word : command) {
    const std::optional<std::string> text = scalar_text(word);
    if (!text) throw Error("command: every word must be a string");
    words.push_back(*text);
  }
  return words;
}

Deployment read_entry(const json& entry, const std::string& pointer, Source& source) {
  Deployment d;
  d.name = text_at(entry, {"name"});
  d.where = source.at(pointer, d.name);
  if (d.name.empty()) d.name = fmt::format("deployment {}", d.where.index);
  try {
    if (!entry.is_object()) throw Error("a deployment is a mapping of settings (name, model, gpu, ...)");
    std::vector<std::string> known(std::begin(kEntryKeys), std::end(kEntryKeys));
    for (const auto& [key, value] : entry.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end())
        throw Error(fmt::format("unknown setting '{}'{}", key, did_you_mean(key, known)));
      if (key == "options" || key == "command" || key == "env" || value.is_null()) continue;
      if (!scalar_text(value)) throw Error(fmt::format("{}: a single value", key));
    }
    d.model = text_at(entry, {"model"});
    if (std::string gpu = text_at(entry, {"gpu"}); !gpu.empty()) d.gpus.push_back(gpu);
    d.gpu_count = text_at(entry, {"count"});
    if (d.gpu_count.empty()) d.gpu_count = text_at(entry, {"gpus"});
    d.runtime = text_at(entry, {"runtime"});
    d.ctx = text_at(entry, {"ctx"});
    d.batch = text_at(entry, {"batch"});
    if (d.batch.empty()) d.batch = text_at(entry, {"concurrency"});
    d.kv_dtype = text_at(entry, {"kv_dtype"});
    d.weight_dtype = text_at(entry, {"weight_dtype"});
    d.utilization = text_at(entry, {"utilization"});
    d.margin = text_at(entry, {"margin"});
    if (const json* options = member(entry, "options")) {
      if (!options->is_object()) throw Error("options: a mapping of engine flags to values (max-num-seqs: 64)");
      for (const auto& [key, value] : options->items()) {
        std::string name = key;
        while (!name.empty() && name.front() == '-') name.erase(0, 1);
        d.options[name] = value.is_null() ? "" : scalar_text(value).value_or("");
      }
    }
    if (const json* command = member(entry, "command")) {
      EngineCommand engine;
      engine.argv = command_words(*command);
      if (const json* env = member(entry, "env")) {
        if (!env->is_object()) throw Error("env: a mapping of variable names to values");
        for (const auto& [key, value] : env->items()) engine.env[key] = scalar_text(value).value_or("");
      }
      d.commands.push_back(std::move(engine));
    } else if (member(entry, "env")) {
      throw Error("env: applies to a command (give command: too)");
    }
  } catch (const Error& error) {
    d.problem = error.what();
  }
  return d;
}

// --- Kubernetes ---------------------------------------------------------------------------------

/// The container's environment: `env` values (valueFrom cannot be known here: kept as "$(from)").
std::map<std::string, std::string> container_env(const json& container) {
  std::map<std::string, std::string> env;
  if (const json* list = member(container, "env"); list && list->is_array())
    for (const json& item : *list) {
      const std::string name = text_at(item, {"name"});
      if (name.empty()) continue;
      env[name] = member(item, "value") ? text_at(item, {"value"}) : "$(valueFrom)";
    }
  return env;
}

std::vector<std::string> words_of(const json* list) {
  std::vector<std::string> words;
  if (!list) return words;
  if (list->is_string()) return split_shell_words(list->get<std::string>());
  if (list->is_array())
    for (const json& word : *list) words.push_back(scalar_text(word).value_or(""));
  return words;
}

/// The GPU types a pod may land on: a kvplan.io/gpu annotation, else the nvidia.com/gpu.product
/// node selector, else the values of a required node affinity on that label.
std::vector<std::string> gpu_types(const json& pod_spec, const std::vector<const json*>& metadatas) {
  for (const json* metadata : metadatas)
    if (metadata)
      if (std::string gpu = text_at(*metadata, {"annotations", kGpuAnnotation}); !gpu.empty()) return {gpu};
  if (std::string product = text_at(pod_spec, {"nodeSelector", kGpuProductLabel}); !product.empty()) return {product};
  std::vector<std::string> values;
  const json* terms = path(pod_spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                                      "nodeSelectorTerms"});
  if (terms && terms->is_array())
    for (const json& term : *terms)
      if (const json* expressions = member(term, "matchExpressions"); expressions && expressions->is_array())
        for (const json& expression : *expressions)
          if (text_at(expression, {"key"}) == kGpuProductLabel && text_at(expression, {"operator"}) == "In")
            for (const std::string& value : words_of(member(expression, "values"))) values.push_back(value);
  return values;
}

std::string annotation(const std::vector<const json*>& metadatas, std::string_view key) {
  for (const json* metadata : metadatas)
    if (metadata)
      if (std::string value = text_at(*metadata, {"annotations", key}); !value.empty()) return value;
  return "";
}

/// One deployment per container of the pod that asks for GPUs or runs a command kvplan knows.
void read_pod(const json& pod_spec, const std::string& pointer, const std::string& name,
              const std::vector<const json*>& metadatas, Source& source, std::vector<Deployment>& out) {
  const json* containers = member(pod_spec, "containers");
  if (!containers || !containers->is_array()) return;
  const std::vector<std::string> types = gpu_types(pod_spec, metadatas);
  for (std::size_t i = 0; i < containers->size(); ++i) {
    const json& container = (*containers)[i];
    const std::string container_pointer = fmt::format("{}/containers/{}", pointer, i);
    const std::string gpus = text_at(container, {"resources", "limits", kGpuResource});
    EngineCommand command;
    command.argv = words_of(member(container, "command"));
    const std::vector<std::string> args = words_of(member(container, "args"));
    command.argv.insert(command.argv.end(), args.begin(), args.end());
    command.env = container_env(container);
    command.image = text_at(container, {"image"});
    // A sidecar (no GPU, no command) deploys no model.
    if (gpus.empty() && command.argv.empty()) continue;
    if (gpus == "0") continue;
    Deployment d;
    d.name = containers->size() > 1 ? fmt::format("{}/{}", name, text_at(container, {"name"})) : name;
    const std::string at = member(container, "args") ? container_pointer + "/args"
                           : member(container, "command") ? container_pointer + "/command"
                                                          : container_pointer;
    d.where = source.at(at, "");
    d.gpus = types;
    d.gpu_count = gpus;
    d.model = annotation(metadatas, kModelAnnotation);
    d.commands.push_back(std::move(command));
    out.push_back(std::move(d));
  }
}

void read_kubernetes(const json& object, const std::string& pointer, Source& source, std::vector<Deployment>& out);

/// KServe: the predictor's containers, or its `model:` with the runtime's args.
void read_inference_service(const json& object, const std::string& pointer, const std::string& name, Source& source,
                            std::vector<Deployment>& out) {
  const json* predictor = path(object, {"spec", "predictor"});
  if (!predictor) return;
  const std::vector<const json*> metadatas{member(object, "metadata")};
  if (member(*predictor, "containers")) {
    read_pod(*predictor, pointer + "/spec/predictor", name, metadatas, source, out);
    return;
  }
  const json* model = member(*predictor, "model");
  if (!model) return;
  // The model's container: the serving runtime's entrypoint is not in the manifest, only its args
  // (KServe's huggingface runtime serves with vLLM); its lines are the model node's.
  json pod = json::object();
  json container = *model;
  const std::string format = text_at(*model, {"modelFormat", "name"});
  if (!member(container, "command") && (format == "huggingface" || text_at(*model, {"runtime"}).find("vllm") != std::string::npos))
    container["image"] = "kserve-huggingfaceserver";
  pod["containers"] = json::array({container});
  for (const char* key : {"nodeSelector", "affinity"})
    if (const json* value = member(*predictor, key)) pod[key] = *value;
  const std::size_t before = out.size();
  read_pod(pod, pointer + "/spec/predictor/model", name, metadatas, source, out);
  for (std::size_t i = before; i < out.size(); ++i) out[i].name = name;
}

void read_kubernetes(const json& object, const std::string& pointer, Source& source, std::vector<Deployment>& out) {
  const std::string kind = text_at(object, {"kind"});
  const std::string name = text_at(object, {"metadata", "name"});
  if (kind == "List") {
    if (const json* items = member(object, "items"); items && items->is_array())
      for (std::size_t i = 0; i < items->size(); ++i) read_kubernetes((*items)[i], fmt::format("{}/items/{}", pointer, i), source, out);
    return;
  }
  if (kind == "InferenceService") return read_inference_service(object, pointer, name, source, out);
  if (kind == "Pod") {
    if (const json* spec = member(object, "spec")) read_pod(*spec, pointer + "/spec", name, {member(object, "metadata")}, source, out);
    return;
  }
  // Workloads with a pod template: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job; a CronJob's is one level deeper.
  const json* spec = member(object, "spec");
  std::string template_pointer = pointer + "/spec/template";
  if (spec && kind == "CronJob") {
    spec = path(*spec, {"jobTemplate", "spec"});
    template_pointer = pointer + "/spec/jobTemplate/spec/template";
  }
  const json* pod_template = spec ? member(*spec, "template") : nullptr;
  const json* pod_spec = pod_template ? member(*pod_template, "spec") : nullptr;
  if (!pod_spec) return;
  read_pod(*pod_spec, template_pointer + "/spec", name, {member(object, "metadata"), member(*pod_template, "metadata")},
           source, out);
}

// --- docker-compose -----------------------------------------------------------------------------

void read_compose(const json& services, Source& source, std::vector<Deployment>& out) {
  for (const auto& [service, spec] : services.items()) {
    if (!spec.is_object()) continue;
    const std::string pointer = "/services/" + service;
    EngineCommand command;
    command.argv = words_of(member(spec, "entrypoint"));
    const std::vector<std::string> args = words_of(member(spec, "command"));
    command.argv.insert(command.argv.end(), args.begin(), args.end());
    command.image = text_at(spec, {"image"});
    if (const json* env = member(spec, "environment")) {
      if (env->is_object()) {
        for (const auto& [key, value] : env->items()) command.env[key] = value.is_null() ? "" : scalar_text(value).value_or("");
      } else if (env->is_array()) {
        for (const json& item : *env) {
          const std::string text = scalar_text(item).value_or("");
          const std::size_t eq = text.find('=');
          if (eq != std::string::npos) command.env[text.substr(0, eq)] = text.substr(eq + 1);
        }
      }
    }
    // GPUs: deploy.resources.reservations.devices with the gpu capability (count: N or all).
    std::string count;
    bool gpu = false;
    if (const json* devices = path(spec, {"deploy", "resources", "reservations", "devices"}); devices && devices->is_array())
      for (const json& device : *devices) {
        const std::vector<std::string> capabilities = words_of(member(device, "capabilities"));
        if (std::find(capabilities.begin(), capabilities.end(), "gpu") == capabilities.end() &&
            text_at(device, {"driver"}) != "nvidia")
          continue;
        gpu = true;
        count = text_at(device, {"count"});
        if (count.empty()) {
          const std::vector<std::string> ids = words_of(member(device, "device_ids"));
          if (!ids.empty()) count = std::to_string(ids.size());
        }
      }
    if (!gpu && command.argv.empty()) continue;
    Deployment d;
    d.name = service;
    d.where = source.at(member(spec, "command") ? pointer + "/command" : pointer, "");
    d.gpu_count = count == "all" ? "" : count;
    if (std::string label = text_at(spec, {"labels", kGpuAnnotation}); !label.empty()) d.gpus.push_back(label);
    d.model = text_at(spec, {"labels", kModelAnnotation});
    d.commands.push_back(std::move(command));
    out.push_back(std::move(d));
  }
}

// --- dispatch -----------------------------------------------------------------------------------

void read_document(Source& source, std::vector<Deployment>& out) {
  const json& value = source.doc->value;
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) out.push_back(read_entry(value[i], fmt::format("/{}", i), source));
    return;
  }
  if (!value.is_object()) throw Error(fmt::format("{}: neither a list of deployments nor a manifest", source.file));
  if (const json* list = member(value, "deployments")) {
    if (!list->is_array()) throw Error(fmt::format("{}:{}: deployments: a list", source.file, source.doc->line_of("/deployments")));
    for (std::size_t i = 0; i < list->size(); ++i)
      out.push_back(read_entry((*list)[i], fmt::format("/deployments/{}", i), source));
    return;
  }
  if (member(value, "kind")) return read_kubernetes(value, "", source, out);
  if (const json* services = member(value, "services"); services && services->is_object()) return read_compose(*services, source, out);
  throw Error(fmt::format("{}: neither a deployments list, a Kubernetes manifest nor a docker-compose file", source.file));
}

}  // namespace

std::vector<Deployment> read_deployments(std::string_view text, const std::string& file) {
  std::vector<TreeDocument> documents;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    TreeDocument& doc = documents.emplace_back();
    try {
      doc.value = json::parse(text);
    } catch (const json::parse_error& error) {
      throw Error(fmt::format("{}: not valid JSON (byte {})", file, error.byte));
    }
  } else {
    documents = read_yaml_documents(text, file);
  }
  std::vector<Deployment> out;
  Source source{file, std::string(text)};
  for (const TreeDocument& doc : documents) {
    source.doc = &doc;
    read_document(source, out);
  }
  return out;
}

Deployment deployment_from_command_line(std::string_view line, std::uint64_t index) {
  Deployment d;
  d.name = fmt::format("cmd {}", index);
  d.where = {"--cmd", 0, index};
  // As a shell runs it: the check layer finds the engine's command among the line's commands and
  // reads leading VAR=value words as its environment.
  d.commands.push_back({{"sh", "-c", std::string(line)}, {}, ""});
  return d;
}

}  // namespace kvplan
