// vLLM's startup figures beside the vLLM profile. Two plans: one with kvplan's own estimates of
// what vLLM measures (activation peak, non-torch memory, CUDA graphs), to show how far each
// estimate is from the measurement; and one fed the log's own "Available KV cache memory" (at both
// ends of its printed rounding) as --kv-cache-memory, where the paging rules are exact, so the
// printed token capacity and concurrency must fall between the two.

#include "explain/explain_engines.h"

#include <cmath>

#include <fmt/format.h>

#include "engines/core/request_texts.h"
#include "engines/vllm/rules.h"
#include "explain/explain_parts.h"
#include "kvplan/error.h"
#include "kvplan/plan.h"
#include "kvplan/units.h"

namespace kvplan {

namespace {

using explain_parts::count_row;
using explain_parts::add_row;
using explain_parts::LogRequest;
using explain_parts::memory_row;
using logs::LogFact;

bool truthy(std::string_view value) { return value == "True" || value == "true" || value == "1"; }

/// The settings the log recovered, as the vLLM profile's texts (vLLM's own flag names).
LogRequest vllm_request(const logs::EngineLog& log, Explanation& out) {
  LogRequest req(log, "vllm", out);
  const std::string max_len = req.value("max_model_len");
  if (!max_len.empty()) {
    req.texts.contexts.push_back(max_len);
    req.command += " --max-model-len " + max_len;
  }
  std::string kv = req.value("kv_cache_dtype");
  if (!kv.empty()) {
    req.texts.kv_dtypes.push_back(kv);
    if (kv != "auto") req.command += " --kv-cache-dtype " + kv;
  }
  if (const std::string util = req.value("gpu_memory_utilization"); !util.empty()) {
    req.texts.utilization = util;
    req.command += " --gpu-memory-utilization " + util;
  } else {
    out.notes.push_back("gpu_memory_utilization not in the log: vLLM's default 0.9");
  }
  if (const std::string tp = req.value("tensor_parallel_size"); !tp.empty() && tp != "1")
    req.option("tensor-parallel-size", tp, "-tp");
  if (const std::string pp = req.value("pipeline_parallel_size"); !pp.empty() && pp != "1")
    req.option("pipeline-parallel-size", pp, "-pp");
  // Decode context parallelism splits each request's tokens over the TP ranks: the capacity and
  // concurrency vLLM prints count it, so the plan must too.
  if (const std::string dcp = req.value("decode_context_parallel_size"); !dcp.empty() && dcp != "1")
    req.option("decode-context-parallel-size", dcp, "-dcp");
  // Speculative decoding caches the draft's layers beside the target's: the plan takes the method
  // and token count vLLM's config line printed (the vLLM profile refuses what it does not derive).
  if (!req.value("speculative_config").empty())
    throw Error("the log's speculative_config could not be read: kvplan cannot plan the run without it; "
                "plan it with --speculative-config",
                ExitCode::unsupported_architecture);
  if (const std::string method = req.value("speculative_method"); !method.empty()) {
    // A draft checkpoint of its own (EAGLE-3 head, draft model): the log names it, but it is on the
    // serving machine, not read here.
    if (method == "eagle3" || method == "draft_model" || method == "eagle")
      throw Error(fmt::format("the log's speculative decoding ({}) loads a draft checkpoint kvplan explain does not read: "
                              "plan the run with --speculative-config naming the draft's folder",
                              method),
                  ExitCode::unsupported_architecture);
    const std::string json =
        fmt::format(R"({{"method": "{}", "num_speculative_tokens": {}}})", method, req.value("num_speculative_tokens"));
    req.texts.engine_options.push_back({"speculative-config", json, "--speculative-config"});
    req.command += fmt::format(" --speculative-config '{}'", json);  // as a shell takes it
  }
  if (const std::string version = req.value("vllm_version"); !version.empty()) {
    try {
      (void)parse_vllm_version(version, "vllm-version");
      req.option("vllm-version", version, "--vllm-version");
    } catch (const Error&) {
      out.notes.push_back(fmt::format("vLLM {}: kvplan has the rules of 0.10 and later; compared with the latest", version));
    }
  }
  if (truthy(req.value("enable_prefix_caching"))) req.flag("enable-prefix-caching", "--enable-prefix-caching");
  // FlashInfer's sampler ran (its line): its warm-up is smaller than the sort kvplan takes otherwise
  // for releases before 0.17.
  if (req.value("flashinfer_sampler") == "1") req.option("use-flashinfer-sampler", "1", "--use-flashinfer-sampler");
  const std::string block = req.value("block_size");
  if (!block.empty() && block != "None") req.option("block-size", block, "--block-size");
  req.option("max-num-seqs", req.value("max_num_seqs"), "--max-num-seqs");
  req.option("max-num-batched-tokens", req.value("max_num_batched_tokens"), "--max-num-batched-tokens");
  return req;
}

/// A checkpoint stored at a float dtype (not quantized): vLLM's dtype decides its weights' width.
bool float_checkpoint(const ModelSpec& model) {
  const std::string_view name = model.weight_dtype->name;
  return name == "fp32" || name == "fp16" || name == "bf16";
}

/// The first figure of a name; several ranks print the same line, the first rank's is shown.
const LogFact* first(const logs::EngineLog& log, std::string_view name) { return log.figure(name); }

/// vLLM prints concurrency with 2 decimals: x in hundredths, rounded; bounded so that a figure
/// from an absurd log cannot overflow the conversion.
std::uint64_t hundredths(double x) {
  if (!(x > 0)) return 0;
  if (x > 1e15) return 100'000'000'000'000'000u;
  return static_cast<std::uint64_t>(std::llround(x * 100.0));
}

}  // namespace

void explain_vllm(const logs::EngineLog& log, const ModelSpec& model, const std::vector<GpuSpec>& gpus, Explanation& out) {
  LogRequest req = vllm_request(log, out);
  // The config line's dtype is the one vLLM resolved: given as --dtype where it is not the
  // checkpoint's own float dtype (a float32 checkpoint run at bfloat16, a bfloat16 one at float16).
  if (const std::string dtype = req.value("dtype");
      (dtype == "float16" || dtype == "bfloat16" || dtype == "float32") && float_checkpoint(model) &&
      dtype != dtype_torch_name(*model.weight_dtype))
    req.option("dtype", dtype, "--dtype");
  out.command = req.command;
  std::vector<GpuSpec> cards = gpus;
  const std::string tp = req.value("tensor_parallel_size");
  const std::string pp = req.value("pipeline_parallel_size");
  if (cards.size() == 1 && ((!tp.empty() && tp != "1") || (!pp.empty() && pp != "1"))) {
    // -tp N -pp M on one named card: N x M of them, as vLLM ran.
    const std::uint64_t tp_n = logs::whole_number(tp.empty() ? "1" : tp).value_or(0);
    const std::uint64_t pp_n = logs::whole_number(pp.empty() ? "1" : pp).value_or(0);
    const std::uint64_t n = tp_n <= 1024 && pp_n <= 1024 ? tp_n * pp_n : 0;
    if (n > 1 && n <= 1024) cards = std::vector<GpuSpec>(n, cards.front());  // assign() may not take its own element
  }
  const PlanRequest request = req.request(model);
  const Plan estimated = make_plan(model, cards, request);
  const Row& row = estimated.rows.front();

  // The memory vLLM measured, beside kvplan's estimates of it.
  const std::uint32_t tp_n = row.tp;
  add_row(out, memory_row("weights", "weights", {first(log, "weights")}, row.weights_bytes, false,
                                fmt::format("kvplan: {}; vLLM: what torch allocated loading them on one GPU", row.weights_rule)));
  const LogFact* activation = first(log, "activation");
  const LogFact* non_torch = first(log, "non_torch");
  add_row(out, memory_row("activation peak", "activation", {activation}, std::nullopt, false,
                                "vLLM's profiling run (torch peak memory increase); in kvplan's vLLM memory below"));
  add_row(out, memory_row("non-torch memory", "non_torch", {non_torch}, std::nullopt, false,
                                "NCCL, cuBLAS workspaces and the CUDA context's growth while profiling; in kvplan's vLLM memory below"));
  std::vector<const LogFact*> own{activation, non_torch};
  const bool graphs_subtracted = estimated.settings.overhead_rule.find("CUDA-graph") != std::string::npos;
  if (graphs_subtracted) own.push_back(first(log, "cuda_graphs_estimated"));
  add_row(out, memory_row("vLLM's own memory", "overhead", own, row.overhead_bytes, false,
                                graphs_subtracted ? "activation + non-torch + the CUDA-graph estimate, subtracted from the "
                                                    "budget from vLLM 0.21; kvplan ESTIMATES them"
                                                  : "activation + non-torch, subtracted from the budget; kvplan ESTIMATES "
                                                    "them (CUDA graphs come after the cache is sized)"));
  add_row(out, memory_row("CUDA graphs", "cuda_graphs", {first(log, "cuda_graphs")}, std::nullopt, false,
                                graphs_subtracted ? "captured after the cache is sized (the estimate above is what was subtracted)"
                                                  : "captured after the cache is sized: outside gpu_memory_utilization's budget"));
  add_row(out, memory_row("available KV memory", "available_kv", {first(log, "available_kv")},
                                row.engine.available_kv_bytes, false,
                                fmt::format("total x gpu_memory_utilization - weights{} - vLLM's own memory, per GPU; "
                                            "kvplan's differs by its estimates above",
                                            tp_n > 1 ? fmt::format(" / {}", tp_n) : std::string())));

  // Paging is exact once the available memory is known: the log's own figure, at both ends of its
  // printed rounding, must bracket the printed capacity and concurrency.
  const LogFact* available = first(log, "available_kv");
  const LogFact* tokens = first(log, "kv_cache_tokens");
  const LogFact* concurrency = first(log, "max_concurrency");
  std::optional<std::uint64_t> tokens_low, tokens_high, conc_low, conc_high;
  std::string paging_rule = "from kvplan's estimated available memory (no \"Available KV cache memory\" line)";
  if (const auto band = available ? logs::byte_band(*available) : std::nullopt) {
    const auto priced = [&](std::uint64_t bytes) {
      const EngineOption fed{"kv-cache-memory", fmt::format("{}B", bytes), "--kv-cache-memory"};
      return make_plan(model, cards, req.request(model, {fed})).rows.front();
    };
    const Row low = priced(band->low);
    const Row high = priced(band->high);
    tokens_low = low.engine.kv_cache_tokens;
    tokens_high = high.engine.kv_cache_tokens;
    if (low.engine.max_concurrency && high.engine.max_concurrency) {
      conc_low = hundredths(*low.engine.max_concurrency);
      conc_high = hundredths(*high.engine.max_concurrency);
    }
    paging_rule = fmt::format("vLLM's paging (kv_cache_utils.py) of the log's available memory ({} {} +/- half a last "
                              "digit) into blocks of {} B per token per GPU",
                              available->value, available->unit, format_thousands(row.kv_bytes_per_token));
  } else {
    tokens_low = tokens_high = row.engine.kv_cache_tokens;
    if (row.engine.max_concurrency) conc_low = conc_high = hundredths(*row.engine.max_concurrency);
  }
  Reconciled capacity = count_row("KV capacity", "kv_cache_tokens", tokens, tokens_low, tokens_high, "tokens",
                                  paging_rule + ": \"GPU KV cache size\"");
  if (!available) capacity.agreement = capacity.from.empty() ? Agreement::engine_only : Agreement::estimate;
  add_row(out, std::move(capacity));
  Reconciled conc = count_row("max concurrency", "max_concurrency", concurrency, conc_low, conc_high, "x",
                              fmt::format("blocks / the blocks one {}-token request needs", format_thousands(row.ctx)));
  if (!available) conc.agreement = conc.from.empty() ? Agreement::engine_only : Agreement::estimate;
  add_row(out, std::move(conc));
  if (const LogFact* blocks = first(log, "num_gpu_blocks")) {
    Reconciled r;
    r.component = "GPU blocks";
    r.key = "num_gpu_blocks";
    r.unit = "blocks";
    r.from.push_back(*blocks);
    r.engine = blocks->value;
    r.engine_value = logs::whole_number(blocks->value);
    r.rule = "vLLM's block count (its /metrics cache_config_info or the engine's line); x block_size = its token capacity";
    add_row(out, std::move(r));
  }
  if (const LogFact* total = first(log, "total_memory")) {
    add_row(out, memory_row("GPU memory", "total_memory", {total},
                                  cards.front().cuda_total_bytes.value_or(cards.front().memory_bytes),
                                  cards.front().cuda_total_bytes.has_value(),
                                  cards.front().cuda_total_bytes
                                      ? "the card's CUDA-visible total (torch.cuda.mem_get_info) in kvplan's catalog"
                                      : "vLLM prints the CUDA-visible total; kvplan's card is the driver's (nvidia-smi) "
                                        "total, ~0.5 GiB more"));
  }
  if (log.all("available_kv").size() > 1)
    out.notes.push_back(fmt::format("{} ranks printed \"Available KV cache memory\": the first is shown; vLLM sizes the "
                                    "cache from the smallest",
                                    log.all("available_kv").size()));
  for (const std::string& text : row.assumptions) out.notes.push_back(text);
}

}  // namespace kvplan
