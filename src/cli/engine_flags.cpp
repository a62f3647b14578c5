#include "cli/engine_flags.h"

#include <array>
#include <optional>

#include <fmt/format.h>

#include "kvplan/error.h"

namespace kvplan {

namespace {

/// An engine's multi-letter short flag and the long name kvplan parses it as.
struct Spelling {
  std::string_view short_name;
  std::string_view long_name;
};
constexpr std::array<Spelling, 8> kAlways = {{{"-ctk", "--cache-type-k"},
                                              {"-ctv", "--cache-type-v"},
                                              {"-np", "--parallel"},
                                              {"-ub", "--ubatch-size"},
                                              {"-fa", "--flash-attn"},
                                              {"-ngl", "--n-gpu-layers"},
                                              {"-kvu", "--kv-unified"},
                                              {"-tp", "--tensor-parallel-size"}}};
/// Short flags kvplan also has, with another meaning: llama.cpp's only under --runtime llama.cpp.
constexpr std::array<Spelling, 2> kUnderLlamaCpp = {{{"-c", "--ctx-size"}, {"-b", "--batch-size"}}};

bool is_llamacpp_name(std::string_view name) { return name == "llama.cpp" || name == "llamacpp" || name == "llama-cpp"; }

/// "--runtime llama.cpp" or "--runtime=llama.cpp" anywhere before "--".
bool runtime_is_llamacpp(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--runtime" && i + 1 < args.size() && is_llamacpp_name(args[i + 1])) return true;
    if (args[i].rfind("--runtime=", 0) == 0 && is_llamacpp_name(std::string_view(args[i]).substr(10))) return true;
  }
  return false;
}

/// `spelling` as typed ("-ctk", "-ctk=q8_0", and for single-letter flags "-c8192") in long form.
std::optional<std::string> rewrite_one(const std::string& arg, const Spelling& spelling) {
  const std::string_view s = spelling.short_name;
  if (arg == s) return std::string(spelling.long_name);
  if (arg.size() > s.size() && arg.compare(0, s.size(), s) == 0) {
    if (arg[s.size()] == '=') return std::string(spelling.long_name) + arg.substr(s.size());
    if (s.size() == 2) return std::string(spelling.long_name) + "=" + arg.substr(2);  // -c8192
  }
  return std::nullopt;
}

}  // namespace

Runtime parse_runtime(std::string_view text) {
  if (text == "generic") return Runtime::generic;
  if (is_llamacpp_name(text)) return Runtime::llamacpp;
  if (text == "vllm") return Runtime::vllm;
  throw Error(fmt::format("--runtime: unknown runtime '{}' (kvplan knows generic, llama.cpp and vllm)", text));
}

void refuse_engine_flags(std::span<const std::pair<bool, std::string_view>> given, std::string_view engine,
                         std::string_view runtime) {
  for (const auto& [present, name] : given)
    if (present) throw Error(fmt::format("{} is a {} flag: add --runtime {}", name, engine, runtime));
}

std::vector<std::string> rewrite_engine_flags(const std::vector<std::string>& args) {
  const bool llamacpp = runtime_is_llamacpp(args);
  std::vector<std::string> out;
  out.reserve(args.size());
  bool after_terminator = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (i == 0 || after_terminator || arg.size() < 2 || arg[0] != '-' || arg[1] == '-') {
      after_terminator = after_terminator || arg == "--";
      out.push_back(arg);
      continue;
    }
    std::optional<std::string> rewritten;
    for (const Spelling& s : kAlways)
      if (!rewritten) rewritten = rewrite_one(arg, s);
    if (llamacpp)
      for (const Spelling& s : kUnderLlamaCpp)
        if (!rewritten) rewritten = rewrite_one(arg, s);
    out.push_back(rewritten.value_or(arg));
  }
  return out;
}

}  // namespace kvplan
