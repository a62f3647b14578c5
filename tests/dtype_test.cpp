#include <catch2/catch.hpp>

#include "kvplan/dtype.h"
#include "kvplan/error.h"

using namespace kvplan;

namespace {
const Dtype& bf16() { return parse_weight_dtype("bf16"); }
std::uint64_t bytes_of(std::string_view name, std::uint64_t elements) {
  return dtype_bytes(parse_kv_dtype(name, bf16()), elements);
}
}  // namespace

TEST_CASE("cache dtypes cost exactly their block layout") {
  CHECK(bytes_of("fp32", 32) == 128);
  CHECK(bytes_of("fp16", 32) == 64);
  CHECK(bytes_of("bf16", 32) == 64);
  CHECK(bytes_of("fp8", 32) == 32);
  CHECK(bytes_of("fp8_e5m2", 32) == 32);
  CHECK(bytes_of("int8", 32) == 32);
  CHECK(bytes_of("int4", 32) == 16);
  CHECK(bytes_of("q8_0", 32) == 34);
  CHECK(bytes_of("q4_0", 32) == 18);
  CHECK(bytes_of("q4_1", 32) == 20);
  CHECK(bytes_of("q5_0", 32) == 22);
  CHECK(bytes_of("q5_1", 32) == 24);
  CHECK(bytes_of("iq4_nl", 32) == 18);
}

TEST_CASE("engine spellings resolve to the canonical names") {
  CHECK(parse_kv_dtype("f16", bf16()).name == "fp16");
  CHECK(parse_kv_dtype("f32", bf16()).name == "fp32");
  CHECK(parse_kv_dtype("fp8_e4m3", bf16()).name == "fp8");
  CHECK(parse_kv_dtype("Q8_0", bf16()).name == "q8_0");
  CHECK(parse_kv_dtype("auto", bf16()).name == "bf16");  // vLLM: auto = the model's dtype
  CHECK(parse_kv_dtype("auto", parse_weight_dtype("fp16")).name == "fp16");
  // Quantized weights compute in bf16, and the cache with them (gpt-oss's mxfp4, DeepSeek's fp8).
  for (const char* stored : {"fp8", "int8", "int4", "mxfp4"}) CHECK(parse_kv_dtype("auto", parse_weight_dtype(stored)).name == "bf16");
  CHECK(parse_weight_dtype("bfloat16").name == "bf16");
  CHECK(parse_weight_dtype("float16").name == "fp16");
}

TEST_CASE("a block type refuses a row that is not a whole number of blocks") {
  CHECK_THROWS_WITH(bytes_of("q8_0", 48), Catch::Contains("blocks of 32"));
}

TEST_CASE("unknown dtypes name the closest ones") {
  CHECK_THROWS_WITH(parse_kv_dtype("fp9", bf16()), Catch::Contains("did you mean") && Catch::Contains("fp8"));
  CHECK_THROWS_WITH(parse_kv_dtype("q8", bf16()), Catch::Contains("q8_0"));
  CHECK_THROWS_AS(parse_weight_dtype("q8_0"), Error);  // a cache type, not a weight type here
}
