// The row writer that kvplan sweep streams with must write exactly what the JSON tree writes:
// row_to_json(row).dump(), byte for byte, for real rows of every engine and for rows built to
// hold every awkward value (escapes, UTF-8, NaN, negative headroom, empty and optional fields).

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "reports/fields.h"
#include "reports/row_json_writer.h"
#include "reports/sweep_lines.h"
#include "support/breakdown_items.h"

using namespace kvplan;

namespace {

std::string written(const Row& row) {
  std::string out;
  append_row_json(out, row);
  return out;
}

/// A row with every field set and strings that need each of JSON's escapes.
Row awkward_row() {
  static const Dtype& fp16 = parse_kv_dtype("fp16", parse_weight_dtype("bf16"));
  static const Dtype& q4 = parse_kv_dtype("q4_0", parse_weight_dtype("bf16"));
  Row row;
  row.ctx = std::numeric_limits<std::uint64_t>::max();
  row.batch = 7;
  row.cache = {&fp16, &q4};
  row.weight_dtype = &parse_weight_dtype("fp8");
  row.kv_bytes_per_token = 147456;
  row.kv_bytes = 0;
  row.state_bytes = 12345;
  row.weights_bytes = 16381470720;
  row.weights_rule = "quote \" backslash \\ slash / newline \n tab \t cr \r bell \x07 esc \x1b del \x7f";
  row.overhead_bytes = 1;
  row.total_bytes = 2;
  row.capacity_bytes = 3;
  row.headroom_bytes = std::numeric_limits<std::int64_t>::min();
  row.verdict = Verdict::engine_refuses;
  row.fits = false;
  row.kv_pool_bytes = 0;
  row.engine.available_kv_bytes = std::nullopt;
  row.engine.kv_cache_tokens = 99;
  row.engine.max_concurrency = std::numeric_limits<double>::quiet_NaN();
  row.engine.starts = false;
  row.tp = 2;
  row.pp = 4;
  for (std::uint32_t rank = 0; rank < 3; ++rank) {
    GpuShare share;
    share.rank = rank;
    share.stage = rank / 2;
    share.gpu = rank == 1 ? "cafe \xc3\xa9 \xe2\x89\xa4 \xf0\x9f\x98\x80" : "h100";  // é, ≤, an emoji: UTF-8 kept
    share.weights_bytes = rank;
    share.kv_bytes = 1ull << 62;
    share.headroom_bytes = -static_cast<std::int64_t>(rank) * 1000;
    share.fits = rank == 0;
    row.per_gpu.push_back(share);
  }
  row.assumptions = {"", "one", "\x01\x1f control"};
  row.findings = {{"code", "text with \"quotes\"", true}, {"other", "", false}};
  row.breakdown = {testing::breakdown_item(LayerKind::full, 36, 8192, {.bytes = 1207959552}),
                   testing::breakdown_item(LayerKind::sliding, 5, 0,
                                           {.window = 4096, .indexer_layers = 2, .indexer_bytes = 77, .mtp = true})};
  DecodeBound bound;
  bound.tokens_per_s_per_sequence = 57.307143233888596;
  bound.tokens_per_s_batch = 1e21;
  bound.weights_bytes_read = 5;
  bound.kv_bytes_read = 6;
  bound.bandwidth_gbps = 418.75;
  bound.rule = "roofline";
  row.decode_bound = bound;
  return row;
}

}  // namespace

TEST_CASE("the row writer writes row_to_json's text, escapes and all", "[sweep_writer]") {
  Row row = awkward_row();
  CHECK(written(row) == row_to_json(row).dump());

  // Each double as nlohmann writes it: integral values with ".0", exponents, signs, NaN as null.
  for (const double value : {0.0, -0.0, 5.0, 1.0 / 3.0, 1e-7, 1e15, 1e16, 123456789012345680.0, -2.5e-300,
                             std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::max()}) {
    row.engine.max_concurrency = value;
    row.decode_bound->bandwidth_gbps = value;
    INFO(value);
    CHECK(written(row) == row_to_json(row).dump());
  }

  // Every single byte below 0x80 in a string, one at a time.
  for (int c = 0; c < 0x80; ++c) {
    row.findings[0].text = std::string("a") + static_cast<char>(c) + "b";
    INFO(c);
    CHECK(written(row) == row_to_json(row).dump());
  }

  // The optional parts absent: no decode bound, no shares, nothing in the lists.
  row.decode_bound.reset();
  row.per_gpu.clear();
  row.assumptions.clear();
  row.findings.clear();
  row.breakdown.clear();
  row.kv_pool_bytes.reset();
  row.engine.kv_cache_tokens.reset();
  row.engine.max_concurrency.reset();
  row.engine.available_kv_bytes = 0;
  CHECK(written(row) == row_to_json(row).dump());
}

