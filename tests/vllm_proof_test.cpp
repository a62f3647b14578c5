// Issue #13's Proof for vLLM: every record of shared/reference/vllm-logs.jsonl and
// engine-logs-serving.jsonl whose engine is vLLM, listed once here with either its settings or the
// reason it cannot be matched. Over the matched ones the test computes the statistics
// (weights per GPU against "Model loading took", the available KV memory predicted from GPU,
// utilization and model alone against "Available KV cache memory", and the start/no-start
// verdict), prints them, and asserts the thresholds the profile meets. docs/engines/vllm.md
// ("Proof") states the figures and explains every miss.

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "kvplan/dtype.h"
#include "kvplan/gpu.h"
#include "kvplan/units.h"
#include "engines/vllm/rules.h"
#include "support/catalog_entries.h"

using namespace kvplan;
using kvplan::testing::catalog_model;
using kvplan::testing::catalog_gpu;

namespace {

constexpr double kProofNone = -1e9;  ///< the record does not print this figure

struct ProofRecord {
  const char* id;
  const char* model;   ///< catalog id; nullptr: unmatched, `why` says why
  const char* gpu;
  std::uint32_t tp;
  std::uint32_t utilization_millionths;
  std::uint64_t max_len;  ///< 0: the model's own
  const char* version;
  double loading_gib;     ///< "Model loading took X GiB"; kProofNone when not printed
  double available_gib;   ///< "Available KV cache memory: X GiB"; kProofNone when not printed
  bool started;           ///< false: the record shows vLLM refusing to start
  const char* why;        ///< unmatched: the reason; matched: what the match assumes ("" for nothing)
  bool enforce_eager = false;
  std::uint64_t max_num_batched_tokens = 0;
};

// Every vLLM record, in file order. The 0.19.0 runs are llm-d-planner's accuracy sweep on H100
// 80GB at utilization 0.95; 0.10.1.1 on A100 80GB; the 0.11.0 runs (R095-R101) a secondary table.
const ProofRecord kProofRecords[] = {
    {"R003", nullptr, "h100", 2, 950'000, 8192, "0.19.0", 33.88, 37.28, true,
     "RedHatAI fp8-dynamic checkpoint of Llama 3.3 70B: the catalog holds the bf16 weights only"},
    {"R005", nullptr, "h100", 1, 950'000, 8192, "0.19.0", 8.14, 64.64, true,
     "fp8-dynamic checkpoint of Qwen2.5-7B: the catalog holds the bf16 weights only"},
    {"R006", "gemma2-27b", "h100", 1, 950'000, 8192, "0.19.0", 50.72, 20.59, true, ""},
    {"R009", "gemma3-12b", "h100", 1, 950'000, 8192, "0.19.0", 23.31, 47.72, true, ""},
    {"R011", "gemma3-4b", "h100", 1, 950'000, 8192, "0.19.0", 8.58, 62.51, true, ""},
    {"R012", nullptr, "h100", 1, 950'000, 8192, "0.19.0", 15.91, 55.44, true, "google/gemma-7b is not in the catalog"},
    {"R013", nullptr, "h100", 1, 950'000, 8192, "0.19.0", 4.74, 69.28, true,
     "ibm-granite/granite-3.1-2b-instruct is not in the catalog"},
    {"R014", "granite-3.3-8b", "h100", 1, 950'000, 8192, "0.19.0", 15.25, 58.66, true,
     "granite-3.1-8b-instruct has granite-3.3-8b's shapes and size"},
    {"R015", "granite-3.3-8b", "h100", 1, 950'000, 8192, "0.19.0", 15.25, 58.66, true, ""},
    {"R018", "llama3.1-8b", "h100", 1, 950'000, 8192, "0.19.0", 14.99, 58.11, true, ""},
    {"R019", nullptr, "h100", 1, 950'000, 8192, "0.19.0", 8.49, 64.61, true,
     "fp8 checkpoint of Llama 3.1 8B: the catalog holds the bf16 weights only"},
    {"R022", "llama3.1-8b", "h100", 1, 950'000, 2048, "0.19.0", 14.99, 58.11, true, ""},
    {"R027", "llama3.1-8b", "h100", 2, 950'000, 8192, "0.19.0", 7.51, 63.76, true, ""},
    {"R029", "llama3.1-8b", "h100", 1, 950'000, 16384, "0.19.0", 14.99, 58.11, true, ""},
    {"R030", "llama3.1-8b", "h100", 1, 950'000, 32768, "0.19.0", 14.99, 58.11, true, ""},
    {"R032", "phi-2", "h100", 1, 950'000, 2048, "0.19.0", 5.19, 69.00, true, ""},
    {"R033", "phi4", "h100", 1, 950'000, 8192, "0.19.0", 27.39, 46.08, true, ""},
    {"R034", "mistral-small-3.1-24b", "h100", 1, 950'000, 8192, "0.19.0", 44.76, 28.19, true, ""},
    {"R035", "mixtral-8x7b", "h100", 2, 950'000, 8192, "0.19.0", 43.51, 28.44, true, ""},
    {"R037", "qwen2.5-72b", "h100", 4, 950'000, 8192, "0.19.0", 34.01, 36.72, true,
     "Kimi-Dev-72B is a Qwen2.5-72B fine-tune: its shapes and size"},
    {"R040", "gpt-oss-20b", "h100", 1, 950'000, 8192, "0.19.0", 13.64, 58.47, true, ""},
    {"R041", "gpt-oss-20b", "h100", 2, 950'000, 8192, "0.19.0", 7.01, 63.28, true, ""},
    {"R044", "qwen2.5-7b-instruct", "h100", 1, 950'000, 8192, "0.19.0", 14.25, 58.53, true, ""},
    {"R046", "qwen2.5-7b-instruct", "h100", 1, 950'000, 8192, "0.19.0", 14.25, 58.53, true, ""},
    {"R047", "qwen2.5-7b-instruct", "h100", 1, 950'000, 16384, "0.19.0", 14.25, 58.53, true, ""},
    {"R049", "qwen2.5-7b-instruct", "h100", 1, 950'000, 2048, "0.19.0", 14.25, 58.53, true, ""},
    {"R050", "qwen2.5-7b-instruct", "h100", 1, 950'000, 4096, "0.19.0", 14.25, 58.53, true, ""},
    {"R052", "qwen2.5-7b-instruct", "h100", 2, 950'000, 8192, "0.19.0", 7.12, 63.84, true, ""},
    {"R053", "qwen2.5-7b-instruct", "h100", 4, 950'000, 8192, "0.19.0", 3.55, 67.34, true, ""},
    {"R054", "qwen3-30b-a3b", "h100", 1, 950'000, 8192, "0.19.0", 56.88, 15.41, true, ""},
    {"R055", "qwen3-8b", "h100", 1, 950'000, 8192, "0.19.0", 15.27, 57.50, true, ""},
    {"R060", nullptr, "h100", 1, 950'000, 8192, "0.19.0", 8.49, 64.60, true,
     "w8a8 checkpoint of Llama 3.1 8B: the catalog holds the bf16 weights only"},
    {"R061", nullptr, "h100", 1, 950'000, 8192, "0.19.0", 8.14, 64.64, true,
     "w8a8 checkpoint of Qwen2.5-7B: the catalog holds the bf16 weights only"},
    {"R062", "qwen2-7b-instruct", "a100-80g", 1, 250'000, 16384, "0.10.1.1", 14.2488, 5.01, true, ""},
    {"R063", "qwen2-7b-instruct", "a100-80g", 1, 500'000, 16384, "0.10.1.1", 14.2488, 24.83, true, ""},
    {"R065", "qwen2-7b-instruct", "a100-80g", 2, 250'000, 16384, "0.10.1.1", 7.1217, 12.02, true, ""},
    {"R066", "qwen2-7b-instruct", "a100-80g", 2, 500'000, 16384, "0.10.1.1", 7.1217, 31.83, true, ""},
    {"R070", nullptr, "h100", 4, 900'000, 0, "", kProofNone, 8.11, true,
     "Qwen3-235B-A22B-FP8 with an LMCache connector, version not stated (~0.10): fp8 weights not in the catalog"},
    {"R073", "gpt-oss-120b", "h100", 1, 900'000, 0, "0.10", 65.9651, -2.14, false,
     "launch flags not in the excerpt: vLLM's defaults (0.9, the trained context), 0.10 rules (Aug 2025)"},
    {"R074", "gpt-oss-120b", "h100", 1, 950'000, 0, "0.11", kProofNone, 1.71, false,
     "~0.11 (Oct 2025); refused: the default 131,072-token request does not fit", false, 1024},
    {"R077", nullptr, "h100", 1, 900'000, 221'000, "", kProofNone, 5.59, false,
     "model and GPU not named (the startup check is reproduced by hand in vllm_profile_test)"},
    {"R078", nullptr, "h100", 1, 900'000, 32768, "", kProofNone, 6.51, true,
     "GPU and utilization not in the excerpt (LMCache run)"},
    {"R079", "llama3.1-8b", "l40s", 1, 900'000, 32768, "0.10", 14.9889, kProofNone, true,
     "~0.8.4, older than kvplan's oldest rules (0.10): weights only"},
    {"R080", nullptr, "h100", 1, 900'000, 8192, "", kProofNone, 53.29, true,
     "V0 engine (Dec 2024): its profiling rules predate kvplan's oldest (0.10)"},
    {"R085", nullptr, "rtx3090", 1, 900'000, 0, "", 15.6841, kProofNone, true,
     "nytopop/Qwen3-30B-A3B.w4a16 (w4a16 weights) is not in the catalog"},
    {"R086", nullptr, "", 1, 900'000, 0, "", 7.6785, 18.38, true,
     "AMD Strix Halo iGPU under ROCm: unified memory, not a card in the catalog"},
    {"R087", nullptr, "a100-80g", 1, 900'000, 0, "", kProofNone, kProofNone, true,
     "vLLM ~0.2.4 (Dec 2023): only block counts printed, no GiB"},
    {"R088", nullptr, "a100-80g", 4, 900'000, 0, "", kProofNone, kProofNone, true,
     "vLLM ~0.2.4 (Dec 2023): only block counts printed, no GiB"},
    {"R092", nullptr, "rtx5090", 1, 900'000, 131072, "0.24.0", kProofNone, 5.98, true,
     "NVFP4 checkpoint (Qwen3.6-35B-A3B), utilization not printed: tokens only (vllm_profile_test)"},
    {"R095", nullptr, "h100", 2, 900'000, 16000, "0.11.0", 33.88, 32.00, true,
     "fp8-dynamic checkpoint of Llama 3.3 70B: the catalog holds the bf16 weights only"},
    {"R096", nullptr, "h100", 1, 900'000, 16000, "0.11.0", 67.72, -1.44, false,
     "fp8-dynamic checkpoint of Llama 3.3 70B: the catalog holds the bf16 weights only"},
    {"R099", "qwen3-32b", "h100", 1, 900'000, 16000, "0.11.0", 61.03, 4.45, true, ""},
    {"R100", "qwen3-32b", "h100", 2, 900'000, 16000, "0.11.0", 30.59, 34.49, true, ""},
    {"R101", "mistral-small-3.1-24b", "h100", 1, 950'000, 16000, "0.11.0", 44.76, 28.20, true,
     "Mistral-Small-3.2-24B has 3.1's shapes and size"},
    {"R103", "gemma4-26b-a4b", "a100-80g", 1, 900'000, 131072, "latest", 48.5, 21.5, true,
     "version not stated (a 2026 blog): the latest rules; --enforce-eager", true},
    {"P1", nullptr, "", 1, 900'000, 0, "", kProofNone, kProofNone, true,
     "pipeline-parallel record without memory figures (vllm_dtype_pp_test checks its layer split)"},
    {"P2", nullptr, "", 1, 900'000, 0, "", kProofNone, kProofNone, true, "model not named, no memory figures"},
    {"P3", nullptr, "", 1, 900'000, 0, "", kProofNone, kProofNone, true, "V0 engine (2024), no memory figures"},
    {"P4", nullptr, "", 1, 900'000, 0, "", kProofNone, kProofNone, true,
     "checkpoint not named, no memory figures (vllm_dtype_pp_test checks its layer split)"},
    {"P5", nullptr, "", 1, 900'000, 0, "", kProofNone, kProofNone, true, "model not named, no memory figures"},
};

/// The records whose logs say "Using FlashInfer for top-p & top-k sampling." (the 0.10.1.1 runs,
/// every one): VLLM_USE_FLASHINFER_SAMPLER=1 tells kvplan what their vLLM ran. The others do not
/// say, and get their release's sampler (the full sort before 0.17).
bool logs_flashinfer_sampler(std::string_view id) {
  return id == "R062" || id == "R063" || id == "R065" || id == "R066";
}

VllmResult proof_plan(const ProofRecord& record, const ModelSpec& model) {
  VllmSettings settings;
  settings.sampler = vllm_sampler(vllm_minor_version(record.version, "test"),
                                  logs_flashinfer_sampler(record.id) ? std::optional<bool>(true) : std::nullopt);
  settings.tensor_parallel = record.tp;
  settings.max_model_len = record.max_len;
  settings.utilization_millionths = record.utilization_millionths;
  settings.version = parse_vllm_version(record.version, "test");
  settings.enforce_eager = record.enforce_eager;
  settings.max_num_batched_tokens = record.max_num_batched_tokens;
  return plan_vllm(model, catalog_gpu(record.gpu), settings);
}

VllmResult proof_plan(const ProofRecord& record) { return proof_plan(record, catalog_model(record.model)); }

double proof_gib(std::int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(GiB); }

/// Nearest-rank percentile of sorted absolute values.
double proof_percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

struct ProofError {
  std::string id;
  std::string version;
  double error = 0;  ///< (predicted - logged) / logged
};

struct ProofFigures {
  std::vector<ProofError> weight_errors;
  std::vector<ProofError> available_errors;
  std::vector<std::string> false_fit_ids;
  std::vector<std::string> unanswered_ids;  ///< refusals the profile gives no verdict on (exit 3)
  std::vector<std::string> unmatched;
  std::string table;
  std::uint32_t refusals_checked = 0;
};

ProofFigures proof_figures() {
  ProofFigures figures;
  std::ostringstream table;
  for (const ProofRecord& record : kProofRecords) {
    if (record.model == nullptr) {
      figures.unmatched.push_back(std::string(record.id) + ": " + record.why);
      continue;
    }
    const VllmResult r = proof_plan(record);
    table << record.id << " " << record.model << " tp" << record.tp;
    if (record.loading_gib != kProofNone) {
      const double predicted = proof_gib(static_cast<std::int64_t>(r.budget.weights));
      figures.weight_errors.push_back({record.id, record.version, (predicted - record.loading_gib) / record.loading_gib});
      table << " weights " << predicted << " vs " << record.loading_gib;
    }
    // A refused start's negative figure is not a size to compare; verdict (4) judges it.
    if (record.available_gib != kProofNone && record.started) {
      const double predicted = proof_gib(r.budget.available);
      figures.available_errors.push_back({record.id, record.version, (predicted - record.available_gib) / record.available_gib});
      table << " available " << predicted << " vs " << record.available_gib;
    }
    if (!record.started) {
      // The verdict as the profile gives it: no answer (exit 3) where it does not model the model
      // on the record's card, even with the size vLLM loaded given (--weights).
      ++figures.refusals_checked;
      ModelSpec given = catalog_model(record.model);
      if (record.loading_gib != kProofNone) {
        given.weights_bytes = static_cast<std::uint64_t>(record.loading_gib * static_cast<double>(GiB));
        given.weights_source = "vLLM's log (given: --weights)";
      }
      const GpuSpec card = catalog_gpu(record.gpu);
      const std::vector<GpuSpec> cards{card};
      const bool answered = vllm_unmodelled(catalog_model(record.model), cards, record.tp) == VllmUnmodelled::none;
      const bool answered_given = vllm_unmodelled(given, cards, record.tp) == VllmUnmodelled::none;
      const bool starts = answered ? r.starts : answered_given && proof_plan(record, given).starts;
      if (starts) figures.false_fit_ids.push_back(record.id);
      if (!answered && !answered_given) figures.unanswered_ids.push_back(record.id);
      table << " starts " << (!answered && !answered_given ? "unknown (exit 3, the loaded size given or not)"
                              : starts                    ? "yes (FALSE FIT)"
                                                          : "no, as logged");
    }
    table << "\n";
  }
  figures.table = table.str();
  return figures;
}

/// The ids whose |error| exceeds `bound`, or (over_only) whose error is above it.
std::vector<std::string> proof_ids_beyond(const std::vector<ProofError>& errors, double bound, bool over_only = false) {
  std::vector<std::string> ids;
  for (const ProofError& e : errors)
    if ((over_only ? e.error : std::abs(e.error)) > bound) ids.push_back(e.id);
  return ids;
}

/// Median, 90th percentile of |error| and the largest over-prediction, for one version ("" = all).
std::string proof_summary(const std::vector<ProofError>& errors, const std::string& version) {
  std::vector<double> magnitudes;
  double worst_over = -1;
  for (const ProofError& e : errors) {
    if (!version.empty() && e.version != version) continue;
    magnitudes.push_back(std::abs(e.error));
    worst_over = std::max(worst_over, e.error);
  }
  if (magnitudes.empty()) return "none";
  std::ostringstream out;
  out.precision(3);
  out << magnitudes.size() << " records: median |error| " << proof_percentile(magnitudes, 0.5) * 100 << "%, 90th percentile "
      << proof_percentile(magnitudes, 0.9) * 100 << "%, largest over-prediction " << worst_over * 100 << "%";
  return out.str();
}

using ProofIds = std::vector<std::string>;

}  // namespace

TEST_CASE("vLLM proof: every record is matched or says why", "[vllm][proof]") {
  std::uint32_t matched = 0;
  for (const ProofRecord& record : kProofRecords) {
    INFO(record.id);
    if (record.model == nullptr) {
      CHECK(std::string(record.why).size() > 20);  // a reason in words, never a silent drop
    } else {
      ++matched;
      CHECK_NOTHROW(proof_plan(record));
    }
  }
  // 55 vLLM records in vllm-logs.jsonl and 5 in engine-logs-serving.jsonl (P1-P5).
  CHECK(std::size(kProofRecords) == 60);
  CHECK(matched == 37);
}

TEST_CASE("vLLM proof: weights, available KV memory and the start verdict against the logs", "[vllm][proof]") {
  const ProofFigures figures = proof_figures();
  std::ostringstream report;
  report << figures.table << "weights, " << figures.weight_errors.size() << " records: beyond 1% "
         << proof_ids_beyond(figures.weight_errors, 0.01).size() << ", beyond 3% " << proof_ids_beyond(figures.weight_errors, 0.03).size()
         << "\navailable KV memory, all: " << proof_summary(figures.available_errors, "")
         << "\n  0.19.0: " << proof_summary(figures.available_errors, "0.19.0")
         << "\n  0.10.1.1: " << proof_summary(figures.available_errors, "0.10.1.1")
         << "\n  0.11.0: " << proof_summary(figures.available_errors, "0.11.0")
         << "\n  latest rules (R103): " << proof_summary(figures.available_errors, "latest")
         << "\nrefusals " << figures.refusals_checked << ", false fits " << figures.false_fit_ids.size() << "\nunmatched "
         << figures.unmatched.size() << ":\n";
  for (const std::string& line : figures.unmatched) report << "  " << line << "\n";
  WARN(report.str());

  // The goals, and where they are not met the exact misses, pinned by id so that a new miss
  // (or a fixed one) fails here; docs/engines/vllm.md ("Proof") explains each.
  // (2) weights within 1% for >= 90%, within 3% for all: all 36 within 1%. gpt-oss (R040, R041,
  // R073: -5.9%, -8.4%, -7.9% at the checkpoint's size) comes within +0.3%, +1.0% and -0.08% with
  // its mxfp4 experts padded as vLLM creates them (vllm_mxfp4_experts_test). R103 (Gemma 4 26B-A4B,
  // 48.44 GiB against a blog's rounded 48.5: -0.1%) was -2.3% before its entry held the vision
  // tower and projector vLLM loads with it (572,794,416 parameters, 1.07 GiB). Gemma 3 12B (R009)
  // and 4B (R011), -2.6% and -6.6% before, are -0.2% and -0.1% with the vision tower and vLLM's
  // rotary tables counted (0.5625 GiB each: docs/engines/vllm.md, "Rotary tables").
  CHECK(proof_ids_beyond(figures.weight_errors, 0.01).empty());
  CHECK(figures.weight_errors.size() == 36);

  // (3) available KV memory: median <= 1% and 90th percentile <= 3% are met over all records; the
  // misses beyond 3% and the over-predictions beyond 2% are pinned.
  std::vector<double> magnitudes;
  for (const ProofError& e : figures.available_errors) magnitudes.push_back(std::abs(e.error));
  CHECK(proof_percentile(magnitudes, 0.5) <= 0.01);
  CHECK(proof_percentile(magnitudes, 0.9) <= 0.03);
  // Beyond 3%, all under (on the safe side): R100 -4.3% (0.11.0 at TP 2: its NCCL memory, 0.54 GiB
  // logged, is charged at 0.19.0's 2.1 GiB) and R101 -10.1% (the same table's Mistral-Small-3.2 row
  // logs a 2.12 GiB peak, 16 B an entry: its run did not take the sort kvplan charges 0.11).
  // Over-predictions beyond 2%: none. R099 and R100, +72.3% and +5.3% while every release was
  // charged 16 B an entry for the sampler, are -2.6% and -4.3% with 0.11's sort (39 B: the
  // table's torch peak, 5.64 GiB, against 5.65 computed). Fixed before, with what fixed them: R062
  // (+4.3%, 0.10.1.1 at utilization 0.25) and R103 (Gemma 4 26B-A4B, +8.7% before its vision
  // tower, +3.8% before the MoE workspace, +3.0% after) by the A100 80GB's CUDA-visible total
  // (79.26 GiB, not the driver's 80): +0.6% and -0.2%. R035 (Mixtral at TP 2) and R054
  // (Qwen3-30B-A3B), +2.5% and +2.4% before the fused-MoE workspace vLLM keeps from its profiling
  // run was counted: +0.15% and -0.8%. R009 (Gemma 3 12B), +2.8% before its entry held the
  // vision tower: -0.01%.
  CHECK(proof_ids_beyond(figures.available_errors, 0.03) == ProofIds{"R100", "R101"});
  CHECK(proof_ids_beyond(figures.available_errors, 0.02, true).empty());
  CHECK(figures.available_errors.size() == 34);

  // (4) zero false "fits": met. gpt-oss-120b's two refusals (R073 on 0.10, R074 on ~0.11) are
  // predicted not to start: the sort's warm-up (39 B x 1,024 x 201,088 = 7.48 GiB; 4.4 GiB more
  // than the 16 B kvplan charged every release before, which is why both were left unanswered)
  // leaves -2.72 GiB where vLLM found -2.14 (R073, its 65.97 GiB given), and 1.52 GiB where it
  // found 1.71, too little for the 131,072-token default (R074).
  CHECK(figures.false_fit_ids.empty());
  CHECK(figures.unanswered_ids.empty());
  CHECK(figures.refusals_checked == 2);
}
