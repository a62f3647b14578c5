// The cache kinds of the 2026 generation: KV-shared layers, DSA indexer keys, per-kind head shapes,
// MTP layers counted for speculative decoding, and every 2026 catalog model's growth per token
// and fixed bytes per sequence at fp16 and fp8, computed by hand (arithmetic in the comments;
// the fp16 figures are those of shared/reference/models-2026.jsonl, its DSA rows with the indexer
// key at f16 as llama.cpp stores it).

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/plan.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "loaders/spec_json.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::run_kvplan;

namespace {

const Dtype& dtype(std::string_view name) { return parse_kv_dtype(name, parse_weight_dtype("bf16")); }

Row row_of(const ModelSpec& model, std::uint64_t ctx, std::string_view k, std::string_view v, std::uint32_t mtp = 0) {
  RowSettings settings;
  settings.ctx = ctx;
  settings.cache = {&dtype(k), &dtype(v)};
  settings.gpu_memory_bytes = 80 * GiB;
  settings.mtp_layers = mtp;
  return plan_row(model, settings);
}

Row row_of(const ModelSpec& model, std::uint64_t ctx, std::string_view cache = "fp16") { return row_of(model, ctx, cache, cache); }

struct Expected {
  const char* id;
  std::uint64_t growth_fp16;  ///< bytes one more token adds to a sequence, every window full
  std::uint64_t fixed_fp16;   ///< bytes a sequence holds whatever its length (full windows, state)
  std::uint64_t growth_fp8;
  std::uint64_t fixed_fp8;
};

// Per token per layer: 2 (K, V) x kv heads x head_dim x bytes; MLA (512 + 64) latent values, plus
// a 128-value indexer key on DSA layers. Fixed: sliding layers x their per-token bytes x window,
// plus recurrent state at its own dtype (the same at fp16 and fp8).
const Expected kExpected[] = {
    // 3 full x 2 x 1 x 512 x 2 B = 6,144; 12 sliding x 2 x 1 x 256 x 2 B x 512 = 6,291,456 (20 shared: 0).
    {"gemma4-e2b", 6'144, 6'291'456, 3'072, 3'145'728},
    // 5 full x 2 x 2 x 512 x 2 B = 20,480; 25 sliding x 2 x 8 x 256 x 2 B x 1,024 = 209,715,200.
    {"gemma4-26b-a4b", 20'480, 209'715'200, 10'240, 104'857'600},
    // 10 full x 2 x 4 x 512 x 2 B = 81,920; 50 sliding x 2 x 16 x 256 x 2 B x 1,024 = 838,860,800.
    {"gemma4-31b", 81'920, 838'860'800, 40'960, 419'430'400},
    // 4 full x 2 x 2 x 256 x 2 B = 8,192; 16 sliding x 2,048 B x 512 = 16,777,216 (10 / 15 shared).
    {"gemma3n-e2b", 8'192, 16'777'216, 4'096, 8'388'608},
    {"gemma3n-e4b", 8'192, 16'777'216, 4'096, 8'388'608},
    // 16 full x 2 x 4 x 256 x 2 B = 65,536; 48 GDN x (3 x 10,240 x 2 B + 48 x 128 x 128 x 4 B) =
    // 48 x 3,207,168 = 153,944,064.
    {"qwen3.5-27b", 65'536, 153'944'064, 32'768, 153'944'064},
    {"qwen3.6-27b", 65'536, 153'944'064, 32'768, 153'944'064},
    // 10 full x 2 x 2 x 256 x 2 B = 20,480; 30 GDN x (3 x 8,192 x 2 B + 32 x 128 x 128 x 4 B) =
    // 30 x 2,146,304 = 64,389,120.
    {"qwen3.5-35b-a3b", 20'480, 64'389'120, 10'240, 64'389'120},
    // 15 full x 2,048 B = 30,720; 45 GDN x (3 x 12,288 x 2 B + 64 x 128 x 128 x 4 B) = 45 x
    // 4,268,032 = 192,061,440.
    {"qwen3.5-397b-a17b", 30'720, 192'061'440, 15'360, 192'061'440},
    // 92 full x 2 x 8 x 128 x 2 B = 376,832.
    {"glm4.7", 376'832, 0, 188'416, 0},
    // 47 MLA x 576 x 2 B = 54,144.
    {"glm4.7-flash", 54'144, 0, 27'072, 0},
    // 78 MLA x (576 + 128 indexer) x 2 B = 89,856 + 19,968 = 109,824.
    {"glm5", 109'824, 0, 54'912, 0},
    {"glm5.1", 109'824, 0, 54'912, 0},
    // 78 MLA x 576 x 2 B + 21 indexer x 128 x 2 B = 89,856 + 5,376 = 95,232.
    {"glm5.2", 95'232, 0, 47'616, 0},
    // 61 MLA x (576 + 128) x 2 B = 70,272 + 15,616 = 85,888.
    {"deepseek-v3.2", 85'888, 0, 42'944, 0},
    // 61 MLA x 576 x 2 B = 70,272.
    {"kimi-k2.5", 70'272, 0, 35'136, 0},
    // 7 MLA x 576 x 2 B = 8,064; 20 KDA x (3 x 3 x 32 x 128 x 2 B + 32 x 128 x 128 x 4 B) =
    // 20 x 2,170,880 = 43,417,600.
    {"kimi-linear-48b", 8'064, 43'417'600, 4'032, 43'417'600},
    // 62 full x 2 x 8 x 128 x 2 B = 253,952.
    {"minimax-m2.7", 253'952, 0, 126'976, 0},
    // 6 attention x 2 x 2 x 128 x 2 B = 6,144; 23 Mamba2 x (3 x 6,144 x 2 B + 64 x 64 x 128 x 4 B)
    // = 23 x 2,134,016 = 49,082,368.
    {"nemotron3-nano", 6'144, 49'082'368, 3'072, 49'082'368},
    // 12 attention x 2 x 2 x 128 x 2 B = 12,288; 48 Mamba2 x (3 x 18,432 x 2 B + 256 x 64 x 128 x
    // 4 B) = 48 x 8,499,200 = 407,961,600.
    {"nemotron3-ultra", 12'288, 407'961'600, 6'144, 407'961'600},
    // 4 attention x 2 x 8 x 128 x 2 B = 16,384; 36 Mamba2 x (3 x 8,448 x 2 B + 8,192 x 128 x 2 B)
    // = 36 x 2,147,840 = 77,322,240 (no mamba_ssm_cache_dtype: the state at bf16).
    {"granite4-h-small", 16'384, 77'322'240, 8'192, 77'322'240},
    // 24 MLA x 576 x 2 B = 27,648; 69 KDA x (3 x 3 x 96 x 128 x 2 B + 96 x 128 x 128 x 4 B) =
    // 69 x 6,512,640 = 449,372,160.
    {"kimi-k3", 27'648, 449'372'160, 13'824, 449'372'160},
    // 26 full x 2 x 8 x 128 x 2 B = 106,496.
    {"ministral3-3b", 106'496, 0, 53'248, 0},
    // 12 full x 2 x 8 x 128 x 2 B = 49,152; 33 sliding x 4,096 B x 512 = 69,206,016.
    {"step3.7-flash", 49'152, 69'206'016, 24'576, 34'603'008},
    // 6 attention x 2 x 8 x 64 x 2 B = 12,288; 18 conv x 2 x 2,048 x 2 B = 147,456.
    {"lfm2-8b-a1b", 12'288, 147'456, 6'144, 147'456},
    // 6 attention x 12,288 / 6 = 12,288; 10 conv x 2 x 1,024 x 2 B = 40,960.
    {"lfm2-350m", 12'288, 40'960, 6'144, 40'960},
    // 9 full x 4 x (192 + 128) x 2 B = 23,040; 39 sliding x 8 x (192 + 128) x 2 B x 128 = 25,559,040.
    {"mimo-v2-flash", 23'040, 25'559'040, 11'520, 12'779'520},
    {"mimo-v2.5", 23'040, 25'559'040, 11'520, 12'779'520},
};

}  // namespace

