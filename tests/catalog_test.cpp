// Every catalog model: per-token and per-row cache bytes at 4K, 32K and 128K for fp16 and fp8,
// worked out independently from each model's config.json (the arithmetic is in the comment above
// each row), and each catalog entry checked against an import of its config.json fixture.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/budget.h"
#include "kvplan/catalog.h"
#include "kvplan/hf_config.h"
#include "kvplan/spec_json.h"
#include "support/run_binary.h"

using namespace kvplan;

namespace {

struct Figures {
  const char* id;
  std::uint64_t per_token_fp16;
  std::uint64_t per_token_fp8;
  /// One sequence: 4K fp16, 4K fp8, 32K fp16, 32K fp8, 128K fp16, 128K fp8 (fixed state included).
  std::uint64_t rows[6];
};

// Bytes = layers x values per token x 2 B (fp16) or 1 B (fp8), with sliding and chunked layers
// holding min(ctx, window) tokens and linear layers a fixed state at its own dtype.
const Figures kFigures[] = {
    // deepseek-r1: MLA: 61 layers x (512 + 64) values
    {"deepseek-r1", 70272, 35136, {287834112ull, 143917056ull, 2302672896ull, 1151336448ull, 9210691584ull, 4605345792ull}},
    // deepseek-v2-lite: MLA: 27 layers x (512 + 64) values
    {"deepseek-v2-lite", 31104, 15552, {127401984ull, 63700992ull, 1019215872ull, 509607936ull, 4076863488ull, 2038431744ull}},
    // deepseek-v3: MLA: 61 layers x (512 + 64) values
    {"deepseek-v3", 70272, 35136, {287834112ull, 143917056ull, 2302672896ull, 1151336448ull, 9210691584ull, 4605345792ull}},
    // gemma2-27b: 23 full + 23 sliding(4096) alternating, x 2 x 16 x 128 values
    {"gemma2-27b", 376832, 188416, {1543503872ull, 771751936ull, 6945767424ull, 3472883712ull, 25467813888ull, 12733906944ull}},
    // gemma2-9b: 21 full + 21 sliding(4096) alternating, x 2 x 8 x 256 values
    {"gemma2-9b", 344064, 172032, {1409286144ull, 704643072ull, 6341787648ull, 3170893824ull, 23253221376ull, 11626610688ull}},
    // gemma3-12b: 8 full + 40 sliding(1024) x 2 x 8 x 256 values (every 6th layer global)
    {"gemma3-12b", 393216, 196608, {603979776ull, 301989888ull, 2483027968ull, 1241513984ull, 8925478912ull, 4462739456ull}},
    // gemma3-1b: 4 full + 22 sliding(512) x 2 x 1 x 256 values (every 6th layer global)
    {"gemma3-1b", 26624, 13312, {28311552ull, 14155776ull, 145752064ull, 72876032ull, 548405248ull, 274202624ull}},
    // gemma3-27b: 10 full + 52 sliding(1024) x 2 x 16 x 128 values (every 6th layer global)
    {"gemma3-27b", 507904, 253952, {771751936ull, 385875968ull, 3120562176ull, 1560281088ull, 11173625856ull, 5586812928ull}},
    // gemma3-4b: 5 full + 29 sliding(1024) x 2 x 4 x 256 values (every 6th layer global)
    {"gemma3-4b", 139264, 69632, {205520896ull, 102760448ull, 792723456ull, 396361728ull, 2805989376ull, 1402994688ull}},
    // glm4.5-air: 46 full x 2 x 8 x 128 values
    {"glm4.5-air", 188416, 94208, {771751936ull, 385875968ull, 6174015488ull, 3087007744ull, 24696061952ull, 12348030976ull}},
    // gpt-oss-120b: 18 full + 18 sliding(128) x 2 x 8 x 64 values
    {"gpt-oss-120b", 73728, 36864, {155713536ull, 77856768ull, 1212678144ull, 606339072ull, 4836556800ull, 2418278400ull}},
    // gpt-oss-20b: 12 full + 12 sliding(128) x 2 x 8 x 64 values
    {"gpt-oss-20b", 49152, 24576, {103809024ull, 51904512ull, 808452096ull, 404226048ull, 3224371200ull, 1612185600ull}},
    // kimi-k2: MLA: 61 layers x (512 + 64) values
    {"kimi-k2", 70272, 35136, {287834112ull, 143917056ull, 2302672896ull, 1151336448ull, 9210691584ull, 4605345792ull}},
    // llama3.1-405b: 126 full x 2 x 8 x 128 values
    {"llama3.1-405b", 516096, 258048, {2113929216ull, 1056964608ull, 16911433728ull, 8455716864ull, 67645734912ull, 33822867456ull}},
    // llama3.1-70b: 80 full x 2 x 8 x 128 values
    {"llama3.1-70b", 327680, 163840, {1342177280ull, 671088640ull, 10737418240ull, 5368709120ull, 42949672960ull, 21474836480ull}},
    // llama3.1-8b: 32 full x 2 x 8 x 128 values
    {"llama3.1-8b", 131072, 65536, {536870912ull, 268435456ull, 4294967296ull, 2147483648ull, 17179869184ull, 8589934592ull}},
    // llama3.2-1b: 16 full x 2 x 8 x 64 values
    {"llama3.2-1b", 32768, 16384, {134217728ull, 67108864ull, 1073741824ull, 536870912ull, 4294967296ull, 2147483648ull}},
    // llama3.2-3b: 28 full x 2 x 8 x 128 values
    {"llama3.2-3b", 114688, 57344, {469762048ull, 234881024ull, 3758096384ull, 1879048192ull, 15032385536ull, 7516192768ull}},
    // llama3.3-70b: 80 full x 2 x 8 x 128 values
    {"llama3.3-70b", 327680, 163840, {1342177280ull, 671088640ull, 10737418240ull, 5368709120ull, 42949672960ull, 21474836480ull}},
    // llama4-maverick: 12 full (NoPE, every 4th) + 36 chunked(8192) x 2 x 8 x 128 values
    {"llama4-maverick", 196608, 98304, {805306368ull, 402653184ull, 2818572288ull, 1409286144ull, 7650410496ull, 3825205248ull}},
    // llama4-scout: 12 full (NoPE, every 4th) + 36 chunked(8192) x 2 x 8 x 128 values
    {"llama4-scout", 196608, 98304, {805306368ull, 402653184ull, 2818572288ull, 1409286144ull, 7650410496ull, 3825205248ull}},
    // mistral-7b-v0.1: 32 sliding(4096) x 2 x 8 x 128 values
    {"mistral-7b-v0.1", 131072, 65536, {536870912ull, 268435456ull, 536870912ull, 268435456ull, 536870912ull, 268435456ull}},
    // mistral-7b-v0.3: 32 full x 2 x 8 x 128 values
    {"mistral-7b-v0.3", 131072, 65536, {536870912ull, 268435456ull, 4294967296ull, 2147483648ull, 17179869184ull, 8589934592ull}},
    // mistral-nemo-12b: 40 full x 2 x 8 x 128 values
    {"mistral-nemo-12b", 163840, 81920, {671088640ull, 335544320ull, 5368709120ull, 2684354560ull, 21474836480ull, 10737418240ull}},
    // mistral-small-24b: 40 full x 2 x 8 x 128 values
    {"mistral-small-24b", 163840, 81920, {671088640ull, 335544320ull, 5368709120ull, 2684354560ull, 21474836480ull, 10737418240ull}},
    // mixtral-8x22b: 56 full x 2 x 8 x 128 values
    {"mixtral-8x22b", 229376, 114688, {939524096ull, 469762048ull, 7516192768ull, 3758096384ull, 30064771072ull, 15032385536ull}},
    // mixtral-8x7b: 32 full x 2 x 8 x 128 values
    {"mixtral-8x7b", 131072, 65536, {536870912ull, 268435456ull, 4294967296ull, 2147483648ull, 17179869184ull, 8589934592ull}},
    // nemotron-h-56b: 10 attention layers ('*') x 2 x 8 x 128 values; Mamba2 layers hold state only; state 54 x ((dc-1)(H x P + 2 G N) x 2 B + H x P x N x 4 B)
    {"nemotron-h-56b", 40960, 20480, {1080377344ull, 996491264ull, 2254782464ull, 1583693824ull, 6281314304ull, 3596959744ull}},
    // phi3-mini: 32 sliding(2047) x 2 x 32 x 96 values
    {"phi3-mini", 393216, 196608, {804913152ull, 402456576ull, 804913152ull, 402456576ull, 804913152ull, 402456576ull}},
    // phi4: 40 full x 2 x 10 x 128 values
    {"phi4", 204800, 102400, {838860800ull, 419430400ull, 6710886400ull, 3355443200ull, 26843545600ull, 13421772800ull}},
    // qwen2.5-0.5b: 24 full x 2 x 2 x 64 values
    {"qwen2.5-0.5b", 12288, 6144, {50331648ull, 25165824ull, 402653184ull, 201326592ull, 1610612736ull, 805306368ull}},
    // qwen2.5-14b: 48 full x 2 x 8 x 128 values
    {"qwen2.5-14b", 196608, 98304, {805306368ull, 402653184ull, 6442450944ull, 3221225472ull, 25769803776ull, 12884901888ull}},
    // qwen2.5-32b: 64 full x 2 x 8 x 128 values
    {"qwen2.5-32b", 262144, 131072, {1073741824ull, 536870912ull, 8589934592ull, 4294967296ull, 34359738368ull, 17179869184ull}},
    // qwen2.5-72b: 80 full x 2 x 8 x 128 values
    {"qwen2.5-72b", 327680, 163840, {1342177280ull, 671088640ull, 10737418240ull, 5368709120ull, 42949672960ull, 21474836480ull}},
    // qwen2.5-7b: 28 full x 2 x 4 x 128 values
    {"qwen2.5-7b", 57344, 28672, {234881024ull, 117440512ull, 1879048192ull, 939524096ull, 7516192768ull, 3758096384ull}},
    // qwen3-0.6b: 28 full x 2 x 8 x 128 values
    {"qwen3-0.6b", 114688, 57344, {469762048ull, 234881024ull, 3758096384ull, 1879048192ull, 15032385536ull, 7516192768ull}},
    // qwen3-14b: 40 full x 2 x 8 x 128 values
    {"qwen3-14b", 163840, 81920, {671088640ull, 335544320ull, 5368709120ull, 2684354560ull, 21474836480ull, 10737418240ull}},
    // qwen3-235b-a22b: 94 full x 2 x 4 x 128 values
    {"qwen3-235b-a22b", 192512, 96256, {788529152ull, 394264576ull, 6308233216ull, 3154116608ull, 25232932864ull, 12616466432ull}},
    // qwen3-30b-a3b: 48 full x 2 x 4 x 128 values
    {"qwen3-30b-a3b", 98304, 49152, {402653184ull, 201326592ull, 3221225472ull, 1610612736ull, 12884901888ull, 6442450944ull}},
    // qwen3-32b: 64 full x 2 x 8 x 128 values
    {"qwen3-32b", 262144, 131072, {1073741824ull, 536870912ull, 8589934592ull, 4294967296ull, 34359738368ull, 17179869184ull}},
    // qwen3-4b: 36 full x 2 x 8 x 128 values
    {"qwen3-4b", 147456, 73728, {603979776ull, 301989888ull, 4831838208ull, 2415919104ull, 19327352832ull, 9663676416ull}},
    // qwen3-8b: 36 full x 2 x 8 x 128 values
    {"qwen3-8b", 147456, 73728, {603979776ull, 301989888ull, 4831838208ull, 2415919104ull, 19327352832ull, 9663676416ull}},
    // qwen3-next-80b-a3b: 12 full x 2 x 2 x 256 values; 36 linear layers hold state only; state 36 x ((k-1)(2HkDk+HvDv) + HvDvDk) x 2 B
    {"qwen3-next-80b-a3b", 24576, 12288, {140181504ull, 89849856ull, 844824576ull, 442171392ull, 3260743680ull, 1650130944ull}},
};

Row one_sequence(const ModelSpec& model, std::uint64_t ctx, std::string_view dtype) {
  const Dtype& type = parse_kv_dtype(dtype, *model.weight_dtype);
  RowSettings settings;
  settings.ctx = ctx;
  settings.cache = {&type, &type};
  return plan_row(model, settings);
}

}  // namespace

