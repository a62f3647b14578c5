// Issue #11, second round: each input here crashed, wrapped or answered wrongly before its fix
// (the commit that added the test), through the real binary so that a crash fails the test
// instead of the test run. The campaign as a whole is tests/hostile/run.sh (ctest hostile.corpus).

#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_binary.h"
#include "support/temp_dir.h"

using kvplan::testing::check_refused;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;
using kvplan::testing::TempDir;
using nlohmann::json;

namespace {

std::string input(const std::string& name) { return source_path("tests/hostile/inputs/" + name); }

/// The first row of a JSON report, after checking the run answered.
json first_row(const ProcessResult& r) {
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out).at("rows").at(0);
}

}  // namespace

TEST_CASE("vLLM: K and V widths summing to 2^32 are priced, not a page of 0 bytes (SIGFPE)", "[hostile]") {
  // head_dim = v_head_dim = 2^31: their sum wrapped to 0 in 32 bits, the page was 0 bytes and the
  // block count divided by it. One layer, one KV head: (2^31 + 2^31) x 2 B (bf16) = 8,589,934,592 B
  // a token.
  const json row = first_row(run_kvplan("--model " + input("spec-head-dims-sum-2p32.json") +
                                        " --ctx 1k --gpu 80GiB --runtime vllm --format json"));
  CHECK(row.at("kv_bytes_per_token").get<std::uint64_t>() == 8589934592ULL);
  CHECK(row.at("fits") == false);
}

TEST_CASE("llama.cpp: a sliding window of 2^64 - 1 holds the whole context (SIGFPE)", "[hostile]") {
  // n_swa x 1 + n_ubatch wrapped to a few cells. The window is wider than any context, so the SWA
  // cache holds n_ctx_seq = 1,024 cells like the full one: 2 layers x 1 KV head x (128 + 128)
  // x 2 B x 1,024 cells = 1,048,576 B.
  const json row = first_row(run_kvplan("--model " + input("spec-window-2p64-1.json") +
                                        " --ctx 1k --gpu 80GiB --runtime llama.cpp --format json"));
  CHECK(row.at("kv_bytes").get<std::uint64_t>() == 1048576);
}

TEST_CASE("vLLM: a sliding window of 2^64 - 1 keeps every token of the request", "[hostile]") {
  // window - 1 + max_num_batched_tokens wrapped to max_num_batched_tokens - 2 = 8,190 (an 80 GiB
  // card: 8,192), so a 16,384-token request got 513 sliding blocks. Saturated: cdiv(16,384, 16)
  // + 1 = 1,025 sliding blocks and 1,024 full ones, a page of 16 tokens x 1 head x (128 + 128)
  // x 2 B = 8,192 B each: 2,049 x 8,192 = 16,785,408 B.
  TempDir dir;
  const std::string spec = dir.file("window.json");
  std::ofstream(spec) << R"({"name":"x","layers":2,"attention_heads":1,"kv_heads":1,"head_dim":128,"params":1000,)"
                      << R"("weights_bytes":2000,"weight_dtype":"bf16","vocab_size":10,"max_context":32768,)"
                      << R"("layer_pattern":["sliding","full"],"sliding_window":18446744073709551615})";
  const json row = first_row(run_kvplan("--model " + spec + " --ctx 16384 --gpu 80GiB --runtime vllm --format json"));
  CHECK(row.at("kv_bytes").get<std::uint64_t>() == 16785408);
}

TEST_CASE("llama.cpp: a spec with a parameter count and no checkpoint size is priced, not 0 weights", "[hostile]") {
  // my-model.json: 8,030,261,248 parameters, bf16 = 16,060,522,496 B, all 33 layers on the GPU.
  // The profile read weights_bytes alone and answered "Weights 0.00 GiB" (a false "fits").
  const json row = first_row(run_kvplan("--model " + source_path("tests/fixtures/specs/my-model.json") +
                                        " --ctx 1k --gpu 24GiB --runtime llama.cpp --format json"));
  CHECK(row.at("weights_bytes").get<std::uint64_t>() == 16060522496ULL);
}

TEST_CASE("an error quoting a 100 KB value keeps what is wrong with it, in a short line", "[hostile]") {
  // The line was cut at 1,000 bytes inside the echoed value: "not in the catalog" was lost.
  const ProcessResult r = run_kvplan("--model llama3.1-8b --ctx 1k --gpu " + std::string(100000, 'x'));
  check_refused(r, "not in the catalog");
  CHECK(r.err.size() < 400);
  const ProcessResult path = run_kvplan("--model " + std::string(26000, 'a') + ".gguf --ctx 1k --gpu 24GiB");
  check_refused(path, "...");
  CHECK(path.err.find(".gguf") != std::string::npos);  // the end of the name is kept
  CHECK(path.err.size() < 400);
}

TEST_CASE("a config.json declaring 2^32 - 1 MTP layers is refused, not built (out of memory)", "[hostile]") {
  // num_nextn_predict_layers 4294967295: the llama.cpp profile built a cache layer for each and
  // ran out of memory (exit 4 after about 1 GB). MTP layers are bounded like layers.
  check_refused(run_kvplan("--model " + input("hf-mtp-2p32-1") + " --ctx 1k --gpu 24GiB --runtime llama.cpp"),
                "4294967295 MTP layers are more than kvplan plans (at most 4096)");
}
