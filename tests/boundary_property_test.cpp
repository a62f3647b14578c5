// Boundary values into every numeric input kvplan reads, under every registered engine: each
// field of a spec file, a config.json and a GGUF header, and each numeric flag (kvplan's own and
// every engine option that takes N or SIZE), set to -1, 0, 1 and values next to 2^32, 2^53, 2^63
// and 2^64. Whatever the value, kvplan either refuses it (exit 2 or 3, nothing on stdout, one
// "kvplan: error:" line) or answers, and an answer is checked against figures computed here in
// 128 bits from the values given: the cache of a token is at least layers x KV heads x (K + V
// widths) at the row's dtype, a row's total is its weights + cache + overhead without a wrap,
// and a "fits" is within the card. A wrapped product answers with a smaller figure and fails.
// In-process through run_cli, so the ~3,000 runs take seconds.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "engines/core/profile.h"
#include "model/wide_int.h"
#include "support/gguf_writer.h"
#include "support/temp_dir.h"

using kvplan::u128;
using kvplan::testing::GgufWriter;
using kvplan::testing::TempDir;
using nlohmann::json;

namespace {

/// -1, 0, 1 and the neighbours of 2^32, 2^53, 2^63 and 2^64.
const std::vector<std::string> kBoundary = {
    "-1",
    "0",
    "1",
    "4294967295",
    "4294967296",
    "4294967297",
    "9007199254740992",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
};

/// The value as a 128-bit number (-1 as 0: only a refusal can follow it).
u128 wide(const std::string& text) {
  u128 value = 0;
  if (text.empty() || text.front() == '-') return 0;
  for (const char c : text) value = value * 10 + static_cast<unsigned>(c - '0');
  return value;
}

/// The cache's shape, as given, for the lower bound of an answer.
struct Shape {
  u128 layers = 0, kv_heads = 0, k = 0, v = 0;
};

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome run(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"kvplan"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  Outcome o;
  o.code = kvplan::run_cli(static_cast<int>(argv.size()), argv.data(), out, err, kvplan::Terminal{});
  o.out = out.str();
  o.err = err.str();
  return o;
}

/// Bits a cache value takes at least, by the names the engines print; 4 for any other.
u128 min_bits(const std::string& dtype) {
  static const std::map<std::string, u128> bits = {{"fp32", 32}, {"f32", 32}, {"fp16", 16}, {"f16", 16}, {"bf16", 16},
                                                   {"auto", 16}, {"fp8", 8},  {"int8", 8},  {"q8_0", 8}};
  const auto it = bits.find(dtype);
  return it == bits.end() ? 4 : it->second;
}

u128 number(const json& value) { return value.is_number_unsigned() ? u128{value.get<std::uint64_t>()} : 0; }

/// The contract for one run: a refusal is one line and nothing on stdout; an answer (JSON) has no
/// figure smaller than the shape implies and no total that wrapped.
/// `cache_on_gpu`: false when layers were left in host memory (-ngl, --num-gpu), whose cache is
/// then not on the card.
void check_outcome(const Outcome& o, const Shape& shape, const std::string& what, bool cache_on_gpu = true) {
  INFO(what);
  INFO("exit " << o.code << ", stderr: " << o.err.substr(0, 300));
  REQUIRE((o.code == 0 || o.code == 1 || o.code == 2 || o.code == 3));
  if (o.code == 2 || o.code == 3) {
    CHECK(o.out.empty());
    CHECK(o.err.rfind("kvplan: error: ", 0) == 0);
    CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    return;
  }
  const json report = json::parse(o.out);
  for (const json& row : report.at("rows")) {
    const u128 tp = std::max<u128>(number(row.value("tp", json(1))), 1);
    const u128 heads = (shape.kv_heads + tp - 1) / tp;
    // Per token: layers x heads x (K + V) values at the row's K dtype, rounded down.
    const u128 per_token = shape.layers * heads * (shape.k + shape.v) * min_bits(row.at("k_dtype").get<std::string>()) / 8;
    INFO("row " << row.dump().substr(0, 400));
    CHECK(number(row.at("kv_bytes_per_token")) >= per_token);
    if (cache_on_gpu) CHECK(number(row.at("kv_bytes")) >= per_token);  // at least one token held
    const u128 pool = row.at("kv_pool_bytes").is_null() ? 0 : number(row.at("kv_pool_bytes"));
    const u128 total = number(row.at("weights_bytes")) + std::max(number(row.at("kv_bytes")), pool) +
                       number(row.at("overhead_bytes"));
    CHECK(number(row.at("total_bytes")) == total);
    if (row.at("fits").get<bool>()) CHECK(total <= number(row.at("capacity_bytes")));
  }
}

const std::vector<std::string>& profiles() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const kvplan::EngineEntry& engine : kvplan::engines()) out.emplace_back(engine.name);
    return out;
  }();
  return names;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/// A dense model every engine prices: 2 layers, 4 heads, 2 KV heads of 64, a vocabulary and
