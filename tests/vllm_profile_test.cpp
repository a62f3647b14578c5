// The vLLM profile against real vLLM startup logs (shared/reference/vllm-logs.jsonl, record ids
// Rnnn) and hand arithmetic. Paging is exact once the available memory is known, so each record's
// printed "Available KV cache memory" (2 decimals of GiB) is fed back as --kv-cache-memory at both
// ends of its rounding band, and the printed token count and concurrency must fall between.

#include <cmath>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/catalog.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "kvplan/gpu.h"
#include "kvplan/units.h"
#include "engines/vllm/rules.h"
#include "support/run_binary.h"
#include "support/catalog_entries.h"

using namespace kvplan;
using kvplan::testing::catalog_model;
using kvplan::testing::catalog_gpu;

namespace {



/// x hundredths of a GiB in bytes, rounded down.
std::uint64_t centi_gib(std::int64_t hundredths) { return static_cast<std::uint64_t>(hundredths) * GiB / 100; }

struct Record {
  const char* id;
  const char* model;
  const char* gpu;
  std::uint32_t tp;
  std::uint64_t max_len;
  const char* kv;          ///< "auto" or "fp8"
  const char* version;
  bool prefix_caching;
  std::int64_t available;  ///< printed GiB x 100
  std::uint64_t tokens;    ///< "GPU KV cache size: N tokens"
  std::int64_t concurrency;  ///< printed "X.XXx" x 100; -1: not in the record
  std::uint32_t block_size = 0;  ///< --block-size, when the run set one
};

// vLLM 0.19.0 on H100 80GB (max_num_batched_tokens 8192), and 0.24.0 on an RTX 5090 (R092, a
// Qwen3.6-35B-A3B NVFP4 checkpoint, whose cache is Qwen3.5-35B-A3B's).
const Record kRecords[] = {
    {"R018", "llama3.1-8b", "h100", 1, 8192, "auto", "0.19.0", false, 5811, 476'000, 5811},
    {"R022", "llama3.1-8b", "h100", 1, 2048, "auto", "0.19.0", false, 5811, 476'016, 23243},
    {"R029", "llama3.1-8b", "h100", 1, 16384, "auto", "0.19.0", false, 5811, 476'016, 2905},
    {"R030", "llama3.1-8b", "h100", 1, 32768, "auto", "0.19.0", false, 5811, 476'016, 1453},
    {"R027", "llama3.1-8b", "h100", 2, 8192, "auto", "0.19.0", false, 6376, 1'044'688, 12753},
    {"R046", "qwen2.5-7b", "h100", 1, 8192, "auto", "0.19.0", false, 5853, 1'096'000, 13379},
    {"R044", "qwen2.5-7b", "h100", 1, 8192, "fp8", "0.19.0", false, 5853, 2'192'000, 26758},
    {"R052", "qwen2.5-7b", "h100", 2, 8192, "auto", "0.19.0", false, 6384, 2'390'592, 29182},
    {"R053", "qwen2.5-7b", "h100", 4, 8192, "auto", "0.19.0", false, 6734, 5'043'280, 61563},
    {"R055", "qwen3-8b", "h100", 1, 8192, "auto", "0.19.0", false, 5750, 418'688, 5111},
    {"R054", "qwen3-30b-a3b", "h100", 1, 8192, "auto", "0.19.0", false, 1541, 168'288, 2054},
    {"R033", "phi4", "h100", 1, 8192, "auto", "0.19.0", false, 4608, 241'568, 2949},
    {"R034", "mistral-small-24b", "h100", 1, 8192, "auto", "0.19.0", false, 2819, 184'752, 2255},
    {"R035", "mixtral-8x7b", "h100", 2, 8192, "auto", "0.19.0", false, 2844, 465'936, 5688},
    {"R006", "gemma2-27b", "h100", 1, 8192, "auto", "0.19.0", false, 2059, 58'672, 716},
    {"R009", "gemma3-12b", "h100", 1, 8192, "auto", "0.19.0", false, 4772, 130'304, 1588},
    {"R011", "gemma3-4b", "h100", 1, 8192, "auto", "0.19.0", false, 6251, 468'144, 5705},
    {"R040", "gpt-oss-20b", "h100", 1, 8192, "auto", "0.19.0", false, 5847, 1'277'184, 15575},
    {"R041", "gpt-oss-20b", "h100", 2, 8192, "auto", "0.19.0", false, 6328, 2'764'768, 33717},
    {"R092", "qwen3.5-35b-a3b", "rtx5090", 1, 131072, "fp8", "0.24.0", true, 598, 567'978, 433},
    // More 0.19.0 runs: other checkpoints of the same shapes (fp8-dynamic and w8a8 weights keep a
    // bf16 cache), other lengths, Llama 3.3 70B at TP 2 and Kimi-Dev-72B (Qwen2.5-72B's shapes) at 4.
    {"R003", "llama3.3-70b", "h100", 2, 8192, "auto", "0.19.0", false, 3728, 244'304, 2982},
    {"R019", "llama3.1-8b", "h100", 1, 8192, "auto", "0.19.0", false, 6461, 529'248, 6461},
    {"R060", "llama3.1-8b", "h100", 1, 8192, "auto", "0.19.0", false, 6460, 529'200, 6460},
    {"R005", "qwen2.5-7b", "h100", 1, 8192, "auto", "0.19.0", false, 6464, 1'210'304, 14774},
    {"R061", "qwen2.5-7b", "h100", 1, 8192, "auto", "0.19.0", false, 6464, 1'210'272, 14774},
    {"R047", "qwen2.5-7b", "h100", 1, 16384, "auto", "0.19.0", false, 5853, 1'095'968, 6689},
    {"R049", "qwen2.5-7b", "h100", 1, 2048, "auto", "0.19.0", false, 5853, 1'096'000, 53516},
    {"R050", "qwen2.5-7b", "h100", 1, 4096, "auto", "0.19.0", false, 5853, 1'096'000, 26758},
    {"R037", "qwen2.5-72b", "h100", 4, 8192, "auto", "0.19.0", false, 3672, 481'296, 5875},
    // 0.10.1.1 on an A100 80GB (Qwen2-7B: Qwen2.5-7B's cache shapes), and 0.11.0 with 128-token
    // blocks (llm-d's --block-size=128; the record prints no concurrency).
    {"R062", "qwen2.5-7b", "a100-80g", 1, 16384, "auto", "0.10.1.1", false, 501, 93'872, 573},
    {"R063", "qwen2.5-7b", "a100-80g", 1, 16384, "auto", "0.10.1.1", false, 2483, 464'848, 2837},
    {"R065", "qwen2.5-7b", "a100-80g", 2, 16384, "auto", "0.10.1.1", false, 1202, 450'192, 2748},
    {"R066", "qwen2.5-7b", "a100-80g", 2, 16384, "auto", "0.10.1.1", false, 3183, 1'192'160, 7276},
    {"R101", "mistral-small-24b", "h100", 1, 16000, "auto", "0.11.0", false, 2820, 184'832, -1, 128},
    // Added for the Proof (vllm_proof_test): granite-3.1-8b has granite-3.3-8b's shapes; phi-2 at
    // 2,048; R078 (~0.11 with LMCache; GPU not named: any CUDA card's 16-token blocks).
    {"R014", "granite-3.3-8b", "h100", 1, 8192, "auto", "0.19.0", false, 5866, 384'432, 4693},
    {"R015", "granite-3.3-8b", "h100", 1, 8192, "auto", "0.19.0", false, 5866, 384'432, 4693},
    {"R032", "phi-2", "h100", 1, 2048, "auto", "0.19.0", false, 6900, 226'112, 11041},
    {"R078", "qwen3-14b", "h100", 1, 32768, "auto", "0.11", false, 651, 42'656, 130},
    // Not R070 (Qwen3-235B-A22B at TP 4, 8.11 GiB, 178,880 tokens): 8.11 GiB at 48,128 B a token
    // holds at least 180,816; the log prints one rank's memory while the count follows the
    // smallest rank (docs/engines/vllm.md, "Proof").
};

VllmResult plan_record(const Record& record, std::uint64_t available) {
  const ModelSpec& m = catalog_model(record.model);
  VllmSettings settings;
  settings.tensor_parallel = record.tp;
  settings.max_model_len = record.max_len;
  if (std::string(record.kv) == "fp8") settings.kv_dtype = &parse_kv_dtype("fp8", *m.weight_dtype);
  settings.version = parse_vllm_version(record.version, "test");
  settings.prefix_caching = record.prefix_caching;
  settings.kv_cache_memory_bytes = available;
  settings.block_size = record.block_size;
  return plan_vllm(m, catalog_gpu(record.gpu), settings);
}

}  // namespace

TEST_CASE("vLLM logs: tokens and concurrency from the printed available memory", "[vllm]") {
  for (const Record& record : kRecords) {
    INFO(record.id << " " << record.model);
    // The printed GiB is rounded to 2 decimals: the real figure lies within half a hundredth.
    const VllmResult low = plan_record(record, centi_gib(record.available * 2 - 1) / 2);
    const VllmResult high = plan_record(record, centi_gib(record.available * 2 + 1) / 2);
    CHECK(low.gpu_kv_cache_tokens <= record.tokens);
    CHECK(record.tokens <= high.gpu_kv_cache_tokens);
    if (record.concurrency >= 0) {
      CHECK(std::round(low.max_concurrency() * 100) <= static_cast<double>(record.concurrency));
      CHECK(static_cast<double>(record.concurrency) <= std::round(high.max_concurrency() * 100));
    }
    CHECK(low.starts);
  }
}

TEST_CASE("vLLM paging by hand: one group, hybrids, padding, Mamba blocks", "[vllm]") {
  const auto at = [](const char* id, std::uint64_t available, std::uint64_t max_len = 8192) {
    Record record{"", id, "h100", 1, max_len, "auto", "0.19.0", false, 0, 0, 0, 0};
    return plan_record(record, available);
  };
  // Llama 3.1 8B: a page is 16 tokens x 8 heads x (128 + 128) x 2 B = 65,536 B; 32 layers a block.
  // 58.11 GiB = 62,394,952,581 B // 2,097,152 = 29,752 blocks = 476,032 tokens; 8,192 tokens need
  // 512 blocks: 58.11x.
  const VllmResult llama = at("llama3.1-8b", centi_gib(5811));
  CHECK(llama.page_bytes == 65'536);
  CHECK(llama.layers_per_block == 32);
  CHECK(llama.groups.size() == 1);
  CHECK(llama.num_blocks == 29'752);
  CHECK(llama.gpu_kv_cache_tokens == 476'032);
  CHECK(llama.blocks_per_request == 512);
  CHECK(llama.request_bytes == 512ull * 65'536 * 32);  // 1 GiB: 8,192 tokens x 131,072 B

  // Gemma 3 12B: 8 full + 40 sliding(1024) layers, both 131,072 B a page. Group size 8 (40 is not
  // within 1.5x of 8): 1 full + 5 sliding groups. 47.72 GiB // (131,072 x 8) = 48,865 blocks.
  // Per request: full 512 blocks, sliding cdiv(min(1023 + 8192, 8192), 16) + 1 = 513, x 5.
  const VllmResult gemma = at("gemma3-12b", centi_gib(4772));
  CHECK(gemma.groups.size() == 6);
  CHECK(gemma.layers_per_block == 8);
  CHECK(gemma.num_blocks == 48'865);
  CHECK(gemma.blocks_per_request == 512 + 5 * 513);
  CHECK(gemma.gpu_kv_cache_tokens == 48'865 / 6 * 16);  // 130,304, as printed in R009

  // Gemma 3 4B: 5 full + 29 sliding: 6 sliding groups of 5, one slot of padding.
  const VllmResult small = at("gemma3-4b", centi_gib(6251));
  CHECK(small.groups.size() == 7);
  std::uint32_t padding = 0;
  for (const VllmGroup& group : small.groups) padding += group.padding_layers;
  CHECK(padding == 1);
  CHECK(small.blocks_per_request == 512 + 6 * 513);  // 3,590
  // From 0.11 the 29 sliding layers are dealt to the 6 groups in turn (layers[i::6]): 5 layers in
  // each of the first five, 4 in the last; 0.10 cut them in runs of 5, the same here. Gemma 3 27B's
  // 52 sliding layers in 6 groups of 10 tell them apart: dealt 9, 9, 9, 9, 8, 8; in runs 10 x 5, 2.
  const auto sliding_layers = [](const VllmResult& r) {
    std::vector<std::uint32_t> out;
    for (const VllmGroup& group : r.groups)
      if (group.kind == LayerKind::sliding) out.push_back(group.layers);
    return out;
  };
  CHECK(sliding_layers(small) == std::vector<std::uint32_t>{5, 5, 5, 5, 5, 4});
  const VllmResult large = at("gemma3-27b", centi_gib(2000));
  CHECK(sliding_layers(large) == std::vector<std::uint32_t>{9, 9, 9, 9, 8, 8});
  Record old_record{"", "gemma3-27b", "h100", 1, 8192, "auto", "0.10.1.1", false, 0, 0, 0, 0};
  const VllmResult old_large = plan_record(old_record, centi_gib(2000));
  CHECK(sliding_layers(old_large) == std::vector<std::uint32_t>{10, 10, 10, 10, 10, 2});
  // The startup check's one request of 8,192 tokens (a page 131,072 B): full layers 8,192 / 16 =
  // 512 blocks, sliding ones (window 1,024) 513 (kvplan's blocks_per_request, as vLLM counts them).
  // From 0.14 (_max_memory_usage_bytes_from_groups) the group size's 10 pools x every group's
  // blocks, the 8 padding layers included: 10 x (6 x 513 + 512) pages = 35,900 pages. 0.10 summed
  // the real layers: 52 x 513 + 10 x 512 = 31,796 pages.
  REQUIRE(large.groups.front().blocks_per_request == 513);
  CHECK(large.request_bytes == 35'900ull * 131'072);
  CHECK(old_large.request_bytes == 31'796ull * 131'072);

  // Qwen3.5-35B-A3B at fp8 (R092): a full layer holds 2 x (256 + 256) x 1 B = 1,024 B a token; a
  // Gated DeltaNet layer 3 x 8,192 x 2 B of conv + 32 x 128 x 128 x 4 B of state = 2,146,304 B.
  // The attention block grows to 16 x cdiv(2,146,304, 16 x 1,024) = 2,096 tokens, a page of
  // 2,146,304 B. 10 full + 30 linear: groups of 10, 1 + 3. 5.98 GiB // 21,463,040 = 299 blocks.
  // Per request cdiv(131,072, 2,096) = 63 + 3 x 2 (prefix caching: 2 blocks a Mamba group) = 69.
  Record qwen{"", "qwen3.5-35b-a3b", "rtx5090", 1, 131072, "fp8", "0.24", true, 0, 0, 0, 0};
  const VllmResult hybrid = plan_record(qwen, centi_gib(598));
  CHECK(hybrid.groups.front().block_size == 2'096);
  CHECK(hybrid.page_bytes == 2'146'304);
  CHECK(hybrid.groups.size() == 4);
  CHECK(hybrid.num_blocks == 299);
  CHECK(hybrid.blocks_per_request == 69);
  CHECK(hybrid.gpu_kv_cache_tokens == 567'978);  // int(299 / 69 x 131,072), vLLM 0.24's line
  qwen.prefix_caching = false;
  CHECK(plan_record(qwen, centi_gib(598)).blocks_per_request == 63 + 3);
}

TEST_CASE("vLLM: MLA keeps one latent on every TP rank, in FlashMLA's 64-token blocks on Hopper", "[vllm]") {
  // DeepSeek-V2-Lite: 27 layers x 576 x 2 B = 31,104 B a token at any TP; a block spans 64 tokens
  // of all 27 layers: 64 x 1,152 x 27 = 1,990,656 B.
  VllmSettings settings;
  settings.max_model_len = 8192;
  settings.kv_cache_memory_bytes = 10 * GiB;
  for (const std::uint32_t tp : {1u, 2u, 4u}) {
    settings.tensor_parallel = tp;
    const VllmResult r = plan_vllm(catalog_model("deepseek-v2-lite"), catalog_gpu("h100"), settings);
    CHECK(r.kv_bytes_per_token == 31'104);
    CHECK(r.page_bytes * r.layers_per_block == 1'990'656);
    CHECK(r.num_blocks == 10 * GiB / 1'990'656);
  }
  // Blackwell (sm_120): CUTLASS MLA's 128; an Ampere card keeps 16.
  settings.tensor_parallel = 1;
  CHECK(plan_vllm(catalog_model("deepseek-v2-lite"), catalog_gpu("rtx5090"), settings).groups.front().block_size == 128);
  CHECK(plan_vllm(catalog_model("deepseek-v2-lite"), catalog_gpu("a100-80g"), settings).groups.front().block_size == 16);
}

TEST_CASE("vLLM: TP splits KV heads until each rank has one, then replicates", "[vllm]") {
  // Qwen3-235B-A22B has 4 KV heads: 94 x 1 x 256 x 2 B = 48,128 B a token per GPU at TP 4 and 8.
  VllmSettings settings;
  settings.max_model_len = 8192;
  settings.kv_cache_memory_bytes = 8 * GiB;
  settings.tensor_parallel = 4;
  CHECK(plan_vllm(catalog_model("qwen3-235b-a22b"), catalog_gpu("h100"), settings).kv_bytes_per_token == 48'128);
  settings.tensor_parallel = 8;
  CHECK(plan_vllm(catalog_model("qwen3-235b-a22b"), catalog_gpu("h100"), settings).kv_bytes_per_token == 48'128);
  settings.tensor_parallel = 3;
  CHECK_THROWS_WITH(plan_vllm(catalog_model("qwen3-235b-a22b"), catalog_gpu("h100"), settings),
                    Catch::Contains("-tp 3: vLLM needs the 4 KV heads to be divisible"));
}

TEST_CASE("vLLM: the startup check and the longest max_model_len that fits", "[vllm]") {
  // R077: a model of 49,152 B a token (48 layers x 4 KV heads x 128 x fp8). 221,000 tokens need
  // cdiv(221,000, 16) x 16 x 49,152 B = 10.12 GiB; with 5.59 GiB vLLM suggests 122,080 tokens.
  ModelSpec m;
  m.id = m.name = "r077";
  m.attention_heads = 32;
  m.weight_dtype = &parse_weight_dtype("bf16");
  m.params = 1;
  m.max_context = 221'000;
  m.vocab_size = 151'936;
  for (int i = 0; i < 48; ++i) m.layers.push_back(LayerSpec{.kind = LayerKind::full, .kv_heads = 4, .k_head_dim = 128, .v_head_dim = 128});
  VllmSettings settings;
  settings.kv_dtype = &parse_kv_dtype("fp8", *m.weight_dtype);
  settings.kv_cache_memory_bytes = 122'080ull * 49'152 + 1'000;  // 5.59 GiB, as R077 prints it
  const VllmResult r = plan_vllm(m, catalog_gpu("h100"), settings);
  CHECK(r.request_bytes == 13'813ull * 16 * 49'152);
  CHECK(format_gib(static_cast<std::int64_t>(r.request_bytes)) == "10.12 GiB");
  CHECK_FALSE(r.starts);
  REQUIRE(r.estimated_max_model_len);
  CHECK(*r.estimated_max_model_len == 122'080);
}

TEST_CASE("vLLM: the estimated budget against the components vLLM 0.19.0 logged", "[vllm]") {
  // available = 79.19 GiB x 0.95 - weights - 16 B x 1,024 seqs x vocab - 0.25 GiB (TP 1) / 2.1 GiB.
  // The logs: R018 58.11 (Llama 3.1 8B), R046 58.53 (Qwen2.5-7B), R055 57.50 (Qwen3-8B), R006 20.59
  // (Gemma 2 27B), R027 63.76 (Llama 3.1 8B, TP 2), R052 63.84 (Qwen2.5-7B, TP 2).
  const GpuSpec& h100 = catalog_gpu("h100");
  REQUIRE(h100.cuda_total_bytes);
  CHECK(format_gib(static_cast<std::int64_t>(*h100.cuda_total_bytes)) == "79.19 GiB");
  struct Logged {
    const char* model;
    std::uint32_t tp;
    std::int64_t available;
  };
  for (const Logged& logged : {Logged{"llama3.1-8b", 1, 5811}, Logged{"qwen2.5-7b", 1, 5853}, Logged{"qwen3-8b", 1, 5750},
                               Logged{"gemma2-27b", 1, 2059}, Logged{"llama3.1-8b", 2, 6376}, Logged{"qwen2.5-7b", 2, 6384}}) {
    INFO(logged.model << " TP " << logged.tp);
    VllmSettings settings;
    settings.tensor_parallel = logged.tp;
    settings.max_model_len = 8192;
    settings.utilization_millionths = 950'000;
    settings.version = VllmVersion::v0_11;
    const VllmResult r = plan_vllm(catalog_model(logged.model), h100, settings);
    CHECK(std::abs(r.budget.available - static_cast<std::int64_t>(centi_gib(logged.available))) <
          static_cast<std::int64_t>(3 * GiB / 10));
    CHECK_FALSE(r.budget.cuda_graphs_subtracted);
  }
  // Llama 3.1 8B's sampler estimate: 16 x 1,024 x 128,256 B = 1.96 GiB, what R018 logged.
  VllmSettings settings;
  settings.max_model_len = 8192;
  CHECK(format_gib(static_cast<std::int64_t>(plan_vllm(catalog_model("llama3.1-8b"), h100, settings).budget.activation)) ==
        "1.96 GiB");
  // From 0.21 the CUDA-graph estimate (0.45 + 0.014 x 32 layers = 0.90 GiB) comes off too.
  const VllmResult latest = plan_vllm(catalog_model("llama3.1-8b"), h100, settings);
  CHECK(latest.budget.cuda_graphs_subtracted);
  CHECK(format_gib(static_cast<std::int64_t>(latest.budget.cuda_graphs)) == "0.90 GiB");
}

TEST_CASE("vLLM refuses what it has no kernel for, and kvplan what the profile does not model", "[vllm]") {
  VllmSettings settings;
  settings.max_model_len = 8192;
  settings.kv_cache_memory_bytes = GiB;
  settings.kv_dtype = &parse_kv_dtype("q8_0", parse_weight_dtype("bf16"));
  CHECK_THROWS_WITH(plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("h100"), settings), Catch::Contains("--kv-cache-dtype q8_0"));
  settings.kv_dtype = nullptr;
  try {
    plan_vllm(catalog_model("deepseek-v3.2"), catalog_gpu("a100"), settings);
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported_architecture);
    CHECK_THAT(error.what(), Catch::Contains("a DSA model (sparse MLA with an indexer) on sm_80"));
  }
  // A spec file's recurrent state without its shards cannot be split across ranks.
  settings.tensor_parallel = 2;
  ModelSpec unsplit = catalog_model("qwen3.5-27b");
  for (LayerSpec& layer : unsplit.layers)
    for (StateTensor& tensor : layer.state) tensor.shards = 0;
  try {
    plan_vllm(unsplit, catalog_gpu("h100"), settings);
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported_architecture);
    CHECK_THAT(error.what(), Catch::Contains("not stated"));
  }
}

TEST_CASE("vLLM --enforce-eager: from 0.21 the CUDA-graph estimate leaves the budget", "[vllm]") {
  // Llama 3.1 8B has 32 layers: the estimate is (0.45 + 0.014 x 32) GiB = 0.898 GiB =
  // 964,220,157 B (1,073,741,824 x 0.898, rounded down), and eager mode frees exactly that for the cache.
  VllmSettings settings;
  settings.max_model_len = 8192;
  const VllmResult graphs = plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("h100"), settings);
  settings.enforce_eager = true;
  const VllmResult eager = plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("h100"), settings);
  CHECK(graphs.budget.cuda_graphs == 964'220'157);
  CHECK(eager.budget.cuda_graphs == 0);
  CHECK_FALSE(eager.budget.cuda_graphs_subtracted);
  CHECK(eager.budget.available - graphs.budget.available == 964'220'157);
  // Before 0.21 graphs were never in the budget: eager changes nothing there.
  settings.version = VllmVersion::v0_11;
  const std::int64_t eager_0_19 = plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("h100"), settings).budget.available;
  settings.enforce_eager = false;
  CHECK(plan_vllm(catalog_model("llama3.1-8b"), catalog_gpu("h100"), settings).budget.available == eager_0_19);
  // The flag as vLLM spells it, on the command line and in kvplan check.
  const testing::ProcessResult line = testing::run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --max-model-len 8k --enforce-eager");
  CHECK(line.exit_code == 0);
  CHECK_THAT(line.out, Catch::Contains("--enforce-eager: no CUDA graphs, none in the budget"));
  CHECK(testing::run_kvplan("check --cmd 'vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --enforce-eager' --gpu h100")
            .exit_code == 0);
}

TEST_CASE("vLLM versions: 0.10, 0.11 to 0.20, 0.21 and later", "[vllm]") {
  CHECK(parse_vllm_version("0.10.1.1", "--vllm-version") == VllmVersion::v0_10);
  CHECK(parse_vllm_version("0.10", "--vllm-version") == VllmVersion::v0_10);
  CHECK(parse_vllm_version("0.19.0", "--vllm-version") == VllmVersion::v0_11);
  CHECK(parse_vllm_version("0.20", "--vllm-version") == VllmVersion::v0_11);
  CHECK(parse_vllm_version("0.21.0", "--vllm-version") == VllmVersion::v0_21);
  CHECK(parse_vllm_version("latest", "--vllm-version") == VllmVersion::v0_21);
  for (const char* bad : {"0.9", "1.0", "0.x", "", "0.19.", "v0.19"})
    CHECK_THROWS_WITH(parse_vllm_version(bad, "--vllm-version"), Catch::StartsWith("--vllm-version: '"));
}

TEST_CASE("kvplan --runtime vllm: vLLM's own lines, per GPU, in the table and the JSON", "[vllm]") {
  using kvplan::testing::run_kvplan;
  // R009 again, through the command line: 47.72 GiB = 51,238,959,841 B.
  const auto text = run_kvplan("--runtime vllm --model gemma3-12b --gpu h100 --max-model-len 8192 --vllm-version 0.19 "
                               "--kv-cache-memory 51238959841B");
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("GPU KV cache size: 130,304 tokens (48,865 blocks)") &&
                           Catch::Contains("Maximum concurrency for 8,192 tokens per request: 15.88x") &&
                           Catch::Contains("6 groups: 5 x [8 sliding(1024), 16-token blocks, 513 a request]; "
                                           "1 x [8 full, 16-token blocks, 512 a request]; a page 131,072 B"));

  // Llama 3.1 70B on 4 H100s: each holds 80 layers x 2 KV heads x 256 x 2 B = 80 KiB a token and a
  // quarter of the 141,107,412,992 B checkpoint, and the whole rotary table, 131,072 x 128 x 2 B.
  const auto json = run_kvplan("--runtime vllm --model llama3.1-70b --gpu h100 -tp 4 --ctx 32k --batch 8 --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["settings"]["runtime"] == "vllm");
  const nlohmann::json& row = doc["rows"][0];
  CHECK(row["kv_bytes_per_token"] == 81'920);
  CHECK(row["weights_bytes"] == 141'107'412'992ull / 4 + 33'554'432);
  CHECK(row["kv_bytes"] == 8ull * 32'768 * 81'920);  // 8 requests of 2,048 blocks x 16 x 80 KiB
  const nlohmann::json& v = doc["vllm"]["rows"][0];
  CHECK(v["tensor_parallel"] == 4);
  CHECK(v["blocks_per_request"] == 2'048);
  CHECK(v["budget"]["total_is_cuda_visible"] == true);
  CHECK(v["budget"]["cuda_graphs_subtracted"] == true);  // the default rules are the latest
  CHECK(v["starts"] == true);
  CHECK(row["fits"] == (v["num_blocks"].get<std::uint64_t>() >= 8 * 2'048));
}

TEST_CASE("kvplan --runtime vllm: flags refused where they change nothing", "[vllm]") {
  using kvplan::testing::run_kvplan;
  const auto check = [](const std::string& args, const std::string& expected) {
    INFO("kvplan " << args);
    kvplan::testing::check_refused(run_kvplan(args), expected);
  };
  // -tp is vLLM's spelling, and SGLang's and TensorRT-LLM's too: the refusal names all three.
  check("--model llama3.1-8b --gpu h100 -tp 2",
        "--tensor-parallel-size is a vLLM, SGLang and TensorRT-LLM flag: add --runtime vllm, --runtime sglang or --runtime trtllm");
  check("--model llama3.1-8b --gpu h100 --kv-cache-memory 10GiB", "--kv-cache-memory is a vLLM flag");
  check("--runtime vllm --model llama3.1-8b --gpu h100 --overhead 1GiB", "--overhead does not apply to the vLLM profile");
  check("--runtime vllm --model llama3.1-8b --gpu h100 --weight-dtype fp8", "--weight-dtype does not apply");
  check("--runtime vllm --model llama3.1-8b --gpu h100 --vllm-version 0.9", "--vllm-version: '0.9' is not a vLLM version");
  check("--runtime vllm --model llama3.1-8b --gpu h100 -tp 3", "-tp 3: vLLM needs the 8 KV heads to be divisible");
  check("--runtime vllm --model llama3.1-8b --gpu h100 --kv-cache-dtype int4", "--kv-cache-dtype int4");
  check("--runtime llama.cpp --model llama3.1-8b --gpu h100 --block-size 32", "--block-size is a vLLM flag");
  // More sequences than max_num_seqs never run at once, however much memory is left.
  const auto many = run_kvplan("--runtime vllm --model qwen3-0.6b --gpu h100 --ctx 1k --batch 300 --max-num-seqs 256 --format json");
  REQUIRE(many.exit_code == 0);
  CHECK(nlohmann::json::parse(many.out)["rows"][0]["fits"] == false);
  // --check: 1 when vLLM would not start with 128K-token requests in 4 GiB.
  CHECK(run_kvplan("--runtime vllm --model llama3.1-8b --gpu h100 --ctx 128k --kv-cache-memory 4GiB --check").exit_code == 1);
}

TEST_CASE("kvplan --runtime vllm: gpt-oss-120b's refusals before 0.17 are the sort's warm-up", "[vllm]") {
  using kvplan::testing::ProcessResult;
  using kvplan::testing::run_kvplan;
  // vLLM loaded gpt-oss-120b as 65.97 GiB (R073); given that figure, the row is planned on it.
  const ProcessResult given =
      run_kvplan("--runtime vllm --model gpt-oss-120b --gpu h100 --max-model-len 8k --weights 65.97GiB --format json");
  REQUIRE(given.exit_code == 0);
  const auto doc = nlohmann::json::parse(given.out);
  // 65.97 x 2^30 = 70,834,748,129.28, and the rotary table on top (yarn x32 of 4,096 positions x 64 x
  // 2 B = 16,777,216 B): vLLM's figure holds it already, so 16 MiB too much, on the safe side.
  CHECK(doc["rows"][0]["weights_bytes"] == 70'851'525'345ULL);
  // R073 (0.10, vLLM's defaults, 65.9651 GiB loaded): vLLM found -2.14 GiB. The sort's warm-up,
  // 39 x 1,024 x 201,088 = 8,030,650,368 B, and the MoE workspace of 8,192 tokens, 566,231,040 B,
  // leave 71.27 - 65.98 - 8.01 = -2.72 GiB: no start, as logged (16 B an entry left +1.69 GiB).
  const auto budget_of = [](const ProcessResult& run) {
    REQUIRE(run.exit_code == 0);
    return nlohmann::json::parse(run.out)["vllm"]["rows"][0]["budget"];
  };
  const auto r073 = budget_of(run_kvplan("--runtime vllm --model gpt-oss-120b --gpu h100 --vllm-version 0.10 "
                                         "--weights 65.9651GiB --format json"));
  CHECK(r073["sampler"] == "pytorch_sort");
  CHECK(r073["activation_estimate_bytes"] == 8'030'650'368ULL + 566'231'040ULL);
  CHECK(r073["available_bytes"] == -2'916'491'880LL);
  // R074 (~0.11, utilization 0.95, 1,024 batched tokens): vLLM found 1.71 GiB, too little for the
  // default 131,072-token request; kvplan 1.52 GiB (8,030,650,368 + 70,778,880 B of warm-up), and
  // no start.
  const ProcessResult r074 = run_kvplan("--runtime vllm --model gpt-oss-120b --gpu h100 --vllm-version 0.11 "
                                        "--gpu-memory-utilization 0.95 --max-num-batched-tokens 1024 --format json");
  CHECK(budget_of(r074)["available_bytes"] == 1'634'900'114LL);
  CHECK(nlohmann::json::parse(r074.out)["rows"][0]["starts"] == false);
  // FlashInfer's sampler, as its log line says (VLLM_USE_FLASHINFER_SAMPLER=1): 16 B an entry.
  const auto flashinfer = budget_of(run_kvplan("--runtime vllm --model gpt-oss-120b --gpu h100 --vllm-version 0.10 "
                                               "--weights 65.9651GiB --use-flashinfer-sampler 1 --format json"));
  CHECK(flashinfer["sampler"] == "flashinfer");
  CHECK(flashinfer["activation_estimate_bytes"] == 3'294'625'792ULL + 566'231'040ULL);
}
