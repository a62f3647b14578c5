// Speculative decoding under SGLang (issue #13): an EAGLE-3 head or a STANDALONE draft model beside
// the target, in the three ways SGLang's releases pay for it (engines/sglang/speculative.h). Checked
// against the SGLang docs' CI run of June 2025 (backend/speculative_decoding, Llama 3.1 8B Instruct
// with an EAGLE-3 head; the run caps the pool at 20,480 tokens) and by hand in SGLang's order of
// float operations for the 2026 pool configurator.

#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engines/core/profile.h"
#include "engines/core/serving.h"
#include "engines/sglang/rules.h"
#include "engines/sglang/speculative.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "kvplan/units.h"
#include "support/catalog_entries.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::testing::catalog_cards;
using kvplan::testing::catalog_model;
using kvplan::testing::check_refused;
using kvplan::testing::ProcessResult;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;

namespace {

const std::string kTarget = "tests/fixtures/hf/llama3.1-8b";
const std::string kHead = "tests/fixtures/hf/eagle3-llama3.1-8b";

std::shared_ptr<const DraftModel> draft_from(const std::string& fixture) {
  auto draft = std::make_shared<DraftModel>();
  draft->spec = load_model(source_path(fixture));
  return draft;
}

SglangSpeculative eagle3(std::uint64_t steps, std::uint64_t topk, std::uint64_t draft_tokens) {
  SglangSpeculative spec;
  spec.algorithm = SglangSpeculative::Algorithm::eagle3;
  spec.name = "EAGLE3";
  spec.num_steps = steps, spec.eagle_topk = topk, spec.num_draft_tokens = draft_tokens;
  spec.draft = draft_from(kHead);
  return spec;
}

bool printed(const SglangResult& r, const std::string& text) {
  for (const std::string& line : r.log_lines)
    if (line == text) return true;
  return false;
}

/// The SGLang docs' CI runs of June 2025: --mem-fraction 0.6, --max-total-tokens 20480,
/// --max-running-requests 200; "avail mem" before and after the target's weights in hundredths of
/// a GiB. They are 0.4.7-era builds: the rules checked (the cap, both pools at the capped #tokens,
/// the headroom tokens before the cap) are every release's to 0.5.6, and 0.5.0 is asked for
/// because kvplan models drafts from 0.4.10 on.
SglangSettings docs_ci_run(std::uint64_t before, std::uint64_t after, std::uint64_t context, SglangSpeculative draft) {
  SglangSettings s;
  s.version = parse_sglang_version("0.5.0", "test");
  s.mem_fraction_static = 0.6;
  s.max_total_tokens = 20'480;
  s.max_running_requests = 200;
  s.free_before_load = before * GiB / 100;
  s.free_after_load = after * GiB / 100;
  s.context_length = context;
  s.speculative = std::move(draft);
  return s;
}

/// One H100 as the docs' examples read it: "avail mem" 78.50 GiB before load, 63.46 after the
/// target's weights, --mem-fraction-static 0.835, 8,192-token requests, `version`'s rules, `draft`.
SglangSettings h100_readings(const char* version, SglangSpeculative draft) {
  SglangSettings s;
  s.version = parse_sglang_version(version, "test");
  s.mem_fraction_static = 0.835;
  s.free_before_load = 7850 * GiB / 100;
  s.free_after_load = 6346 * GiB / 100;
  s.context_length = 8192;
  s.speculative = std::move(draft);
  return s;
}

std::string sglang_eagle3(const std::string& rest) {
  return "--runtime sglang --model " + source_path(kTarget) + " --gpu h100 --speculative-algorithm EAGLE3 " +
         "--speculative-draft-model-path " + source_path(kHead) + " " + rest;
}

}  // namespace