/// both a parameter count and a checkpoint size (Ollama needs the weights).
json base_spec() {
  return json{{"name", "boundary"}, {"params", 1000000},  {"weights_bytes", 2000000}, {"weight_dtype", "bf16"},
              {"max_context", 4096},  {"vocab_size", 1000}, {"layers", 2},             {"attention_heads", 4},
              {"kv_heads", 2},        {"head_dim", 64}};
}

/// `text` as a JSON number token (2^64 and -1 included) in place of "@".
std::string with_number(const json& document, const std::string& key, const std::string& text) {
  json copy = document;
  copy[key] = "@";
  std::string dumped = copy.dump();
  dumped.replace(dumped.find("\"@\""), 3, text);
  return dumped;
}

Shape spec_shape(const std::string& field, const std::string& value) {
  Shape s{2, 2, 64, 64};
  if (field == "layers") s.layers = wide(value);
  if (field == "kv_heads") s.kv_heads = wide(value);
  if (field == "head_dim") s.k = s.v = wide(value);
  if (field == "v_head_dim") s.v = wide(value);
  return s;
}

}  // namespace

TEST_CASE("boundary values in every numeric field of a spec file, under every engine", "[boundary]") {
  TempDir dir("kvplan_boundary");
  const std::vector<std::string> fields = {"params",      "weights_bytes",   "max_context",   "vocab_size",
                                           "layers",      "attention_heads", "kv_heads",      "head_dim",
                                           "v_head_dim",  "hidden_size",     "active_params", "sliding_window",
                                           "mtp_layers"};
  for (const std::string& field : fields)
    for (const std::string& value : kBoundary) {
      json spec = base_spec();
      if (field == "sliding_window") spec["layer_pattern"] = json::array({"sliding", "full"});
      const std::string path = dir.file("spec.json");
      write(path, with_number(spec, field, value));
      const Shape shape = spec_shape(field, value);
      for (const std::string& profile : profiles())
        check_outcome(run({"--model", path, "--gpu", "80GiB", "--ctx", "4096", "--runtime", profile, "--format", "json"}),
                      shape, "spec " + field + " = " + value + " under " + profile);
    }
}

TEST_CASE("boundary values in every numeric field of a config.json, under every engine", "[boundary]") {
  TempDir dir("kvplan_boundary");
  const json base{{"model_type", "llama"},          {"architectures", json::array({"LlamaForCausalLM"})},
                  {"hidden_size", 256},             {"intermediate_size", 512},
                  {"num_hidden_layers", 2},         {"num_attention_heads", 4},
                  {"num_key_value_heads", 2},       {"head_dim", 64},
                  {"max_position_embeddings", 4096}, {"vocab_size", 1000},
                  {"torch_dtype", "bfloat16"}};
  const std::vector<std::string> fields = {"hidden_size",         "intermediate_size", "num_hidden_layers",
                                           "num_attention_heads", "num_key_value_heads", "head_dim",
                                           "max_position_embeddings", "vocab_size", "num_nextn_predict_layers"};
  for (const std::string& field : fields)
    for (const std::string& value : kBoundary) {
      write(dir.file("config.json"), with_number(base, field, value));
      Shape shape{2, 2, 64, 64};
      if (field == "num_hidden_layers") shape.layers = wide(value);
      if (field == "num_key_value_heads") shape.kv_heads = wide(value);
      if (field == "head_dim") shape.k = shape.v = wide(value);
      for (const std::string& profile : profiles()) {
        // Ollama needs the checkpoint's size: --weights stands in for the safetensors index.
        std::vector<std::string> args{"--model", dir.file("config.json"), "--gpu", "80GiB", "--ctx", "4096",
                                      "--runtime", profile, "--format", "json"};
        if (profile == "ollama") args.insert(args.end(), {"--weights", "2MB"});
        check_outcome(run(args), shape, "config.json " + field + " = " + value + " under " + profile);
      }
    }
}

