// Hostile inputs through the real binary: each is answered with exit 2 (or 3) and exactly one line
// on stderr, never a crash, a hang or a huge allocation. Every run is bounded by `timeout`, so a
// hang fails the test instead of stalling the suite. GGUF lengths and counts near 2^64 are in
// gguf_test.cpp.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/gguf_writer.h"
#include "support/run_binary.h"

using kvplan::testing::GgufWriter;
using kvplan::testing::read_file;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;

namespace {

namespace fs = std::filesystem;

/// A directory of its own for one test case, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "kvplan-hostile-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  /// Writes `text` to `name` inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = path_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

/// `kvplan <arguments>`, killed after 60 s (a hang fails instead of stalling the suite).
ProcessResult run_bounded(const std::string& arguments) {
  // run_kvplan puts `environment` between `env` and the binary: env runs timeout, which runs kvplan.
  return run_kvplan(arguments, "timeout -s KILL 60");
}

/// Exit `code`, nothing on stdout, exactly one line on stderr starting "kvplan: error: " and
/// containing `expected`.
void check_hostile(const std::string& arguments, const std::string& expected, int code = 2) {
  INFO("kvplan " << arguments.substr(0, 300));
  kvplan::testing::check_refused(run_bounded(arguments), expected, code);
}

/// A model-spec document with `layers` given as the raw JSON text `value`.
std::string spec_with_layers(const std::string& value) {
  return R"({"name": "x", "params": 1000, "weight_dtype": "bf16", "attention_heads": 8, "head_dim": 64, "layers": )" +
         value + "}";
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

TEST_CASE("deeply nested JSON is refused at depth 256, whatever the depth") {
  ScratchDir dir;
  const std::string arrays = dir.write("arrays.json", std::string(200000, '[') + std::string(200000, ']'));
  check_hostile("--gpu 4090 --model " + quoted(arrays), "JSON nested deeper than 256 levels");
  std::string objects;
  for (int i = 0; i < 20000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(20000, '}');
  check_hostile("--gpu 4090 --model " + quoted(dir.write("objects.json", objects)), "nested deeper than 256");
  // Deep inside an otherwise valid spec; unterminated, the end of input is reported with its position.
  const std::string inside = R"({"name": "x", "notes": )" + std::string(5000, '[') + std::string(5000, ']') + "}";
  check_hostile("--gpu 4090 --model " + quoted(dir.write("inside.json", inside)), "nested deeper than 256");
  const std::string unterminated = R"({"name": "x", "notes": )" + std::string(5000, '[');
  check_hostile("--gpu 4090 --model " + quoted(dir.write("unterminated.json", unterminated)),
                "unterminated.json:1:5024: invalid JSON: unexpected end of input");
}

TEST_CASE("NaN, Infinity, negative, fractional and huge numbers where integers belong") {
  ScratchDir dir;
  const auto layers = [&](const std::string& value, const std::string& expected) {
    check_hostile("--gpu 4090 --model " + quoted(dir.write("spec.json", spec_with_layers(value))), expected);
  };
  // Not JSON, but what Python's json writes for a float that is not finite: read, then refused
  // where a number is wanted, by name.
  layers("NaN", "field 'layers': expected a whole number of at least 0, got NaN (not a finite number)");
  layers("Infinity", "field 'layers': expected a whole number of at least 0, got Infinity (not a finite number)");
  layers("-Infinity", "field 'layers': expected a whole number of at least 0, got -Infinity (not a finite number)");
  layers("Nan", "spec.json:1:");  // not even Python's: a syntax error with its position
  layers("-NaN", "spec.json:1:");
  layers("1e400", "number overflow");
  layers("-1", "field 'layers': expected a whole number of at least 0, got a negative number");
  layers("-0.0", "field 'layers': expected a whole number");
  layers("3.5", "field 'layers': expected a whole number of at least 0, got a fractional number");
  layers("3.0", "field 'layers': expected a whole number");
  layers("1e3", "field 'layers': expected a whole number");
  layers("18446744073709551616", "field 'layers': expected a whole number");  // 2^64
  layers("340282366920938463463374607431768211456", "field 'layers': expected a whole number");  // 2^128
  layers("18446744073709551615", "field 'layers': is more than kvplan reads");  // 2^64 - 1
  layers("0", "field 'layers': must be at least 1");
  layers("\"32\"", "field 'layers': expected a whole number of at least 0, got string");
  layers("null", "field 'layers': is missing");
  // Past 2^32 for a field stored in 32 bits, and products past 2^64.
  check_hostile("--gpu 4090 --model " + quoted(dir.write("head.json", R"({"name": "x", "params": 1, "weight_dtype": "bf16",
      "layers": 1, "attention_heads": 8, "head_dim": 4294967296})")),
                "field 'head_dim': is larger than 2^32 - 1");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("params.json", R"({"name": "x", "params": 18446744073709551615,
      "weight_dtype": "bf16", "layers": 1, "attention_heads": 8, "head_dim": 64})")),
                "overflows 64 bits");
}

TEST_CASE("Python's NaN and Infinity in a config.json: read where kvplan does not look, refused where it does") {
  ScratchDir dir;
  // Nemotron-H's published config.json holds "time_step_limit": [0.0, Infinity] (Python's json.dump of
  // float('inf')): tests/fixtures/hf/nemotron-h-56b is that file, and it plans (catalog_test imports it).
  const auto plan = run_kvplan("--gpu h100 --ctx 8192 --format json --model " +
                               quoted(source_path("tests/fixtures/hf/nemotron-h-56b/config.json")));
  REQUIRE(plan.exit_code == 0);
  CHECK(nlohmann::json::parse(plan.out)["model"]["params"] == 56'324'350'464ull);
  const std::string base = R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000,
    "intermediate_size": 11008, "max_position_embeddings": 4096, "torch_dtype": "bfloat16", )";
  // In a field the cache needs: refused by name, exit 2.
  check_hostile("--gpu 4090 --model " + quoted(dir.write("layers/config.json", base + R"("num_hidden_layers": NaN})")),
                "num_hidden_layers");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("type/config.json", R"({"model_type": Infinity})")),
                "Infinity (not a finite number)");
  // Inside a string it is text, and a word that only starts so is still a syntax error.
  const auto in_string = run_kvplan("--gpu 4090 --ctx 4096 --model " +
                                    quoted(dir.write("note/config.json", base + R"("num_hidden_layers": 2, "note": "NaN"})")));
  CHECK(in_string.exit_code == 0);
  check_hostile("--gpu 4090 --model " + quoted(dir.write("word/config.json", R"({"a": [Infinity, NaNa]})")),
                "config.json:1:18: invalid JSON");
  // A syntax error after a rewritten token is reported where it is in the file as written.
  check_hostile("--gpu 4090 --model " + quoted(dir.write("after/config.json", "{\"a\": [-Infinity, NaN],\n \"b\": 1,,}")),
                "config.json:2:9: invalid JSON");
}

