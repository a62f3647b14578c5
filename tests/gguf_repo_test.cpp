// A repository of GGUF files named as llama-server's -hf takes it (org/Name-GGUF[:QUANT]): the
// catalog model it quantizes, its weights laid out as llama.cpp's quantizer lays out that type.

#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/core/gguf_repo.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

using kvplan::testing::check_refused;
using kvplan::testing::run_kvplan;

namespace {

nlohmann::json plan(const std::string& arguments) {
  const auto run = run_kvplan(arguments + " --gpu 4090 -c 8192 --kv-dtype fp16 --format json");
  INFO(arguments << "\n" << run.err);
  REQUIRE(run.exit_code == 0);
  return nlohmann::json::parse(run.out);
}

}  // namespace

TEST_CASE("a GGUF repository id: its parts, as llama-server -hf reads them", "[gguf-repo]") {
  const auto unsloth = kvplan::parse_gguf_repo("unsloth/Qwen3-8B-GGUF");
  REQUIRE(unsloth.has_value());
  CHECK(unsloth->repo == "unsloth/Qwen3-8B-GGUF");
  CHECK(unsloth->model_name == "Qwen3-8B");
  CHECK(unsloth->quant.empty());
  const auto named = kvplan::parse_gguf_repo("bartowski/Qwen_Qwen3-8B-gguf:Q5_K_M");
  REQUIRE(named.has_value());
  CHECK(named->model_name == "Qwen_Qwen3-8B");
  CHECK(named->quant == "Q5_K_M");
  // Not a GGUF repository: a model id, a folder, a file, an Ollama tag, a bare "-GGUF".
  for (const char* text : {"Qwen/Qwen3-8B", "models/qwen3-8b.gguf", "a/b/Qwen3-8B-GGUF", "qwen3:8b", "unsloth/-GGUF",
                           "/Qwen3-8B-GGUF"})
    CHECK_FALSE(kvplan::parse_gguf_repo(text).has_value());
}

TEST_CASE("a GGUF repository plans as its catalog model at Q4_K_M, the file -hf picks by default", "[gguf-repo]") {
  // Qwen3 8B at Q4_K_M: the figure of the same mix over the same tensors as --weight-dtype q4_k_m
  // and as Ollama's qwen3:8b blob (whose sizes ollama_tags_test checks against Ollama's records).
  const nlohmann::json repo = plan("--model unsloth/Qwen3-8B-GGUF");
  CHECK(repo["model"]["id"] == "unsloth/Qwen3-8B-GGUF:Q4_K_M");
  CHECK(repo["rows"][0]["weights_bytes"] == 5'021'827'072ull);
  CHECK(plan("--model qwen3:8b")["rows"][0]["weights_bytes"] == 5'021'827'072ull);
  CHECK(plan("--model qwen3-8b --weight-dtype q4_k_m")["rows"][0]["weights_bytes"] == 5'021'827'072ull);
  // The cache is the model's: 36 layers x 8 KV heads x 128 x 2 (K, V) x 2 B x 8,192 tokens.
  CHECK(repo["rows"][0]["kv_bytes"] == 36ull * 8 * 128 * 2 * 2 * 8192);
  // bartowski's spellings, old (the model's name) and new (the organisation folded in), and a named type.
  CHECK(plan("--model bartowski/Meta-Llama-3.1-8B-Instruct-GGUF")["rows"][0]["weights_bytes"] ==
        plan("--model llama3.1:8b")["rows"][0]["weights_bytes"]);
  const nlohmann::json q8 = plan("--model bartowski/Qwen_Qwen3-8B-GGUF:Q8_0");
  CHECK(q8["rows"][0]["weights_bytes"] == plan("--model qwen3-8b --weight-dtype q8_0")["rows"][0]["weights_bytes"]);
  // --weight-dtype may confirm the repository's type, or name it when the id does not.
  CHECK(plan("--model unsloth/Qwen3-8B-GGUF:Q4_K_M --weight-dtype q4_k_m")["rows"][0]["weights_bytes"] == 5'021'827'072ull);
  CHECK(plan("--model unsloth/Qwen3-8B-GGUF --weight-dtype q6_k")["rows"][0]["weights_bytes"] ==
        plan("--model qwen3-8b --weight-dtype q6_k")["rows"][0]["weights_bytes"]);
  // Under llama.cpp too (no tensor list: an even split of the same figure, labelled approximate).
  const auto llamacpp = run_kvplan("--model unsloth/Qwen3-8B-GGUF --runtime llama.cpp --gpu 4090 -c 8192");
  CHECK(llamacpp.exit_code == 0);
  CHECK_THAT(llamacpp.out, Catch::Contains("approximate"));
}

TEST_CASE("a GGUF repository kvplan cannot lay out is refused with the file as the way forward", "[gguf-repo]") {
  // Types of their makers' own mixes.
  check_refused(run_kvplan("--model unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL --gpu 4090"), "give the GGUF file itself", 3);
  check_refused(run_kvplan("--model bartowski/Qwen_Qwen3-8B-GGUF:Q4_K_L --gpu 4090"), "mix types their own way", 3);
  // A model the catalog lacks, and one that is not a dense decoder.
  check_refused(run_kvplan("--model unsloth/Foo-7B-GGUF --gpu 4090"), "not in the catalog");
  check_refused(run_kvplan("--model unsloth/Qwen3-30B-A3B-GGUF --gpu 4090"), "--model qwen3-30b-a3b --weights SIZE", 3);
  // Two quantizations named.
  check_refused(run_kvplan("--model unsloth/Qwen3-8B-GGUF:Q4_K_M --weight-dtype q5_k_m --gpu 4090"), "names the quantization");
}

TEST_CASE("kvplan spec writes a GGUF repository's spec, which plans the same", "[gguf-repo]") {
  kvplan::testing::TempDir dir;
  const auto spec = run_kvplan("spec --model unsloth/Qwen3-8B-GGUF:Q6_K");
  REQUIRE(spec.exit_code == 0);
  std::ofstream(dir.file("q6.json")) << spec.out;
  CHECK(plan("--model " + dir.file("q6.json"))["rows"][0]["weights_bytes"] ==
        plan("--model unsloth/Qwen3-8B-GGUF:Q6_K")["rows"][0]["weights_bytes"]);
}

TEST_CASE("kvplan check reads llama-server -hf with a GGUF repository", "[gguf-repo][check]") {
  const auto run = run_kvplan("check --gpu 4090 --format json --cmd 'llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 32768 -np 2'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(run.out);
  CHECK(report.dump().find("unsloth/Qwen3-8B-GGUF:Q4_K_M") != std::string::npos);
  CHECK(report.dump().find("\"fits\"") != std::string::npos);
}
