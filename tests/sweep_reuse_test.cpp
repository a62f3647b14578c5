// The sweep's second round of fast paths write what the slow ones would: a row priced into a Row
// that held another (Profile::price_into, clear_row) is the row price() gives; text copied and
// checked for escapes in one pass is nlohmann's text, whatever the byte and wherever it stands;
// a line longer than the writer's first buffer grows it; the breakdown phrase appended piece by
// piece is the one written by hand below.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/core/profile.h"
#include "engines/core/settle.h"
#include "kvplan/catalog.h"
#include "kvplan/plan.h"
#include "reports/fields.h"
#include "reports/row_json_writer.h"
#include "support/breakdown_items.h"

using namespace kvplan;

namespace {

/// Qwen3-8B on one H100 under the generic profile, and a query for its rows with an fp16 cache.
struct GenericQwenOnH100 {
  const ModelSpec& model = *builtin_models().find("qwen3-8b");
  std::vector<GpuSpec> gpus{*builtin_gpus().find("h100")};
  PlanRequest request;
  std::shared_ptr<const Profile> profile = find_engine("generic", "runtime").make(model, gpus, request);
  RowQuery query = fp16_query(model);

  /// The row settle_shown_into writes into `row`, the findings of the row before kept in `spent`.
  void settle_into(Row& row, const RowQuery& at, std::vector<Finding>* spent = nullptr) const {
    settle_shown_into(row, *profile, at, model, gpus, std::nullopt, spent);
  }
  Row settled(const RowQuery& at) const { return settle_shown(*profile, at, model, gpus); }

  static RowQuery fp16_query(const ModelSpec& model) {
    RowQuery query;
    const Dtype& fp16 = parse_kv_dtype("fp16", *model.weight_dtype);
    query.cache = {&fp16, &fp16};
    return query;
  }
};

std::string reuse_written(const Row& row) {
  std::string out;
  append_row_json(out, row);
  return out;
}

/// A settled row of `model` on `count` H100s at `ctx` with an fp8 cache: per_gpu shares and an
/// assumption on two cards, the trained-context warning past 40,960.
Row reuse_settled(const ModelSpec& model, std::size_t count, std::uint64_t ctx) {
  const std::vector<GpuSpec> gpus(count, *builtin_gpus().find("h100"));
  PlanRequest request;
  request.contexts = {ctx};
  const Dtype& fp8 = parse_kv_dtype("fp8", *model.weight_dtype);
  request.caches = {{&fp8, &fp8}};
  return make_plan(model, gpus, request).rows.front();
}

}  // namespace

