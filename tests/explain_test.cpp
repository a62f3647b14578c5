// `kvplan explain` against real engine logs (tests/fixtures/logs/, sources in SOURCES.md): the
// settings and figures read from each, by line, and the comparison with kvplan's plan, whose
// exact figures are checked against what the engine printed or against hand arithmetic.

#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "explain/explanation.h"
#include "loaders/logs/engine_log.h"
#include "loaders/logs/line_cleanup.h"
#include "support/llamacpp_fixtures.h"
#include "support/log_fixtures.h"
#include "support/run_binary.h"
#include "support/temp_dir.h"

using namespace kvplan;
using kvplan::logs::EngineLog;
using kvplan::logs::LogFact;
using kvplan::testing::check_refused;
using kvplan::testing::ProcessResult;
using kvplan::testing::read_file;
using kvplan::testing::run_kvplan;
using kvplan::testing::source_path;

namespace {

std::string fixture_path(const std::string& name) { return kvplan::testing::log_fixture_path(name); }
EngineLog read_fixture(const std::string& name) { return kvplan::testing::read_log_fixture(name); }
std::string setting(const EngineLog& log, const char* name) { return kvplan::testing::setting_at(log, name); }
std::string figure(const EngineLog& log, const char* name, const char* device = "") {
  return kvplan::testing::figure_at(log, name, device);
}
const Reconciled& row(const Explanation& e, const std::string& key) { return kvplan::testing::row_of(e, key); }

}  // namespace

TEST_CASE("line cleanup: colours, timestamps, process tags and logger prefixes", "[explain]") {
  const std::string raw = "2026-04-22T01:47:34.000033Z (EngineCore pid=243) \x1b[32mINFO\x1b[0m 04-22 01:47:55 "
                          "[v1/worker/gpu_worker.py:436] Available KV cache memory: 58.11 GiB\r";
  const std::string clean = logs::strip_control(raw);
  const logs::CleanLine parts = logs::split_prefix(clean);
  CHECK(parts.body == "Available KV cache memory: 58.11 GiB");
  CHECK(parts.source == "EngineCore");
  CHECK(logs::split_prefix("[2025-10-16 09:06:22 TP1] Memory pool end. avail mem=11.87 GB").source == "TP1");
  CHECK(logs::split_prefix("Aug 08 23:02:37 j-360 ollama[1617]: time=2025-08-08T23:02:37 level=INFO").body ==
        "time=2025-08-08T23:02:37 level=INFO");
  CHECK(logs::split_prefix("[rank1]: ValueError: No available memory").source == "rank1");
  // A quoted value the line cuts off is not a value.
  CHECK(!logs::keyed_value("model='Qwe", "model"));
  CHECK(logs::keyed_value("served_model_name=x, model='Qwen2'", "model").value_or("") == "Qwen2");
}

