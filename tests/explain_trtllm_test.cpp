// `kvplan explain` on real TensorRT-LLM log lines (records T1 and T4 of engine-logs-serving.jsonl):
// the pool it allocated for its printed token count against kvplan's bytes a token, by hand.

#include <string>

#include <catch2/catch.hpp>

#include "support/log_fixtures.h"

using namespace kvplan;
using kvplan::logs::EngineLog;
using kvplan::testing::figure_at;
using kvplan::testing::read_log_fixture;
using kvplan::testing::row_of;
using kvplan::testing::setting_at;

TEST_CASE("TensorRT-LLM T4 (Qwen2.5-VL-7B, L20): the pool for the printed tokens is exact", "[explain][trtllm]") {
  const EngineLog log = read_log_fixture("trtllm-T4-qwen2.5-vl-7b-l20.log");
  CHECK(log.engine == logs::LogEngine::trtllm);
  CHECK(figure_at(log, "kv_cache") == "16.10 GiB@1");
  CHECK(figure_at(log, "kv_cache_tokens") == "301472 tokens@1");
  ExplainInputs inputs;
  inputs.model = kvplan::testing::source_path("tests/fixtures/hf/qwen2.5-vl-7b-instruct");
  inputs.gpu = "48GiB";  // an L20's 48 GB; the catalog has no L20
  const Explanation e = explain_log(log, inputs);
  CHECK(e.runtime == "trtllm");
  // 301,472 tokens x 57,344 B (2 x 28 layers x 4 KV heads x 128 x 2 B) = 17,287,610,368 B =
  // 16.1003 GiB; the printed 16.10 stands for 17,281,874,657 - 17,292,612,076 B.
  const Reconciled& kv = row_of(e, "kv_cache");
  CHECK(kv.kvplan_value == 17'287'610'368u);
  CHECK(kv.engine_low == 17'281'874'657u);
  CHECK(kv.engine_high == 17'292'612'076u);
  CHECK(kv.agreement == Agreement::exact);
  // The count comes from memory the engine measured after its dry run: kvplan's is an estimate.
  CHECK(row_of(e, "kv_cache_tokens").agreement == Agreement::estimate);
  CHECK(row_of(e, "kv_cache_tokens").engine_value == 301'472u);
}

TEST_CASE("TensorRT-LLM T1 (Llama 3.1 8B FP8): an FP8 cache kvplan was not told of differs, and says why",
          "[explain][trtllm]") {
  const EngineLog log = read_log_fixture("trtllm-T1-llama3.1-8b-fp8.log");
  CHECK(setting_at(log, "free_gpu_memory_fraction") == "0.800000011920929@2");
  CHECK(figure_at(log, "max_tokens") == "860308 tokens@2");
  CHECK(setting_at(log, "max_batch_size") == "4096@6");
  ExplainInputs inputs;
  inputs.model = "llama3.1-8b";  // the BF16 checkpoint: the log's is nvidia/Llama-3.1-8B-Instruct-FP8
  inputs.gpu = "h100";
  const Explanation e = explain_log(log, inputs);
  CHECK(e.command ==
        "kvplan --runtime trtllm --model llama3.1-8b --gpu h100 --max_seq_len 157 --max_batch_size 4096 "
        "--max_num_tokens 23552 --tokens_per_block 32 --kv_cache_free_gpu_memory_fraction 0.800000011920929 "
        "--max_tokens 860308");
  // kvplan's auto cache for the BF16 model is 131,072 B a token (32 x 8 x 128 x 2 x 2 B): 860,320 x
  // 131,072 = 112,763,863,040 B (105.02 GiB) against the printed 52.51 GiB, which is 56,382,183,178 B
  // / 860,320 = 65,536 B a token: one byte an element, the checkpoint's FP8 cache.
  const Reconciled& kv = row_of(e, "kv_cache");
  CHECK(kv.kvplan_value == 112'763'863'040u);
  CHECK(kv.agreement == Agreement::differs);
  CHECK(kv.rule.find("65,536 B a token") != std::string::npos);
  CHECK(row_of(e, "weights").engine == "8.46 GiB");
}