// The head's tensors as SGLang's LlamaForCausalLMEagle3 builds them, float16 as its config says:
// 950,026,240 parameters (tests/vllm_eagle3_test.cpp counts them: 899,694,592 + fc 50,331,648)
// x 2 B + d2t 32,000 x 8 B + t2d 128,256 x 1 B = 1,900,436,736 B = 1.770 GiB. The docs' run loaded
// it with "mem usage=1.82 GB" (GiB): 2.8% more (the allocator's blocks; kvplan's is an estimate).
TEST_CASE("SGLang EAGLE3, docs CI run (June 2025): both pools of 20,480 tokens, the draft's one layer", "[sglang][speculative]") {
  // --mem-fraction 0.6, --max-total-tokens 20480, --max-running-requests 200, steps 5, topk 8,
  // draft tokens 32, float16; "Load weight begin. avail mem=78.50 GB", "end. ... avail mem=63.48 GB".
  const SglangSettings s = docs_ci_run(7850, 6348, 2048, eagle3(5, 8, 32));
  const SglangResult r = plan_sglang(load_model(source_path(kTarget)), catalog_cards("h100", 1), s);
  REQUIRE(r.draft);
  CHECK(r.starts);
  CHECK(r.max_total_num_tokens == 20'480);
  // Target: 32 x (20,480 + 1) x 8 x 128 x 2 B = 1.2501 GiB; the draft: 1 layer, 0.0391 GiB.
  CHECK(printed(r, "KV Cache is allocated. #tokens: 20480, K size: 1.25 GB, V size: 1.25 GB"));
  CHECK(printed(r, "KV Cache is allocated. #tokens: 20480, K size: 0.04 GB, V size: 0.04 GB"));
  CHECK(r.draft->layers == 1);
  CHECK(r.draft->k_bytes == 20'481ull * 8 * 128 * 2);
  // 200 x 5 x 8 + 200 x 32 + 100 = 14,500 more than profiled, then the cap.
  CHECK(r.draft->extra_tokens == 14'500);
  CHECK(r.draft->weights == 1'900'436'736);
  const double logged = 1.82 * static_cast<double>(GiB);
  CHECK(static_cast<double>(r.draft->weights) > logged * 0.97);
  CHECK(static_cast<double>(r.draft->weights) < logged);
  // Before 2026 the draft's weights and pool are paid from what the fraction leaves: 1,900,436,736
  // + 2 x 20,481 x 4,096 B, and nothing of the target's pool (capped) is past the budget.
  CHECK(r.draft->from_headroom == 1'900'436'736ull + 20'481ull * 4'096);
}

// EAGLE(-2) heads as SGLang's LlamaForCausalLMEagle builds them (arch/eagle.cpp): embed_tokens,
// the layer without its input norm, fc with its bias, lm_head, no final norm. The docs' June 2025
// runs printed what loading each took:
//   lmsys/sglang-EAGLE-llama2-chat-7B: 32,000 x 4,096 x 2 (embed_tokens, lm_head) + 4 x 4,096^2 +
//     3 x 4,096 x 11,008 + 4,096 (the layer) + 8,192 x 4,096 + 4,096 (fc) = 498,081,792 values x 2 B
//     = 996,163,584 B = 0.9277 GiB: "mem usage=0.93 GB";
//   lmsys/sglang-EAGLE-LLaMA3-Instruct-8B: 128,256 x 4,096 x 2 + 218,107,904 + 33,558,528 =
//     1,302,339,584 values x 2 B = 2,604,679,168 B = 2.4258 GiB: "mem usage=2.43 GB".
TEST_CASE("SGLang EAGLE, docs CI run (June 2025): Llama 2 7B's head, both pools and its weights", "[sglang][speculative]") {
  SglangSpeculative spec = eagle3(5, 8, 64);
  spec.algorithm = SglangSpeculative::Algorithm::eagle;
  spec.name = "EAGLE";
  spec.draft = draft_from("tests/fixtures/hf/sglang-eagle-llama2-chat-7b");
  const SglangSettings s = docs_ci_run(6221, 4952, 4096, spec);  // "avail mem=62.21 GB", "49.52 GB"
  const SglangResult r = plan_sglang(catalog_model("llama2-7b"), catalog_cards("h100", 1), s);
  // Target: 32 x 20,481 x 32 x 128 x 2 B = 5.0002 GiB; the draft's one layer 0.1563 GiB.
  CHECK(printed(r, "KV Cache is allocated. #tokens: 20480, K size: 5.00 GB, V size: 5.00 GB"));
  CHECK(printed(r, "KV Cache is allocated. #tokens: 20480, K size: 0.16 GB, V size: 0.16 GB"));
  CHECK(r.draft->weights == 996'163'584);
  CHECK(engine_gib(r.draft->weights) == "0.93");
  const std::uint64_t llama3_head = estimate_weights(draft_from("tests/fixtures/hf/sglang-eagle-llama3-instruct-8b")->spec, nullptr).bytes;
  CHECK(llama3_head == 2'604'679'168);
  CHECK(engine_gib(llama3_head) == "2.43");
}

TEST_CASE("SGLang EAGLE3 to 0.5.6: the profiled #tokens grows by the headroom, past the budget", "[sglang][speculative]") {
  const SglangSettings s = h100_readings("0.5.6", eagle3(3, 1, 4));
  const SglangResult r = plan_sglang(load_model(source_path(kTarget)), catalog_cards("h100", 1), s);
  // rest = 63.46 - 78.5 x 0.165 = 50.5075 GiB -> int(x 2^30) = 54,232,012,718 B // 131,072 =
  // 413,757 profiled (the same as without a draft), + 48 x 3 x 1 + 48 x 4 + 100 = 436.
  CHECK(r.draft->extra_tokens == 436);
  CHECK(r.max_total_num_tokens == 413'757 + 436);
  CHECK(r.max_running_requests == 48);
  // The target's pool overshoots the budget by 436 tokens + the page: 437 x 131,072 B, less what
  // int() left of the last token.
  const std::uint64_t target_pool = (413'757ull + 436 + 1) * 131'072;
  const std::uint64_t draft_pool = (413'757ull + 436 + 1) * 4'096;
  CHECK(r.draft->from_headroom ==
        target_pool - static_cast<std::uint64_t>(r.budget.available) + 1'900'436'736ull + draft_pool);
  // topk 1: the draft tokens are steps + 1 whatever was asked (here 4 already).
  CHECK(r.draft->num_draft_tokens == 4);
}

TEST_CASE("SGLang EAGLE3 from 0.5.16: the draft's weights inside the budget, the cell scaled", "[sglang][speculative]") {
  const SglangSettings s = h100_readings("latest", eagle3(3, 1, 4));  // 63.46: the target's "Load weight end"
  const SglangResult r = plan_sglang(load_model(source_path(kTarget)), catalog_cards("h100", 1), s);
  // By hand (Python floats): after = int(63.46 x 2^30) - 1,900,436,736 B; rest = after / 2^30 -
  // 78.5 x (1 - 0.835) = 48.7375803660974 GiB; available = 52,331,578,439 B; cell = int(131,072 x
  // (1 + 1/32)) = 135,168; #tokens = 387,159 (413,757 without the draft).
  CHECK(r.budget.available == 52'331'578'439);
  CHECK(r.draft->scaled_cell_bytes == 135'168);
  CHECK(r.draft->target_layers == 32);
  CHECK(r.max_total_num_tokens == 387'159);
  CHECK(r.draft->extra_tokens == 0);
  // K: 32 x 387,160 x 8 x 128 x 2 B = 23.63 GiB; the draft's 1 layer 0.74 GiB.
  CHECK(printed(r, "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 387159, K size: 23.63 GB, V size: 23.63 GB"));
  CHECK(printed(r, "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 387159, K size: 0.74 GB, V size: 0.74 GB"));
  // Both pools hold 387,160 x 135,168 B, 64,441 B more than available: from the headroom.
  CHECK(r.draft->from_headroom == 387'160ull * 135'168 - 52'331'578'439ull);
  CHECK(r.starts);
}

TEST_CASE("SGLang STANDALONE: a whole draft model, its own layers in the scaled cell", "[sglang][speculative]") {
  // Llama 3.2 1B drafting for Llama 3.1 8B: 16 layers of 8 KV heads x 64 x 2 x 2 B = 32,768 B a
  // token; 0.5.16+ scales the target's cell by 1 + 16 / 32: int(131,072 x 1.5) = 196,608 B, as if
  // the draft's layers were the target's (more than they hold: the rest stays unused).
  SglangSpeculative spec = eagle3(3, 1, 4);
  spec.algorithm = SglangSpeculative::Algorithm::standalone;
  spec.name = "STANDALONE";
  spec.draft = draft_from("tests/fixtures/hf/llama3.2-1b");
  const SglangSettings s = h100_readings("latest", spec);
  const SglangResult r = plan_sglang(load_model(source_path(kTarget)), catalog_cards("h100", 1), s);
  CHECK(r.draft->layers == 16);
  CHECK(r.draft->cell_bytes == 32'768);
  CHECK(r.draft->scaled_cell_bytes == 196'608);
  CHECK(r.max_total_num_tokens == static_cast<std::uint64_t>(r.budget.available) / 196'608);
  CHECK(r.draft->from_headroom == 0);  // the two pools hold less than the scaled budget
}

TEST_CASE("SGLang's default --mem-fraction-static with a draft: 2,048 MiB more to 0.5.10, none from 2026", "[sglang][speculative]") {
  // H100 SXM, nvidia-smi 81,559 MiB, TP 1. 0.5.0 (G2): (9.5 + 0.5) x 1024 + 2,048 = 12,288 ->
  // round(69,271 / 81,559, 3) = 0.849. 0.5.8 (G3): max(13,440, 10,240) + 2,048 = 15,488 -> 0.810;
  // STANDALONE + 6,144 = 19,584 -> 0.760. 0.5.16+: 13,440 -> 0.835, as without a draft.
  CHECK(sglang_defaults(81'559, 1, 1, std::nullopt, parse_sglang_version("0.5.0", "t"), 2048).mem_fraction_static == Approx(0.849));
  CHECK(sglang_defaults(81'559, 1, 1, std::nullopt, parse_sglang_version("0.5.8", "t"), 2048).mem_fraction_static == Approx(0.810));
  CHECK(sglang_defaults(81'559, 1, 1, std::nullopt, parse_sglang_version("0.5.8", "t"), 6144).mem_fraction_static == Approx(0.760));
  SglangSpeculative spec = eagle3(3, 1, 4);
  CHECK(sglang_speculative_reserve_mib(spec, SglangSpeculativeEra::outside) == 2048);
  CHECK(sglang_speculative_reserve_mib(spec, SglangSpeculativeEra::inside) == 0);
  spec.algorithm = SglangSpeculative::Algorithm::standalone;
  CHECK(sglang_speculative_reserve_mib(spec, SglangSpeculativeEra::headroom) == 6144);

  // The planned row takes it: 0.5.8 on an H100 without --mem-fraction-static.
  SglangSettings s;
  s.version = parse_sglang_version("0.5.8", "test");
  s.context_length = 8192;
  s.speculative = eagle3(3, 1, 4);
  CHECK(plan_sglang(load_model(source_path(kTarget)), catalog_cards("h100", 1), s).budget.mem_fraction_static == Approx(0.810));
}

TEST_CASE("SGLang speculative eras: a release a boundary may fall in is refused, not guessed", "[sglang][speculative]") {
  const auto era = [](const char* version) {
    return sglang_speculative_era(parse_sglang_version(version, "t"), "EAGLE3");
  };
  CHECK(era("0.4.10") == SglangSpeculativeEra::headroom);
  CHECK(era("0.5.6") == SglangSpeculativeEra::headroom);
  CHECK(era("0.5.8") == SglangSpeculativeEra::outside);
  CHECK(era("0.5.10") == SglangSpeculativeEra::outside);
  CHECK(era("0.5.16") == SglangSpeculativeEra::inside);
  CHECK(era("latest") == SglangSpeculativeEra::inside);
  for (const char* unsettled : {"0.4.9", "0.5.7", "0.5.11", "0.5.15"}) {
    INFO(unsettled);
    try {
      era(unsettled);
      FAIL("not refused");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::unsupported_architecture);
    }
  }
}

TEST_CASE("SGLang speculative from the command line: the draft loaded, rows, refusals", "[sglang][speculative][cli]") {
  SECTION("a fitting row holds each request's draft slots, and 48 requests at most") {
    const ProcessResult r = run_kvplan(sglang_eagle3("--speculative-num-steps 3 --speculative-eagle-topk 1 "
                                                     "--speculative-num-draft-tokens 4 --mem-fraction-static 0.835 "
                                                     "--sglang-free-before-load 78.5GiB --sglang-free-after-load 63.46GiB "
                                                     "--context-length 8192 --batch 8 --format json"));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json out = nlohmann::json::parse(r.out);
    const nlohmann::json& row = out["rows"][0];
    // 8 x (8,192 + 7) tokens x (131,072 + 4,096) B: the target's and the draft's layers.
    CHECK(row["kv_bytes"] == 8ull * 8'199 * 135'168);
    // 78.5 GiB - 63.46 GiB (84,288,733,184 - 68,139,656,151 B) loaded + the draft, inside the budget.
    CHECK(row["weights_bytes"] == 16'149'077'033ull + 1'900'436'736ull);
    CHECK(out["sglang"]["rows"][0]["speculative"]["draft_weights_bytes"] == 1'900'436'736);
    CHECK(out["sglang"]["rows"][0]["max_total_num_tokens"] == 387'159);
    const ProcessResult many = run_kvplan(sglang_eagle3("--context-length 8192 --batch 64 --check"));
    CHECK(many.exit_code == 1);
    CHECK(many.out.find("exceeds_max_running_requests") != std::string::npos);
  }
  SECTION("kvplan check reads the draft a launch_server line names, as the plain command does") {
    const ProcessResult checked = run_kvplan(
        "check --cmd \"python -m sglang.launch_server --model-path " + source_path(kTarget) +
        " --context-length 8192 --speculative-algorithm EAGLE3 --speculative-draft-model-path " + source_path(kHead) +
        "\" --gpu h100 --format json");
    INFO(checked.err);
    REQUIRE(checked.exit_code == 0);
    const nlohmann::json row = nlohmann::json::parse(checked.out)["deployments"][0]["plan"]["sglang"]["rows"][0];
    CHECK(row["speculative"]["draft_weights_bytes"] == 1'900'436'736);
    CHECK(row["max_running_requests"] == 48);
  }
  SECTION("refusals, one line each") {
    check_refused(run_kvplan(sglang_eagle3("--sglang-version 0.5.12")), "0.5.10 without either, latest with both", 3);
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) +
                             " --gpu h100 --speculative-algorithm EAGLE3"),
                  "needs --speculative-draft-model-path", 2);
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) +
                             " --gpu h100 --speculative-algorithm NEXTN"),
                  "declares no MTP layers (num_nextn_predict_layers) to draft with", 2);
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) + " --gpu h100 --speculative-algorithm EAGLE"),
                  "needs --speculative-draft-model-path: the draft checkpoint (an EAGLE head)", 2);
    check_refused(run_kvplan(sglang_eagle3("--speculative-num-steps 3")), "give all three or none", 2);
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) + " --gpu h100 --speculative-num-steps 3"),
                  "has no effect without --speculative-algorithm", 2);
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) +
                             " --gpu h100 --speculative-algorithm EAGLE3 --speculative-draft-model-path " +
                             source_path("tests/fixtures/hf/llama3.2-1b")),
                  "give it with --speculative-algorithm STANDALONE", 2);
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) +
                             " --gpu h100 --speculative-algorithm EAGLE3 --speculative-draft-model-path no-such/draft"),
                  "is not on this machine", 3);
    // EAGLE wants SGLang's LlamaForCausalLMEagle heads; an EAGLE-1 config as vLLM reads it is not one.
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) +
                             " --gpu h100 --speculative-algorithm EAGLE --speculative-draft-model-path " +
                             source_path("tests/fixtures/hf/eagle-llama3-instruct-8b")),
                  "not LlamaForCausalLMEagle", 3);
    check_refused(run_kvplan("--runtime sglang --model " + source_path(kTarget) +
                             " --gpu h100 --speculative-algorithm EAGLE --speculative-draft-model-path " + source_path(kHead)),
                  "drafts with --speculative-algorithm EAGLE3", 2);
    check_refused(run_kvplan(sglang_eagle3("--speculative-token-map freq_32768.pt")), "hot-vocabulary head", 3);
    check_refused(run_kvplan("--model " + source_path("tests/fixtures/hf/sglang-eagle-llama3-instruct-8b") + " --gpu h100"),
                  "an EAGLE draft head for SGLang", 2);
  }
  SECTION("too little left beside the budget for the draft: SGLang runs out of memory") {
    const ProcessResult r = run_kvplan(sglang_eagle3("--sglang-version 0.5.8 --mem-fraction-static 0.99 --context-length 8192 --check"));
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("the draft's weights and pool") != std::string::npos);
  }
}

namespace {

/// DeepSeek-R1 at TP 8 on H200s with NEXTN (SGLang's alias of EAGLE): its own MTP layer drafts.
/// Readings as "avail mem" would give them: 137.00 GiB free before load, 57.00 after the target's
/// weights; --mem-fraction-static 0.88, 32,768-token requests, SGLang's auto choice (3, 1, 4).
SglangSettings deepseek_nextn(const char* version) {
  SglangSettings s;
  s.version = parse_sglang_version(version, "test");
  s.tp = 8;
  s.mem_fraction_static = 0.88;
  s.free_before_load = 13700 * GiB / 100;
  s.free_after_load = 5700 * GiB / 100;
  s.context_length = 32'768;
  SglangSpeculative spec;
  spec.algorithm = SglangSpeculative::Algorithm::nextn;
  spec.name = "NEXTN";
  spec.num_steps = 3, spec.eagle_topk = 1, spec.num_draft_tokens = 4;
  s.speculative = std::move(spec);
  return s;
}

// The MTP layer's weights as counted (tests/hf_config_test.cpp): 15,424,227,552 B, of them eh_proj's
// 205,520,896 whole on every rank (a plain nn.Linear), the rest split over the 8 ranks:
// 1,902,338,332 + 205,520,896 = 2,107,859,228 B a GPU. Its pool: one latent layer, (512 + 64) x 2 B
// = 1,152 B a token.
constexpr std::uint64_t kMtpWeightsPerRank = 2'107'859'228;

}  // namespace

TEST_CASE("SGLang NEXTN, DeepSeek-R1 to 0.5.10: one MTP latent layer beside the pool, paid from the headroom",
          "[sglang][speculative]") {
  const ModelSpec& model = catalog_model("deepseek-r1");
  const SglangResult r = plan_sglang(model, catalog_cards("h200", 8), deepseek_nextn("0.5.9"));
  // rest = 57.00 - 137.00 x 0.12 = 40.56 GiB -> 43,550,968,381 B // 70,272 (61 latents) = 619,748:
  // the draft changes nothing of the target's #tokens before 2026.
  REQUIRE(r.draft.has_value());
  CHECK(r.draft->own_layers);
  CHECK(r.draft->layers == 1);
  CHECK(r.draft->cell_bytes == 1'152);
  CHECK(r.draft->weights == kMtpWeightsPerRank);
  CHECK(r.budget.available == 43'550'968'381);
  CHECK(r.max_total_num_tokens == 619'748);
  // Both pools have 619,749 rows: 43,551,001,728 B (40.56 GiB) and 713,950,848 B (0.66 GiB).
  CHECK(printed(r, "KV Cache is allocated. #tokens: 619748, KV size: 40.56 GB"));
  CHECK(printed(r, "KV Cache is allocated. #tokens: 619748, KV size: 0.66 GB"));
  // From the headroom: the target pool's 33,347 B past the budget, the draft's weights and pool.
  CHECK(r.draft->from_headroom == 33'347 + kMtpWeightsPerRank + 713'950'848);
  CHECK(r.max_running_requests == 48);
  CHECK(r.starts);

  // To 0.5.6 the profiled #tokens also grows by 48 x 3 x 1 + 48 x 4 + 100 = 436.
  const SglangResult early = plan_sglang(model, catalog_cards("h200", 8), deepseek_nextn("0.5.6"));
  CHECK(early.max_total_num_tokens == 619'748 + 436);
}

TEST_CASE("SGLang NEXTN, DeepSeek-R1 from 0.5.16: the MTP layer's weights inside, the cell scaled by 62/61",
          "[sglang][speculative]") {
  const SglangResult r = plan_sglang(catalog_model("deepseek-r1"), catalog_cards("h200", 8), deepseek_nextn("latest"));
  // By hand (Python floats; at TP 8 the readings pass through float32, as SGLang's all-reduce of
  // them does): after = float32((int(57.00 x 2^30) - 2,107,859,150) / 2^30) = 55.036903381347656 GiB;
  // rest = after - 137.00 x 0.12 = 38.59690338134766 GiB; available 41,443,109,437 B; cell
  // int(70,272 x (1 + 1/61)) = 71,424 (one more latent); #tokens 580,240.
  CHECK(r.budget.available == 41'443'109'437);
  CHECK(r.draft->scaled_cell_bytes == 71'424);
  CHECK(r.draft->target_layers == 61);
  CHECK(r.max_total_num_tokens == 580'240);
  CHECK(printed(r, "KV Cache is allocated. #tokens: 580240, KV size: 0.62 GB"));
  // Both pools hold 580,241 x 71,424 B, 23,747 B more than available.
  CHECK(r.draft->from_headroom == 23'747);
}

TEST_CASE("SGLang NEXTN from the command line: DeepSeek's own layers, or a refusal naming why", "[sglang][speculative][cli]") {
  const ProcessResult nextn =
      run_kvplan("--runtime sglang --model deepseek-r1 --gpu 8xh200 --ctx 32k --speculative-algorithm NEXTN --format json");
  INFO(nextn.err);
  REQUIRE(nextn.exit_code == 0);
  const nlohmann::json out = nlohmann::json::parse(nextn.out);
  const nlohmann::json& speculative = out["sglang"]["rows"][0]["speculative"];
  CHECK(speculative["draft_is_mtp"] == true);
  CHECK(speculative["draft"] == "deepseek-r1's MTP layer");
  CHECK(speculative["num_steps"] == 3);  // SGLang's auto choice for DeepSeek: 3, 1, 4
  CHECK(speculative["num_draft_tokens"] == 4);
  CHECK(speculative["draft_weights_bytes"] == kMtpWeightsPerRank);
  CHECK(out["settings"]["mtp_layers"] == 1);
  // EAGLE naming the served checkpoint (DeepSeek's recipes) or nothing drafts the same way.
  const ProcessResult named = run_kvplan("--runtime sglang --model deepseek-r1 --gpu 8xh200 --ctx 32k --speculative-algorithm "
                                         "EAGLE --speculative-draft-model-path " + source_path("tests/fixtures/hf/deepseek-r1") +
                                         " --format json");
  REQUIRE(named.exit_code == 0);
  nlohmann::json same = nlohmann::json::parse(named.out)["sglang"]["rows"][0]["speculative"];
  CHECK(same["algorithm"] == "EAGLE");
  same["algorithm"] = "NEXTN";
  CHECK(same == speculative);

  check_refused(run_kvplan("--runtime sglang --model minimax-m2.7 --gpu 8xh200 --speculative-algorithm NEXTN"),
                "with the MTP layers of 'minimax_m2'", 3);
  check_refused(run_kvplan("--runtime sglang --model deepseek-r1 --gpu 8xh200 --speculative-algorithm NEXTN "
                           "--speculative-draft-model-path llama3.1-8b"),
                "not deepseek-r1's own checkpoint", 3);
  check_refused(run_kvplan("--runtime sglang --model kimi-k2 --gpu 8xh200 --speculative-algorithm EAGLE"),
                "kimi-k2 has no MTP layers", 2);
}

TEST_CASE("SGLang NEXTN, DeepSeek-V3.2 (DSA): the MTP layer's latent and indexer key in a pool of their own",
          "[sglang][speculative]") {
  const ModelSpec& model = catalog_model("deepseek-v3.2");
  // bf16 (DSA's auto on Hopper): 61 layers x (1,152 latent + 132 indexer key) = 78,324 B a token.
  // The same readings as R1's: available 43,550,968,381 B // 78,324 = 556,036 tokens, floored to
  // the page of 64 SGLang sets for DSA models on CUDA: 556,032.
  const SglangResult r = plan_sglang(model, catalog_cards("h200", 8), deepseek_nextn("0.5.9"));
  REQUIRE(r.draft.has_value());
  CHECK(r.draft->layers == 1);
  CHECK(r.draft->cell_bytes == 1'284);
  CHECK(r.draft->k_bytes_per_token == 1'152);
  CHECK(r.draft->indexer_bytes_per_token == 132);
  CHECK(r.page_size == 64);
  CHECK(r.max_total_num_tokens == 556'032);
  // The draft's pool: 556,096 rows (a page more) of 1,152 B (0.60 GiB) and of 132 B, from the headroom with its
  // weights (2,107,859,228 B of the R1-shaped layer + 14,421,728 / 8 of its indexer = 2,109,661,944).
  CHECK(r.draft->k_bytes == 640'622'592);
  CHECK(r.draft->indexer_bytes == 73'404'672);
  CHECK(r.draft->weights == 2'109'661'944);
  CHECK(printed(r, "KV Cache is allocated. #tokens: 556032, KV size: 0.60 GB"));
  // From 0.5.16 the cell is scaled by one more of its 61 layers: int(78,324 x 62/61) = 79,608.
  const SglangResult later = plan_sglang(model, catalog_cards("h200", 8), deepseek_nextn("latest"));
  CHECK(later.draft->scaled_cell_bytes == 79'608);
  CHECK(later.draft->target_layers == 61);
  // Before 0.5.8 SGLang ran DSA models with DP attention: refused, as any DSA plan then.
  CHECK_THROWS_WITH(plan_sglang(model, catalog_cards("h200", 8), deepseek_nextn("0.5.6")),
                    Catch::Contains("enables DP attention for them"));
}

// GLM-4.5-Air (glm4_moe: 46 layers of 8 KV heads x 128) at TP 4: its MTP layer drafts as a
// grouped-query layer, 2 heads a rank x 128 x 2 (K, V) x 2 B = 1,024 B a token. Its weights
// 7,233,118,720 B (bf16 but its router's 128 e_score_correction_bias, fp32), eh_proj's 67,108,864
// whole on each rank: 1,791,502,464 + 67,108,864 = 1,858,611,328 B a GPU. Readings: 78 GiB before load, 26 after, --mem-fraction-static 0.85.
TEST_CASE("SGLang NEXTN, GLM-4.5-Air: one grouped-query draft layer, SGLang's auto choice by release",
          "[sglang][speculative]") {
  const auto plan = [](const char* version) {
    SglangSettings s = deepseek_nextn(version);
    s.tp = 4;
    s.mem_fraction_static = 0.85;
    s.free_before_load = 78 * GiB;
    s.free_after_load = 26 * GiB;
    s.speculative->auto_chosen = true;
    return plan_sglang(catalog_model("glm4.5-air"), catalog_cards("h100", 4), s);
  };
  // 0.5.9: rest = 26 - 78 x 0.15 = 14.3 GiB = 15,354,508,083 B // 47,104 (46 layers) = 325,970; GLM
  // is not in 0.5.x's (3, 1, 4) list, so steps 5, topk 4, 8 draft tokens: 28 slots a request.
  const SglangResult b = plan("0.5.9");
  REQUIRE(b.draft.has_value());
  CHECK(b.draft->kind == LayerKind::full);
  CHECK(b.draft->cell_bytes == 1'024);
  CHECK(b.draft->weights == 1'858'611'328);
  CHECK(b.max_total_num_tokens == 325'970);
  CHECK(b.draft->slots_per_request == 28);
  CHECK(printed(b, "KV Cache is allocated. #tokens: 325970, K size: 0.16 GB, V size: 0.16 GB"));
  // 0.5.16+: after = float32((26 GiB - 1,858,611,328) / 2^30) = 24.269033432006836; rest =
  // 12.569033432006835 GiB = 13,495,896,883 B // int(47,104 x (1 + 1/46)) = 48,128: 280,416.
  const SglangResult c = plan("latest");
  CHECK(c.draft->scaled_cell_bytes == 48'128);
  CHECK(c.max_total_num_tokens == 280'416);
  CHECK(c.draft->slots_per_request == 7);  // 2026: (3, 1, 4) for GLM too
  // To 0.5.6 #tokens also grows by the headroom's extra tokens. GLM's auto choice there is read from
  // a secondary quote (5, 4, 8: 48 x 20 + 48 x 8 + 100 = 1,444); if it were (3, 1, 4) the extra would
  // be 48 x 3 + 48 x 4 + 100 = 436: the fewer is taken, the pool slots at the more (28).
  const SglangResult a = plan("0.5.5");
  CHECK(a.draft->headroom_slots_per_request == 7);
  CHECK(a.draft->extra_tokens == 436);
  CHECK(a.max_total_num_tokens == 325'970 + 436);
  CHECK(a.draft->slots_per_request == 28);
  // Given, the three flags are SGLang's: no doubt, the extra tokens as they give them.
  SglangSettings given;
  given.version = parse_sglang_version("0.5.5", "test");
  given.speculative = SglangSpeculative{};
  given.speculative->algorithm = SglangSpeculative::Algorithm::nextn;
  given.speculative->name = "NEXTN";
  given.speculative->num_steps = 5, given.speculative->eagle_topk = 4, given.speculative->num_draft_tokens = 8;
  given.tp = 4;
  given.mem_fraction_static = 0.85;
  given.free_before_load = 78 * GiB;
  given.free_after_load = 26 * GiB;
  const SglangResult flags = plan_sglang(catalog_model("glm4.5-air"), catalog_cards("h100", 4), given);
  CHECK(flags.draft->headroom_slots_per_request == 28);
  CHECK(flags.draft->extra_tokens == 1'444);
  // 0.4.10 may predate PR #8482 (the draft's pool of all 46 layers): refused, not guessed.
  CHECK_THROWS_WITH(plan("0.4.10"), Catch::Contains("give --sglang-version 0.5.0 or later"));
}
