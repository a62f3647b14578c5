#include "engines/vllm/section.h"

#include <cstdint>

#include <fmt/format.h>

#include "kvplan/units.h"
#include "reports/fields.h"
#include "reports/section.h"

namespace kvplan {

namespace {

std::string gib(std::int64_t bytes) { return format_gib(bytes); }
std::string gib(std::uint64_t bytes) { return format_gib(static_cast<std::int64_t>(bytes)); }

std::string group_text(const VllmGroup& group) {
  std::string kind(to_string(group.kind));
  if (group.window) kind += fmt::format("({})", group.window);
  return fmt::format("{} {}{}, {}-token blocks, {} a request", group.layers, kind,
                     group.padding_layers ? fmt::format(" + {} padding", group.padding_layers) : "", group.block_size,
                     group.blocks_per_request);
}

/// "6 groups: 5 x [8 sliding(1024), ...]; 1 x [8 full, ...]": alike groups counted once.
std::string groups_text(const std::vector<VllmGroup>& groups) {
  std::string out = fmt::format("{} group{}:", groups.size(), groups.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < groups.size();) {
    std::size_t same = i + 1;
    const auto alike = [](const VllmGroup& a, const VllmGroup& b) {
      return a.kind == b.kind && a.window == b.window && a.layers == b.layers && a.padding_layers == b.padding_layers &&
             a.block_size == b.block_size && a.blocks_per_request == b.blocks_per_request;
    };
    while (same < groups.size() && alike(groups[same], groups[i])) ++same;
    out += fmt::format("{} {} x [{}]", i == 0 ? "" : ";", same - i, group_text(groups[i]));
    i = same;
  }
  return out;
}

}  // namespace

nlohmann::ordered_json vllm_result_to_json(const VllmResult& r) {
  nlohmann::ordered_json out;
  out["tensor_parallel"] = r.tensor_parallel;
  out["pipeline_parallel"] = r.pipeline_parallel;
  out["decode_context_parallel"] = r.decode_context_parallel;
  out["dtype"] = r.dtype;
  out["speculative"] = r.speculative ? nlohmann::ordered_json{{"method", r.speculative->method},
                                                              {"num_speculative_tokens", r.speculative->num_speculative_tokens},
                                                              {"draft_layers", r.draft_layers},
                                                              {"draft_model", r.speculative->draft ? nlohmann::ordered_json(r.speculative->draft->spec.id) : nlohmann::ordered_json(nullptr)}}
                                     : nlohmann::ordered_json(nullptr);
  out["max_model_len"] = r.max_model_len;
  out["max_num_batched_tokens"] = r.max_num_batched_tokens;
  out["max_num_seqs"] = r.max_num_seqs;
  out["kv_cache_dtype"] = r.kv_dtype;
  out["kv_bytes_per_token"] = r.kv_bytes_per_token;
  const VllmBudget& b = r.budget;
  out["budget"] = {{"total_bytes", b.total},
                   {"total_is_cuda_visible", b.total_is_cuda_visible},
                   {"requested_bytes", b.requested},
                   {"from_kv_cache_memory", b.from_kv_cache_memory},
                   {"weights_bytes", b.weights},
                   {"rotary_tables_bytes", b.rotary_tables},
                   {"mxfp4_padding_bytes", b.mxfp4_padding},
                   {"draft_weights_bytes", b.draft_weights},
                   {"activation_estimate_bytes", b.activation},
                   {"sampler", std::string(to_string(b.sampler))},
                   {"moe_workspace_estimate_bytes", b.moe_workspace},
                   {"non_torch_estimate_bytes", b.non_torch},
                   {"cuda_graphs_estimate_bytes", b.cuda_graphs},
                   {"cuda_graphs_subtracted", b.cuda_graphs_subtracted},
                   {"available_bytes", b.available}};
  out["page_bytes"] = r.page_bytes;
  out["layers_per_block"] = r.layers_per_block;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const VllmGroup& g : r.groups)
    groups.push_back({{"kind", std::string(to_string(g.kind))},
                      {"window", g.window},
                      {"layers", g.layers},
                      {"padding_layers", g.padding_layers},
                      {"block_size", g.block_size},
                      {"blocks_per_request", g.blocks_per_request}});
  out["groups"] = groups;
  out["num_blocks"] = r.num_blocks;
  out["blocks_per_request"] = r.blocks_per_request;
  out["max_concurrency"] = r.max_concurrency();
  out["gpu_kv_cache_tokens"] = r.gpu_kv_cache_tokens;
  out["cache_bytes"] = r.cache_bytes;
  out["request_bytes"] = r.request_bytes;
  out["starts"] = r.starts;
  out["estimated_max_model_len"] = json_or_null(r.estimated_max_model_len);
  out["max_model_len_auto"] = r.auto_fit == VllmAutoFit::off
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json{{"bound", std::string(to_string(r.auto_fit))},
                                                           {"derived_max_model_len", r.auto_fit_cap},
                                                           {"chosen", r.auto_fit == VllmAutoFit::nothing_fits
                                                                          ? nlohmann::ordered_json(nullptr)
                                                                          : nlohmann::ordered_json(r.max_model_len)}};
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const VllmStage& st : r.stages)
    stages.push_back({{"stage", st.stage},
                      {"gpu", st.gpu},
                      {"first_layer", st.first_layer},
                      {"layers", st.layers},
                      {"embedding", st.embedding},
                      {"lm_head", st.lm_head},
                      {"weights_bytes", st.weights},
                      {"kv_bytes_per_token", st.kv_bytes_per_token},
                      {"block_bytes", st.block_bytes},
                      {"requested_bytes", st.requested},
                      {"available_bytes", st.available},
                      {"num_blocks", st.num_blocks == UINT64_MAX ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(st.num_blocks)},
                      {"request_bytes", st.request_bytes}});
  out["stages"] = stages;
  out["decisive_stage"] = r.decisive_stage;
  out["rules"] = r.rules;
  return out;
}

