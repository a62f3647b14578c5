// The sweep's fast paths write what the slow ones would: whole numbers without nlohmann's float
// conversion, strings checked 8 bytes at a time, CSV text without printable()'s copy; and the
// lines `kvplan sweep` writes are the rows `kvplan --format json` prints for the same question.

#include <random>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/plan.h"
#include "kvplan/report.h"
#include "reports/row_csv_writer.h"
#include "reports/row_json_writer.h"
#include "support/run_binary.h"
#include "support/text_lines.h"

using kvplan::testing::lines_of;
using namespace kvplan;
using kvplan::testing::run_kvplan;

namespace {

std::string written_double(double value) {
  std::string out;
  append_json_double(out, value);
  return out;
}

std::string written_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}


}  // namespace

TEST_CASE("whole numbers are written as nlohmann writes them", "[sweep_writer]") {
  // Every whole number up to 300,000, the powers of ten and their neighbours, and 300,000 random
  // ones below 10^15 (where nlohmann switches to an exponent) and a little beyond.
  for (std::uint64_t n = 0; n <= 300'000; ++n) {
    const auto value = static_cast<double>(n);
    if (written_double(value) != nlohmann::json(value).dump()) {
      INFO(n);
      CHECK(written_double(value) == nlohmann::json(value).dump());
    }
  }
  double power = 1;
  for (int i = 0; i <= 17; ++i, power *= 10)
    for (const double value : {power - 1, power, power + 1, power * 2, -power}) {
      INFO(value);
      CHECK(written_double(value) == nlohmann::json(value).dump());
    }
  std::mt19937_64 random(14);
  std::uniform_int_distribution<std::uint64_t> below(1, 2'000'000'000'000'000ull);
  std::size_t differing = 0;
  for (int i = 0; i < 300'000; ++i) {
    const auto value = static_cast<double>(below(random) >> (i % 40));
    differing += written_double(value) != nlohmann::json(value).dump() ? 1 : 0;
  }
  CHECK(differing == 0);
  // Not whole, negative, zero, NaN: nlohmann's own digits, or null.
  for (const double value : {0.0, -0.0, 0.5, 1.5, 3350.25, 1e15 + 0.5, 123456.789, -7.0, 1e300})
    CHECK(written_double(value) == nlohmann::json(value).dump());
  CHECK(written_double(std::nan("")) == "null");
}

TEST_CASE("a string is escaped exactly when nlohmann would, wherever the byte is", "[sweep_writer]") {
  // Each byte value at each position of the first 8-byte word, the second, and the tail.
  for (int byte = 0; byte < 256; ++byte)
    for (std::size_t position = 0; position < 19; ++position) {
      std::string text(19, 'a');
      text[position] = static_cast<char>(byte);
      INFO(byte << " at " << position);
      nlohmann::json tree(text);
      std::string expected;
      try {
        expected = tree.dump();
      } catch (const nlohmann::json::type_error&) {
        CHECK_THROWS_AS(written_string(text), nlohmann::json::type_error);  // not UTF-8, as the tree says
        continue;
      }
      CHECK(written_string(text) == expected);
    }
  CHECK(written_string("") == "\"\"");
  CHECK(written_string("plain ascii, longer than one word") == "\"plain ascii, longer than one word\"");
}

TEST_CASE("CSV text is printable()'s, quoted as before, with or without the copy", "[sweep_writer]") {
  const auto csv = [](std::string_view text) {
    std::string out;
    append_csv_text(out, text);
    return out;
  };
  CHECK(csv("plain") == "plain");
  CHECK(csv("a,b") == "\"a,b\"");
  CHECK(csv("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv("line\nbreak") == "line\\x0abreak");  // printable() shows the control
  CHECK(csv("tab\there, too") == "\"tab\\x09here, too\"");
  CHECK(csv(std::string(4096, 'x')) == std::string(4096, 'x'));
  CHECK(csv(std::string(4097, 'x')) == std::string(4096, 'x') + "...");
  CHECK(csv("caf\xC3\xA9") == "caf\xC3\xA9");
}

TEST_CASE("kvplan sweep's lines are the plan command's rows", "[sweep]") {
  // The same question asked both ways: every NDJSON line, without its model, gpu and runtime,
  // is the plan's JSON row, member for member; contexts below and past Qwen3-8B's trained 40,960.
  for (const std::string runtime : {"generic", "vllm", "llama.cpp", "sglang"}) {
    INFO(runtime);
    const std::string question = " --ctx 4096,40961,131072 --kv-dtype " +
                                 std::string(runtime == "llama.cpp" ? "fp16,q8_0" : "fp16,fp8") + " --runtime " + runtime;
    const kvplan::testing::ProcessResult plan = run_kvplan("--model qwen3-8b --gpu h100" + question + " --format json");
    const kvplan::testing::ProcessResult sweep = run_kvplan("sweep --models qwen3-8b --gpus h100" + question);
    INFO(plan.err << sweep.err);
    REQUIRE(sweep.exit_code == 0);
    REQUIRE((plan.exit_code == 0 || plan.exit_code == 1));
    const nlohmann::ordered_json rows = nlohmann::ordered_json::parse(plan.out)["rows"];
    const std::vector<std::string> lines = lines_of(sweep.out);
    REQUIRE(lines.size() == rows.size());
    REQUIRE(lines.size() == 6);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      nlohmann::ordered_json line = nlohmann::ordered_json::parse(lines[i]);
      CHECK(line["model"] == "qwen3-8b");
      CHECK(line["gpu"] == "h100");
      line.erase("model");
      line.erase("gpu");
      line.erase("runtime");
      CHECK(line.dump() == rows[i].dump());
    }
  }
}