TEST_CASE("the catalog holds at least 30 models, each with its source") {
  const ModelCatalog& catalog = builtin_models();
  CHECK(catalog.models.size() >= 30);
  for (const ModelSpec& model : catalog.models) {
    INFO(model.id);
    CHECK_FALSE(model.source.empty());
    CHECK_FALSE(model.aliases.empty());
  }
  CHECK(std::size(kFigures) == catalog.models.size());
}

TEST_CASE("every catalog model's cache at 4K, 32K and 128K, fp16 and fp8") {
  for (const Figures& expected : kFigures) {
    INFO(expected.id);
    const ModelSpec* model = builtin_models().find(expected.id);
    REQUIRE(model != nullptr);
    CHECK(one_sequence(*model, 1, "fp16").kv_bytes_per_token == expected.per_token_fp16);
    CHECK(one_sequence(*model, 1, "fp8").kv_bytes_per_token == expected.per_token_fp8);
    const std::uint64_t contexts[] = {4096, 32768, 131072};
    for (int i = 0; i < 3; ++i) {
      CHECK(one_sequence(*model, contexts[i], "fp16").kv_bytes == expected.rows[2 * i]);
      CHECK(one_sequence(*model, contexts[i], "fp8").kv_bytes == expected.rows[2 * i + 1]);
    }
  }
}