TEST_CASE("a row priced into a used Row is the row price() gives", "[sweep]") {
  const GenericQwenOnH100 setup;
  RowQuery query = setup.query;
  query.ctx = 4096;

  // The Row first holds another model's row on two cards, past its trained context: shares,
  // assumptions, a warning, a decode bound, a detail-free but fuller row in every vector.
  Row row = reuse_settled(*builtin_models().find("gemma3-12b"), 2, 200'000);
  REQUIRE(!row.per_gpu.empty());
  REQUIRE(!row.assumptions.empty());
  REQUIRE(!row.findings.empty());
  REQUIRE(row.breakdown.size() == 2);  // Gemma 3: sliding and full layers
  setup.settle_into(row, query);
  CHECK(reuse_written(row) == reuse_written(setup.settled(query)));
  // Qwen3-8B at 4,096 tokens: 36 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 147,456 bytes
  // a token, 603,979,776 bytes; one GPU share, no warning.
  CHECK(row.kv_bytes == 603'979'776);
  CHECK(row.per_gpu.size() == 1);
  CHECK(row.findings.empty());
  CHECK(row.assumptions.empty());

  // clear_row leaves every field as a new Row has it.
  Row full = reuse_settled(setup.model, 2, 100'000);
  full.kv_pool_bytes = 1;
  full.engine.starts = false;
  clear_row(full);
  const Row fresh;
  CHECK(full.ctx == fresh.ctx);
  CHECK(full.batch == fresh.batch);
  CHECK(full.cache.k == nullptr);
  CHECK(full.weight_dtype == nullptr);
  CHECK(full.kv_bytes == 0);
  CHECK(full.breakdown.empty());
  CHECK(!full.kv_pool_bytes);
  CHECK(full.weights_bytes == 0);
  CHECK(full.weights_rule.empty());
  CHECK(full.total_bytes == 0);
  CHECK(full.headroom_bytes == 0);
  CHECK(full.verdict == fresh.verdict);
  CHECK(!full.fits);
  CHECK(full.engine.starts);
  CHECK(!full.engine.available_kv_bytes);
  CHECK(full.findings.empty());
  CHECK(full.tp == 1);
  CHECK(full.pp == 1);
  CHECK(full.per_gpu.empty());
  CHECK(full.assumptions.empty());
  CHECK(!full.decode_bound);
}

TEST_CASE("a sweep's trained-context warning takes over the strings of the row before's", "[sweep]") {
  // Rows below and past Qwen3-8B's trained 40,960 tokens, in turn and in runs, settled into one
  // Row with the findings of the row before kept aside (sweep_rows' `spent`): each is the row
  // settle_shown gives, and from the second warning in a run on, its text is in the same buffer
  // as the one before's (no allocation).
  const GenericQwenOnH100 setup;
  RowQuery query = setup.query;
  Row row;
  std::vector<Finding> spent;
  const char* last_text = nullptr;
  std::size_t reused = 0;
  for (const std::uint64_t ctx : {100'000, 4096, 100'000, 123'456, 999'999, 4096, 40'960, 40'961}) {
    query.ctx = ctx;
    setup.settle_into(row, query, &spent);
    INFO(ctx);
    CHECK(reuse_written(row) == reuse_written(setup.settled(query)));
    const bool warned = ctx > 40'960;
    REQUIRE(row.findings.size() == (warned ? 1u : 0u));
    if (warned) {
      CHECK(row.findings[0].code == "beyond_trained_context");
      if (last_text && row.findings[0].text.data() == last_text) ++reused;
      last_text = row.findings[0].text.data();
    } else {
      last_text = nullptr;
    }
  }
  CHECK(row.findings.at(0).text == "ctx 40,961 is beyond the model's trained context of 40,960 tokens");
  // 123,456 after 100,000 and 999,999 after it (a longer text may grow the string; a row without
  // the warning leaves none to take over).
  CHECK(reused == 2);
}

TEST_CASE("text copied and checked in one pass is escaped exactly as nlohmann escapes it", "[sweep_writer]") {
  // Each byte that needs care (and a plain one) at each position of texts of 1 to 40 bytes: the
  // short path (below 16), whole blocks and the overlapping last block. The row's JSON through
  // the writer and through the tree, compared.
  Row row = reuse_settled(*builtin_models().find("qwen3-8b"), 1, 4096);
  std::size_t compared = 0;
  for (const int byte : {0x00, 0x1F, 0x20, 0x22, 0x5C, 0x7A, 0x7E, 0x7F, 0x80, 0xC3, 0xFF})  // '"' 0x22, '\\' 0x5C, 'z' 0x7A
    for (std::size_t size = 1; size <= 40; ++size)
      for (std::size_t position = 0; position < size; ++position) {
        std::string text(size, 'a');
        text[position] = static_cast<char>(byte);
        if (byte == 0xC3 && position + 1 < size) text[position + 1] = static_cast<char>(0xA9);  // "é", valid UTF-8
        row.weights_rule = text;
        INFO(byte << " at " << position << " of " << size);
        std::string expected;
        try {
          expected = row_to_json(row).dump();
        } catch (const nlohmann::json::type_error&) {
          CHECK_THROWS_AS(reuse_written(row), nlohmann::json::type_error);  // not UTF-8, as the tree says
          continue;
        }
        CHECK(reuse_written(row) == expected);
        ++compared;
      }
  CHECK(compared > 4000);
}

TEST_CASE("a line longer than the writer's first buffer grows it", "[sweep_writer]") {
  Row row = reuse_settled(*builtin_models().find("qwen3-8b"), 1, 4096);
  row.weights_rule = std::string(100'000, 'x');  // the buffer starts at 4 KiB, grown 2 KiB ahead
  CHECK(reuse_written(row) == row_to_json(row).dump());
  TextBuffer buffer;
  for (int i = 0; i < 1000; ++i) buffer.append("0123456789");
  CHECK(buffer.size() == 10'000);
  CHECK(buffer.view().substr(9'990) == "0123456789");
}

TEST_CASE("the breakdown phrase, appended piece by piece", "[sweep_writer]") {
  Row row;
  row.breakdown = testing::every_kind_breakdown();
  CHECK(describe_breakdown(row) ==
        "40 sliding(1024) x 1,024 tokens + 8 full x 131,072 tokens (indexer on 8) + 1 full (MTP) x 131,072 tokens"
        " + 20 cross(6404) x 6,404 image tokens + 36 linear");
  std::string out = "cell: ";
  append_breakdown(out, row);
  CHECK(out == "cell: " + describe_breakdown(row));
}
