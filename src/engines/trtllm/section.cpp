#include "engines/trtllm/section.h"

#include <fmt/format.h>

#include "kvplan/units.h"

namespace kvplan {

namespace {

std::string gib(std::uint64_t bytes) { return format_gib(static_cast<std::int64_t>(bytes)); }

}  // namespace

nlohmann::ordered_json trtllm_result_to_json(const TrtllmResult& r) {
  nlohmann::ordered_json out;
  out["version_rules"] = std::string(to_string(r.version));
  out["tp_size"] = r.tp;
  out["pp_size"] = r.pp;
  out["max_seq_len"] = r.max_seq_len;
  out["max_batch_size"] = r.max_batch_size;
  out["max_num_tokens"] = r.max_num_tokens;
  out["tokens_per_block"] = r.tokens_per_block;
  out["kv_cache_dtype"] = r.kv_dtype;
  out["dtype_supported"] = r.dtype_supported;
  out["mla"] = r.mla;
  const TrtllmBudget& b = r.budget;
  out["budget"] = {{"cuda_total_bytes", b.cuda_total},
                   {"cuda_total_known", b.cuda_total_known},
                   {"weights_bytes", b.weights},
                   {"activation_estimate_bytes", b.activation},
                   {"non_torch_estimate_bytes", b.non_torch},
                   {"free_memory_bytes", b.free_memory},
                   {"free_memory_given", b.measured},
                   {"free_gpu_memory_fraction", b.fraction},
                   {"fraction_given", b.fraction_given},
                   {"kv_budget_bytes", b.kv_budget}};
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const TrtllmStage& st : r.stages)
    stages.push_back({{"stage", st.stage},
                      {"first_layer", st.first_layer},
                      {"layers", st.layers},
                      {"weights_bytes", st.weights},
                      {"estimate_bytes_per_token", st.estimate_bytes_per_token},
                      {"bytes_per_token", st.bytes_per_token},
                      {"max_tokens", st.max_tokens}});
  out["stages"] = stages;
  nlohmann::ordered_json windows = nlohmann::ordered_json::array();
  for (const TrtllmWindow& w : r.windows)
    windows.push_back({{"window", w.window},
                       {"layers", w.layers},
                       {"bytes_per_token", w.bytes_per_token},
                       {"pool_bytes_per_token", w.pool_bytes_per_token},
                       {"blocks", w.blocks},
                       {"blocks_per_sequence", w.blocks_per_sequence}});
  out["windows"] = windows;
  out["vswa"] = r.vswa;
  out["creator_max_tokens"] = r.creator_max_tokens;
  out["max_tokens"] = r.max_tokens;
  out["blocks"] = r.blocks;
  out["tokens"] = r.tokens;
  out["pool_bytes"] = r.pool_bytes;
  out["max_seq_len_bound"] = r.max_seq_len_bound;
  out["starts"] = r.starts;
  out["refusal"] = r.refusal.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.refusal);
  out["log_lines"] = r.log_lines;
  out["rules"] = r.rules;
  out["assumptions"] = r.assumptions;
  return out;
}

void write_trtllm_section(const std::vector<const TrtllmResult*>& results, EngineSection& section) {
  section.json_key = "trtllm";
  section.engine = "TensorRT-LLM";
  std::vector<std::string>& lines = section.lines;
  lines.push_back("TensorRT-LLM: what it allocates for each row, per GPU; its log lines as it prints them:");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const TrtllmResult& r = *results[i];
    section.rows.push_back(trtllm_result_to_json(r));
    const TrtllmBudget& b = r.budget;
    lines.push_back(fmt::format("Row {}: --tp_size {} --pp_size {} --max_seq_len {} --tokens_per_block {}, KV dtype {}, "
                                "free_gpu_memory_fraction {}",
                                i + 1, r.tp, r.pp, format_thousands(r.max_seq_len), r.tokens_per_block, r.kv_dtype,
                                b.fraction));
    lines.push_back(fmt::format("  free memory {}{}, x the fraction: {} for the KV cache", gib(b.free_memory),
                                b.measured ? "" : " (ESTIMATE)", gib(b.kv_budget)));
    for (const std::string& line : r.log_lines) lines.push_back("  " + line);
    if (!r.refusal.empty()) lines.push_back("  TensorRT-LLM would not start: " + r.refusal);
    lines.push_back("  rules applied:");
    for (const std::string& rule : r.rules) lines.push_back("    - " + rule);
    for (const std::string& assumption : r.assumptions) lines.push_back("    - assumed: " + assumption);
  }
}

}  // namespace kvplan