TEST_CASE("the row writer refuses text that is not UTF-8, as the JSON tree does", "[sweep_writer]") {
  Row row = awkward_row();
  row.weights_rule = "broken \xff byte";
  CHECK_THROWS_AS(row_to_json(row).dump(), nlohmann::json::type_error);
  std::string out;
  CHECK_THROWS_AS(append_row_json(out, row), nlohmann::json::type_error);
}

TEST_CASE("the row writer matches the JSON tree on real rows of every engine", "[sweep_writer]") {
  // 6 engines x 5 models x 3 cards x 3 contexts x their cache dtypes, where the engine runs the
  // model, each compared byte for byte.
  std::size_t compared = 0;
  for (const std::string& runtime : runtime_names())
    for (const char* model_id : {"qwen3-8b", "gemma3-12b", "qwen3-next-80b-a3b", "deepseek-v3.2", "gpt-oss-20b"})
      for (const char* gpu_id : {"4090", "h100", "a100-40g"}) {
        const ModelSpec& model = *builtin_models().find(model_id);
        PlanRequest request;
        request.runtime = runtime;
        request.contexts = {4096, 131072, 1u << 20};
        Plan plan;
        try {
          plan = make_plan(model, *builtin_gpus().find(gpu_id), request);
        } catch (const Error&) {
          continue;  // a model the engine does not run: no rows to compare
        }
        for (const Row& row : plan.rows) {
          CHECK(written(row) == row_to_json(row).dump());
          ++compared;
        }
      }
  CHECK(compared >= 351);
}

TEST_CASE("a sweep's NDJSON line is the model, GPU and runtime, then the row's fields", "[sweep_writer]") {
  const ModelSpec& model = *builtin_models().find("qwen3-8b");
  const std::vector<GpuSpec> gpus(2, *builtin_gpus().find("h100"));
  PlanRequest request;
  request.contexts = {8192};
  const Plan plan = make_plan(model, gpus, request);
  REQUIRE(!plan.rows.empty());
  // The line as it was written before the row writer: a tree with the names first.
  nlohmann::ordered_json tree;
  tree["model"] = "qwen3-8b";
  tree["gpu"] = "2xh100";
  tree["runtime"] = "generic";
  const nlohmann::ordered_json row_fields = row_to_json(plan.rows.front());  // alive while iterated
  for (const auto& [key, value] : row_fields.items()) tree[key] = value;

  SweepLines lines(false);
  lines.start(model, gpus, "generic");
  std::string out;
  lines.append(plan.rows.front(), out);
  CHECK(out == tree.dump() + "\n");
}

namespace {

/// format_csv's text for `rows` of `model` on `gpus`, and the CSV row writer's for the same.
std::pair<std::string, std::string> both_csv(const ModelSpec& model, const std::vector<GpuSpec>& gpus,
                                             const std::string& runtime, const std::vector<Row>& rows) {
  Report report;
  report.model = &model;
  report.gpus = gpus;
  report.plan.runtime = runtime;
  report.plan.rows = rows;
  SweepLines lines(true);
  lines.start(model, gpus, runtime);
  std::string streamed;
  for (const Row& row : rows) lines.append(row, streamed);
  return {format_csv(report), streamed};
}

}  // namespace

TEST_CASE("a sweep's CSV lines are format_csv's, header and cells", "[sweep_writer]") {
  ModelSpec model = *builtin_models().find("qwen3-8b");
  const std::vector<GpuSpec> gpus{*builtin_gpus().find("h100"), *builtin_gpus().find("h100"), *builtin_gpus().find("4090")};
  // Every byte below 0x80 in the text cells (quotes, commas, line breaks, controls), NaN and
  // optional cells empty or set, a decode bound or none.
  std::vector<Row> rows;
  Row row = awkward_row();
  for (int c = 0; c < 0x80; ++c) {
    row.weights_rule = std::string("a,") + static_cast<char>(c) + "\"b";
    row.findings[0].code = std::string(1, static_cast<char>(c));
    rows.push_back(row);
  }
  row.weights_rule = std::string(5000, 'x');  // cut at 4 KiB
  row.decode_bound.reset();
  row.engine.max_concurrency = 2.0;
  row.assumptions.clear();
  rows.push_back(row);
  model.id = "model, with \"quotes\"\n";
  const auto [tree, streamed] = both_csv(model, gpus, "vllm", rows);
  CHECK(streamed == tree);

  // Real rows of every engine.
  for (const std::string& runtime : runtime_names())
    for (const char* model_id : {"qwen3-8b", "gemma3-12b", "deepseek-v3.2"}) {
      const ModelSpec& real = *builtin_models().find(model_id);
      PlanRequest request;
      request.runtime = runtime;
      request.contexts = {4096, 131072};
      const std::vector<GpuSpec> card{*builtin_gpus().find("h100")};
      Plan plan;
      try {
        plan = make_plan(real, card, request);
      } catch (const Error&) {
        continue;
      }
      const auto [real_tree, real_streamed] = both_csv(real, card, runtime, plan.rows);
      INFO(runtime << " " << model_id);
      CHECK(real_streamed == real_tree);
    }
}
