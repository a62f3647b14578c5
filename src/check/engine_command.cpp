#include "check/engine_command.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "engines/core/profile.h"
#include "kvplan/error.h"
#include "kvplan/units.h"
#include "loaders/deployments/shell_words.h"

namespace kvplan {

namespace {

/// Which of kvplan's own settings an engine flag sets.
enum class Core { model, ctx, kv_dtype, utilization };

struct CoreFlag {
  std::string_view spellings;  ///< space-separated, dashes included
  Core setting;
};

/// A flag that does not change what the engine allocates on the GPU.
struct Harmless {
  std::string_view spellings;
  bool takes_value = false;
  std::string_view only_values = {};  ///< space-separated; empty: any value
  bool takes_rest = false;            ///< takes every word up to the next flag (vLLM's --served-model-name a b)
};

struct Dialect {
  std::string_view runtime;
  std::span<const CoreFlag> core;
  std::span<const Harmless> harmless;
  /// Environment variables with this prefix that kvplan does not read change memory: refused.
  std::string_view strict_env_prefix = {};
  std::span<const std::string_view> harmless_env = {};
};

constexpr CoreFlag kVllmCore[] = {{"--model --model_id", Core::model},
                                  {"--max-model-len", Core::ctx},
                                  {"--kv-cache-dtype", Core::kv_dtype},
                                  {"--gpu-memory-utilization", Core::utilization}};
constexpr Harmless kVllmHarmless[] = {
    {"--host", true},           {"--port", true},           {"--api-key", true},
    {"--served-model-name", true, {}, true}, {"--model_name", true}, {"--trust-remote-code"},
    {"--disable-log-requests"}, {"--disable-log-stats"},    {"--enable-log-requests"},
    {"--uvicorn-log-level", true}, {"--tokenizer", true},   {"--tokenizer-mode", true},
    {"--revision", true},       {"--tokenizer-revision", true}, {"--download-dir", true},
    {"--seed", true},           {"--chat-template", true},  {"--response-role", true},
    {"--enable-auto-tool-choice"}, {"--tool-call-parser", true}, {"--reasoning-parser", true},
    {"--allowed-origins", true}, {"--root-path", true},     {"--ssl-keyfile", true},
    {"--ssl-certfile", true},   {"--generation-config", true}, {"--disable-fastapi-docs"},
    {"--no-enable-prefix-caching"}, {"--backend", true, "vllm"},
};

constexpr CoreFlag kSglangCore[] = {{"--model-path --model", Core::model}, {"--kv-cache-dtype", Core::kv_dtype}};
constexpr Harmless kSglangHarmless[] = {
    {"--host", true},          {"--port", true},          {"--api-key", true},        {"--served-model-name", true},
    {"--trust-remote-code"},   {"--log-level", true},     {"--tokenizer-path", true}, {"--chat-template", true},
    {"--random-seed", true},   {"--enable-metrics"},      {"--log-requests"},         {"--tool-call-parser", true},
    {"--reasoning-parser", true}, {"--revision", true},   {"--download-dir", true},   {"--dtype", true, "auto"},
};

constexpr CoreFlag kLlamacppCore[] = {{"-m --model -hf --hf-repo -hfr", Core::model}};
constexpr Harmless kLlamacppHarmless[] = {
    {"--host", true},        {"--port", true},          {"--api-key", true},        {"--api-key-file", true},
    {"-a --alias", true},    {"--metrics"},             {"-t --threads", true},     {"-tb --threads-batch", true},
    {"--jinja"},             {"--chat-template", true}, {"--no-webui"},             {"--slots"},
    {"--props"},             {"-v --verbose"},          {"--log-disable"},          {"--log-file", true},
    {"-to --timeout", true}, {"-cb --cont-batching"},   {"--mlock"},                {"--no-mmap"},
    {"--path", true},        {"--ssl-key-file", true},  {"--ssl-cert-file", true},  {"--reasoning-format", true},
    {"-n --n-predict", true}, {"--temp", true},         {"--top-k", true},          {"--top-p", true},
    {"-s --seed", true},
};

constexpr CoreFlag kTrtllmCore[] = {{"--model", Core::model}};
constexpr Harmless kTrtllmHarmless[] = {
    {"--host", true},      {"--port", true},       {"--backend", true, "pytorch"}, {"--log_level", true},
    {"--trust_remote_code"}, {"--tokenizer", true}, {"--num_postprocess_workers", true},
};

constexpr CoreFlag kOllamaCore[] = {{"--model", Core::model}};
constexpr Harmless kOllamaHarmless[] = {
    {"--verbose"}, {"--nowordwrap"}, {"--insecure"}, {"--keepalive", true}, {"--format", true}, {"--think", true},
};
// Ollama's variables that do not change a model's memory; any other OLLAMA_ variable kvplan does
// not read is refused (OLLAMA_SCHED_SPREAD, OLLAMA_MAX_LOADED_MODELS, OLLAMA_NEW_ENGINE, ...).
constexpr std::string_view kOllamaHarmlessEnv[] = {"OLLAMA_HOST",      "OLLAMA_ORIGINS",   "OLLAMA_MODELS",
                                                   "OLLAMA_KEEP_ALIVE", "OLLAMA_DEBUG",    "OLLAMA_NOPRUNE",
                                                   "OLLAMA_NOHISTORY", "OLLAMA_MAX_QUEUE", "OLLAMA_LOAD_TIMEOUT"};

constexpr Dialect kDialects[] = {
    {"vllm", kVllmCore, kVllmHarmless},
    {"sglang", kSglangCore, kSglangHarmless},
    {"llama.cpp", kLlamacppCore, kLlamacppHarmless},
    {"trtllm", kTrtllmCore, kTrtllmHarmless},
    {"ollama", kOllamaCore, kOllamaHarmless, "OLLAMA_", kOllamaHarmlessEnv},
};

Error unknown(const std::string& text) { return Error(text, ExitCode::unsupported_architecture); }

/// vLLM, SGLang and TensorRT-LLM accept --max_model_len for --max-model-len (and the other way
/// round): flags compare with - and _ alike.
std::string normalized_flag(std::string_view flag) {
  std::string out(flag);
  const std::size_t start = out.rfind("--", 0) == 0 ? 2 : 1;
  for (std::size_t i = start; i < out.size(); ++i)
    if (out[i] == '_') out[i] = '-';
  return out;
}

bool spelled(std::string_view spellings, std::string_view flag) {
  const std::string wanted = normalized_flag(flag);
  for (const std::string& word : split_shell_words(spellings))
    if (normalized_flag(word) == wanted) return true;
  return false;
}

std::string basename(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_assignment(const std::string& word) {
  const std::size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// The engine a command runs and where its arguments start; nullopt when it runs none kvplan knows.
struct Program {
  std::string runtime;
  std::string shown;
  std::size_t args = 0;      ///< index of the first argument
  bool positional_model = false;
};

std::optional<Program> identify(const std::vector<std::string>& words, const std::string& image) {
  if (words.empty() || words[0].rfind("-", 0) == 0) {
    // Only arguments: the image's entrypoint runs them.
    const auto has = [&](std::string_view part) { return image.find(part) != std::string::npos; };
    if (has("vllm") || has("kserve-huggingfaceserver")) return Program{"vllm", "vLLM's OpenAI server (image " + image + ")", 0};
    if (has("sglang")) return Program{"sglang", "sglang.launch_server (image " + image + ")", 0};
    if (has("llama.cpp") || has("llama-cpp") || has("llamacpp")) return Program{"llama.cpp", "llama-server (image " + image + ")", 0};
    if (has("tensorrt") || has("trtllm")) return Program{"trtllm", "trtllm-serve (image " + image + ")", 0, true};
    return std::nullopt;
  }
  const std::string program = basename(words[0]);
  const auto word = [&](std::size_t i) { return i < words.size() ? words[i] : std::string(); };
  if (program == "vllm" && word(1) == "serve") return Program{"vllm", "vllm serve", 2, true};
  if (program.rfind("python", 0) == 0) {
    std::size_t i = 1;
    while (i < words.size() && words[i].rfind("-", 0) == 0 && words[i] != "-m") ++i;  // python -u -m ...
    if (word(i) != "-m") return std::nullopt;
    const std::string module = word(i + 1);
    if (module == "vllm.entrypoints.openai.api_server") return Program{"vllm", "vllm.entrypoints.openai.api_server", i + 2};
    if (module == "vllm.entrypoints.cli.main" && word(i + 2) == "serve") return Program{"vllm", "vllm serve", i + 3, true};
    if (module == "sglang.launch_server") return Program{"sglang", "sglang.launch_server", i + 2};
    if (module == "huggingfaceserver") return Program{"vllm", "huggingfaceserver", i + 2};
    return std::nullopt;
  }
  if (program == "llama-server") return Program{"llama.cpp", "llama-server", 1};
  if (program == "trtllm-serve") {
    if (word(1) == "serve") return Program{"trtllm", "trtllm-serve", 2, true};
    return Program{"trtllm", "trtllm-serve", 1, true};
  }
  if (program == "ollama" && word(1) == "serve") return Program{"ollama", "ollama serve", 2};
  if (program == "ollama" && word(1) == "run") return Program{"ollama", "ollama run", 2, true};
  return std::nullopt;
}

/// The words of the engine's command, found through `sh -c`, VAR=value prefixes, exec and env.
struct Located {
  std::vector<std::string> words;
  std::map<std::string, std::string> env;
  Program program;
};

std::optional<Located> locate(std::vector<std::string> words, std::map<std::string, std::string> env,
                              const std::string& image, int depth) {
  // Wrappers that run the rest of the line as a command.
  while (!words.empty()) {
    if (is_assignment(words[0])) {
      const std::size_t eq = words[0].find('=');
      env[words[0].substr(0, eq)] = words[0].substr(eq + 1);
    } else if (const std::string p = basename(words[0]); p != "exec" && p != "env" && p != "nohup" && p != "time") {
      break;
    }
    words.erase(words.begin());
  }
  if (!words.empty() && depth < 4) {
    const std::string p = basename(words[0]);
    if ((p == "sh" || p == "bash" || p == "dash" || p == "zsh") && words.size() >= 3 && words[1].rfind("-", 0) == 0 &&
        words[1].find('c') != std::string::npos) {
      std::optional<Located> found;
      for (std::vector<std::string>& command : split_shell_commands(words[2])) {
        std::optional<Located> here = locate(std::move(command), env, image, depth + 1);
        if (!here) continue;
        if (found) throw unknown(fmt::format("the script runs two engines ({} and {}): give one command per deployment",
                                             found->program.shown, here->program.shown));
        found = std::move(here);
      }
      return found;
    }
  }
  const std::optional<Program> program = identify(words, image);
  if (!program) return std::nullopt;
  return Located{std::move(words), std::move(env), *program};
}

const Dialect& dialect_of(std::string_view runtime) {
  for (const Dialect& d : kDialects)
    if (d.runtime == runtime) return d;
  throw unknown(fmt::format("no command-line reader for the {} engine", runtime));
}

/// The release a container image's tag names ("vllm/vllm-openai:v0.11.0" -> "0.11.0",
/// "lmsysorg/sglang:v0.5.4.post1-cu126" -> "0.5.4.post1"): the tag without a leading v, up to a
/// build suffix after '-'; nullopt for a tag that is no release number (latest, nightly, a digest).
std::optional<std::string> image_release(std::string_view image) {
  image = image.substr(0, image.find('@'));  // a digest pins bytes, not a name
  const std::size_t colon = image.rfind(':');
  if (colon == std::string_view::npos || image.find('/', colon) != std::string_view::npos) return std::nullopt;
  std::string_view tag = image.substr(colon + 1);
  if (!tag.empty() && (tag.front() == 'v' || tag.front() == 'V')) tag.remove_prefix(1);
  tag = tag.substr(0, tag.find('-'));
  if (tag.empty() || !std::isdigit(static_cast<unsigned char>(tag.front())) || tag.find('.') == std::string_view::npos)
    return std::nullopt;
  return std::string(tag);
}

void refuse_shell_values(const std::string& flag, const std::string& value) {
  if (value.find('$') != std::string::npos)
    throw unknown(fmt::format("{} {}: a value the shell or Kubernetes fills in at run time; kvplan cannot know it", flag, value));
}

}  // namespace

CommandSettings read_engine_command(const EngineCommand& command) {
  const std::optional<Located> located = locate(command.argv, command.env, command.image, 0);
  if (!located) {
    std::string shown;
    for (const std::string& w : command.argv) shown += (shown.empty() ? "" : " ") + w;
    if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
    throw unknown(fmt::format("no engine kvplan reads in '{}'{} (it reads vllm serve, python -m "
                              "vllm.entrypoints.openai.api_server, python -m sglang.launch_server, llama-server, "
                              "trtllm-serve and ollama)",
                              shown, command.image.empty() ? "" : " (image " + command.image + ")"));
  }
  const Program& program = located->program;
  const Dialect& dialect = dialect_of(program.runtime);
  const EngineEntry& engine = find_engine(program.runtime, "runtime");
  CommandSettings out;
  out.runtime = program.runtime;
  out.program = program.shown;
  out.texts.runtime = program.runtime;
  const std::vector<std::string>& words = located->words;

  const auto add_option = [&](const OptionSpec& spec, std::string value, const std::string& shown) {
    refuse_shell_values(shown, value);
    out.texts.engine_options.push_back({std::string(spec.name), std::move(value), shown});
  };
  bool positional_taken = false;
  for (std::size_t i = program.args; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.size() < 2 || word[0] != '-') {
      // Ollama's run takes a prompt after the model; the others take one model at most.
      if (program.positional_model && !positional_taken) {
        out.model = word;
        positional_taken = true;
        continue;
      }
      if (program.runtime == "ollama" && positional_taken) continue;
      throw Error(fmt::format("{}: unexpected argument '{}'", program.shown, word));
    }
    const std::size_t eq = word.rfind("--", 0) == 0 ? word.find('=') : std::string::npos;
    const std::string flag = eq == std::string::npos ? word : word.substr(0, eq);
    std::optional<std::string> inline_value;
    if (eq != std::string::npos) inline_value = word.substr(eq + 1);
    const auto next_value = [&](bool optional_value = false) -> std::optional<std::string> {
      if (inline_value) return inline_value;
      if (i + 1 < words.size() && !(words[i + 1].size() > 1 && words[i + 1][0] == '-' && !std::isdigit(static_cast<unsigned char>(words[i + 1][1]))))
        return words[++i];
      if (optional_value) return std::nullopt;
      throw Error(fmt::format("{}: {} needs a value", program.shown, flag));
    };

    // kvplan's own settings, as this engine spells them.
    const CoreFlag* core = nullptr;
    for (const CoreFlag& c : dialect.core)
      if (spelled(c.spellings, flag)) core = &c;
    if (core) {
      const std::string value = *next_value();
      refuse_shell_values(flag, value);
      switch (core->setting) {
        case Core::model: out.model = value; break;
        case Core::ctx: out.texts.contexts.push_back(value); break;
        case Core::kv_dtype: out.texts.kv_dtypes.push_back(value); break;
        case Core::utilization: out.texts.utilization = value; break;
      }
      continue;
    }
    // The engine's own flags, as its OptionSpecs spell them (the same table `kvplan --runtime` uses).
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : engine.options)
      if (normalized_flag("--" + std::string(s.name)) == normalized_flag(flag) || spelled(s.spellings, flag) ||
          spelled(s.runtime_spellings, flag))
        spec = &s;
    if (spec) {
      if (spec->value_name.empty()) {
        add_option(*spec, inline_value.value_or(""), flag);
      } else if (spec->name == "flash-attn") {
        // llama.cpp before b6000 took -fa as a switch (on); later it takes on, off or auto.
        add_option(*spec, next_value(true).value_or("on"), flag);
      } else {
        add_option(*spec, *next_value(), flag);
      }
      continue;
    }
    const Harmless* harmless = nullptr;
    for (const Harmless& h : dialect.harmless)
      if (spelled(h.spellings, flag)) harmless = &h;
    if (harmless) {
      if (!harmless->takes_value) continue;
      const std::string value = *next_value();
      if (!harmless->only_values.empty() && !spelled(harmless->only_values, value))
        throw unknown(fmt::format("{}: {} {} may change memory and kvplan does not model it", program.shown, flag, value));
      if (harmless->takes_rest)
        while (i + 1 < words.size() && words[i + 1].rfind("-", 0) != 0) ++i;
      continue;
    }
    throw unknown(fmt::format("{}: {} is not a flag kvplan reads; it may change memory, so the deployment is not "
                              "checked (if it does not, pass the deployment without it)",
                              program.shown, flag));
  }