TEST_CASE("importing each fixture config.json gives the catalog entry") {
  for (const ModelSpec& entry : builtin_models().models) {
    INFO(entry.id);
    const ModelSpec imported = load_hf_model(kvplan::testing::source_path("tests/fixtures/hf/" + entry.id));
    nlohmann::json a = to_spec_json(entry);
    nlohmann::json b = to_spec_json(imported);
    // Names and provenance are the catalog's own; everything that sizes memory must agree.
    for (const char* key : {"id", "name", "aliases", "source", "notes"}) {
      a.erase(key);
      b.erase(key);
    }
    CHECK(a == b);
  }
}

TEST_CASE("aliases: a Hugging Face repo id finds its catalog entry") {
  const ModelCatalog& catalog = builtin_models();
  CHECK(catalog.find("google/gemma-3-27b-it")->id == "gemma3-27b");
  CHECK(catalog.find("meta-llama/Llama-3.1-8B-Instruct")->id == "llama3.1-8b");
  CHECK(catalog.find("Qwen/Qwen3-8B")->id == "qwen3-8b");
  CHECK(catalog.find("deepseek-ai/DeepSeek-V3")->id == "deepseek-v3");
  CHECK(catalog.find("openai/gpt-oss-120b")->id == "gpt-oss-120b");
}

TEST_CASE("the README's catalog table is the one kvplan prints") {
  const std::string readme = kvplan::testing::read_file(kvplan::testing::source_path("README.md"));
  const std::string table = kvplan::testing::run_kvplan("models --format markdown").out;
  REQUIRE_FALSE(table.empty());
  INFO("regenerate the README table with: build/kvplan models --format markdown");
  CHECK(readme.find(table) != std::string::npos);
}
