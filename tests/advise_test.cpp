// kvplan advise: the search over cards, counts and dtypes, its ranking, prices and output. Every
// figure is the generic profile's, worked by hand from llama3.1-8b's catalog entry:
//   weights 16,060,522,496 B (safetensors total_size, bf16); 8,030,261,248 params
//   KV (bf16 or fp16) 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B a token; at 64K 8,589,934,592 B
//   overhead 2 GiB = 2,147,483,648 B
//   rtx3090 25,769,803,776 B (24 GiB); rtx4090 25,757,220,864 B (24,564 MiB)
//   prices: rtx3090 $0.22/h, rtx4090 $0.34/h, h100 $2.69/h (gpus/gpus.json)

#include <chrono>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/advise.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;

namespace {

kvplan::AdviseRequest request_for(std::initializer_list<const char*> gpus, kvplan::Quality quality,
                                  const std::string& runtime = "generic") {
  kvplan::AdviseRequest request;
  request.base.runtime = runtime;
  request.base.contexts = {65'536};
  request.quality = quality;
  for (const char* name : gpus) request.candidates.push_back(kvplan::priced(*kvplan::builtin_gpus().find(name)));
  return request;
}

const kvplan::ModelSpec& llama8b() { return *kvplan::builtin_models().find("llama3.1-8b"); }

}  // namespace

TEST_CASE("advise: lossless 64K llama3.1-8b, cheapest first", "[advise]") {
  kvplan::AdviseRequest request = request_for({"3090", "4090", "h100"}, kvplan::Quality::lossless);
  request.top = 3;
  const kvplan::Advice advice = kvplan::advise(llama8b(), request);
  // 3 cards x counts 1, 2, 4, 8 x one weight dtype x one cache (bf16): 12 configurations.
  CHECK(advice.tried == 12);
  REQUIRE(advice.fitting.size() == 3);
  // 1. 2 x rtx3090, $0.44: per GPU weights 16,060,522,496 / 2 = 8,030,261,248 + KV 8,589,934,592 / 2
  //    = 4,294,967,296 + 2,147,483,648 = 14,472,712,192; headroom 25,769,803,776 - that = 11,297,091,584.
  const kvplan::AdviseConfig& first = advice.fitting[0];
  CHECK(request.candidates[first.candidate].gpu.id == "rtx3090");
  CHECK(first.count == 2);
  CHECK(first.row.tp == 2);
  CHECK(*first.usd_per_hour == Approx(0.44));
  CHECK(first.row.total_bytes == 14'472'712'192ULL);
  CHECK(first.row.headroom_bytes == 11'297'091'584LL);
  CHECK(first.row.weight_dtype->name == "bf16");
  CHECK(first.row.cache.label() == "bf16");
  // 2. 2 x rtx4090, $0.68: the same total; headroom 25,757,220,864 - 14,472,712,192 = 11,284,508,672.
  CHECK(request.candidates[advice.fitting[1].candidate].gpu.id == "rtx4090");
  CHECK(advice.fitting[1].count == 2);
  CHECK(advice.fitting[1].row.headroom_bytes == 11'284'508'672LL);
  // 3. 4 x rtx3090, $0.88: 4,015,130,624 + 2,147,483,648 + 2,147,483,648 = 8,310,097,920.
  CHECK(advice.fitting[2].count == 4);
  CHECK(advice.fitting[2].row.total_bytes == 8'310'097'920ULL);
  // Cheaper than $0.44 and not fitting: 1 x rtx3090 ($0.22) and 1 x rtx4090 ($0.34), each needing
  // 16,060,522,496 + 8,589,934,592 + 2,147,483,648 = 26,797,940,736 B.
  REQUIRE(advice.cheaper.size() == 2);
  CHECK(request.candidates[advice.cheaper[0].candidate].gpu.id == "rtx3090");
  CHECK(advice.cheaper[0].row.total_bytes == 26'797'940'736ULL);
  CHECK(advice.cheaper[0].row.headroom_bytes == -1'028'136'960LL);  // 25,769,803,776 - 26,797,940,736
  CHECK(request.candidates[advice.cheaper[1].candidate].gpu.id == "rtx4090");
  CHECK(advice.cheaper[1].row.headroom_bytes == -1'040'719'872LL);  // 25,757,220,864 - 26,797,940,736
  CHECK(advice.notes.empty());  // no quantized cache among the fitting rows
}

TEST_CASE("advise: quality fp8 tries fp8 weights and cache, ranked by headroom at one price", "[advise]") {
  kvplan::AdviseRequest request = request_for({"3090", "4090"}, kvplan::Quality::fp8);
  request.max_gpus = 1;
  request.top = 3;
  const kvplan::Advice advice = kvplan::advise(llama8b(), request);
  // 2 cards x 1 count x 2 weight dtypes (bf16, fp8) x 2 caches (bf16, fp8) = 8.
  CHECK(advice.tried == 8);
  REQUIRE(advice.fitting.size() >= 3);
  // At $0.22 (rtx3090), most headroom first:
  //   fp8 weights (8,030,261,248 B: one byte a parameter) + fp8 KV 4,294,967,296 + 2 GiB = 14,472,712,192
  //   fp8 weights + bf16 KV 8,589,934,592 + 2 GiB = 18,767,679,488
  //   bf16 weights 16,060,522,496 + fp8 KV + 2 GiB = 22,502,973,440
  CHECK(advice.fitting[0].row.weight_dtype->name == "fp8");
  CHECK(advice.fitting[0].row.cache.label() == "fp8");
  CHECK(advice.fitting[0].row.total_bytes == 14'472'712'192ULL);
  CHECK(advice.fitting[1].row.total_bytes == 18'767'679'488ULL);
  CHECK(advice.fitting[2].row.total_bytes == 22'502'973'440ULL);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(request.candidates[advice.fitting[i].candidate].gpu.id == "rtx3090");
    // The 3090 (Ampere) has no FP8 tensor cores: every fp8 row says so.
    bool warned = false;
    for (const kvplan::Finding& f : advice.fitting[i].row.findings) warned = warned || f.code == "fp8_not_native_on_gpu";
    CHECK(warned);
  }
  // The quality notes of the fitting rows: fp8 scales and recall for the fp8 caches (#1 and #3).
  REQUIRE(advice.notes.size() == 2);
  CHECK(advice.notes[0].code == "fp8_scales");
  CHECK(advice.notes[0].rows == std::vector<std::size_t>{0, 2});
  CHECK(advice.notes[1].code == "quantized_cache_recall");
  // Nothing is cheaper than the first that fits.
  CHECK(advice.cheaper.empty());
}

TEST_CASE("advise: a dtype the engine refuses is not offered", "[advise]") {
  // vLLM runs the checkpoint's own weights (a --weight-dtype is an Error from make_plan): under
  // quality fp8 only its caches vary.
  kvplan::AdviseRequest request = request_for({"4090", "h100"}, kvplan::Quality::fp8, "vllm");
  request.base.contexts = {32'768};
  request.max_gpus = 2;
  const kvplan::Advice advice = kvplan::advise(llama8b(), request);
  CHECK(advice.not_offered > 0);
  REQUIRE_FALSE(advice.fitting.empty());
  for (const kvplan::AdviseConfig& config : advice.fitting) CHECK(config.row.weight_dtype->name == "bf16");
  bool fp8_cache = false;
  for (const kvplan::AdviseConfig& config : advice.fitting) fp8_cache = fp8_cache || config.row.cache.label() == "fp8";
  CHECK(fp8_cache);
}

TEST_CASE("advise: pipeline stages are tried where the engine has them", "[advise]") {
  // SGLang has --pp-size: on 2 GPUs, tp 2 x pp 1 and tp 1 x pp 2 are both asked.
  kvplan::AdviseRequest request = request_for({"h100"}, kvplan::Quality::lossless, "sglang");
  request.base.contexts = {32'768};
  request.max_gpus = 2;
  request.top = 10;
  const kvplan::Advice advice = kvplan::advise(llama8b(), request);
  bool pp2 = false;
  for (const kvplan::AdviseConfig& config : advice.fitting) pp2 = pp2 || (config.count == 2 && config.row.pp == 2 && config.row.tp == 1);
  CHECK(pp2);
}

TEST_CASE("advise: a pipeline split the profile does not model is left out, said, not an error", "[advise]") {
  // SGLang's Mamba pool under --pp-size is not modelled (exit 3 for a plan that asks for it). On
  // 1, 2 and 4 H100s advise prices the one-stage deployments and leaves out tp 1 x pp 2, tp 2 x
  // pp 2 and tp 1 x pp 4, naming why; before, the whole search stopped at the first of them.
  kvplan::AdviseRequest request = request_for({"h100"}, kvplan::Quality::lossless, "sglang");
  request.base.contexts = {32'768};
  request.max_gpus = 4;
  request.top = 10;
  const kvplan::Advice advice = kvplan::advise(*kvplan::builtin_models().find("qwen3-next-80b-a3b"), request);
  CHECK(advice.not_modelled == 3);
  REQUIRE(advice.not_modelled_reasons.size() == 2);
  CHECK(advice.not_modelled_reasons[0].rfind("pp 2: ", 0) == 0);
  CHECK(advice.not_modelled_reasons[0].find("Mamba / Gated DeltaNet pool with --pp-size > 1") != std::string::npos);
  CHECK(!advice.fitting.empty());
  for (const kvplan::AdviseConfig& config : advice.fitting) CHECK(config.row.pp == 1);
  const ProcessResult json = run_kvplan("advise --runtime sglang --model qwen3-next-80b-a3b --ctx 32k --gpus h100 "
                                        "--max-gpus 4 --format json");
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out)["not_modelled"] == 3);
}

TEST_CASE("advise: the whole priced catalog at int4 in well under a second", "[advise]") {
  kvplan::AdviseRequest request;
  request.base.contexts = {131'072};
  request.quality = kvplan::Quality::int4;
  for (const kvplan::GpuSpec& gpu : kvplan::builtin_gpus().gpus)
    if (gpu.price_usd_per_hour) request.candidates.push_back(kvplan::priced(gpu));
  const auto start = std::chrono::steady_clock::now();
  const kvplan::Advice advice = kvplan::advise(*kvplan::builtin_models().find("llama3.1-70b"), request);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("configurations " << advice.tried << " in " << seconds << " s");
  CHECK(advice.tried > 1000);
  CHECK_FALSE(advice.fitting.empty());
  // Release builds take a small fraction of this; sanitizer builds are several times slower.
  CHECK(seconds < 5.0);
}

TEST_CASE("advise: catalog prices carry their date", "[advise]") {
  const kvplan::GpuCatalog& catalog = kvplan::builtin_gpus();
  CHECK(kvplan::priced(*catalog.find("4090")).price_date == "2026-03-10");   // Deploybase 'RunPod GPU Pricing' 2026-03-10
  CHECK(kvplan::priced(*catalog.find("mi300x")).price_date == "2026-05-18");  // Cliff Center note 2026-05-18
  CHECK(kvplan::priced(*catalog.find("v100-32g")).price_date == "undated");  // "Undated tutorial snippet"
  CHECK(*kvplan::priced(*catalog.find("4090")).usd_per_hour == Approx(0.34));
}

TEST_CASE("advise: one's own price list, JSON or CSV", "[advise]") {
  const auto object = kvplan::parse_price_list(R"({"rtx4090": 0.5, "h100": 2})", "p.json");
  REQUIRE(object.size() == 2);
  CHECK(object[0].id == "h100");  // nlohmann's object keeps keys sorted
  CHECK(object[0].usd_per_hour == 2.0);
  const auto list = kvplan::parse_price_list(R"([{"id": "4090", "price": 0.41}])", "p.json");
  REQUIRE(list.size() == 1);
  CHECK(list[0].usd_per_hour == Approx(0.41));
  const auto csv = kvplan::parse_price_list("id,price\n4090, 0.40\n# a comment\n\nh100,1.99\n", "p.csv");
  REQUIRE(csv.size() == 2);
  CHECK(csv[1].id == "h100");
  CHECK(csv[1].usd_per_hour == Approx(1.99));
  CHECK_THROWS_WITH(kvplan::parse_price_list("4090,-1\n", "p.csv"), Catch::Contains("p.csv: line 1"));
  CHECK_THROWS_WITH(kvplan::parse_price_list("4090,cheap\n", "p.csv"), Catch::Contains("'cheap' is not a price"));
  CHECK_THROWS_WITH(kvplan::parse_price_list("4090 0.4\n", "p.csv"), Catch::Contains("expected 'id,price'"));
  CHECK_THROWS_WITH(kvplan::parse_price_list(R"({"4090": "0.4"})", "p.json"), Catch::Contains("a price must be a number"));
  CHECK_THROWS_WITH(kvplan::parse_price_list("", "p.csv"), Catch::Contains("no prices"));
}

TEST_CASE("advise: the command's table and JSON", "[advise]") {
  const ProcessResult table = run_kvplan("advise --model llama3.1-8b --ctx 64k --gpus 3090,4090,h100 --top 3");
  REQUIRE(table.exit_code == 0);
  CHECK(table.err.empty());
  CHECK_THAT(table.out, Catch::Contains("\n1  rtx3090      2   2   1  bf16     bf16      ~0.44  2026-03-10  13.48     24.00     10.52\n"));
  CHECK_THAT(table.out, Catch::Contains("  1. rtx3090 x2: weights 7.48 + KV 4.00 + overhead 2.00 = 13.48 GiB <= 24.00 GiB on the fullest GPU"));
  CHECK_THAT(table.out, Catch::Contains("rtx3090 x1 (~$0.22/h), bf16 weights, bf16 cache: weights 14.96 + KV 8.00 + overhead 2.00 = 24.96 GiB > 24.00 GiB (0.96 GiB over)"));

  const ProcessResult json = run_kvplan("advise --model llama3.1-8b --ctx 64k --gpus 3090,4090,h100 --top 3 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  const nlohmann::json& configs = doc["configs"];
  REQUIRE(configs.size() == 5);  // 2 cheaper that do not fit, then the top 3
  CHECK(configs[0]["gpu"] == "rtx3090");
  CHECK(configs[0]["fits"] == false);
  CHECK(configs[0]["total_bytes"] == 26'797'940'736ULL);
  CHECK(configs[2]["gpu"] == "rtx3090");
  CHECK(configs[2]["count"] == 2);
  CHECK(configs[2]["fits"] == true);
  CHECK(configs[2]["headroom_bytes"] == 11'297'091'584LL);
  CHECK(configs[2]["price_date"] == "2026-03-10");
  for (std::size_t i = 1; i < configs.size(); ++i) CHECK(configs[i]["price_per_hour"].get<double>() >= configs[i - 1]["price_per_hour"].get<double>());
}

TEST_CASE("advise: --prices replaces the catalog's", "[advise]") {
  kvplan::testing::TempDir dir;
  const std::string file = dir.file("prices.csv");
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    std::fputs("id,price\nh100,0.10\n4090,0.50\n", f);
    std::fclose(f);
  }
  // At $0.10 an H100 is the cheapest card that holds 64K alone: 26,797,940,736 B of 85,520,809,984.
  const ProcessResult result = run_kvplan("advise --model llama3.1-8b --ctx 64k --top 1 --format json --prices " + file);
  REQUIRE(result.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(result.out);
  const nlohmann::json& best = doc["configs"].back();
  CHECK(best["gpu"] == "h100");
  CHECK(best["count"] == 1);
  CHECK(best["price_per_hour"].get<double>() == Approx(0.10));
  CHECK(best["price_date"] == "given");
  CHECK(best["headroom_bytes"] == 85'520'809'984LL - 26'797'940'736LL);
}

TEST_CASE("advise: bad input is one line and exit 2", "[advise]") {
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b --ctx 64k --quality int3"), "not a quality level");
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b"), "--ctx is required");
  kvplan::testing::check_refused(run_kvplan("advise --ctx 64k"), "--model is required");
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b --ctx 64k,128k"), "give one context");
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b --ctx 64k --gpus 4090,nosuchcard"), "--gpus");
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b --ctx 64k --max-gpus 0"), "--max-gpus");
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b --ctx 64k --prices /nonexistent/p.csv"), "/nonexistent/p.csv");
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b --ctx 64k --format csv"), "table or json");
  kvplan::testing::check_refused(run_kvplan("advise --model llama3.1-8b --ctx 64k --runtime vllm --overhead 1GiB"), "--overhead");
}

// --- Quality notes -------------------------------------------------------------------------------

namespace {

kvplan::Row row_with(std::string_view k, std::string_view v) {
  const kvplan::Dtype& bf16 = kvplan::parse_weight_dtype("bf16");
  kvplan::Row row;
  row.cache = {&kvplan::parse_kv_dtype(k, bf16), &kvplan::parse_kv_dtype(v, bf16)};
  return row;
}

std::vector<std::string> codes_of(const std::vector<kvplan::Row>& rows) {
  std::vector<std::string> codes;
  for (const kvplan::QualityNote& note : kvplan::find_quality_notes(rows)) codes.push_back(note.code);
  return codes;
}

using Codes = std::vector<std::string>;

}  // namespace

TEST_CASE("quality notes: which cache dtypes each applies to", "[notes]") {
  CHECK(codes_of({row_with("fp16", "fp16")}).empty());
  CHECK(codes_of({row_with("bf16", "bf16")}).empty());
  CHECK(codes_of({row_with("fp32", "fp32")}).empty());
  CHECK(codes_of({row_with("fp8", "fp8")}) == Codes{"fp8_scales", "quantized_cache_recall"});
  CHECK(codes_of({row_with("fp8_e5m2", "fp8_e5m2")}) == Codes{"fp8_e5m2_cache", "fp8_scales", "quantized_cache_recall"});
  CHECK(codes_of({row_with("int8", "int8")}) == Codes{"quantized_cache_recall"});
  CHECK(codes_of({row_with("q8_0", "q8_0")}) == Codes{"quantized_cache_recall"});  // 34 B / 32 values: 8.5 bits
  CHECK(codes_of({row_with("int4", "int4")}) == Codes{"int4_cache_accuracy", "quantized_cache_recall"});
  CHECK(codes_of({row_with("q4_0", "q4_0")}) == Codes{"int4_cache_accuracy", "quantized_cache_recall"});  // 4.5 bits
  CHECK(codes_of({row_with("q4_1", "q4_1")}) == Codes{"int4_cache_accuracy", "quantized_cache_recall"});  // 20 B / 32: 5 bits
  CHECK(codes_of({row_with("nvfp4", "nvfp4")}) == Codes{"int4_cache_accuracy", "quantized_cache_recall"});  // 9 B / 16: 4.5 bits
  CHECK(codes_of({row_with("q5_0", "q5_0")}) == Codes{"quantized_cache_recall"});  // 22 B / 32: 5.5 bits, not 4-bit
  // K and V apart (llama.cpp's -ctk / -ctv): a note for either.
  CHECK(codes_of({row_with("q8_0", "q4_0")}) == Codes{"int4_cache_accuracy", "quantized_cache_recall"});
  CHECK(codes_of({row_with("fp16", "q8_0")}) == Codes{"quantized_cache_recall"});
}

TEST_CASE("quality notes: a plan's notes name their rows", "[notes]") {
  const kvplan::ModelSpec& model = llama8b();
  kvplan::PlanRequest request;
  request.contexts = {32'768};
  const kvplan::Dtype& bf16 = kvplan::parse_weight_dtype("bf16");
  for (const char* name : {"fp16", "fp8_e5m2", "int4"}) {
    const kvplan::Dtype& type = kvplan::parse_kv_dtype(name, bf16);
    request.caches.push_back({&type, &type});
  }
  const kvplan::Plan plan = kvplan::make_plan(model, *kvplan::builtin_gpus().find("4090"), request);
  REQUIRE(plan.quality_notes.size() == 4);
  CHECK(plan.quality_notes[0].code == "fp8_e5m2_cache");
  CHECK(plan.quality_notes[0].rows == std::vector<std::size_t>{1});
  CHECK(plan.quality_notes[1].code == "fp8_scales");
  CHECK(plan.quality_notes[2].code == "int4_cache_accuracy");
  CHECK(plan.quality_notes[2].rows == std::vector<std::size_t>{2});
  CHECK(plan.quality_notes[3].code == "quantized_cache_recall");
  CHECK(plan.quality_notes[3].rows == std::vector<std::size_t>{1, 2});
}

TEST_CASE("quality notes: under the table, hidden by --quiet, always in JSON", "[notes]") {
  const std::string command = "--model llama3.1-8b --ctx 32k --gpu 4090 --kv-dtype fp16,fp8_e5m2";
  const ProcessResult table = run_kvplan(command);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("Quality fp8_e5m2_cache: fp8_e5m2 has a 2-bit mantissa: it degrades attention scores and "
                                        "the error grows with depth; fp8 (E4M3) is the default cache format (row 2)"));
  CHECK_THAT(table.out, Catch::Contains("Quality quantized_cache_recall: long-context exact-recall tasks"));
  const ProcessResult quiet = run_kvplan(command + " --quiet");
  REQUIRE(quiet.exit_code == 0);
  CHECK_THAT(quiet.out, !Catch::Contains("Quality "));
  CHECK_THAT(quiet.out, Catch::Contains("✅ fits"));
  const ProcessResult plain = run_kvplan("--model llama3.1-8b --ctx 32k --gpu 4090 --kv-dtype fp16");
  CHECK_THAT(plain.out, !Catch::Contains("Quality "));  // nothing to say about an fp16 cache
  const ProcessResult json = run_kvplan(command + " --quiet --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  REQUIRE(doc["notes"].size() == 3);
  CHECK(doc["notes"][0]["code"] == "fp8_e5m2_cache");
  CHECK(doc["notes"][0]["rows"] == nlohmann::json::array({1}));
}