TEST_CASE("every 2026 catalog model: growth per token and fixed bytes per sequence, fp16 and fp8") {
  const std::uint64_t far = 1ull << 22;  // past every window
  for (const Expected& expected : kExpected) {
    INFO(expected.id);
    const ModelSpec* model = builtin_models().find(expected.id);
    REQUIRE(model != nullptr);
    for (const bool fp8 : {false, true}) {
      const char* cache = fp8 ? "fp8" : "fp16";
      const std::uint64_t at = row_of(*model, far, cache).kv_bytes;
      const std::uint64_t growth = row_of(*model, far + 1, cache).kv_bytes - at;
      CHECK(growth == (fp8 ? expected.growth_fp8 : expected.growth_fp16));
      CHECK(at - growth * far == (fp8 ? expected.fixed_fp8 : expected.fixed_fp16));
    }
  }
}

TEST_CASE("a shared layer keeps nothing, the indexer key follows the K dtype, MTP layers copy the last full/MLA layer") {
  ModelSpec model;
  model.id = "toy";
  model.name = "toy";
  model.attention_heads = 8;
  model.params = 1'000'000;
  model.weight_dtype = &parse_weight_dtype("bf16");
  model.mtp_layers = 1;
  model.layers = {
      LayerSpec{.kind = LayerKind::mla, .kv_heads = 1, .k_head_dim = 576, .mla_rope_dim = 64, .index_head_dim = 128},
      LayerSpec{.kind = LayerKind::sliding, .kv_heads = 2, .k_head_dim = 64, .v_head_dim = 32, .window = 100},
      LayerSpec{.kind = LayerKind::shared},
  };
  validate(model);
  // fp16: MLA 576 x 2 + indexer 128 x 2 = 1,408 B; sliding 2 x (64 + 32) x 2 = 384 B; shared 0.
  const Row row = row_of(model, 1'000);
  CHECK(row.kv_bytes_per_token == 1'408 + 384);
  CHECK(row.kv_bytes == 1'408ull * 1'000 + 384ull * 100);
  REQUIRE(row.breakdown.size() == 3);
  CHECK(row.breakdown[0].indexer_layers == 1);
  CHECK(row.breakdown[0].indexer_bytes == 256'000);
  CHECK(row.breakdown[2].kind == LayerKind::shared);
  CHECK(row.breakdown[2].tokens_held == 0);
  CHECK(row.breakdown[2].bytes == 0);
  // K at q8_0 (34 B per 32 values), V at fp16: the indexer key is stored like K.
  // MLA 576 / 32 x 34 = 612 + indexer 128 / 32 x 34 = 136; sliding K 128 / 32 x 34 = 136 + V 64 x 2 = 128.
  CHECK(row_of(model, 1, "q8_0", "fp16").kv_bytes_per_token == 612 + 136 + 136 + 128);
  // One MTP layer counted: a copy of the MLA layer, indexer included, in its own breakdown item.
  const Row with_mtp = row_of(model, 1'000, "fp16", "fp16", 1);
  CHECK(with_mtp.kv_bytes == row.kv_bytes + 1'408ull * 1'000);
  CHECK(with_mtp.breakdown.back().mtp);
  CHECK(with_mtp.breakdown.back().layers == 1);
  CHECK(resolve_mtp_layers("all", model) == 1);
  CHECK(resolve_mtp_layers("", model) == 0);
  CHECK_THROWS_WITH(resolve_mtp_layers("2", model), "--mtp-layers 2: toy declares 1 MTP layer");
  CHECK_THROWS_WITH(resolve_mtp_layers("x", model), Catch::Contains("not a number of layers or 'all'"));

  ModelSpec shared_first = model;
  shared_first.layers = {LayerSpec{.kind = LayerKind::shared}, model.layers[0]};
  CHECK_THROWS_WITH(validate(shared_first), Catch::Contains("a shared layer needs an earlier layer"));
  ModelSpec linear_indexer = model;
  linear_indexer.layers[1] = LayerSpec{.kind = LayerKind::linear, .index_head_dim = 128,
                                       .state = {{"conv", 10, &parse_weight_dtype("bf16")}}};
  CHECK_THROWS_WITH(validate(linear_indexer), Catch::Contains("cannot keep an indexer cache"));
}

TEST_CASE("spec files express per-kind shapes, indexers and shared layers, and round-trip") {
  const std::string text = R"({
    "name": "toy", "params": 1000, "weight_dtype": "bf16", "layers": 6, "attention_heads": 8,
    "kv_heads": 4, "head_dim": 128, "v_head_dim": 64, "sliding_window": 512,
    "kind_shapes": {"full": {"kv_heads": 2, "head_dim": 256}},
    "layer_types": ["sliding", "full", "mla", "mla", "shared", "shared"],
    "mla": {"kv_lora_rank": 512, "qk_rope_head_dim": 64},
    "indexer": {"head_dim": 128, "layers": [2]}
  })";
  const ModelSpec spec = parse_model_spec(text, "toy.json");
  CHECK(spec.layers[0].kv_heads == 4);
  CHECK(spec.layers[0].v_head_dim == 64);
  CHECK(spec.layers[1].kv_heads == 2);
  CHECK(spec.layers[1].k_head_dim == 256);
  CHECK(spec.layers[1].v_head_dim == 256);  // a kind's V width defaults to its own head_dim
  CHECK(spec.layers[2].index_head_dim == 128);
  CHECK(spec.layers[3].index_head_dim == 0);
  CHECK(describe_layers(spec) == "1 sliding(512) + 1 full + 1 mla+indexer(128) + 1 mla + 2 shared");
  const nlohmann::json again = to_spec_json(spec);
  CHECK(again["kind_shapes"]["full"] == nlohmann::json({{"head_dim", 256}, {"kv_heads", 2}, {"v_head_dim", 256}}));
  CHECK(again["indexer"]["layers"] == nlohmann::json({2}));
  CHECK(to_spec_json(model_spec_from_json(again, "again")) == again);

  // Every MLA layer when indexer.layers is absent.
  nlohmann::json all = nlohmann::json::parse(text);
  all["indexer"].erase("layers");
  const ModelSpec every = model_spec_from_json(all, "all.json");
  CHECK(every.layers[3].index_head_dim == 128);
  CHECK_FALSE(to_spec_json(every)["indexer"].contains("layers"));

  const auto error_of = [&](const nlohmann::json& document) -> std::string {
    try {
      model_spec_from_json(document, "bad.json");
    } catch (const Error& error) {
      return error.what();
    }
    return "(no error)";
  };
  nlohmann::json bad = nlohmann::json::parse(text);
  bad["kind_shapes"]["mla"] = {{"head_dim", 1}};
  CHECK(error_of(bad) == "bad.json: field 'kind_shapes': 'mla' layers have no heads to shape");
  bad = nlohmann::json::parse(text);
  bad["kind_shapes"]["full"]["heads"] = 2;
  CHECK(error_of(bad) == "bad.json: kind_shapes.full: unknown field 'heads'");
  bad = nlohmann::json::parse(text);
  bad["kv_heads_per_layer"] = {4, 2, 0, 0, 0, 0};
  CHECK_THAT(error_of(bad), Catch::Contains("give kv_heads_per_layer or kind_shapes.full.kv_heads, not both"));
  bad = nlohmann::json::parse(text);
  bad["indexer"]["layers"] = {6};
  CHECK_THAT(error_of(bad), Catch::Contains("layer 6 is past the last layer (5)"));
  bad = nlohmann::json::parse(text);
  bad["indexer"]["layers"] = {4};
  CHECK_THAT(error_of(bad), Catch::Contains("a shared layer cannot keep an indexer cache"));
}

TEST_CASE("the --mtp-layers flag counts the MTP layers and the output says whether they are counted") {
  const auto plain = run_kvplan("--model deepseek-v3.2 --ctx 128k --gpu h200 --kv-dtype fp16 --no-color");
  REQUIRE(plain.exit_code == 0);
  CHECK_THAT(plain.out, Catch::Contains("MTP     1 next-token prediction layer not cached") &&
                            Catch::Contains("--mtp-layers counts it"));
  CHECK_THAT(plain.out, Catch::Contains("vLLM stores DSA's as fp8 values + an fp32 scale, 132 B per token per layer"));

  const auto counted = run_kvplan("--model deepseek-v3.2 --ctx 128k --gpu h200 --kv-dtype fp16 --mtp-layers 1 --format json");
  REQUIRE(counted.exit_code == 0);
  const nlohmann::json document = nlohmann::json::parse(counted.out);
  CHECK(document["settings"]["mtp_layers"] == 1);
  CHECK(document["model"]["mtp_layers"] == 1);
  CHECK(document["model"]["indexer"] == nlohmann::json({{"head_dim", 128}, {"layers", 61}, {"vllm_bytes_per_token_per_layer", 132}}));
  // 62 x (576 + 128) x 2 B = 87,296 B per token: the MTP layer is priced like the others.
  CHECK(document["rows"][0]["kv_bytes_per_token"] == 87'296);
  CHECK(document["rows"][0]["kv_breakdown"][1]["mtp"] == true);

  const auto table = run_kvplan("--model deepseek-v3.2 --ctx 128k --gpu h200 --kv-dtype fp16 --mtp-layers all --no-color");
  CHECK_THAT(table.out, Catch::Contains("MTP     1 of 1 next-token prediction layer counted as cached"));

  const auto too_many = run_kvplan("--model deepseek-v3.2 --ctx 128k --gpu h200 --mtp-layers 2");
  CHECK(too_many.exit_code == 2);
  CHECK(too_many.err == "kvplan: error: --mtp-layers 2: deepseek-v3.2 declares 1 MTP layer\n");
  const auto none = run_kvplan("--model llama3.1-8b --ctx 128k --gpu h200 --mtp-layers 1");
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("declares 0 MTP layers"));
}

TEST_CASE("kvplan models marks the layer kinds each model uses, new ones included") {
  const auto models = run_kvplan("models");
  REQUIRE(models.exit_code == 0);
  const auto line_of = [&](const std::string& id) {
    const std::size_t at = models.out.find("\n" + id + " ");
    REQUIRE(at != std::string::npos);
    return models.out.substr(at + 1, models.out.find('\n', at + 1) - at - 1);
  };
  CHECK_THAT(line_of("gemma4-e2b"), Catch::Contains("sliding+full+shared"));
  CHECK_THAT(line_of("glm5.2"), Catch::Contains("mla+indexer") && Catch::Contains("21 mla+indexer(128) + 57 mla"));
  CHECK_THAT(line_of("qwen3.5-27b"), Catch::Contains("linear+full"));
  CHECK_THAT(line_of("kimi-linear-48b"), Catch::Contains("linear+mla"));
  CHECK_THAT(line_of("nemotron3-nano"), Catch::Contains("linear+none+full"));
  CHECK_THAT(line_of("nemotron3-ultra"), Catch::Contains("48 linear + 48 none + 12 full"));
  CHECK_THAT(line_of("granite4-h-small"), Catch::Contains("36 linear + 4 full"));
  CHECK_THAT(line_of("step3.7-flash"), Catch::Contains("12 full + 33 sliding(512)"));
  // Its weights are StepFun's rounded figure: the count says it is approximate, here and in a plan.
  CHECK_THAT(line_of("step3.7-flash"), Catch::Contains(" ~196.00B "));
  CHECK_THAT(line_of("granite4-h-small"), Catch::Contains(" 32.21B "));
  CHECK_THAT(run_kvplan("--model step3.7-flash --gpu h100 --ctx 8k").out,
             Catch::Contains("~196.00B (~11.00B active) params") && Catch::Contains("Weights 365.08 GiB: estimate: "));
  CHECK_THAT(line_of("mimo-v2-flash"), Catch::Contains("full+sliding"));
}

TEST_CASE("the JSON breakdown of a KV-shared model names its shared layers") {
  const auto result = run_kvplan("--model gemma4-e2b --ctx 32k --gpu 4090 --kv-dtype fp16 --format json");
  REQUIRE(result.exit_code == 0);
  const nlohmann::json breakdown = nlohmann::json::parse(result.out)["rows"][0]["kv_breakdown"];
  REQUIRE(breakdown.size() == 3);
  CHECK(breakdown[2] == nlohmann::json({{"kind", "shared"}, {"layers", 20}, {"tokens_held", 0}, {"bytes", 0}}));
}
