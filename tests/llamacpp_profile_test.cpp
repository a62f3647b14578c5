// The llama.cpp profile against real llama.cpp logs (/work/shared/reference/llamacpp-logs.jsonl,
// record ids Rnnn; tests/llamacpp/ARCHS.md for the fixtures) and hand arithmetic.

#include <atomic>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "support/temp_dir.h"
#include "cli/cli.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "loaders/gguf_model.h"
#include "engines/llamacpp/rules.h"
#include "kvplan/units.h"
#include "cli/arguments.h"
#include "support/llamacpp_fixture_model.h"
#include "support/run_binary.h"
#include "kvplan/plan.h"

using kvplan::GiB;
using kvplan::LayerKind;
using kvplan::LayerSpec;
using kvplan::LlamaCppFlashAttn;
using kvplan::LlamaCppResult;
using kvplan::LlamaCppSettings;
using kvplan::MiB;
using kvplan::ModelSpec;
using kvplan::plan_llamacpp;

using kvplan::testing::load_llamacpp_fixture;
using kvplan::testing::TempDir;

namespace {


/// `layers` attention layers of `kind`, `kv` heads of k/v widths, as a hand-built spec.
ModelSpec attention_model(std::uint32_t layers, std::uint32_t heads, std::uint32_t kv, std::uint32_t k, std::uint32_t v,
                          std::string architecture = "llama") {
  ModelSpec spec;
  spec.id = spec.name = "hand-built";
  spec.architecture = std::move(architecture);
  spec.attention_heads = heads;
  spec.params = 1'000'000;
  spec.weight_dtype = &kvplan::parse_weight_dtype("bf16");
  for (std::uint32_t i = 0; i < layers; ++i) {
    LayerSpec layer;
    layer.kv_heads = kv;
    layer.k_head_dim = k;
    layer.v_head_dim = v;
    spec.layers.push_back(layer);
  }
  return spec;
}

const kvplan::GgmlType* type(const char* name) { return &kvplan::ggml_type_by_name(name); }

LlamaCppSettings settings(std::uint64_t n_ctx, std::uint32_t seqs, const char* k = "f16", const char* v = "f16",
                          LlamaCppFlashAttn fa = LlamaCppFlashAttn::on) {
  LlamaCppSettings s;
  s.n_ctx = n_ctx;
  s.n_parallel = seqs;
  s.type_k = type(k);
  s.type_v = type(v);
  s.flash_attn = fa;
  return s;
}


std::string refusal(const ModelSpec& model, const LlamaCppSettings& s) {
  try {
    plan_llamacpp(model, s);
  } catch (const kvplan::Error& e) {
    CHECK(e.code() == kvplan::ExitCode::invalid_input);
    return e.what();
  }
  FAIL("llama.cpp would refuse, kvplan did not");
  return "";
}

bool has_rule(const LlamaCppResult& r, const std::string& text) {
  for (const std::string& rule : r.rules)
    if (rule.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("real logs: plain GQA caches, q8_0 and f16", "[llamacpp]") {
  SECTION("R108 Qwen3-235B-A22B, -c 32768 -fa -ctk q8_0 -ctv q8_0: K (q8_0) 1598.00 MiB") {
    // 94 layers x 4 KV heads x 128 = 512 values a row, q8_0: 512 / 32 x 34 = 544 B; x 32768 cells
    // = 17,825,792 B a layer; x 94 = 1,675,624,448 B = 1598.00 MiB exactly.
    const LlamaCppResult r = plan_llamacpp(attention_model(94, 64, 4, 128, 128, "qwen3moe"), settings(32768, 1, "q8_0", "q8_0"));
    REQUIRE(r.caches.size() == 1);
    CHECK(r.caches[0].cells == 32768);
    CHECK(r.caches[0].layers == 94);
    CHECK(r.caches[0].k_bytes == 1598 * MiB);
    CHECK(r.caches[0].v_bytes == 1598 * MiB);
    CHECK(r.kv_bytes == 3196 * MiB);  // "KV self size = 3196.00 MiB"
  }
  SECTION("R109 the same at -c 16384: 799.00 MiB each; CPU compute buffer 304.75 MiB") {
    kvplan::LlamaCppModelFacts facts;
    facts.n_vocab = 151936;
    facts.n_embd = 4096;
    const LlamaCppResult r =
        plan_llamacpp(attention_model(94, 64, 4, 128, 128, "qwen3moe"), settings(16384, 1, "q8_0", "q8_0"), facts);
    CHECK(r.caches[0].k_bytes == 799 * MiB);
    // The estimate's logits phase: 4 B x 512 x (151936 + 4096) = 319,553,536 B = 304.75 MiB, the
    // log's "CPU compute buffer size = 304.75 MiB".
    CHECK(r.compute_estimate_bytes == 319'553'536);
  }
  SECTION("R106 Qwen3-30B-A3B, -c 32768 f16: K 1536.00 MiB; CUDA0 compute buffer 300.75 MiB") {
    kvplan::LlamaCppModelFacts facts;
    facts.n_vocab = 151936;
    facts.n_embd = 2048;
    const LlamaCppResult r = plan_llamacpp(attention_model(48, 32, 4, 128, 128, "qwen3moe"), settings(32768, 1), facts);
    CHECK(r.caches[0].k_bytes == 1536 * MiB);  // 48 x 512 x 2 B x 32768
    CHECK(r.compute_estimate_bytes == 315'359'232);  // 4 x 512 x (151936 + 2048) = 300.75 MiB
  }
  SECTION("R110 GLM-Z1-32B, -c 5120 q8_0: K 81.02 MiB; CPU compute 308.00 MiB") {
    kvplan::LlamaCppModelFacts facts;
    facts.n_vocab = 151552;
    facts.n_embd = 6144;
    const LlamaCppResult r = plan_llamacpp(attention_model(61, 48, 2, 128, 128, "glm4"), settings(5120, 1, "q8_0", "q8_0"), facts);
    // 61 layers x 256 / 32 x 34 B x 5120 = 84,951,040 B = 81.015625 MiB, printed 81.02
    CHECK(r.caches[0].k_bytes == 84'951'040);
    CHECK(r.compute_estimate_bytes == 308 * MiB);  // 4 x 512 x (151552 + 6144)
  }
  SECTION("R131 Llama-3.1-405B, 4096 cells: K 1008.00 MiB; output buffer 0.49 MiB") {
    kvplan::LlamaCppModelFacts facts;
    facts.n_vocab = 128256;
    facts.n_embd = 16384;
    const LlamaCppResult r = plan_llamacpp(attention_model(126, 128, 8, 128, 128), settings(4096, 1), facts);
    CHECK(r.caches[0].k_bytes == 1008 * MiB);
    CHECK(r.output_buffer_bytes == 128256 * 4);  // 513,024 B = 0.49 MiB: one sequence's logits
  }
}

TEST_CASE("real logs: iSWA, MLA and the pre-MLA DeepSeek cache", "[llamacpp]") {
  SECTION("R114 gpt-oss-20b, -c 131072: non-SWA 131072 cells, SWA 768 cells, 12 layers each") {
    // gpt-oss alternates sliding (128) and full layers; 8 KV heads x 64 = 512 values a row.
    ModelSpec gpt_oss = attention_model(24, 64, 8, 64, 64, "gpt_oss");
    for (std::size_t i = 0; i < 24; i += 2) {
      gpt_oss.layers[i].kind = LayerKind::sliding;
      gpt_oss.layers[i].window = 128;
    }
    const LlamaCppResult r = plan_llamacpp(gpt_oss, settings(131072, 1));
    REQUIRE(r.caches.size() == 2);
    CHECK(r.caches[0].role == "non-SWA KV");
    CHECK(r.caches[0].cells == 131072);
    CHECK(r.caches[0].layers == 12);
    CHECK(r.caches[0].k_bytes == 1536 * MiB);
    // pad256(min(131072, 128 x 1 + 512)) = pad256(640) = 768. (R132, at b6182, logged 640: the
    // pad to 256 came later, https://github.com/ggml-org/llama.cpp/issues/17037.)
    CHECK(r.caches[1].cells == 768);
    CHECK(r.caches[1].layers == 12);
    CHECK(r.caches[1].k_bytes == 9 * MiB);
    CHECK(has_rule(r, "pad256(min(n_ctx_seq 131072, n_swa 128 x 1 + n_ubatch 512)) = 768"));
  }
  SECTION("R112 DeepSeek-R1 without MLA, 4 x 512 cells in one stream, FA off: K 5856 MiB, V 3904 MiB") {
    // 128 KV heads: K rows 128 x 192 = 24576, V rows 128 x 128 = 16384 (no padding: all alike).
    LlamaCppSettings s = settings(2048, 4, "f16", "f16", LlamaCppFlashAttn::off);
    s.kv_unified = true;  // that build had only the unified cache
    kvplan::LlamaCppModelFacts facts;
    facts.n_vocab = 129280;
    facts.n_embd = 7168;
    const LlamaCppResult r = plan_llamacpp(attention_model(61, 128, 128, 192, 128, "deepseek2"), s, facts);
    CHECK(r.caches[0].cells == 2048);
    CHECK(r.caches[0].streams == 1);
    CHECK(r.caches[0].k_bytes == 5856 * MiB);
    CHECK(r.caches[0].v_bytes == 3904 * MiB);
    CHECK(r.v_trans);
    // Without flash attention the attention layer peaks: 4 x 512 x (7168 + 128 x (2 x 192 + 128))
    // = 142 MiB, the f32 mask 2048 x 512 x 4 = 4 MiB, the scores 4 x 512 x 128 x 2048 = 512 MiB:
    // 658 MiB, 1.8% under the log's "CPU compute buffer size = 670.01 MiB".
    CHECK(r.compute_estimate_bytes == 658 * MiB);
  }
  SECTION("R113 DeepSeek-V3 MLA, 16384 cells: K (f16) 1098.00 MiB, and no V in v0.4.0") {
    ModelSpec mla = attention_model(61, 128, 1, 576, 0, "deepseek2");
    for (LayerSpec& layer : mla.layers) layer.kind = LayerKind::mla;
    const LlamaCppResult r = plan_llamacpp(mla, settings(16384, 1));
    CHECK(r.caches[0].k_bytes == 1098 * MiB);  // 61 x 576 x 2 B x 16384
    // b5331 still wrote a V cache of 512 (976 MiB); v0.4.0 allocates none (has_v = !is_mla).
    CHECK(r.caches[0].v_bytes == 0);
    CHECK(has_rule(r, "stores K only"));
  }
}

TEST_CASE("fixtures: the exact bytes llama.cpp's memory breakdown gave (tests/llamacpp/ARCHS.md)", "[llamacpp]") {
  // node-llama-cpp's --context-size 4096 --sequences 2: n_ctx 8192; n_ubatch 513 for SWA models.
  SECTION("gemma3: 4096 + 1280 cells, 10,747,904 B in [10747876, 10747980]") {
    const kvplan::GgufModel m = load_llamacpp_fixture("gemma3");
    LlamaCppSettings s = settings(8192, 2, "f16", "f16", LlamaCppFlashAttn::off);
    s.n_batch = s.n_ubatch = 513;
    s.n_gpu_layers = 0;  // the harness runs on the CPU
    const LlamaCppResult r = plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
    REQUIRE(r.caches.size() == 2);
    CHECK(r.caches[0].cells == 4096);
    CHECK(r.caches[0].layers == 1);
    CHECK(r.caches[1].cells == 1280);  // pad256(512 + 513)
    CHECK(r.caches[1].layers == 5);
    // 1 x 128 x 2 B x 4096 x 2 streams x (K + V) + 5 x 128 x 2 x 1280 x 2 x 2
    CHECK(r.kv_bytes == 4'194'304 + 6'553'600);
    CHECK(r.model_host_bytes == m.spec.weights_bytes);  // all F32 tensors: no alignment gaps
  }
  SECTION("qwen3next: 4,194,304 KV + 2 cells x 3 layers x (1536 + 4096) = 4,228,096") {
    const kvplan::GgufModel m = load_llamacpp_fixture("qwen3next");
    const LlamaCppResult r = plan_llamacpp(m.spec, settings(8192, 2), llamacpp_facts(m.spec));
    CHECK(r.kv_bytes + r.recurrent_bytes == 4'228'096);
    REQUIRE(r.recurrent);
    CHECK(r.recurrent->cells == 2);
    CHECK(r.recurrent->layers == 3);
    CHECK(r.recurrent->logged_layers == 4);  // the log line prints n_layer
  }
  SECTION("lfm2: 4,194,304 + 2 cells x 2 conv layers x 1024 = 4,198,400") {
    const kvplan::GgufModel m = load_llamacpp_fixture("lfm2");
    const LlamaCppResult r = plan_llamacpp(m.spec, settings(8192, 2), llamacpp_facts(m.spec));
    CHECK(r.kv_bytes + r.recurrent_bytes == 4'198'400);
    CHECK(r.recurrent->s_bytes == 0);
  }
  SECTION("mamba2: no KV cache, 4 B x 2 cells x 4 layers x (480 + 2048) = 80,896, whatever the context") {
    const kvplan::GgufModel m = load_llamacpp_fixture("mamba2");
    for (std::uint64_t n_ctx : {512u, 8192u, 65536u}) {
      const LlamaCppResult r = plan_llamacpp(m.spec, settings(n_ctx, 2), llamacpp_facts(m.spec));
      CHECK(r.caches.empty());
      CHECK(r.recurrent_bytes == 80'896);
    }
  }
  SECTION("deepseek2 MLA fixture: 8.00 MiB of K, 0 of V") {
    const kvplan::GgufModel m = load_llamacpp_fixture("deepseek2");
    const LlamaCppResult r = plan_llamacpp(m.spec, settings(8192, 2), llamacpp_facts(m.spec));
    CHECK(r.caches[0].k_bytes == 8 * MiB);  // 4 layers x 128 x 2 B x 4096 x 2 streams
    CHECK(r.caches[0].v_bytes == 0);
  }
  SECTION("gemma3 with every layer sliding: the non-SWA cache exists with 0 layers") {
    const kvplan::GgufModel m = load_llamacpp_fixture("gemma3-allswa");
    LlamaCppSettings s = settings(8192, 2);
    s.n_batch = s.n_ubatch = 513;
    const LlamaCppResult r = plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
    REQUIRE(r.caches.size() == 2);
    CHECK(r.caches[0].layers == 0);
    CHECK(r.caches[0].k_bytes == 0);
    CHECK(r.caches[1].layers == 4);
    CHECK(r.caches[1].k_bytes + r.caches[1].v_bytes == 5 * MiB);
  }
}

TEST_CASE("the context: padding, per-sequence streams, batch clipping", "[llamacpp]") {
  const ModelSpec model = attention_model(4, 4, 2, 32, 32);
  SECTION("-c 5000 -np 3: n_ctx pad256 = 5120, n_ctx_seq pad256(1706) = 1792, n_ctx 3 x 1792 = 5376") {
    const LlamaCppResult r = plan_llamacpp(model, settings(5000, 3));
    CHECK(r.n_ctx_seq == 1792);
    CHECK(r.n_ctx == 5376);
    CHECK(r.caches[0].streams == 3);
    CHECK(has_rule(r, "n_ctx is not divisible by n_seq_max"));
  }
  SECTION("ARCHS.md: passed 15104 with 3 sequences -> n_ctx_seq 5120, n_ctx 15360") {
    const LlamaCppResult r = plan_llamacpp(model, settings(15104, 3));
    CHECK(r.n_ctx_seq == 5120);
    CHECK(r.n_ctx == 15360);
  }
  SECTION("ARCHS.md: raw n_ctx 300, 3 sequences -> n_batch = n_ubatch = 300, n_ctx_seq 256, n_ctx 768") {
    const LlamaCppResult r = plan_llamacpp(model, settings(300, 3));
    CHECK(r.n_batch == 300);
    CHECK(r.n_ubatch == 300);
    CHECK(r.n_ctx_seq == 256);
    CHECK(r.n_ctx == 768);
  }
  SECTION("--kv-unified: one stream holding the whole n_ctx") {
    LlamaCppSettings s = settings(8192, 4);
    s.kv_unified = true;
    const LlamaCppResult r = plan_llamacpp(model, s);
    CHECK(r.n_ctx_seq == 8192);
    CHECK(r.caches[0].streams == 1);
    CHECK(r.caches[0].k_bytes == 4 * 64 * 2 * 8192);
  }
  SECTION("-c 0: the trained context") {
    ModelSpec trained = model;
    trained.max_context = 40960;
    CHECK(plan_llamacpp(trained, settings(0, 1)).n_ctx == 40960);
    CHECK_THROWS_WITH(plan_llamacpp(model, settings(0, 1)), Catch::Contains("does not state"));
  }
}

TEST_CASE("iSWA cells: unified streams multiply the window, --swa-full holds the full context", "[llamacpp]") {
  const kvplan::GgufModel m = load_llamacpp_fixture("gemma3");
  LlamaCppSettings s = settings(16384, 4);
  s.kv_unified = true;
  const LlamaCppResult unified = plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
  CHECK(unified.caches[1].cells == 2560);  // pad256(min(16384, 512 x 4 + 512))
  CHECK(unified.caches[1].streams == 1);
  s.kv_unified = false;
  const LlamaCppResult per_seq = plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
  CHECK(per_seq.caches[1].cells == 1024);  // pad256(min(4096, 512 + 512)) per stream
  CHECK(per_seq.caches[1].streams == 4);
  s.swa_full = true;
  const LlamaCppResult full = plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
  CHECK(full.caches[1].cells == 4096);
  CHECK(has_rule(full, "--swa-full"));
}

TEST_CASE("V rows padded to the widest layer when flash attention is off", "[llamacpp]") {
  // Gemma-4-like: sliding layers 2 KV heads x 256, a global layer 2 x 512: V widths 512 and 1024.
  ModelSpec model = attention_model(6, 8, 2, 256, 256, "gemma4");
  for (std::size_t i = 0; i < 5; ++i) {
    model.layers[i].kind = LayerKind::sliding;
    model.layers[i].window = 512;
  }
  model.layers[5].k_head_dim = model.layers[5].v_head_dim = 512;
  const LlamaCppResult off = plan_llamacpp(model, settings(4096, 1, "f16", "f16", LlamaCppFlashAttn::off));
  // non-SWA: 1 layer, V 1024 wide; SWA (pad256(512 + 512) = 1024 cells): 5 layers, V padded to 1024.
  CHECK(off.caches[0].v_bytes == 1 * 1024 * 2 * 4096);
  CHECK(off.caches[1].v_bytes == 5 * 1024 * 2 * 1024);
  CHECK(off.caches[1].k_bytes == 5 * 512 * 2 * 1024);  // K is never padded
  CHECK(has_rule(off, "every V row padded to the widest, 1024"));
  const LlamaCppResult on = plan_llamacpp(model, settings(4096, 1, "f16", "f16", LlamaCppFlashAttn::on));
  CHECK(on.caches[1].v_bytes == 5 * 512 * 2 * 1024);
  // -fa auto lays the cache out as flash attention does: created before auto is resolved.
  const LlamaCppResult automatic = plan_llamacpp(model, settings(4096, 1, "f16", "f16", LlamaCppFlashAttn::automatic));
  CHECK(automatic.caches[1].v_bytes == on.caches[1].v_bytes);
}

TEST_CASE("what llama.cpp refuses, in its words", "[llamacpp]") {
  const ModelSpec model = attention_model(4, 4, 2, 32, 32);
  CHECK_THAT(refusal(model, settings(4096, 1, "f16", "q8_0", LlamaCppFlashAttn::off)),
             Catch::Contains("\"quantized V cache requires flash_attn to be enabled\""));
  // -fa auto switches flash attention on for a quantized V cache.
  const LlamaCppResult automatic = plan_llamacpp(model, settings(4096, 1, "f16", "q8_0", LlamaCppFlashAttn::automatic));
  CHECK(automatic.flash_attn);
  CHECK(has_rule(automatic, "enabling flash_attn since it is required for quantized V cache"));
  // A quantized K without flash attention is fine.
  CHECK(plan_llamacpp(model, settings(4096, 1, "q4_0", "f16", LlamaCppFlashAttn::off)).caches[0].k_bytes ==
        4 * 64 / 32 * 18 * 4096);
  ModelSpec mla = attention_model(2, 4, 1, 576, 0, "deepseek2");
  for (LayerSpec& layer : mla.layers) layer.kind = LayerKind::mla;
  CHECK_THAT(refusal(mla, settings(4096, 1, "q8_0", "f16")),
             Catch::Contains("\"model does not support different K (q8_0) and V (f16) cache types\""));
  const ModelSpec head80 = attention_model(2, 4, 1, 80, 80);
  CHECK_THAT(refusal(head80, settings(4096, 1, "q8_0", "q8_0")),
             Catch::Contains("\"K cache type q8_0 with block size 32 does not divide n_embd_head_k=80\""));
  CHECK_THROWS_WITH(kvplan::parse_llamacpp_cache_type("fp8", "--cache-type-k"),
                    Catch::Contains("llama.cpp has no 8-bit float or int8 cache; q8_0 is its 8-bit type"));
  CHECK(kvplan::parse_llamacpp_cache_type("Q8_0", "-ctk").name == "q8_0");
  CHECK(kvplan::parse_llamacpp_cache_type("fp16", "-ctk").name == "f16");
}

TEST_CASE("llama.cpp -ngl places the output layer first, then the last repeating layers, embeddings on the host", "[llamacpp]") {
  const kvplan::GgufModel m = load_llamacpp_fixture("llama");  // 4 layers of 590,848 B; token_embd, output_norm, output
  LlamaCppSettings s = settings(4096, 1);
  s.n_gpu_layers = 2;  // i_gpu_start = 4 + 1 - 2 = 3: the output layer and layer 3
  const LlamaCppResult two = plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
  CHECK(two.gpu_layers == 2);
  CHECK(two.output_on_gpu);
  CHECK(two.model_gpu_bytes == 512 + 4096 + 590'848);
  // The mapped host buffer spans the file from token_embd to the end of layer 2, the GPU's output
  // tensors between them included: 4096 + 512 + 4096 + 3 x 590,848.
  CHECK(two.model_host_bytes == 8'704 + 3 * 590'848);
  CHECK(two.caches[0].gpu_layers == 1);
  CHECK(two.caches[0].gpu_bytes == 2 * 64 * 2 * 4096);  // layer 3's K + V
  CHECK(two.caches[0].host_bytes == 3 * 2 * 64 * 2 * 4096);

  s.n_gpu_layers = -1;  // all: 5 of 5
  const LlamaCppResult all = plan_llamacpp(m.spec, s, llamacpp_facts(m.spec));
  CHECK(all.gpu_layers == 5);
  CHECK(all.model_gpu_bytes == m.spec.weights_bytes.value() - 4096);  // token_embd stays on the host
  CHECK(all.model_host_bytes == 4096);
  CHECK(all.host_cache_bytes == 0);

  // A tied output head: the output layer holds its own copy of token_embd on the GPU.
  const kvplan::GgufModel tied = load_llamacpp_fixture("llama-swa-ignored");
  const LlamaCppResult copy = plan_llamacpp(tied.spec, s, llamacpp_facts(tied.spec));
  CHECK(copy.model_gpu_bytes == tied.spec.weights_bytes.value() - 4096 + 4096);
  CHECK(has_rule(copy, "a copy of token_embd"));
}

TEST_CASE("llama.cpp's short flags become long names, -c and -b only under --runtime llama.cpp", "[llamacpp][cli]") {
  using kvplan::rewrite_engine_spellings;
  CHECK(rewrite_engine_spellings({"kvplan", "-ctk", "q8_0", "-ctv=q4_0", "-np", "4", "-ub", "256", "-fa", "on", "-ngl", "99", "-kvu"}) ==
        std::vector<std::string>{"kvplan", "--cache-type-k", "q8_0", "--cache-type-v=q4_0", "--parallel", "4",
                                 "--ubatch-size", "256", "--flash-attn", "on", "--n-gpu-layers", "99", "--kv-unified"});
  // Without the runtime, -c and -b keep kvplan's meaning (--ctx per sequence, --batch sequences).
  CHECK(rewrite_engine_spellings({"kvplan", "-c", "32k", "-b", "4"}) == std::vector<std::string>{"kvplan", "-c", "32k", "-b", "4"});
  CHECK(rewrite_engine_spellings({"kvplan", "--runtime", "llama.cpp", "-c", "32768", "-b", "2048", "-c8192"}) ==
        std::vector<std::string>{"kvplan", "--runtime", "llama.cpp", "--ctx-size", "32768", "--batch-size", "2048",
                                 "--ctx-size=8192"});
  CHECK(rewrite_engine_spellings({"kvplan", "--runtime=llama.cpp", "-c", "1"})[2] == "--ctx-size");
  // Values and everything after "--" stay as typed.
  CHECK(rewrite_engine_spellings({"kvplan", "--model", "x.gguf", "--", "-np"}) ==
        std::vector<std::string>{"kvplan", "--model", "x.gguf", "--", "-np"});
}

TEST_CASE("kvplan --runtime llama.cpp: JSON adds llamacpp and keeps every generic field", "[llamacpp][cli]") {
  TempDir dir;
  const std::string path = dir.file("gemma3.gguf");
  kvplan::testing::make_llamacpp_fixture("gemma3").write(path);
  const auto run = [&](std::vector<std::string> args, std::string& out, std::string& err) {
    std::vector<const char*> argv{"kvplan"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    std::ostringstream o, e;
    const int code = kvplan::run_cli(static_cast<int>(argv.size()), argv.data(), o, e, kvplan::Terminal{});
    out = o.str();
    err = e.str();
    return code;
  };
  std::string out, err;
  REQUIRE(run({"--runtime", "llama.cpp", "--model", path, "--gpu", "24GiB", "-c", "8192", "-np", "2", "-ub", "513",
               "-ctk", "q8_0", "-ctv", "q8_0", "--format", "json"},
              out, err) == 0);
  const nlohmann::json doc = nlohmann::json::parse(out);
  CHECK(doc["settings"]["runtime"] == "llama.cpp");
  CHECK(doc["settings"]["batch"] == 2);
  const nlohmann::json& row = doc["llamacpp"]["rows"][0];
  CHECK(row["n_ctx_seq"] == 4096);
  CHECK(row["caches"][1]["role"] == "SWA KV");
  CHECK(row["caches"][1]["cells"] == 1280);
  // 5 layers x 128 / 32 x 34 B x 1280 cells x 2 streams
  CHECK(row["caches"][1]["k_bytes"] == 5 * 136 * 1280 * 2);
  CHECK(row["flash_attn_enabled"] == true);
  CHECK(doc["rows"][0]["ctx"] == 4096);
  CHECK(doc["rows"][0]["kv_dtype"] == "q8_0");
  CHECK(doc["rows"][0]["kv_bytes"] == row["gpu_cache_bytes"]);
  CHECK(doc["rows"][0]["total_bytes"] ==
        row["model_gpu_bytes"].get<std::uint64_t>() + row["gpu_cache_bytes"].get<std::uint64_t>() + 2 * GiB);

  CHECK(run({"--runtime", "llama.cpp", "--model", path, "--gpu", "24GiB", "-ctv", "q8_0", "-fa", "off"}, out, err) == 2);
  CHECK_THAT(err, Catch::Contains("quantized V cache requires flash_attn to be enabled"));
  CHECK(run({"--model", path, "--gpu", "24GiB", "-np", "4"}, out, err) == 2);
  CHECK_THAT(err, Catch::Contains("--parallel is a llama.cpp flag: add --runtime llama.cpp"));
  CHECK(run({"--runtime", "mlc-llm", "--model", path, "--gpu", "24GiB"}, out, err) == 2);
  CHECK_THAT(err, Catch::Contains("unknown runtime 'mlc-llm' (kvplan knows generic, llama.cpp, vllm") &&
                      Catch::Contains("sglang") && Catch::Contains("trtllm") && Catch::Contains("ollama"));
  CHECK(run({"--runtime", "llama.cpp", "--model", path, "--gpu", "24GiB", "--ctx-size", "8k", "--ctx", "4k"}, out, err) == 2);
  CHECK_THAT(err, Catch::Contains("not both"));
  // The generic runtime reads the same file as its spec.
  CHECK(run({"--model", path, "--gpu", "24GiB", "--ctx", "4k", "--format", "json"}, out, err) == 0);
  CHECK(nlohmann::json::parse(out)["model"]["layer_layout"] == "5 sliding(512) + 1 full");
}

TEST_CASE("llama.cpp on several GPUs: the layer split by free memory, -ts, -sm none, hand-computed", "[llamacpp][multigpu]") {
  // 7 repeating layers + the output layer = 8 slots; f16 cache of 8 KV heads x 128 at 4096 cells:
  // K = V = 4096 x 1024 x 2 B = 8 MiB, 16 MiB a layer. No tensor list: 8 GiB split evenly, 1 GiB a slot.
  ModelSpec model = attention_model(7, 32, 8, 128, 128);
  model.weights_bytes = 8 * GiB;
  LlamaCppSettings s = settings(4096, 1);
  // Free memory 24 GiB and 8 GiB: split points 0.75 and 1.0. Layer il goes to the first device whose
  // point is above il / 8: il 0-5 (up to 0.625) on GPU 0, il 6 (0.75) and the output (0.875) on GPU 1.
  s.device_free = {24 * GiB, 8 * GiB};
  LlamaCppResult r = plan_llamacpp(model, s);
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].split_point == 0.75f);
  CHECK(r.devices[0].layers == 6);
  CHECK_FALSE(r.devices[0].output);
  CHECK(r.devices[1].layers == 1);
  CHECK(r.devices[1].output);
  CHECK(r.devices[0].cache_bytes == 6 * 16 * MiB);
  CHECK(r.devices[1].cache_bytes == 16 * MiB);
  CHECK(r.devices[0].weights_bytes == 6 * GiB);
  CHECK(r.devices[1].weights_bytes == 2 * GiB);
  // -ts 1,1: points 0.5 and 1.0: il 0-3 on GPU 0 (il / 8 < 0.5), il 4-6 and the output on GPU 1.
  s.tensor_split = {1.0f, 1.0f};
  r = plan_llamacpp(model, s);
  CHECK(r.devices[0].layers == 4);
  CHECK(r.devices[1].layers == 3);
  CHECK(r.devices[1].output);
  CHECK(r.devices[1].cache_bytes == 3 * 16 * MiB);
  // -ngl 4: the output layer and layers 4-6 (i_gpu_start 4, act 4): fractions 0, .25, .5, .75 with
  // points 0.5/1.0: layers 4, 5 on GPU 0; layer 6 and the output on GPU 1; layers 0-3 in host memory.
  s.n_gpu_layers = 4;
  r = plan_llamacpp(model, s);
  CHECK(r.devices[0].layers == 2);
  CHECK(r.devices[1].layers == 1);
  CHECK(r.devices[1].output);
  CHECK(r.host_cache_bytes == 4 * 16 * MiB);
  // -sm none -mg 1: every offloaded layer on GPU 1.
  s.n_gpu_layers = -1;
  s.tensor_split.clear();
  s.split_mode = kvplan::LlamaCppSplitMode::none;
  s.main_gpu = 1;
  r = plan_llamacpp(model, s);
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].index == 1);
  CHECK(r.devices[0].layers == 7);
  CHECK(r.devices[0].cache_bytes == 7 * 16 * MiB);
  // -sm row is refused (exit 3): ggml's split buffer is not modelled.
  s.split_mode = kvplan::LlamaCppSplitMode::row;
  try {
    plan_llamacpp(model, s);
    FAIL("row split priced");
  } catch (const kvplan::Error& error) {
    CHECK(error.code() == kvplan::ExitCode::unsupported_architecture);
  }
}

TEST_CASE("llama.cpp on 24 GiB + 8 GiB: one share per GPU, the row the fullest GPU's", "[llamacpp][multigpu]") {
  ModelSpec model = attention_model(7, 32, 8, 128, 128);
  model.weights_bytes = 8 * GiB;
  model.max_context = 4096;
  kvplan::PlanRequest request;
  request.runtime = "llama.cpp";
  request.contexts = {4096};
  std::vector<kvplan::GpuSpec> gpus(2);
  gpus[0].id = "24GiB";
  gpus[0].memory_bytes = 24 * GiB;
  gpus[1].id = "8GiB";
  gpus[1].memory_bytes = 8 * GiB;
  for (kvplan::GpuSpec& g : gpus) g.memory_basis = "given";
  const kvplan::Plan plan = kvplan::make_plan(model, gpus, request);
  const kvplan::Row& row = plan.rows.front();
  REQUIRE(row.per_gpu.size() == 2);
  // GPU 0: 6 GiB + 96 MiB + 2 GiB overhead of 24 GiB; GPU 1: 2 GiB + 16 MiB + 2 GiB of 8 GiB (less headroom).
  CHECK(row.per_gpu[0].weights_bytes == 6 * GiB);
  CHECK(row.per_gpu[0].kv_bytes == 96 * MiB);
  CHECK(row.per_gpu[0].capacity_bytes == 24 * GiB);
  CHECK(row.per_gpu[1].total_bytes == 4 * GiB + 16 * MiB);
  CHECK(row.per_gpu[1].capacity_bytes == 8 * GiB);
  CHECK(row.weights_bytes == 2 * GiB);
  CHECK(row.kv_bytes == 16 * MiB);
  CHECK(row.capacity_bytes == 8 * GiB);
  CHECK(row.fits);
}

TEST_CASE("kvplan --runtime llama.cpp --gpu 2x3090 and 5090+3090: -sm, -ts, -mg", "[llamacpp][multigpu][cli]") {
  using kvplan::testing::run_kvplan;
  const auto two = run_kvplan("--runtime llama.cpp --model llama3.1:8b -c 8192 --gpu 2x3090 --format json");
  INFO(two.err);
  REQUIRE(two.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(two.out);
  REQUIRE(j["rows"][0]["per_gpu"].size() == 2);
  // Equal cards: 33 slots split at 0.5: il / 33 < 0.5 for il 0-16 (17 layers) on GPU 0, 15 + output on GPU 1.
  CHECK(j["llamacpp"]["rows"][0]["devices"][0]["layers"] == 17);
  CHECK(j["llamacpp"]["rows"][0]["devices"][1]["layers"] == 15);
  CHECK(j["llamacpp"]["rows"][0]["devices"][1]["output"] == true);
  const auto ts = run_kvplan("--runtime llama.cpp --model llama3.1:8b -c 8192 --gpu 5090+3090 -ts 3,1 --format json");
  INFO(ts.err);
  REQUIRE(ts.exit_code == 0);
  // Points 0.75 / 1.0: il / 33 < 0.75 for il 0-24 (25 layers); 7 + output on the 3090.
  CHECK(nlohmann::json::parse(ts.out)["llamacpp"]["rows"][0]["devices"][0]["layers"] == 25);
  const auto none = run_kvplan("--runtime llama.cpp --model llama3.1:8b -c 8192 --gpu 2x3090 -sm none -mg 1 --format json");
  REQUIRE(none.exit_code == 0);
  CHECK(nlohmann::json::parse(none.out)["llamacpp"]["rows"][0]["devices"][0]["index"] == 1);
  kvplan::testing::check_refused(run_kvplan("--runtime llama.cpp --model llama3.1:8b -c 8192 --gpu 2x3090 -sm row"),
                                 "--split-mode row", 3);
  kvplan::testing::check_refused(run_kvplan("--runtime llama.cpp --model llama3.1:8b -c 8192 --gpu 2x3090 -mg 2"),
                                 "--main-gpu");
}