TEST_CASE("boundary values in every numeric GGUF key, under every engine", "[boundary]") {
  TempDir dir("kvplan_boundary");
  const std::vector<std::string> keys = {"llama.block_count",         "llama.embedding_length",
                                         "llama.context_length",      "llama.attention.head_count",
                                         "llama.attention.head_count_kv", "llama.attention.key_length",
                                         "llama.attention.value_length",  "llama.vocab_size",
                                         "llama.feed_forward_length"};
  for (const std::string& key : keys)
    for (const std::string& value : kBoundary) {
      if (wide(value) > UINT64_MAX) continue;  // a GGUF integer has 64 bits at most
      GgufWriter w;
      w.add_string("general.architecture", "llama");
      std::map<std::string, std::uint64_t> values = {{"llama.block_count", 2},
                                                     {"llama.embedding_length", 256},
                                                     {"llama.context_length", 4096},
                                                     {"llama.attention.head_count", 4},
                                                     {"llama.attention.head_count_kv", 2},
                                                     {"llama.attention.key_length", 64},
                                                     {"llama.attention.value_length", 64},
                                                     {"llama.vocab_size", 1000},
                                                     {"llama.feed_forward_length", 512}};
      for (const auto& [k, v] : values) {
        if (k != key) w.add_uint32(k, static_cast<std::uint32_t>(v));
        else if (value == "-1") w.add_int64(k, -1);
        else w.add_uint64(k, static_cast<std::uint64_t>(wide(value)));
      }
      w.add_tensor("token_embd.weight", 0, {256, 8});
      const std::string path = dir.file("model.gguf");
      w.write(path);
      Shape shape{2, 2, 64, 64};
      if (key == "llama.block_count") shape.layers = wide(value);
      if (key == "llama.attention.head_count_kv") shape.kv_heads = wide(value);
      if (key == "llama.attention.key_length") shape.k = wide(value);
      if (key == "llama.attention.value_length") shape.v = wide(value);
      for (const std::string& profile : profiles())
        check_outcome(run({"--model", path, "--gpu", "80GiB", "--ctx", "4096", "--runtime", profile, "--format", "json"}),
                      shape, "GGUF " + key + " = " + value + " under " + profile);
    }
}

TEST_CASE("boundary values in every numeric flag, under every engine", "[boundary]") {
  TempDir dir("kvplan_boundary");
  const std::string spec = dir.file("spec.json");
  write(spec, base_spec().dump());
  const Shape shape{2, 2, 64, 64};
  struct Flag {
    std::string name, unit;
  };
  // kvplan's own numeric flags; memory sizes in bytes and in GiB.
  const std::vector<Flag> common = {{"--ctx", ""},      {"--batch", ""},     {"--gpu", "B"},      {"--gpu", "GiB"},
                                    {"--overhead", "B"}, {"--weights", "B"}, {"--params", ""},    {"--mtp-layers", ""}};
  for (const std::string& profile : profiles()) {
    std::vector<Flag> flags = common;
    for (const kvplan::EngineEntry& engine : kvplan::engines())
      if (engine.name == profile)
        for (const kvplan::OptionSpec& option : engine.options) {
          if (option.value_name == "N") flags.push_back({"--" + std::string(option.name), ""});
          if (option.value_name == "SIZE") {
            flags.push_back({"--" + std::string(option.name), "B"});
            flags.push_back({"--" + std::string(option.name), "GiB"});
          }
        }
    for (const Flag& flag : flags)
      for (const std::string& value : kBoundary) {
        std::vector<std::string> args{"--model", spec, "--runtime", profile, "--format", "json"};
        if (flag.name != "--gpu") args.insert(args.end(), {"--gpu", "80GiB"});
        if (flag.name != "--ctx") args.insert(args.end(), {"--ctx", "4096"});
        args.insert(args.end(), {flag.name, value + flag.unit});
        const bool layers_flag = flag.name.find("gpu-layers") != std::string::npos || flag.name == "--num-gpu";
        check_outcome(run(args), shape, flag.name + " " + value + flag.unit + " under " + profile, !layers_flag);
      }
  }
}
