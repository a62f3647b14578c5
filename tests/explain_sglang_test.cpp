// `kvplan explain` on real SGLang startup logs (tests/fixtures/logs/, sources in SOURCES.md): the
// log's free-memory readings fed to the SGLang profile, and the printed pool and buffers checked
// against kvplan's rules by hand. SGLang prints "GB" for 2^30 bytes: every figure here is GiB.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/log_fixtures.h"
#include "support/run_binary.h"

using namespace kvplan;
using kvplan::logs::EngineLog;
using kvplan::testing::run_kvplan;
using kvplan::testing::figure_at;
using kvplan::testing::log_fixture_path;
using kvplan::testing::read_log_fixture;
using kvplan::testing::row_of;
using kvplan::testing::setting_at;

TEST_CASE("SGLang's docs log (Llama 3.1 8B, mem_fraction_static 0.88): pool and buffers exact", "[explain][sglang]") {
  const EngineLog log = read_log_fixture("sglang-docs-llama3.1-8b.log");
  CHECK(log.engine == logs::LogEngine::sglang);
  CHECK(log.lines == 27);
  CHECK(setting_at(log, "model") == "meta-llama/Meta-Llama-3.1-8B-Instruct@1");
  CHECK(setting_at(log, "mem_fraction_static") == "0.88@1");
  CHECK(setting_at(log, "tensor_parallel_size") == "1@1");
  CHECK(setting_at(log, "chunked_prefill_size") == "8192@1");
  CHECK(setting_at(log, "context_length") == "131072@18");  // server_args has None; the scheduler's line
  CHECK(setting_at(log, "max_running_requests") == "(none)");  // None in server_args; 2049 is derived
  CHECK(figure_at(log, "max_running_requests") == "2049 requests@18");
  CHECK(figure_at(log, "avail_before_weights") == "78.81 GiB@3");
  CHECK(figure_at(log, "avail_after_weights") == "63.72 GiB@12");
  CHECK(figure_at(log, "kv_cache_k") == "27.13 GiB@13");  // this version's line has no #tokens
  CHECK(figure_at(log, "kv_cache_tokens") == "(none)");
  CHECK(figure_at(log, "max_total_num_tokens") == "444500 tokens@18");

  ExplainInputs inputs;
  inputs.gpu = "h100";  // the log names no card; 78.81 GiB free before load is an 80 GB card's
  const Explanation e = explain_log(log, inputs);
  CHECK(e.runtime == "sglang");
  CHECK(e.model == "llama3.1-8b");
  CHECK(e.command ==
        "kvplan --runtime sglang --model llama3.1-8b --gpu h100 --mem-fraction-static 0.88 --context-length 131072 "
        "--chunked-prefill-size 8192 --sglang-free-before-load 78.81GiB --sglang-free-after-load 63.72GiB");

  // The pool: rest = after - before x (1 - 0.88), #tokens = int(rest x 2^30) // 131,072 B (32
  // layers x 8 KV heads x (128 + 128) x 2 B). 78.81 and 63.72 GiB stand for 78.805-78.815 and
  // 63.715-63.725: 63.715 - 78.815 x 0.12 = 54.2572 GiB -> 444,474 tokens; 63.725 - 78.805 x 0.12
  // = 54.2684 GiB -> 444,566. SGLang printed 444,500: inside, so exact.
  const Reconciled& pool = row_of(e, "kv_cache_tokens");
  CHECK(pool.engine_value == 444'500u);
  CHECK(pool.kvplan_value == 444'474u);
  CHECK(pool.kvplan == "444,474 - 444,566");
  CHECK(pool.agreement == Agreement::exact);
  CHECK(pool.from.front().line == 18);

  // The buffers for the printed 444,500 tokens and the one padding page: 444,501 x 65,536 B = 
  // 29,130,817,536 B a buffer (27.1302 GiB, printed 27.13), K + V = 58,261,635,072 B; the printed
  // pair stands for 58,250,493,952 - 58,271,968,790 B.
  const Reconciled& kv = row_of(e, "kv_cache");
  CHECK(kv.kvplan_value == 58'261'635'072u);
  CHECK(kv.engine_low == 58'250'493'952u);
  CHECK(kv.engine_high == 58'271'968'790u);
  CHECK(kv.agreement == Agreement::exact);
  CHECK(kv.engine == "54.26 GiB");
  CHECK(kv.kvplan == "54.26 GiB");

  // The weights: loading took 78.81 - 63.72 = 15.09 GiB; the checkpoint is 16,060,522,496 B (14.96 GiB).
  const Reconciled& weights = row_of(e, "weights");
  CHECK(weights.agreement == Agreement::estimate);
  CHECK(weights.engine == "15.09 GiB");
  CHECK(weights.kvplan_value == 16'060'522'496u);
  CHECK(weights.difference == "-0.13 GiB");
  CHECK(weights.from.size() == 2);

  // kvplan's own estimate of the readings, beside them: free before load = the H100's CUDA total
  // (79.19 GiB) - 0.5 GiB of CUDA context; after = that - the checkpoint.
  CHECK(row_of(e, "free_before_load").agreement == Agreement::estimate);
  CHECK(row_of(e, "free_before_load").kvplan == "78.69 GiB");
  CHECK(row_of(e, "free_after_load").kvplan == "63.73 GiB");
  CHECK(e.not_found.empty());
}

TEST_CASE("an SGLang log without mem_fraction_static: the default's version matters, and differs says so",
          "[explain][sglang]") {
  // July 2025, a 24 GB card: "Load weight end. ... avail mem=7.37 GB, mem usage=15.02 GB."; no
  // "Load weight begin" line, so free before load = 7.37 + 15.02 = 22.39 GiB (+/- 0.01).
  const EngineLog log = read_log_fixture("sglang-2025-07-llama3.1-8b-24gb.log");
  CHECK(figure_at(log, "weights") == "15.02 GiB@1");
  CHECK(figure_at(log, "kv_cache_tokens") == "38141 tokens@2");
  CHECK(setting_at(log, "chunked_prefill_size") == "2048@8");
  ExplainInputs inputs;
  inputs.model = "llama3.1-8b";
  inputs.gpu = "4090";
  const Explanation e = explain_log(log, inputs);
  // kvplan's latest default for a 4090 (24,564 MiB) at TP 1 with chunked prefill 2048: reserved =
  // 512 + 2048 x 1.5 + 24 x 2 + 1/8 x 1024 + 8 x 42 piecewise CUDA-graph sizes = 4,096 MiB,
  // mem_fraction_static = round(20,468 / 24,564, 3) = 0.833; rest = 7.37 - 22.39 x 0.167 = 3.631 GiB
  // -> ~29,700 tokens, not 38,141.
  // (The 0.4.10-0.5.3 default, 0.879, gives 38,130 - 38,232: the log's SGLang was of that era.)
  const Reconciled& pool = row_of(e, "kv_cache_tokens");
  CHECK(pool.agreement == Agreement::differs);
  CHECK(pool.engine_value == 38'141u);
  REQUIRE(pool.kvplan_value);
  CHECK(*pool.kvplan_value < 29'800u);
  CHECK(*pool.kvplan_value > 29'600u);
  bool noted = false;
  for (const std::string& note : e.notes) noted = noted || note.find("mem_fraction_static not in the log") != std::string::npos;
  CHECK(noted);
  // The buffers do not depend on the fraction: (38,141 + 1) x 65,536 B = 2,499,674,112 B a buffer
  // (2.3280 GiB, printed 2.33).
  const Reconciled& kv = row_of(e, "kv_cache");
  CHECK(kv.kvplan_value == 4'999'348'224u);  // K + V
  CHECK(kv.agreement == Agreement::exact);
  // The weights SGLang measured (mem usage) beside the checkpoint.
  CHECK(row_of(e, "weights").engine == "15.02 GiB");
  CHECK(row_of(e, "weights").agreement == Agreement::estimate);
}

TEST_CASE("SGLang logs with no model or no readings still say what they can", "[explain][sglang]") {
  // Record S4: TP ranks, a begin reading but no end one and no model: the figures are listed.
  const Explanation s4 = explain_log(read_log_fixture("sglang-S4-tp-ranks.log"), {});
  CHECK(s4.rows.empty());
  REQUIRE(!s4.notes.empty());
  CHECK(s4.notes.front().find("names no model") != std::string::npos);

  // The table through the binary: the pool's row and the GiB reading of SGLang's GB.
  const auto table = run_kvplan("explain " + log_fixture_path("sglang-docs-llama3.1-8b.log") + " --gpu h100");
  INFO(table.err);
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("KV pool tokens") != std::string::npos);
  CHECK(table.out.find("444,474 - 444,566") != std::string::npos);
  const auto json = run_kvplan("explain " + log_fixture_path("sglang-docs-llama3.1-8b.log") + " --gpu h100 --format json");
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["runtime"] == "sglang");
  for (const auto& f : doc["figures"])
    if (f["name"] == "avail_before_weights") CHECK(f["bytes"] == 84'621'593'149u);  // 78.81 x 2^30
}

TEST_CASE("an SGLang log with an EAGLE-3 draft: its second pool is the draft's, so nothing is compared", "[explain][sglang]") {
  // The docs' June 2025 run: the target's lines, then the draft's "Load weight end.
  // type=LlamaForCausalLMEagle3" and its own "KV Cache is allocated" line. Compared as one model,
  // the target's pool would differ by the draft's share; explain says what to plan instead.
  const EngineLog log = read_log_fixture("sglang-docs-eagle3-llama3.1-8b.log");
  CHECK(setting_at(log, "speculative_draft") == "LlamaForCausalLMEagle3@9");
  ExplainInputs inputs;
  inputs.gpu = "h100";
  inputs.model = "llama3.1-8b";
  const Explanation e = explain_log(log, inputs);
  bool refused = false;
  for (const std::string& note : e.notes)
    refused |= note.find("speculative decoding (LlamaForCausalLMEagle3) loads a draft checkpoint") != std::string::npos &&
               note.find("--speculative-draft-model-path") != std::string::npos;
  CHECK(refused);
  for (const Reconciled& row : e.rows) CHECK(row.agreement == Agreement::engine_only);
}