TEST_CASE("NaN, Infinity, negative, fractional and huge numbers on the command line") {
  const std::string model = "--model llama3.1-8b --gpu 4090 ";
  for (const char* ctx : {"nan", "inf", "-inf", "1e5", "0x10", "-5", "1k5"})
    check_hostile(model + "--ctx=" + ctx, std::string("--ctx: '") + ctx + "' is not a token count");
  check_hostile(model + "--ctx 1.5", "--ctx: '1.5' is not a whole number of tokens");
  check_hostile(model + "--ctx 18446744073709551616", "--ctx: '18446744073709551616' is too large");
  check_hostile(model + "--ctx 9223372036854775809", "the limit is 2^63 tokens");
  check_hostile(model + "--ctx 8589934592M", "cache size overflows 64 bits");
  for (const char* batch : {"nan", "1.5", "1e3", "0x1", "-1"})
    check_hostile(model + "--batch=" + batch, std::string("--batch: '") + batch + "' is not a whole number");
  check_hostile(model + "--batch 18446744073709551616", "--batch: '18446744073709551616' is too large");
  for (const char* util : {"nan", "inf", "-0.5", "1e-1"})
    check_hostile(model + "--util=" + util, std::string("--util: '") + util + "' is not a fraction");
  // Past 1 by less than the millionth the budget is computed in: still past 1.
  check_hostile(model + "--util 1.0000001", "--util: must be more than 0 and at most 1, got '1.0000001'");
  check_hostile(model + "--util 0", "--util: must be more than 0 and at most 1");
  check_hostile("--model llama3.1-8b --gpu inf", "--gpu: unknown GPU 'inf'");
  check_hostile("--model llama3.1-8b --gpu 1e9GB", "--gpu: '1e9GB' is not a memory size");
  check_hostile("--model llama3.1-8b --gpu 18446744073709551616GiB", "--gpu: '18446744073709551616' is too large");
  check_hostile("--model llama3.1-8b --gpu 18446744073709551616", "is a number without a unit");
  check_hostile("--model llama3.1-8b --gpu 17179869184GiB", "--gpu: value is too large");
  check_hostile(model + "--overhead=-1GiB", "--overhead: '-1GiB' is not a memory size");
  check_hostile(model + "--overhead 18446744073709551615B", "total memory overflows 64 bits");
}

