// llama.cpp's cache types by name: matched case-folded without a lowercase copy of the name (the
// fifth step of fit's speed-up). The nine names are llama.cpp's kv_cache_types (common/arg.cpp),
// kvplan's fp32 / fp16 spell f32 / f16, and anything else is refused with the same words.
#include <string>
#include <string_view>
#include <catch2/catch.hpp>
#include "engines/llamacpp/rules.h"
#include "kvplan/error.h"

TEST_CASE("llama.cpp cache types: every spelling case-folded, near misses refused", "[llamacpp][fitspeed]") {
  for (const std::string_view name : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}) {
    std::string upper(name);
    for (char& c : upper) c = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    CHECK(kvplan::parse_llamacpp_cache_type(name, "-ctk").name == name);
    CHECK(kvplan::parse_llamacpp_cache_type(upper, "-ctk").name == name);
    CHECK_FALSE(kvplan::llamacpp_cache_type_error(upper, "-ctk").has_value());
  }
  CHECK(kvplan::parse_llamacpp_cache_type("FP32", "-ctk").name == "f32");
  CHECK(kvplan::parse_llamacpp_cache_type("Fp16", "-ctv").name == "f16");
  CHECK(kvplan::parse_llamacpp_cache_type("IQ4_NL", "-ctv").name == "iq4_nl");
  // One character short, one too many, a trailing space, a type ggml has but llama.cpp does not cache.
  for (const std::string_view text : {"q8", "q8_00", "f16 ", "", "q4_K", "fp", "fp160"}) {
    CHECK_THROWS_AS(kvplan::parse_llamacpp_cache_type(text, "-ctk"), kvplan::Error);
    const auto error = kvplan::llamacpp_cache_type_error(text, "-ctk");
    REQUIRE(error.has_value());
    CHECK_THAT(*error, Catch::StartsWith("-ctk: '" + std::string(text) + "' is not a llama.cpp cache type"));
  }
}
