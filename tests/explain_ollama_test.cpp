// `kvplan explain` on real Ollama server logs (records O1, O2, O5, O14 of engine-logs-serving.jsonl
// and ollama/ollama#11471; tests/fixtures/logs/SOURCES.md): the settings and Ollama's own
// memory.* figures read by line, and each set beside the Ollama profile's estimate, the arithmetic
// in the comments.

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/log_fixtures.h"

using namespace kvplan;
using kvplan::logs::EngineLog;
using kvplan::testing::figure_at;
using kvplan::testing::read_file;
using kvplan::testing::read_log_fixture;
using kvplan::testing::row_of;
using kvplan::testing::run_kvplan;
using kvplan::testing::setting_at;

namespace {

Explanation explain(const EngineLog& log, const std::string& model, const std::string& gpu = "") {
  ExplainInputs inputs;
  inputs.model = model;
  inputs.gpu = gpu;
  return explain_log(log, inputs);
}

bool has_note(const Explanation& e, const std::string& words) {
  for (const std::string& note : e.notes)
    if (note.find(words) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("Ollama O5 (qwen2 72B Q4_K_S on ROCm, v0.2 - v0.3.9): the estimate and the runner's buffers", "[explain][ollama]") {
  const EngineLog log = read_log_fixture("ollama-O5-rocm-runner.log");
  CHECK(log.engine == logs::LogEngine::ollama);
  // The offload line (journald's prefix removed) and the runner's command line after "...".
  CHECK(setting_at(log, "offload_source") == "memory.go:309@1");
  CHECK(setting_at(log, "layers_model") == "81@1");
  CHECK(setting_at(log, "layers_offload") == "43@1");
  CHECK(setting_at(log, "layers_requested") == "-1@1");
  CHECK(figure_at(log, "memory_available", "GPU0") == "24.0 GiB@1");
  CHECK(figure_at(log, "allocations", "GPU0") == "23.7 GiB@1");
  CHECK(figure_at(log, "kv_cache") == "640.0 MiB@1");
  CHECK(figure_at(log, "graph_partial") == "1.3 GiB@1");
  CHECK(setting_at(log, "n_ctx") == "2048@2");
  CHECK(setting_at(log, "parallel") == "1@2");
  CHECK(setting_at(log, "runner_flash_attn") == "off@2");
  // The runner's llama.cpp lines, in llama.cpp's pre-b3400 words.
  CHECK(figure_at(log, "model_buffer", "ROCm0") == "21533.93 MiB@7");
  CHECK(figure_at(log, "model_buffer", "CPU") == "41850.31 MiB@8");
  CHECK(figure_at(log, "kv_buffer", "ROCm0") == "344.00 MiB@15");
  CHECK(setting_at(log, "repeating_layers_offloaded") == "43@5");

  const Explanation e = explain(log, "qwen2.5:72b-q4_K_S");
  CHECK(e.runtime == "ollama");
  CHECK(e.gpu == "24.0GiB");
  CHECK(e.command ==
        "kvplan --runtime ollama --model qwen2.5:72b-q4_K_S --gpu 24.0GiB --ollama-version 0.3.9 --num-ctx 2048 "
        "--num-parallel 1");
  CHECK(has_note(e, "Ollama v0.2.0 - v0.3.9"));
  // Ollama's cache estimate to v0.4: 2 B x ctx x layers x (K + V head dims) x KV heads =
  // 2 x 2048 x 80 x 256 x 8 = 671,088,640 B = 640.0 MiB.
  const Reconciled& kv = row_of(e, "kv_cache");
  CHECK(kv.kvplan_value == 671'088'640u);
  CHECK(kv.engine == "640.0 MiB");
  CHECK(kv.agreement == Agreement::exact);
  // The runner's llama.cpp (2024) put 43 blocks on ROCm0 ("offloading 43 repeating layers"): 43 x
  // 2048 cells x 8 KV heads x 128 x 2 B x 2 (K, V) = 360,710,144 B = 344.00 MiB. kvplan's llama.cpp
  // rules (today's) count the output layer among -ngl 43 and put it first: 42 blocks' cache,
  // 352,321,536 B = 336.00 MiB; the rule says so.
  const Reconciled& gpu_kv = row_of(e, "kv_buffer_gpu");
  CHECK(gpu_kv.engine == "344.00 MiB");
  CHECK(gpu_kv.kvplan_value == 352'321'536u);
  CHECK(gpu_kv.agreement == Agreement::differs);
  CHECK(gpu_kv.rule.find("(\"offloading 43 repeating layers\", line 5)") != std::string::npos);
  CHECK(row_of(e, "weights_gpu").agreement == Agreement::differs);
  // The whole llama.cpp cache, 80 layers: 80 x 8 MiB = 640 MiB, the estimate's bytes exactly.
  CHECK(row_of(e, "kv_cache_llamacpp").kvplan_value == 671'088'640u);
  CHECK(row_of(e, "kv_cache_llamacpp").agreement == Agreement::not_in_log);
  const Reconciled& layers = row_of(e, "layers_offload");
  CHECK(layers.engine == "43");
  CHECK(layers.agreement == Agreement::exact);
  CHECK(row_of(e, "runner_gpu_layers").agreement == Agreement::exact);  // --n-gpu-layers 43
  for (const char* key : {"layers_model", "weights", "weights_repeating", "weights_nonrepeating", "graph_full",
                          "graph_partial", "required_partial", "required_full"}) {
    INFO(key);
    CHECK(row_of(e, key).agreement == Agreement::exact);
  }
  CHECK(row_of(e, "overhead").agreement == Agreement::not_in_log);
  CHECK_FALSE(has_note(e, "rules change between the releases"));  // only llama.cpp's buffers differ
}

TEST_CASE("Ollama O1 (Llama 70B Q8_0, 4 GPUs, flash attention, v0.5.12 - v0.5.13)", "[explain][ollama]") {
  // The same lines behind docker's timestamps, ANSI colours and \r line ends read the same.
  for (const char* fixture : {"ollama-O1-4gpu-flash-attn.log", "ollama-O1-docker-ansi.log"}) {
    INFO(fixture);
    const EngineLog log = read_log_fixture(fixture);
    CHECK(log.engine == logs::LogEngine::ollama);
    CHECK(setting_at(log, "layers_split") == "11,11,11,11@1");
    CHECK(figure_at(log, "memory_available", "GPU3") == "22.0 GiB@1");
    CHECK(figure_at(log, "allocations", "GPU2") == "21.8 GiB@1");
    CHECK(setting_at(log, "flash_attention_enabled") == "true@2");
    CHECK(setting_at(log, "runner_flash_attn") == "on@3");
    CHECK(setting_at(log, "runner_tensor_split") == "11,11,11,11@3");
    CHECK(setting_at(log, "n_ctx") == "64000@3");

    const Explanation e = explain(log, "llama3.3:70b-q8_0");
    CHECK(e.gpu == "4x22.0GiB");
    CHECK(e.command ==
          "kvplan --runtime ollama --model llama3.3:70b-q8_0 --gpu 4x22.0GiB --ollama-version 0.5.13 --num-ctx 64000 "
          "--num-parallel 1 --flash-attention 1");
    // v0.5's estimate: 64000 x 80 layers x (128 + 128) x 8 KV heads x 2 B = 20,971,520,000 B = 19.53 GiB ("19.5 GiB").
    CHECK(row_of(e, "kv_cache").kvplan_value == 20'971'520'000u);
    CHECK(row_of(e, "kv_cache").agreement == Agreement::exact);
    // llama.cpp's cache with -fa: 64000 cells (250 x 256, no padding) x the same rows: the same bytes.
    CHECK(row_of(e, "kv_cache_llamacpp").kvplan_value == 20'971'520'000u);
    CHECK(row_of(e, "layers_offload").agreement == Agreement::exact);
    // One allocation row per GPU, each printed 21.8 GiB.
    int allocations = 0;
    for (const Reconciled& r : e.rows)
      if (r.key == "allocations") {
        ++allocations;
        CHECK(r.engine == "21.8 GiB");
        CHECK(r.agreement == Agreement::exact);
      }
    CHECK(allocations == 4);
    for (const char* key : {"weights", "graph_full", "graph_partial", "required_partial", "required_full"}) {
      INFO(key);
      CHECK(row_of(e, key).agreement == Agreement::exact);
    }
  }
}

TEST_CASE("Ollama O2 (gemma3:12b, --ollama-engine): the model is a digest, the engine's cache is not llama.cpp's",
          "[explain][ollama]") {
  const EngineLog log = read_log_fixture("ollama-O2-offload-runner.log");
  CHECK(setting_at(log, "layers_requested") == "49@1");
  CHECK(figure_at(log, "projector_weights") == "795.9 MiB@1");
  CHECK(setting_at(log, "runner_engine") == "ollama@2");
  // No --model: the log names only sha256-e8ad13ef...; nothing is priced, and the note says what to give.
  const Explanation bare = explain_log(log, {});
  CHECK(bare.rows.empty());
  CHECK(has_note(bare, "blob's digest"));
  // gemma3:12b (records O2 - O4 share the blob): num_gpu 49 from layers.requested.
  const Explanation e = explain(log, "gemma3:12b");
  CHECK(e.command ==
        "kvplan --runtime ollama --model gemma3:12b --gpu 10.9GiB --ollama-version 0.11.4 --num-ctx 2048 "
        "--num-parallel 1 --num-gpu 49");
  CHECK(has_note(e, "--ollama-engine"));
  for (const Reconciled& r : e.rows) CHECK(r.key != "kv_cache_llamacpp");
  CHECK(row_of(e, "layers_offload").engine == "48");
  // The runner got --n-gpu-layers 49, the num_gpu asked for (llm/server.go passes a num_gpu >= 0
  // through; only -1 takes the estimate's 48), and so does kvplan's profile.
  const Reconciled& given = row_of(e, "runner_gpu_layers");
  CHECK(given.engine == "49");
  CHECK(given.kvplan_value == 49u);
  CHECK(given.agreement == Agreement::exact);
  for (const char* key : {"layers_offload", "kv_cache", "weights", "graph_full", "graph_partial", "projector_weights",
                          "projector_graph", "required_partial", "required_full"}) {
    INFO(key);
    CHECK(row_of(e, key).agreement == Agreement::exact);
  }
}

TEST_CASE("Ollama O14 (gemma3:27b on ROCm): the scheduler's bytes, a cut line, no context printed", "[explain][ollama]") {
  const EngineLog log = read_log_fixture("ollama-O14-sched-rocm.log");
  CHECK(setting_at(log, "sched_parallel") == "1@1");
  CHECK(figure_at(log, "sched_available") == "34336186368 B@1");
  CHECK(figure_at(log, "sched_required") == "26.8 GiB@1");
  CHECK(figure_at(log, "weights") == "14.3 GiB@2");
  CHECK(figure_at(log, "weights_repeating") == "(none)");  // cut inside its key
  const Explanation e = explain(log, "gemma3:27b");
  CHECK(e.gpu == "34336186368B");  // the scheduler's exact free memory, not memory.available's 32.0 GiB
  CHECK(has_note(e, "default num_ctx"));
  // Dated v0.6.0 - v0.6.7 by source=server.go:138; weights.total without the output layer and
  // without the cache is v0.6.1 - v0.6.2's (14.3 GiB), which those releases alone reproduce.
  CHECK(e.command.find("--ollama-version 0.6.2 ") != std::string::npos);
  CHECK(has_note(e, "the rules of 2 of them (v0.6.1 ... v0.6.2)"));
  CHECK(row_of(e, "weights").agreement == Agreement::exact);
  // No context in the log: v0.6.2's default 2048 is priced, every layer at it (no sliding-window
  // estimate before v0.6.3): 62 layers x 2048 x 16 KV heads x (128 + 128) x 2 B = 1,040,187,392 B
  // (992.0 MiB), not the printed 7.8 GiB (num_ctx 16384: tests/ollama_profile_test.cpp).
  const Reconciled& kv = row_of(e, "kv_cache");
  CHECK(kv.kvplan_value == 1'040'187'392u);
  CHECK(kv.agreement == Agreement::differs);
  CHECK(row_of(e, "sched_required").engine == "26.8 GiB");
  CHECK(has_note(e, "rules change between the releases"));  // several releases print this line
}

TEST_CASE("Ollama O10 (gpt-oss:20b, cut inside memory.required.kv): the release the figures date", "[explain][ollama]") {
  const EngineLog log = read_log_fixture("ollama-O10-gpt-oss-cut.log");
  CHECK(figure_at(log, "kv_cache") == "(none)");  // "30... : no closing quote, no figure
  CHECK(figure_at(log, "required_partial") == "3.4 GiB@1");
  const Explanation e = explain(log, "gpt-oss:20b");
  // server.go:175 is v0.9.3 - v0.11.4. v0.11.1 raised gpt-oss's num_ctx to 8192; v0.11.4 exempted
  // cards under 20 GiB: only v0.11.1 - v0.11.3 put 1 layer on 3.6 GiB with these sums. The thread
  // states v0.11.3.
  CHECK(e.command.find("--ollama-version 0.11.3") != std::string::npos);
  CHECK(has_note(e, "the rules of 3 of them (v0.11.1 ... v0.11.3) reproduce 3 of its 3 printed figures"));
  for (const char* key : {"layers_offload", "required_partial", "required_full"}) {
    INFO(key);
    CHECK(row_of(e, key).agreement == Agreement::exact);
  }
  CHECK(row_of(e, "kv_cache").agreement == Agreement::not_in_log);
}

TEST_CASE("Ollama O4 (library=cpu): read, and not priced as a GPU", "[explain][ollama]") {
  const EngineLog log = read_log_fixture("ollama-O4-cpu.log");
  CHECK(setting_at(log, "library") == "cpu@1");
  CHECK(figure_at(log, "required_partial") == "0 B@1");
  CHECK(setting_at(log, "parallel") == "2@2");
  const Explanation e = explain(log, "gemma3:12b");
  CHECK(e.rows.empty());
  CHECK(e.runtime.empty());
  CHECK(has_note(e, "library=cpu (line 1)"));
}

TEST_CASE("Ollama's server config line: OLLAMA_* settings, a cut end", "[explain][ollama]") {
  const EngineLog config = read_log_fixture("ollama-11471-server-config.log");
  CHECK(config.engine == logs::LogEngine::ollama);
  CHECK(setting_at(config, "env_context_length") == "4096@1");
  CHECK(setting_at(config, "env_flash_attention") == "true@1");
  CHECK(setting_at(config, "env_kv_cache_type") == "q8_0@1");
  CHECK(setting_at(config, "env_num_parallel") == "4@1");
  CHECK(setting_at(config, "env_gpu_overhead") == "0@1");
  // Two real logs one after the other (not one session): the variables become the profile's
  // settings when no runner line gives them.
  const std::string text = read_file(kvplan::testing::log_fixture_path("ollama-11471-server-config.log")) +
                           read_file(kvplan::testing::log_fixture_path("ollama-O7-rtx4080.log"));
  const Explanation e = explain(logs::read_engine_log(text), "qwen2.5:14b");
  CHECK(e.command ==
        "kvplan --runtime ollama --model qwen2.5:14b --gpu 15.4GiB --ollama-version 0.5.11 --num-ctx 4096 "
        "--num-parallel 4 --kv-cache-type q8_0 --flash-attention 1");
}

TEST_CASE("Ollama 0.2.7's start: the old server config line and the version", "[explain][ollama]") {
  const EngineLog start = read_log_fixture("ollama-5816-startup.log");
  CHECK(start.engine == logs::LogEngine::ollama);
  CHECK(setting_at(start, "ollama_version") == "0.2.7@4");
  CHECK(setting_at(start, "env_num_parallel") == "0@1");  // 0: Ollama chooses (4, then 1, in 0.2)
  CHECK(setting_at(start, "env_flash_attention") == "false@1");
  CHECK(setting_at(start, "env_kv_cache_type") == "(none)");      // not in 0.2.7's map
  CHECK(setting_at(start, "env_context_length") == "(none)");
  // Two real logs one after the other (not one session): the printed version beats the dating
  // by source=memory.go:309 (v0.2.0 - v0.3.9), whose note is then not given; 0.2.7's rules give
  // O5's figures as 0.3.9's did.
  const std::string text = read_file(kvplan::testing::log_fixture_path("ollama-5816-startup.log")) +
                           read_file(kvplan::testing::log_fixture_path("ollama-O5-rocm-runner.log"));
  const Explanation e = explain(logs::read_engine_log(text), "qwen2.5:72b-q4_K_S");
  CHECK(e.command.find("--ollama-version 0.2.7 ") != std::string::npos);
  CHECK_FALSE(has_note(e, "prints no version"));
  CHECK(row_of(e, "kv_cache").agreement == Agreement::exact);
  CHECK(row_of(e, "required_full").agreement == Agreement::exact);
}

TEST_CASE("kvplan explain on an Ollama log, through the binary: table and JSON", "[explain][ollama]") {
  const auto table = run_kvplan("explain " + kvplan::testing::log_fixture_path("ollama-O5-rocm-runner.log") +
                                " --model qwen2.5:72b-q4_K_S");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("KV cache (Ollama's estimate)") != std::string::npos);
  const auto json = run_kvplan("explain " + kvplan::testing::log_fixture_path("ollama-O5-rocm-runner.log") +
                               " --model qwen2.5:72b-q4_K_S --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["runtime"] == "ollama");
  bool found = false;
  for (const auto& c : doc["comparison"])
    if (c["key"] == "layers_offload") {
      found = true;
      CHECK(c["unit"] == "layers");
      CHECK(c["engine_value"] == 43);
      CHECK(c["lines"] == nlohmann::json::array({1}));
    }
  CHECK(found);
}