TEST_CASE("empty files, directories given as files, paths that are not files") {
  ScratchDir dir;
  check_hostile("--gpu 4090 --model " + quoted(dir.write("empty.json", "")), "empty.json:1:1: invalid JSON");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("blank.json", " \n\t\n")), "blank.json:");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("nul.json", std::string(16, '\0'))), "invalid JSON");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("empty.gguf", "")), "empty.gguf: truncated at byte 0");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("magic.gguf", "GGUF")), "magic.gguf: truncated");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("text.gguf", "{\"name\": \"x\"}")), "not a GGUF file");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("folder/config.json", "")), "config.json:1:1: invalid JSON");
  check_hostile("--gpu 4090 --model " + quoted(dir.path("folder")), "config.json:1:1: invalid JSON");

  fs::create_directories(dir.path("a-dir.json"));
  fs::create_directories(dir.path("a-dir.gguf"));
  fs::create_directories(dir.path("empty-folder"));
  check_hostile("--gpu 4090 --model " + quoted(dir.path("a-dir.json")), "a-dir.json");
  check_hostile("--gpu 4090 --model " + quoted(dir.path("a-dir.gguf")), "a-dir.gguf: not a regular file");
  check_hostile("--gpu 4090 --model " + quoted(dir.path("empty-folder")), "no config.json in this folder");
  check_hostile("--gpu 4090 --model " + quoted(source_path("tests/fixtures")), "no config.json in this folder");
  check_hostile("--gpu 4090 --model " + quoted(dir.path("missing.json")), "missing.json: no such file");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("file", "x") + "/below.json"), "below.json");
}

TEST_CASE("devices and oversized files are refused without reading them whole") {
  // /dev/zero has no size to check first: the read stops at 64 MiB (it used to grow until killed).
  check_hostile("--gpu 4090 --model /dev/zero", "/dev/zero: is not a regular file");
  check_hostile("--gpu 4090 --model /dev/null", "/dev/null: is not a regular file");
  ScratchDir dir;
  const std::string big = dir.write("big.json", "{");
  fs::resize_file(big, 65 * 1024 * 1024);  // sparse: nothing is written
  check_hostile("--gpu 4090 --model " + quoted(big), "big.json: file is larger than 64 MiB");
}

TEST_CASE("unreadable paths") {
  ScratchDir dir;
  const std::string spec = dir.write("locked.json", spec_with_layers("2"));
  fs::create_directories(dir.path("locked-folder"));
  dir.write("locked-folder/config.json", "{}");
  chmod(spec.c_str(), 0);
  chmod(dir.path("locked-folder").c_str(), 0);
  if (geteuid() == 0) {
    // root reads files whatever their mode, so chmod 000 cannot make a file unreadable here.
    WARN("running as root: chmod 000 does not stop root from reading, so the unreadable-path cases are skipped");
    return;
  }
  check_hostile("--gpu 4090 --model " + quoted(spec), "locked.json: cannot be read");
  check_hostile("--gpu 4090 --model " + quoted(dir.path("locked-folder")), "locked-folder");
}

