// The real binary, run as a user runs it: every format, every exit code, every bad input.

#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_binary.h"

using kvplan::testing::ProcessResult;
using kvplan::testing::read_file;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;

namespace {

/// Compares `actual` with tests/golden/<name>; KVPLAN_UPDATE_GOLDEN=1 rewrites the file instead.
void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = source_path("tests/golden/" + name);
  if (std::getenv("KVPLAN_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  INFO("golden file " << path << " (KVPLAN_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(read_file(path) == actual);
}

/// A bad input: exit 2, nothing on stdout, exactly one line on stderr containing `expected`.
void check_rejected(const std::string& arguments, const std::string& expected, int code = 2) {
  INFO("kvplan " << arguments);
  kvplan::testing::check_refused(run_kvplan(arguments), expected, code);
}

}  // namespace

TEST_CASE("the headline command prints the table") {
  const ProcessResult result = run_kvplan("--model llama3.1-8b --ctx 128k --gpu 4090");
  CHECK(result.exit_code == 0);
  CHECK(result.err.empty());
  check_golden("headline.txt", result.out);
}

TEST_CASE("seed 000's matrix, table golden") {
  const ProcessResult result = run_kvplan("--model llama3.1-8b --ctx 32k,64k,128k --gpu 4090 --kv-dtype fp16,fp8");
  CHECK(result.exit_code == 0);
  check_golden("llama8b-4090-matrix.txt", result.out);
  // The verdicts of the article: fp16 fits only 32K; fp8 fits 32K and 64K.
  CHECK_THAT(result.out, Catch::Contains(" 32,768  fp16       128 KiB   4.00") && Catch::Contains("✅ fits"));
}

TEST_CASE("markdown and csv goldens") {
  const std::string args = "--model qwen3-8b --ctx 100000 --gpu 24GiB --kv-dtype fp16,fp8,int4";
  check_golden("qwen3-8b.md", run_kvplan(args + " --format markdown").out);
  check_golden("qwen3-8b.csv", run_kvplan(args + " --format csv").out);
}

TEST_CASE("JSON output carries exact integers and the documented fields") {
  const ProcessResult result =
      run_kvplan("--model qwen3-8b --ctx 100000 --gpu 24GiB --kv-dtype fp16,fp8,int4 --format json");
  REQUIRE(result.exit_code == 0);
  const nlohmann::json document = nlohmann::json::parse(result.out);
  CHECK(document["schema_version"] == 2);
  CHECK(document["model"]["id"] == "qwen3-8b");
  CHECK(document["model"]["layers"] == 36);
  CHECK(document["model"]["vocab_size"] == 151'936);
  CHECK(document["gpu"]["memory_bytes"] == 25'769'803'776ull);  // 24 x 2^30
  CHECK(document["gpu"]["count"] == 1);
  CHECK(document["settings"]["overhead_bytes"] == 2'147'483'648ull);
  CHECK(document["settings"]["utilization"] == 1.0);
  const nlohmann::json& rows = document["rows"];
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["kv_dtype"] == "fp16");
  CHECK(rows[0]["kv_bytes_per_token"] == 147'456);
  CHECK(rows[0]["kv_bytes"] == 14'745'600'000ull);
  CHECK(rows[1]["kv_bytes"] == 7'372'800'000ull);
  CHECK(rows[2]["kv_bytes"] == 3'686'400'000ull);
  CHECK(rows[0]["weights_bytes"] == 16'381'470'720ull);
  // 16,381,470,720 + 14,745,600,000 + 2,147,483,648 = 33,274,554,368 > 25,769,803,776
  CHECK(rows[0]["total_bytes"] == 33'274'554'368ull);
  CHECK(rows[0]["headroom_bytes"] == 25'769'803'776ll - 33'274'554'368ll);
  CHECK(rows[0]["fits"] == false);
  CHECK(rows[2]["fits"] == true);
  for (const auto& row : rows)
    for (const char* field : {"ctx", "batch", "kv_bytes_per_token", "kv_bytes", "weights_bytes", "overhead_bytes",
                              "total_bytes", "capacity_bytes", "headroom_bytes"})
      CHECK(row[field].is_number_integer());
}

TEST_CASE("a spec file, batch and fp8 weights") {
  const ProcessResult result = run_kvplan("--model " + source_path("tests/fixtures/specs/my-model.json") +
                                          " --ctx 8k --batch 16 --gpu h100 --weight-dtype fp8 --format json");
  REQUIRE(result.exit_code == 0);
  const nlohmann::json document = nlohmann::json::parse(result.out);
  CHECK_FALSE(document["model"].contains("vocab_size"));  // the spec does not say: left out, not 0
  const nlohmann::json row = document["rows"][0];
  CHECK(row["batch"] == 16);
  CHECK(row["weight_dtype"] == "fp8");
  CHECK(row["weights_bytes"] == 8'030'261'248ull);
  CHECK(row["kv_bytes"] == 16ull * 8192 * 131'072);  // 16 GiB
}

TEST_CASE("an overhead of zero, in any spelling, leaves weights plus cache") {
  for (const char* zero : {"0", "0GiB", "0MB"}) {
    INFO("--overhead " << zero);
    const ProcessResult result =
        run_kvplan(std::string("--model llama3.1-8b --gpu 4090 --ctx 8k --kv-dtype fp16 --format json --overhead ") + zero);
    REQUIRE(result.exit_code == 0);
    const nlohmann::json row = nlohmann::json::parse(result.out)["rows"][0];
    CHECK(row["overhead_bytes"] == 0);
    CHECK(row["total_bytes"] == 16'060'522'496ull + 8192ull * 131'072);  // weights + 1 GiB of cache
  }
}

TEST_CASE("exit codes: 0 whatever the verdict, 1 with --check when a row does not fit") {
  CHECK(run_kvplan("--model llama3.1-8b --ctx 128k --gpu 4090 --kv-dtype fp16").exit_code == 0);
  CHECK(run_kvplan("--model llama3.1-8b --ctx 128k --gpu 4090 --kv-dtype fp16 --check").exit_code == 1);
  CHECK(run_kvplan("--model llama3.1-8b --ctx 32k --gpu 4090 --kv-dtype fp16 --check").exit_code == 0);
}

TEST_CASE("colour only on a terminal: never in a pipe, never with NO_COLOR or --no-color") {
  const ProcessResult piped = run_kvplan("--model llama3.1-8b --ctx 128k --gpu 4090");
  CHECK(piped.out.find('\x1b') == std::string::npos);
}

TEST_CASE("catalog listings") {
  const ProcessResult models = run_kvplan("models");
  CHECK(models.exit_code == 0);
  CHECK_THAT(models.out, Catch::Contains("llama3.1-8b") && Catch::Contains("128 KiB"));
  const ProcessResult gpus = run_kvplan("gpus");
  CHECK(gpus.exit_code == 0);
  CHECK_THAT(gpus.out, Catch::Contains("rtx4090") && Catch::Contains("23.99 GiB"));
  const nlohmann::json list = nlohmann::json::parse(run_kvplan("models --format json").out);
  CHECK(list["models"].size() >= 5);
}

TEST_CASE("help shows every option with an example, version prints the version") {
  const ProcessResult help = run_kvplan("--help");
  CHECK(help.exit_code == 0);
  for (const char* option : {"--model", "--ctx", "--gpu", "--kv-dtype", "--weight-dtype", "--batch", "--overhead",
                             "--util", "--format", "--no-color", "--check", "Examples:"})
    CHECK_THAT(help.out, Catch::Contains(option));
  const ProcessResult version = run_kvplan("--version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("kvplan 0.", 0) == 0);
}

TEST_CASE("a model kvplan knows but does not size from its config: exit 3 with the input it does size") {
  // DeepSeek-V4 and MiniMax-M3 by Hugging Face id or short name: their GGUF files, under llama.cpp.
  for (const char* name : {"deepseek-ai/DeepSeek-V4-Flash", "deepseek-v4-pro", "MiniMaxAI/MiniMax-M3"}) {
    INFO(name);
    const ProcessResult r = run_kvplan(std::string("--model ") + name + " --gpu h200");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("is not in the catalog: kvplan sizes its"));
    CHECK_THAT(r.err, Catch::Contains("--model FILE.gguf --runtime llama.cpp"));
  }
  // A name that only resembles one is still a typo, exit 2.
  CHECK(run_kvplan("--model deepseek-v5 --gpu h200").exit_code == 2);
}

TEST_CASE("bad input: one line on stderr, exit 2, never a crash") {
  check_rejected("--model llama3.1-8bb --gpu 4090", "unknown model 'llama3.1-8bb' (did you mean: llama3.1-8b");
  check_rejected("--model llama3.1-8b --gpu rtx4900", "unknown GPU 'rtx4900' (did you mean: rtx4090");
  check_rejected("--model llama3.1-8b --gpu 4090 --kv-dtype fp9", "unknown KV cache dtype 'fp9' (did you mean:");
  // A cache-only type is not a weight format (q8_0 is both: llama.cpp's GGUF mix of that name).
  check_rejected("--model llama3.1-8b --gpu 4090 --weight-dtype fp8_e5m2", "unknown weight dtype 'fp8_e5m2'");
  check_rejected("--model llama3.1-8b --gpu 4090 --ctx=-5", "--ctx: '-5' is not a token count");
  check_rejected("--model llama3.1-8b --gpu 4090 --ctx 0", "--ctx: must be at least 1 token");
  check_rejected("--model llama3.1-8b --gpu 4090 --ctx abc", "--ctx: 'abc' is not a token count");
  check_rejected("--model llama3.1-8b --gpu 4090 --ctx 32k,,64k", "--ctx: '' is not a token count");
  check_rejected("--model llama3.1-8b --gpu 4090 --ctx 99999999999999999999", "--ctx: '99999999999999999999' is too large");
  check_rejected("--model llama3.1-8b --gpu 4090 --ctx 4000000000000M", "cache size overflows 64 bits");
  check_rejected("--model llama3.1-70b --gpu h100 --ctx 1M --batch 100000000000", "overflows 64 bits");
  check_rejected("--model llama3.1-8b --gpu 4090 --batch 0", "--batch: must be at least 1");
  check_rejected("--model llama3.1-8b --gpu 4090 --batch -1", "--batch");
  check_rejected("--model llama3.1-8b --gpu 0GB", "--gpu: memory size must be more than zero");
  check_rejected("--model llama3.1-8b --gpu -24GB", "--gpu: '-24GB' is not a memory size");
  check_rejected("--model llama3.1-8b --gpu 4090 --util 1.5", "--util: must be more than 0 and at most 1");
  check_rejected("--model llama3.1-8b --gpu 4090 --overhead -1GiB", "--overhead: '-1GiB' is not a memory size");
  check_rejected("--model llama3.1-8b --gpu 4090 --ctx 8k --mtp-layers 1", "--mtp-layers 1: llama3.1-8b declares 0 MTP layers");
  check_rejected("--runtime llama.cpp --model llama3.1-8b --gpu 4090 --mtp-layers 1",
                 "--mtp-layers does not apply to the llama.cpp profile");
  check_rejected("--model llama3.1-8b --gpu 4090 --format yaml", "--format: unknown format 'yaml'");
  check_rejected("--model llama3.1-8b", "--gpu is required");
  check_rejected("--gpu 4090", "--model is required");
  check_rejected("--model llama3.1-8b --gpu 4090 --frobnicate", "--frobnicate");
  check_rejected("--model /nonexistent/model.json --gpu 4090", "/nonexistent/model.json: no such file");
  check_rejected("--model " + source_path("tests") + " --gpu 4090", "tests: no config.json in this folder");
}

TEST_CASE("bad spec files: line and column, missing and invalid fields") {
  const std::string dir = source_path("tests/fixtures/specs/");
  check_rejected("--model " + dir + "truncated.json --gpu 4090", "truncated.json:4:3: invalid JSON");
  check_rejected("--model " + dir + "zero-kv-heads.json --gpu 4090", "field 'kv_heads': must be at least 1");
  check_rejected("--model " + dir + "negative-layers.json --gpu 4090", "field 'layers': expected a whole number");
  check_rejected("--model " + dir + "missing-layers.json --gpu 4090", "field 'layers': is missing");
  check_rejected("--model " + dir + "indivisible-heads.json --gpu 4090", "is not divisible by kv_heads (5)");
  check_rejected("--model " + dir + "unknown-layer-kind.json --gpu 4090",
                 "unsupported architecture: " + dir + "unknown-layer-kind.json: layer_types[1] = hyena", 3);
}