void write_vllm_section(const std::vector<const VllmResult*>& results, EngineSection& section) {
  section.json_key = "vllm";
  section.engine = "vLLM V1";
  std::vector<std::string>& lines = section.lines;
  lines.push_back("vLLM (V1 engine): what it allocates for each row, per GPU; its log lines as it prints them:");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const VllmResult& r = *results[i];
    section.rows.push_back(vllm_result_to_json(r));
    const VllmBudget& b = r.budget;
    lines.push_back(fmt::format("Row {}: -tp {}{}{}, --max-model-len {}, --kv-cache-dtype {}, max_num_batched_tokens {}, "
                                "max_num_seqs {}",
                                i + 1, r.tensor_parallel,
                                r.decode_context_parallel > 1 ? fmt::format(" -dcp {}", r.decode_context_parallel) : "",
                                r.pipeline_parallel > 1 ? fmt::format(" -pp {} --dtype {}", r.pipeline_parallel, r.dtype) : "",
                                format_thousands(r.max_model_len), r.kv_dtype, r.max_num_batched_tokens, r.max_num_seqs));
    if (r.speculative)
      lines.push_back(fmt::format("  Speculative decoding: {}, {} token{} a step; {} draft layer{} in the KV cache",
                                  r.speculative->method, r.speculative->num_speculative_tokens,
                                  r.speculative->num_speculative_tokens == 1 ? "" : "s", r.draft_layers,
                                  r.draft_layers == 1 ? "" : "s"));
    if (r.pipeline_parallel > 1)
      for (const VllmStage& st : r.stages)
        lines.push_back(fmt::format(
            "  Stage {} ({}, layers {}-{}{}{}): weights ~{}, Available KV cache memory {}, {} blocks of {} B{}", st.stage,
            st.gpu, st.first_layer, st.first_layer + st.layers - (st.layers ? 1 : 0), st.embedding ? ", embeddings" : "",
            st.lm_head ? ", output head" : "", gib(st.weights), gib(st.available),
            st.num_blocks == UINT64_MAX ? std::string("no") : format_thousands(st.num_blocks), format_thousands(st.block_bytes),
            st.stage == r.decisive_stage ? " (the fewest: every stage gets this many)" : ""));
    if (b.from_kv_cache_memory)
      lines.push_back(fmt::format("  Available KV cache memory: {} (--kv-cache-memory)", gib(b.available)));
    else
      lines.push_back(fmt::format("  Available KV cache memory: {} (ESTIMATE: {} budget - weights {} - activation ~{} - "
                                  "non-torch ~{}{})",
                                  gib(b.available), gib(b.requested), gib(b.weights), gib(b.activation), gib(b.non_torch),
                                  b.cuda_graphs_subtracted ? " - CUDA graphs ~" + gib(b.cuda_graphs) : ""));
    lines.push_back(fmt::format("  {}; a page {} B", groups_text(r.groups), format_thousands(r.page_bytes)));
    lines.push_back(fmt::format("  GPU KV cache size: {} tokens ({} blocks)", format_thousands(r.gpu_kv_cache_tokens),
                                format_thousands(r.num_blocks)));
    lines.push_back(fmt::format("  Maximum concurrency for {} tokens per request: {:.2f}x",
                                format_thousands(r.max_model_len), r.max_concurrency()));
    // As vLLM logs its choice (_auto_fit_max_model_len).
    if (r.auto_fit == VllmAutoFit::model_max)
      lines.push_back(fmt::format("  Auto-fit max_model_len: full model context length {} fits in available GPU memory",
                                  r.auto_fit_cap));
    else if (r.auto_fit == VllmAutoFit::memory)
      lines.push_back(fmt::format("  Auto-fit max_model_len: reduced from {} to {} to fit in available GPU memory ({} "
                                  "available for KV cache)",
                                  r.auto_fit_cap, r.max_model_len, gib(r.stages[r.decisive_stage].available)));
    if (r.auto_fit == VllmAutoFit::nothing_fits)
      lines.push_back("  vLLM would not start: Cannot auto-fit max_model_len: not enough GPU memory available to serve "
                      "even a single token");
    else if (!r.starts)
      lines.push_back(b.available <= 0
                          ? std::string("  vLLM would not start: no available memory for the cache blocks")
                          : fmt::format("  vLLM would not start: one request of {} tokens needs {}; the largest that fits "
                                        "is {} tokens",
                                        format_thousands(r.max_model_len), gib(r.request_bytes),
                                        format_thousands(r.estimated_max_model_len.value_or(0))));
    lines.push_back("  rules applied:");
    for (const std::string& rule : r.rules) lines.push_back("    - " + rule);
  }
}

}  // namespace kvplan