TEST_CASE("malformed UTF-8, control characters and long names stay on one line") {
  ScratchDir dir;
  check_hostile("--gpu 4090 --model " + quoted(dir.write("utf8.json", "{\"name\": \"\xff\xfe\"}")), "invalid JSON");
  check_hostile("--gpu 4090 --model " + quoted(dir.write("key.json", "{\"na\\nme\": 1}")), "key.json");
  const std::string long_key = "{\"" + std::string(100000, 'k') + "\": 1}";
  check_hostile("--gpu 4090 --model " + quoted(dir.write("long-key.json", long_key)), "long-key.json");
  // /bin/sh may be dash, which has no $'...': printf makes the newline.
  check_hostile("--gpu \"$(printf 'rtx\\n4090')\" --model llama3.1-8b", "unknown GPU");
  check_hostile("--gpu \"$(printf '40\\n90')\" --model llama3.1-8b", "unknown GPU");
  check_hostile("--gpu 4090 --model \"$(printf 'llama\\r\\n3')\"", "unknown model");
}

TEST_CASE("hostile GGUF values where the spec needs integers") {
  ScratchDir dir;
  const auto model = [&](const std::string& name, auto&& add_block_count) {
    GgufWriter w;
    w.add_string("general.architecture", "llama");
    add_block_count(w);
    w.add_uint32("llama.context_length", 4096);
    w.add_uint32("llama.embedding_length", 64);
    w.add_uint32("llama.attention.head_count", 4);
    w.add_uint32("llama.attention.head_count_kv", 2);
    w.add_tensor("token_embd.weight", 0, {64, 4});
    const std::string path = dir.path(name);
    w.write(path);
    return path;
  };
  check_hostile("--gpu 4090 --model " +
                    quoted(model("nan.gguf", [](GgufWriter& w) { w.add_float32("llama.block_count", std::nanf("")); })),
                "llama.block_count");
  check_hostile("--gpu 4090 --model " +
                    quoted(model("neg.gguf", [](GgufWriter& w) { w.add_int32("llama.block_count", -1); })),
                "llama.block_count");
  check_hostile("--gpu 4090 --model " + quoted(model("huge.gguf", [](GgufWriter& w) {
                  w.add_uint64("llama.block_count", 18446744073709551615ull);
                })),
                "llama.block_count");
}

TEST_CASE("hostile quantization_config in a Hugging Face config.json") {
  // Found by the hf_config fuzzer: weight_block_size [128, 0] and [1e30, 1e30] divided by zero
  // (SIGFPE), [128, -1] wrapped to a huge block silently, [128, false] escaped as a JSON library
  // exception, a quant_method that is not a string likewise.
  ScratchDir dir;
  const nlohmann::json base = nlohmann::json::parse(read_file(source_path("tests/fixtures/hf/kimi-k2/config.json")));
  REQUIRE(base["quantization_config"]["quant_method"] == "fp8");
  const auto with = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json config = base;
    config["quantization_config"][key] = value;
    dir.write("model/config.json", config.dump(2));
    return "--gpu h100 --ctx 8k --model " + quoted(dir.path("model"));
  };
  const std::string block = "field 'quantization_config.weight_block_size': expected two positive whole numbers";
  for (const char* size : {"[128, 0]", "[128, -1]", "[1e30, 1e30]", "[128, false]", "[128, 1.5]", "[\"128\", 128]"})
    check_hostile(with("weight_block_size", nlohmann::json::parse(size)), block);
  check_hostile(with("weight_block_size", nlohmann::json::parse("[4294967296, 4294967296]")),
                "quantization_config.weight_block_size overflows 64 bits");
  check_hostile(with("quant_method", 5), "field 'quantization_config.quant_method': expected a string");
}