  // The engine's environment variables, through the same OptionSpecs (OptionSpec::env).
  for (const auto& [name, value] : located->env) {
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : engine.options)
      if (!s.env.empty() && s.env == name) spec = &s;
    if (spec) {
      if (std::any_of(out.texts.engine_options.begin(), out.texts.engine_options.end(),
                      [&](const EngineOption& o) { return o.name == spec->name; }))
        continue;  // a flag wins over the variable, as in the engine
      if (spec->value_name.empty() && (value == "0" || value == "false" || value == "False")) continue;
      add_option(*spec, value, name);
      continue;
    }
    if (!dialect.strict_env_prefix.empty() && name.rfind(dialect.strict_env_prefix, 0) == 0 &&
        std::find(dialect.harmless_env.begin(), dialect.harmless_env.end(), name) == dialect.harmless_env.end())
      throw unknown(fmt::format("{}: {} is not a variable kvplan reads; it may change memory", program.shown, name));
  }

  // The release the container image names, when no flag says which: its rules, not the latest's
  // (a v0.11.0 image warms its sampler up with a sort that 0.21 does not). A release the profile
  // has no rules for is refused rather than planned as the latest.
  const bool version_given = std::any_of(out.texts.engine_options.begin(), out.texts.engine_options.end(),
                                         [&](const EngineOption& o) { return o.name == engine.version_option; });
  if (engine.knows_release && !version_given) {
    if (const std::optional<std::string> release = image_release(command.image)) {
      if (!engine.knows_release(*release))
        throw unknown(fmt::format("{}: the image {} is {} {}, a release kvplan has no rules for (give --{} to plan it "
                                  "as another)",
                                  program.shown, command.image, engine.display, *release, engine.version_option));
      out.texts.engine_options.push_back({std::string(engine.version_option), *release, "the image tag of " + command.image});
    }
  }

  // The GPUs the engine itself runs on.
  const auto option_value = [&](std::initializer_list<std::string_view> names) -> std::uint64_t {
    for (const EngineOption& o : out.texts.engine_options)
      for (const std::string_view n : names)
        if (o.name == n) return parse_positive_integer(o.value, o.shown_as);
    return 1;
  };
  if (program.runtime == "vllm")
    out.parallel = checked_mul(option_value({"tensor-parallel-size"}), option_value({"pipeline-parallel-size"}), "GPUs");
  else if (program.runtime == "sglang")
    out.parallel = checked_mul(option_value({"tp-size", "tensor-parallel-size"}), option_value({"pp-size"}), "GPUs");
  else if (program.runtime == "trtllm")
    out.parallel = checked_mul(option_value({"tp_size", "tensor-parallel-size"}), option_value({"pp_size"}), "GPUs");
  return out;
}

}  // namespace kvplan