TEST_CASE("printed memory figures as byte bands", "[explain]") {
  LogFact fact;
  fact.value = "58.11";
  fact.unit = "GiB";
  const auto band = logs::byte_band(fact);
  REQUIRE(band);
  // 58.11 GiB = 5,811 x 2^30 / 100 = 62,395,137,392.64 B; half a last digit either side:
  // 11,621 x 2^30 / 200 = 62,389,768,683.52 (down) and 11,623 x 2^30 / 200 = 62,400,506,101.76 (up).
  CHECK(band->mid == 62'395'137'393u);
  CHECK(band->low == 62'389'768'683u);
  CHECK(band->high == 62'400'506'102u);
  fact.value = "3072.00";
  fact.unit = "MiB";
  // 3072.00 MiB = 3,221,225,472 B; +/- 0.005 MiB = 5,242.88 B.
  CHECK(logs::byte_band(fact)->low == 3'221'220'229u);
  CHECK(logs::byte_band(fact)->high == 3'221'230'715u);
  fact.unit = "tokens";
  CHECK(!logs::byte_band(fact));
  CHECK(logs::whole_number("476,016") == 476'016u);
  CHECK(!logs::parse_decimal("1.2.3"));
  CHECK(!logs::parse_decimal("99999999999999999999"));
}

TEST_CASE("vLLM 0.19 log (llm-d-planner, Llama 3.1 8B, H100, max_model_len 16384)", "[explain]") {
  const EngineLog log = read_fixture("vllm-0.19-llama3.1-8b-h100.log");
  CHECK(log.engine == logs::LogEngine::vllm);
  CHECK(log.lines == 46);
  CHECK(setting(log, "model") == "meta-llama/Llama-3.1-8B-Instruct@7");
  CHECK(setting(log, "max_model_len") == "16384@7");
  CHECK(setting(log, "gpu_memory_utilization") == "0.95@7");
  CHECK(setting(log, "enable_prefix_caching") == "False@7");
  CHECK(setting(log, "max_num_batched_tokens") == "8192@16");
  CHECK(setting(log, "max_num_seqs") == "1024@17");
  CHECK(setting(log, "tensor_parallel_size") == "1@18");
  CHECK(setting(log, "kv_cache_dtype") == "auto@18");
  CHECK(setting(log, "vllm_version") == "0.19.0@18");
  CHECK(figure(log, "total_memory") == "79.19 GiB@21");
  CHECK(figure(log, "weights") == "14.99 GiB@29");
  CHECK(figure(log, "activation") == "1.89 GiB@33");
  CHECK(figure(log, "non_torch") == "0.25 GiB@33");
  CHECK(figure(log, "available_kv") == "58.11 GiB@34");
  CHECK(figure(log, "kv_cache_tokens") == "476,016 tokens@36");
  CHECK(figure(log, "max_concurrency") == "29.05 x@37");
  CHECK(figure(log, "cuda_graphs") == "0.91 GiB@42");
  CHECK(figure(log, "cuda_graphs_estimated") == "0.84 GiB@43");
  CHECK(figure(log, "requested_memory") == "75.23 GiB@44");
  CHECK(log.figure("available_kv")->text.find("Available KV cache memory: 58.11 GiB") != std::string::npos);

  ExplainInputs inputs;
  inputs.gpu = "h100";
  const Explanation e = explain_log(log, inputs);
  CHECK(e.runtime == "vllm");
  CHECK(e.model == "llama3.1-8b");  // the log's HF id is a catalog alias
  CHECK(e.command ==
        "kvplan --runtime vllm --model llama3.1-8b --gpu h100 --max-model-len 16384 --gpu-memory-utilization 0.95 "
        "--vllm-version 0.19.0 --max-num-seqs 1024 --max-num-batched-tokens 8192");
  // Paging is exact: 58.11 GiB +/- 0.005 of 2,097,152 B blocks (16 tokens x 32 layers x 8 heads x
  // 256 x 2 B) is 29,750 - 29,755 blocks; vLLM 0.19 prints int(blocks / 1,024 per request x 16,384).
  const Reconciled& tokens = row(e, "kv_cache_tokens");
  CHECK(tokens.agreement == Agreement::exact);
  CHECK(tokens.engine_value == 476'016u);
  const Reconciled& conc = row(e, "max_concurrency");
  CHECK(conc.agreement == Agreement::exact);
  CHECK(conc.engine_value == 2905u);
  // The weights: the checkpoint's 16,060,522,496 B and vLLM's rotary table (131,072 x 128 x 2 B =
  // 33,554,432 B): 16,094,076,928 B (14.99 GiB) against torch's 14.99 GiB (16,095,270,666 B):
  // 1,193,738 B short, "-0.00 GiB" (-0.03 GiB before the table was counted).
  const Reconciled& weights = row(e, "weights");
  CHECK(weights.agreement == Agreement::estimate);
  CHECK(weights.kvplan_value == 16'094'076'928u);
  CHECK(weights.engine == "14.99 GiB");
  CHECK(weights.kvplan == "14.99 GiB");
  CHECK(weights.difference == "-0.00 GiB");
  CHECK(row(e, "available_kv").agreement == Agreement::estimate);
  CHECK(row(e, "activation").agreement == Agreement::engine_only);
  CHECK(e.not_found.empty());
}

TEST_CASE("the same vLLM log behind docker timestamps, colours and CRs reads the same", "[explain]") {
  const EngineLog clean = read_fixture("vllm-0.19-llama3.1-8b-h100.log");
  const EngineLog noisy = read_fixture("vllm-0.19-llama3.1-8b-h100-docker-ansi.log");
  REQUIRE(clean.figures.size() == noisy.figures.size());
  REQUIRE(clean.settings.size() == noisy.settings.size());
  for (std::size_t i = 0; i < clean.figures.size(); ++i) {
    CHECK(clean.figures[i].name == noisy.figures[i].name);
    CHECK(clean.figures[i].value == noisy.figures[i].value);
    CHECK(clean.figures[i].line == noisy.figures[i].line);
  }
  for (std::size_t i = 0; i < clean.settings.size(); ++i) CHECK(clean.settings[i].value == noisy.settings[i].value);
  // The text kept has no colour codes and no CR.
  CHECK(noisy.figure("available_kv")->text.find('\x1b') == std::string::npos);
  CHECK(noisy.figure("available_kv")->text.find('\r') == std::string::npos);
}

TEST_CASE("vLLM with two interleaved tensor-parallel ranks (Llama 3.3 70B FP8, TP 2)", "[explain]") {
  const EngineLog log = read_fixture("vllm-0.19-llama3.3-70b-fp8-tp2.log");
  CHECK(setting(log, "tensor_parallel_size") == "2@1");
  CHECK(setting(log, "quantization") == "compressed-tensors@2");
  CHECK(figure(log, "weights") == "33.88 GiB@11");
  CHECK(figure(log, "activation", "Worker_TP1") == "1.96 GiB@14");
  CHECK(figure(log, "activation", "Worker_TP0") == "1.96 GiB@19");
  CHECK(figure(log, "non_torch", "Worker_TP0") == "2.1 GiB@19");
  CHECK(figure(log, "available_kv") == "37.28 GiB@20");
  CHECK(figure(log, "kv_cache_tokens") == "244,304 tokens@24");
  CHECK(figure(log, "max_concurrency") == "29.82 x@25");
  CHECK(log.all("cuda_graphs_estimated").size() == 2);

  // The FP8 checkpoint is not in the catalog; the BF16 model has the same cache. Per GPU: 80 layers
  // x 4 KV heads x 256 x 2 B = 163,840 B a token; the printed capacity must follow exactly.
  ExplainInputs inputs;
  inputs.model = "llama3.3-70b";
  inputs.gpu = "h100";
  const Explanation e = explain_log(log, inputs);
  CHECK(e.notes.empty() == false);
  CHECK(row(e, "kv_cache_tokens").agreement == Agreement::exact);
  CHECK(row(e, "max_concurrency").agreement == Agreement::exact);
  CHECK(e.command.find("-tp 2") != std::string::npos);
}

TEST_CASE("vLLM 0.10 log hard-wrapped at ~140 columns: the wrapped lines are joined back", "[explain]") {
  const EngineLog log = read_fixture("vllm-0.10-qwen2-7b-a100-wrapped.log");
  CHECK(log.engine == logs::LogEngine::vllm);
  // Line 3 ends inside 'Qwe' + line 4 'n2-7B-Instruct', ... 'gpu_memory_utilization': 0.25}.
  CHECK(setting(log, "model") == "Qwen2-7B-Instruct@3");
  CHECK(setting(log, "gpu_memory_utilization") == "0.25@3");
  CHECK(setting(log, "vllm_version") == "0.10.1.1@2");
  CHECK(setting(log, "max_model_len") == "16384@3");
  // The config line (11) spans lines 11-21; "tensor_parallel_si" + "ze=1" is read whole.
  CHECK(setting(log, "tensor_parallel_size") == "1@11");
  CHECK(setting(log, "enable_prefix_caching") == "True@11");
  CHECK(setting(log, "max_num_batched_tokens") == "2048@8");
  CHECK(figure(log, "weights") == "14.2488 GiB@31");
  CHECK(figure(log, "available_kv") == "5.01 GiB@42");
  CHECK(figure(log, "kv_cache_tokens") == "93,872 tokens@43");
  CHECK(figure(log, "max_concurrency") == "5.73 x@44");
  CHECK(figure(log, "cuda_graphs") == "0.50 GiB@46");
  CHECK(figure(log, "num_gpu_blocks") == "5867 blocks@48");

  // Qwen2-7B-Instruct is in the catalog (issue #12): the log's model name finds it. The log names
  // no card, so nothing is priced until --gpu gives one; the figures are still listed.
  const Explanation unnamed = explain_log(log, {});
  CHECK(unnamed.model == "qwen2-7b-instruct");
  CHECK(unnamed.rows.empty());
  REQUIRE(!unnamed.notes.empty());
  CHECK(unnamed.notes.front().find("--gpu") != std::string::npos);
  ExplainInputs card_only;
  card_only.gpu = "a100-80g";
  CHECK(row(explain_log(log, card_only), "kv_cache_tokens").agreement == Agreement::exact);
  // Qwen2.5-7B has Qwen2-7B's cache (28 layers x 4 KV heads x 128): 57,344 B a token.
  ExplainInputs inputs;
  inputs.model = "qwen2.5-7b";
  inputs.gpu = "a100-80g";
  const Explanation e = explain_log(log, inputs);
  CHECK(row(e, "kv_cache_tokens").agreement == Agreement::exact);
  CHECK(row(e, "max_concurrency").agreement == Agreement::exact);
  // The DEBUG profiling line is not in this log: no activation row, and kvplan's own estimate of
  // vLLM's memory stands alone.
  for (const Reconciled& r : e.rows) CHECK(r.key != "activation");
  CHECK(row(e, "overhead").agreement == Agreement::not_in_log);
  CHECK(e.not_found.size() == 1);
}

TEST_CASE("vLLM's /metrics cache_config_info", "[explain]") {
  const EngineLog log = read_fixture("vllm-metrics-cache-config-info.txt");
  CHECK(log.engine == logs::LogEngine::vllm);
  CHECK(figure(log, "num_gpu_blocks") == "573 blocks@1");
  CHECK(setting(log, "block_size") == "16@1");
  CHECK(setting(log, "gpu_memory_utilization") == "0.82@1");
  CHECK(setting(log, "enable_prefix_caching") == "True@1");
  CHECK(setting(log, "kv_cache_dtype") == "auto@1");
}

TEST_CASE("llama-server b6699 log (gpt-oss-20b, RTX 3070, 131072 cells, iSWA)", "[explain]") {
  const EngineLog log = read_fixture("llama-server-b6699-gpt-oss-20b-rtx3070.log");
  CHECK(log.engine == logs::LogEngine::llamacpp);
  CHECK(setting(log, "gpu") == "NVIDIA GeForce RTX 3070@4");
  CHECK(setting(log, "model_file") == "gpt-oss-20b-mxfp4.gguf@13");
  CHECK(setting(log, "model_name") == "Gpt Oss 20b@51");
  CHECK(setting(log, "n_ctx") == "131072@65");
  CHECK(setting(log, "n_seq_max") == "1@64");
  CHECK(setting(log, "flash_attn") == "enabled@70");
  CHECK(setting(log, "cache_type_k") == "f16@77");
  CHECK(setting(log, "n_gpu_layers") == "25@59");
  CHECK(figure(log, "device_free") == "7672 MiB@14");
  CHECK(figure(log, "file_size") == "11.27 GiB@28");
  CHECK(figure(log, "model_buffer", "CUDA0") == "1242.03 MiB@60");
  CHECK(figure(log, "model_buffer", "CPU_Mapped") == "10949.33 MiB@61");
  CHECK(log.all("kv_cache").size() == 2);
  CHECK(figure(log, "kv_cache") == "3072.00 MiB@77");
  CHECK(figure(log, "compute_buffer", "CUDA0") == "456.98 MiB@81");
  CHECK(figure(log, "compute_buffer", "CUDA_Host") == "263.15 MiB@82");

  // The catalog's gpt-oss-20b (matched from general.name), on the catalog's RTX 3070.
  const Explanation e = explain_log(log, {});
  CHECK(e.model == "gpt-oss-20b");
  CHECK(e.gpu == "rtx3070");
  CHECK(e.command == "kvplan --runtime llama.cpp --model gpt-oss-20b --gpu rtx3070 -c 131072 -np 1 -fa on");
  // A card the catalog lacks (the same log with its name changed): a card of the log's free memory.
  std::string renamed = read_file(fixture_path("llama-server-b6699-gpt-oss-20b-rtx3070.log"));
  const std::string card = "NVIDIA GeForce RTX 3070,";
  REQUIRE(renamed.find(card) != std::string::npos);
  renamed.replace(renamed.find(card), card.size(), "NVIDIA GeForce RTX 3070 Mobile,");
  const Explanation unknown_card = explain_log(logs::read_engine_log(renamed), {});
  CHECK(unknown_card.gpu == "7672MiB");
  CHECK(unknown_card.command == "kvplan --runtime llama.cpp --model gpt-oss-20b --gpu 7672MiB -c 131072 -np 1 -fa on");
  // 12 full layers x 131,072 cells + 12 SWA layers x 768 cells (128 + 512 ubatch, padded to 256),
  // each 8 heads x 64 x 2 (K, V) x 2 B = 2,048 B a cell and layer: 3,221,225,472 + 18,874,368 B.
  const Reconciled& kv = row(e, "kv_cache");
  CHECK(kv.kvplan_value == 3'240'099'840u);
  CHECK(kv.agreement == Agreement::exact);
  CHECK(kv.engine == "3090.00 MiB");
  CHECK(kv.kvplan == "3090.00 MiB");
  CHECK(row(e, "overhead").agreement == Agreement::estimate);
}

TEST_CASE("llama.cpp v0.4.0 log of deepseek4: the compressed caches and the compressor states", "[explain]") {
  const EngineLog log = read_fixture("llamacpp-v0.4.0-deepseek4-fixture.log");
  CHECK(log.engine == logs::LogEngine::llamacpp);
  // Five llama_kv_cache lines (the raw iSWA pair, CSA, HCA, LID) and three comp-state lines.
  CHECK(log.all("kv_cache").size() == 5);
  CHECK(log.all("compressor_state").size() == 3);
  CHECK(figure(log, "compressor_state") == "0.03 MiB@44");

  kvplan::testing::TempDir dir;
  const std::string model = dir.file("deepseek4.gguf");
  kvplan::testing::make_llamacpp_fixture("deepseek4").write(model);
  const Explanation e = explain_log(log, {model, "4090", "deepseek4.log"});
  CHECK(e.command == "kvplan --runtime llama.cpp --model " + model + " --gpu 4090 -c 8192 -np 2 -fa off -b 513 -ub 513");
  // K rows only: SWA 4 x 768 cells x 128 B x 2 streams, CSA 2 x 1,024 x 128 B x 2, HCA 256 x 128 B x
  // 2, LID 2 x 1,024 x 256 B x 2; the states f32 (2 x 2 x 4 x 128 x 8 + 2 x 4 x 64 x 128 x 2 + ...).
  const Reconciled& kv = row(e, "kv_cache");
  CHECK(kv.kvplan_value == 2'424'832u);
  CHECK(kv.agreement == Agreement::exact);
  const Reconciled& states = row(e, "compressor_state");
  CHECK(states.kvplan_value == 229'376u);
  CHECK(states.agreement == Agreement::exact);  // 0.03 + 0.12 + 0.06 printed, 0.21875 MiB
}

TEST_CASE("an Ollama log with its runner's llama.cpp lines keeps the estimate and the allocation apart", "[explain]") {
  // Two real logs one after the other (not one real session): Ollama's scheduler line says
  // memory.required.kv="384.0 MiB"; the llama.cpp lines after it are what was allocated. The
  // Ollama profile takes the scheduler's line (explain_ollama_test.cpp has the real sessions).
  const std::string text = read_file(fixture_path("ollama-O7-rtx4080.log")) +
                           read_file(fixture_path("llama-server-b6699-gpt-oss-20b-rtx3070.log"));
  const EngineLog log = logs::read_engine_log(text);
  CHECK(log.engine == logs::LogEngine::ollama);
  CHECK(log.all("kv_cache").size() == 3);
  const Explanation e = explain_log(log, {});
  CHECK(e.runtime == "ollama");
  CHECK(row(e, "kv_cache").engine == "384.0 MiB");                // Ollama's estimate, line 2
  CHECK(row(e, "kv_cache").from.front().line == 2);
  CHECK(row(e, "kv_cache_llamacpp").engine == "3090.00 MiB");     // 3072.00 + 18.00, without Ollama's 384.0
  CHECK(row(e, "kv_cache_llamacpp").from.size() == 2);
  CHECK(e.gpu == "15.4GiB");  // the free memory Ollama placed layers against, not the card it named
}

TEST_CASE("Ollama, SGLang and TensorRT-LLM lines", "[explain]") {
  const EngineLog o2 = read_fixture("ollama-O2-offload-runner.log");
  CHECK(o2.engine == logs::LogEngine::ollama);
  CHECK(figure(o2, "required_full") == "11.0 GiB@1");
  CHECK(figure(o2, "kv_cache") == "608.0 MiB@1");
  CHECK(figure(o2, "weights") == "6.8 GiB@1");
  CHECK(figure(o2, "graph_full") == "519.5 MiB@1");
  CHECK(setting(o2, "n_gpu_layers") == "48@1");
  CHECK(setting(o2, "n_ctx") == "2048@2");
  CHECK(setting(o2, "parallel") == "1@2");
  const Explanation o2e = explain_log(o2, {});
  CHECK(o2e.rows.empty());  // the log names its model by the blob's digest only
  CHECK(!o2e.notes.empty());

  const EngineLog o12 = read_fixture("ollama-O12-new-engine.log");
  CHECK(figure(o12, "kv_cache", "CUDA0") == "936.0 MiB@1");
  CHECK(figure(o12, "compute_buffer", "CPU") == "8.0 MiB@3");
  CHECK(figure(o12, "total_memory") == "5.4 GiB@4");

  const EngineLog s4 = read_fixture("sglang-S4-tp-ranks.log");
  CHECK(s4.engine == logs::LogEngine::sglang);
  CHECK(figure(s4, "kv_cache_tokens", "TP1") == "2795207 tokens@2");
  CHECK(figure(s4, "kv_cache_k") == "53.31 GiB@2");
  CHECK(figure(s4, "avail_after_kv") == "11.87 GiB@3");
  const EngineLog s5 = read_fixture("sglang-S5-b200.log");
  CHECK(setting(s5, "kv_cache_dtype") == "bfloat16@1");
  CHECK(figure(s5, "cuda_graphs") == "1.44 GiB@5");
  const EngineLog s3 = read_fixture("sglang-S3-scheduler.log");
  CHECK(figure(s3, "max_total_num_tokens") == "2086558 tokens@1");
  CHECK(figure(s3, "available_gpu_mem") == "17.22 GiB@1");
  CHECK(setting(s3, "context_length") == "256000@1");

  const EngineLog t1 = read_fixture("trtllm-T1-llama3.1-8b-fp8.log");
  CHECK(t1.engine == logs::LogEngine::trtllm);
  CHECK(figure(t1, "weights") == "8.46 GiB@1");
  CHECK(setting(t1, "tokens_per_block") == "32@4");
  CHECK(figure(t1, "kv_cache") == "52.51 GiB@5");
  CHECK(figure(t1, "kv_cache_tokens") == "860320 tokens@5");
  CHECK(setting(t1, "max_seq_len") == "157@6");
}

TEST_CASE("unknown and hostile logs: nothing recognised, bounded lines, no crash", "[explain]") {
  CHECK(logs::read_engine_log("").empty());
  CHECK(logs::read_engine_log("hello\nworld\n").empty());
  CHECK(logs::read_engine_log("Available KV cache memory: \n GPU KV cache size: tokens\n").figures.empty());
  // A line far longer than the limit is cut and counted, and what it holds near its start is read.
  std::string huge = "Available KV cache memory: 1.00 GiB " + std::string(100000, 'x');
  const EngineLog log = logs::read_engine_log(huge);
  CHECK(log.cut_lines == 1);
  CHECK(figure(log, "available_kv") == "1.00 GiB@1");
  // Many recognised lines keep at most kMaxFacts facts.
  std::string many;
  for (int i = 0; i < 12000; ++i) many += "GPU KV cache size: 1 tokens\n";
  const EngineLog flood = logs::read_engine_log(many);
  CHECK(flood.dropped_facts);
  CHECK(flood.figures.size() == logs::kMaxFacts);
}

TEST_CASE("kvplan explain through the binary: table, JSON, stdin and refusals", "[explain]") {
  const std::string vllm_log = fixture_path("vllm-0.19-llama3.1-8b-h100.log");
  const ProcessResult table = run_kvplan("explain " + vllm_log + " --gpu h100");
  INFO(table.err);
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("KV capacity") != std::string::npos);
  CHECK(table.out.find("476,016") != std::string::npos);

  // stdin: run_kvplan gives the binary /dev/null, so the log is piped here.
  std::string piped;
  {
    const std::string command = std::string("'") + KVPLAN_BINARY + "' explain - --gpu h100 --format json < '" + vllm_log + "'";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) piped.append(buffer, n);
    CHECK(pclose(pipe) == 0);
  }
  const auto doc = nlohmann::json::parse(piped);
  CHECK(doc["engine"] == "vllm");
  CHECK(doc["source"] == "stdin");
  CHECK(doc["lines"] == 46);
  bool found = false;
  for (const auto& f : doc["figures"])
    if (f["name"] == "available_kv") {
      found = true;
      CHECK(f["line"] == 34);
      CHECK(f["bytes"] == 62'395'137'393u);
      CHECK(f["value"] == "58.11");
    }
  CHECK(found);
  for (const auto& r : doc["comparison"])
    if (r["key"] == "kv_cache_tokens") CHECK(r["agreement"] == "exact");

  kvplan::testing::TempDir dir;
  const std::string noise = dir.file("noise.log");
  std::ofstream(noise) << "hello\nworld\n";
  INFO("noise");
  check_refused(run_kvplan("explain " + noise), "no line of");
  check_refused(run_kvplan("explain " + dir.file("missing.log")), "no such file");
  check_refused(run_kvplan("explain /dev/null"), "not a regular file");
  check_refused(run_kvplan("explain " + vllm_log + " --format csv"), "not an explain format");
  check_refused(run_kvplan("explain"), "give the log file");
  check_refused(run_kvplan("explain -"), "no line of stdin");  // run_kvplan's stdin is /dev/null
}
