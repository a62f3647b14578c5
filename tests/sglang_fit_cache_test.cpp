// kvplan fit under SGLang: a cache dtype the engine does not offer on the card (nvfp4 before
// Blackwell), or one kvplan does not model for the model (nvfp4 beside sliding layers), is not a
// row; the model's other dtypes still are. Once, such a dtype refused the whole model.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run_binary.h"

namespace {

/// The rows and the not-taken dtypes of `model` in a kvplan fit JSON.
struct SglangFitOf {
  int rows = 0;
  std::string nvfp4_reason;  ///< not_taken's reason for nvfp4 ("" when nvfp4 was not refused)
  std::string whole_model;   ///< a refusal of the whole model (no cache named)
};

SglangFitOf sglang_fit_of(const nlohmann::json& fit, const std::string& model) {
  SglangFitOf out;
  for (const nlohmann::json& row : fit["rows"])
    if (row["model"]["id"] == model) ++out.rows;
  for (const nlohmann::json& refused : fit["not_taken"]) {
    if (refused["model"] != model) continue;
    if (refused["kv_dtype"] == "nvfp4") out.nvfp4_reason = refused["reason"];
    if (refused["kv_dtype"] == "") out.whole_model = refused["reason"];
  }
  return out;
}

}  // namespace

TEST_CASE("sglang fit: nvfp4 on an H100 is not a row, and gemma2, gemma3, command-r7b still are", "[sglang][fit]") {
  const auto run = kvplan::testing::run_kvplan("fit --gpu h100 --runtime sglang --ctx 8k --format json");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json fit = nlohmann::json::parse(run.out);
  for (const char* model : {"gemma2-9b", "gemma3-27b", "command-r7b"}) {
    INFO(model);
    const SglangFitOf of = sglang_fit_of(fit, model);
    CHECK(of.rows > 0);  // the engine's own bf16 cache at least
    CHECK(of.whole_model.empty());
    CHECK(of.nvfp4_reason == "SGLang's fp4_e2m1 KV cache needs a Blackwell GPU (sm_100 or later); NVIDIA H100 SXM is not one");
  }
}

TEST_CASE("sglang fit: on a B200 nvfp4 beside sliding layers is refused alone, not the model", "[sglang][fit]") {
  const auto run = kvplan::testing::run_kvplan("fit --gpu b200 --runtime sglang --ctx 8k --family gemma2-9b --format json");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const SglangFitOf of = sglang_fit_of(nlohmann::json::parse(run.out), "gemma2-9b");
  CHECK(of.rows > 0);
  CHECK(of.whole_model.empty());
  CHECK_THAT(of.nvfp4_reason, Catch::Contains("an fp4_e2m1 cache beside sliding or recurrent layers = not modelled"));
}
