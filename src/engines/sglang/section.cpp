#include "engines/sglang/section.h"

#include <fmt/format.h>

#include "kvplan/units.h"
#include "reports/fields.h"

namespace kvplan {

namespace {

std::string gib(std::uint64_t bytes) { return format_gib(static_cast<std::int64_t>(bytes)); }

std::string_view layout_name(SglangResult::Layout layout) {
  switch (layout) {
    case SglangResult::Layout::mha: return "mha";
    case SglangResult::Layout::mla: return "mla";
    case SglangResult::Layout::dsa: return "dsa";
    case SglangResult::Layout::swa: return "hybrid_swa";
    case SglangResult::Layout::mamba: return "mamba";
  }
  return "mha";
}

}  // namespace

nlohmann::ordered_json sglang_result_to_json(const SglangResult& r) {
  nlohmann::ordered_json out;
  out["tp_size"] = r.tp;
  out["pp_size"] = r.pp;
  out["context_length"] = r.context_length;
  out["kv_cache_dtype"] = r.kv_dtype;
  out["dtype_supported"] = r.dtype_supported;
  out["layout"] = std::string(layout_name(r.layout));
  out["page_size"] = r.page_size;
  out["chunked_prefill_size"] = r.chunked_prefill_size;
  const SglangBudget& b = r.budget;
  out["budget"] = {{"cuda_total_bytes", b.cuda_total},
                   {"cuda_total_known", b.cuda_total_known},
                   {"free_before_load_bytes", b.free_before_load},
                   {"free_before_load_given", b.before_measured},
                   {"free_after_load_bytes", b.free_after_load},
                   {"free_after_load_given", b.after_measured},
                   {"loaded_bytes", b.weights},
                   {"mem_fraction_static", b.mem_fraction_static},
                   {"mem_fraction_static_default", b.mfs_default},
                   {"rest_gib", b.rest_gib},
                   {"mamba_gib", b.mamba_gib},
                   {"available_bytes", b.available},
                   {"static_bytes", b.static_bytes},
                   {"headroom_bytes", b.headroom_bytes}};
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const SglangStage& st : r.stages)
    stages.push_back({{"stage", st.stage},
                      {"first_layer", st.first_layer},
                      {"layers", st.layers},
                      {"weights_bytes", st.weights},
                      {"cell_bytes", st.cell_bytes},
                      {"pool_bytes_per_token", st.pool_bytes_per_token},
                      {"mamba_bytes_per_request", st.mamba_bytes_per_request},
                      {"tokens", st.tokens}});
  out["stages"] = stages;
  out["max_total_num_tokens"] = r.max_total_num_tokens;
  out["swa_tokens"] = r.swa_tokens;
  out["mamba_slots"] = r.mamba_slots;
  out["max_running_requests"] = r.max_running_requests;
  out["req_to_token_bytes"] = r.req_to_token_bytes;
  out["k_bytes"] = r.k_bytes;
  out["v_bytes"] = r.v_bytes;
  out["kv_bytes"] = r.kv_bytes;
  out["swa_k_bytes"] = r.swa_k_bytes;
  out["swa_v_bytes"] = r.swa_v_bytes;
  out["indexer_bytes"] = r.indexer_bytes;
  out["mamba_bytes"] = r.mamba_bytes;
  out["pool_bytes"] = r.pool_bytes;
  out["speculative"] = nullptr;
  if (r.draft) {
    const SglangDraftResult& d = *r.draft;
    out["speculative"] = {{"algorithm", d.algorithm},
                          {"rules", to_string(d.era)},
                          {"draft", d.name},
                          {"draft_is_mtp", d.own_layers},
                          {"draft_layers", d.layers},
                          {"num_steps", d.num_steps},
                          {"eagle_topk", d.eagle_topk},
                          {"num_draft_tokens", d.num_draft_tokens},
                          {"slots_per_request", d.slots_per_request},
                          {"draft_weights_bytes", d.weights},
                          {"draft_weights_in_budget", d.era == SglangSpeculativeEra::inside},
                          {"draft_cell_bytes", d.cell_bytes},
                          {"scaled_cell_bytes", d.scaled_cell_bytes},
                          {"extra_tokens", d.extra_tokens},
                          {"draft_k_bytes", d.k_bytes},
                          {"draft_v_bytes", d.v_bytes},
                          {"from_headroom_bytes", d.from_headroom}};
  }
  out["starts"] = r.starts;
  out["refusal"] = r.refusal.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.refusal);
  out["log_lines"] = r.log_lines;
  out["rules"] = r.rules;
  out["assumptions"] = r.assumptions;
  return out;
}

void write_sglang_section(const std::vector<const SglangResult*>& results, EngineSection& section) {
  section.json_key = "sglang";
  section.engine = "SGLang";
  std::vector<std::string>& lines = section.lines;
  lines.push_back("SGLang (launch_server): what it allocates for each row, per GPU; its log lines as it prints them:");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const SglangResult& r = *results[i];
    section.rows.push_back(sglang_result_to_json(r));
    const SglangBudget& b = r.budget;
    lines.push_back(fmt::format("Row {}: --tp-size {} --pp-size {} --context-length {} --kv-cache-dtype {} "
                                "--mem-fraction-static {:.6g} --page-size {}",
                                i + 1, r.tp, r.pp, format_thousands(r.context_length), r.kv_dtype, b.mem_fraction_static,
                                r.page_size));
    lines.push_back(fmt::format("  free before load {}{}, after {}{}: rest {:.2f} GiB{}", gib(b.free_before_load),
                                b.before_measured ? "" : " (ESTIMATE)", gib(b.free_after_load),
                                b.after_measured ? "" : " (ESTIMATE)", b.rest_gib,
                                b.mamba_gib > 0 ? fmt::format(", {:.2f} GiB of it to the Mamba pool", b.mamba_gib) : ""));
    for (const std::string& line : r.log_lines) lines.push_back("  " + line);
    if (!r.refusal.empty()) lines.push_back("  SGLang would not start: " + r.refusal);
    lines.push_back("  rules applied:");
    for (const std::string& rule : r.rules) lines.push_back("    - " + rule);
    for (const std::string& assumption : r.assumptions) lines.push_back("    - assumed: " + assumption);
  }
}

}  // namespace kvplan
