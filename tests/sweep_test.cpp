// kvplan sweep: one row per line in the plan's row schema, the context ranges, and every cache
// dtype a runtime offers; values computed by hand.

#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/sweep.h"
#include "support/run_binary.h"
#include "support/text_lines.h"

using kvplan::testing::lines_of;
using namespace kvplan;
using kvplan::testing::check_refused;
using kvplan::testing::run_kvplan;

namespace {


}  // namespace

TEST_CASE("context ranges double, step or list", "[sweep]") {
  // 4,096 x 2^0..8 = 4,096 ... 1,048,576: nine contexts.
  const std::vector<std::uint64_t> doubling = parse_context_range("4k..1M", "--ctx");
  REQUIRE(doubling.size() == 9);
  CHECK(doubling.front() == 4096);
  CHECK(doubling.back() == 1'048'576);
  const std::vector<std::uint64_t> steps = parse_context_range("1000..8000:1000", "--ctx");
  CHECK(steps == std::vector<std::uint64_t>{1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000});
  CHECK(parse_context_range("4k..10000", "--ctx") == std::vector<std::uint64_t>{4096, 8192});
  CHECK(parse_context_range("512,4k..8k", "--ctx") == std::vector<std::uint64_t>{512, 4096, 8192});
  CHECK_THROWS_WITH(parse_context_range("8k..4k", "--ctx"), Catch::Contains("--ctx: a range goes from"));
  CHECK_THROWS_AS(parse_context_range("0..4k", "--ctx"), Error);
  CHECK_THROWS_WITH(parse_context_range("1..1000000:1", "--ctx", 1000), Catch::Contains("more than 1000 contexts"));
}

TEST_CASE("sweep_rows settles every row, with no plan-size limit", "[sweep]") {
  // 5,000 contexts x 2 dtypes = 10,000 rows: more than one plan holds (4,096).
  const ModelSpec& model = *builtin_models().find("qwen3-8b");
  PlanRequest request;
  for (std::uint64_t ctx = 1; ctx <= 5000; ++ctx) request.contexts.push_back(ctx);
  for (const char* name : {"fp16", "fp8"}) {
    const Dtype& type = parse_kv_dtype(name, *model.weight_dtype);
    request.caches.push_back({&type, &type});
  }
  std::uint64_t rows = 0;
  std::uint64_t last_kv = 0;
  sweep_rows(model, {*builtin_gpus().find("h100")}, request, [&](Row&& row) {
    ++rows;
    last_kv = row.kv_bytes;
  });
  CHECK(rows == 10000);
  CHECK(last_kv == 5000ull * 73728);  // fp8 at 5,000 tokens: 368,640,000
}

TEST_CASE("kvplan sweep writes NDJSON rows in the row schema", "[sweep]") {
  const auto result = run_kvplan("sweep --models qwen3-8b,llama3.1-8b --gpus h100,24GiB --ctx 4k..16k "
                                 "--kv-dtype fp16,fp8 --util 0.9 --overhead 0");
  REQUIRE(result.exit_code == 0);
  const std::vector<std::string> lines = lines_of(result.out);
  REQUIRE(lines.size() == 2 * 2 * 3 * 2);  // models x GPUs x contexts x dtypes
  const nlohmann::json first = nlohmann::json::parse(lines.front());
  CHECK(first["model"] == "qwen3-8b");
  CHECK(first["gpu"] == "h100");
  CHECK(first["runtime"] == "generic");
  CHECK(first["ctx"] == 4096);
  CHECK(first["kv_dtype"] == "fp16");
  CHECK(first["kv_bytes"] == 603'979'776u);  // 4,096 x 147,456
  CHECK(first.contains("verdict"));
  CHECK(first.contains("decode_bound"));
  const nlohmann::json last = nlohmann::json::parse(lines.back());
  CHECK(last["model"] == "llama3.1-8b");
  CHECK(last["ctx"] == 16384);
  CHECK(last["kv_bytes"] == 16384ull * 65536);  // fp8: 32 layers x 8 heads x 128 x 2 x 1 B
  CHECK(last["decode_bound"].is_null());         // a size given has no bandwidth
}

TEST_CASE("kvplan sweep --format csv: one header, then one line per row", "[sweep]") {
  const auto result = run_kvplan("sweep --models qwen3-8b --gpus 4090 --ctx 8k,16k --kv-dtype fp16 --format csv");
  REQUIRE(result.exit_code == 0);
  const std::vector<std::string> lines = lines_of(result.out);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("model,gpu,runtime,ctx,batch,kv_dtype,", 0) == 0);
  CHECK(lines[0].find("decode_tokens_per_s_batch") != std::string::npos);
  CHECK(lines[1].rfind("qwen3-8b,rtx4090,generic,8192,1,fp16,", 0) == 0);
}

TEST_CASE("kvplan sweep --kv-dtype all keeps the dtypes the runtime offers", "[sweep]") {
  // The generic profile takes all 14 of kvplan's cache dtypes.
  const auto generic = run_kvplan("sweep --models qwen3-8b --gpus h100 --ctx 4k --kv-dtype all");
  REQUIRE(generic.exit_code == 0);
  CHECK(lines_of(generic.out).size() == 14);
  // vLLM takes only its own --kv-cache-dtype values; every line is one it priced.
  const auto vllm = run_kvplan("sweep --models qwen3-8b --gpus h100 --ctx 4k --kv-dtype all --runtime vllm");
  REQUIRE(vllm.exit_code == 0);
  const std::vector<std::string> lines = lines_of(vllm.out);
  CHECK(lines.size() < 14);
  CHECK_FALSE(lines.empty());
  for (const std::string& line : lines) CHECK(nlohmann::json::parse(line)["runtime"] == "vllm");
}

TEST_CASE("kvplan sweep refuses what it cannot do", "[sweep]") {
  check_refused(run_kvplan("sweep --gpus h100 --ctx 4k"), "--models is required");
  check_refused(run_kvplan("sweep --models qwen3-8b --ctx 4k"), "--gpus is required");
  check_refused(run_kvplan("sweep --models qwen3-8b --gpus h100 --format table"), "ndjson or csv");
  check_refused(run_kvplan("sweep --models qwen3-8b --gpus h100 --ctx 8k..4k"), "a range goes from");
  check_refused(run_kvplan("sweep --models qwen3-8b --model qwen3-8b --gpus h100"), "not --model");
}
