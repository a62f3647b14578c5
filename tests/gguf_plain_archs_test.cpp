// The GGUF architectures whose cache llama.cpp v0.4.0 lays out as llama's (create_memory's default
// branch): their fixtures (tests/support/llamacpp_fixtures_plain.cpp) load, size one plain cache,
// and count every tensor; the keys llama.cpp requires of them are required here too. The same
// fixtures run through the real llama.cpp in tests/llamacpp/crosscheck.mjs.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "engines/llamacpp/rules.h"
#include "kvplan/error.h"
#include "kvplan/model_spec.h"
#include "loaders/gguf_model.h"
#include "support/llamacpp_fixture_model.h"
#include "support/llamacpp_fixtures.h"

namespace {

const std::vector<std::string> kPlainArchs = {
    "mistral3", "exaone",  "internlm2", "minicpm", "qwen2vl", "qwen3vl",  "qwen3vlmoe", "glm4",
    "chatglm",  "phi2",    "stablelm",  "gptneox", "starcoder", "gpt2",   "falcon",     "olmo",
    "nemotron", "phimoe",  "minimax-m2", "bailingmoe2", "deepseek", "dbrx",   "baichuan",   "orion",
    "xverse",   "refact",  "codeshell", "mpt",     "bloom",   "jais",     "grok",       "arctic",
    "bitnet",   "maincoder", "pangu-embedded", "plamo", "talkie",   "hunyuan_vl", "paddleocr", "grovemoe",
    "chameleon", "nanbeige"};

/// The harness's CPU run with one sequence: the K and V bytes.
std::uint64_t plain_arch_kv_bytes(const kvplan::GgufModel& m, std::uint64_t n_ctx) {
  return kvplan::testing::llamacpp_cpu_plan(m, n_ctx, 1).kv_bytes;
}

/// Loading a file made of the keys every architecture reads and no more: the exit code.
kvplan::ExitCode plain_arch_bare_code(const std::string& arch) {
  return kvplan::testing::gguf_load_outcome(kvplan::testing::gguf_bare_file(arch)).first;
}

}  // namespace

TEST_CASE("plain-attention GGUF architectures: one cache of 2 K/V heads of 32 on every layer", "[gguf_archs]") {
  for (const std::string& arch : kPlainArchs) {
    INFO(arch);
    const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture(arch);
    CHECK(m.spec.architecture == arch);
    CHECK(kvplan::describe_layers(m.spec) == "4 full");
    CHECK(m.spec.layers[0].kv_heads == 2);
    CHECK(m.spec.layers[0].k_head_dim == 32);
    CHECK(m.spec.layers[0].v_head_dim == 32);
    // n_ctx 4096, 1 sequence: 4 layers x 4096 cells x 64 x 2 B x (K + V) = 4,194,304.
    CHECK(plain_arch_kv_bytes(m, 4096) == 4'194'304);
  }
}

TEST_CASE("plain-attention GGUF architectures: every tensor counted, by hand", "[gguf_archs]") {
  // mistral3: token_embd 128 x 8 + output_norm 128 + output 1,024 = 2,176; a layer: attn_norm 128,
  // q 128 x 128, k and v 128 x 64, o 128 x 128, ffn_norm 128, gate/up/down 128 x 256 = 147,712.
  CHECK(kvplan::testing::load_llamacpp_fixture("mistral3").spec.params == 2'176 + 4 * 147'712);
  // phi2: embeddings 1,024 + output_norm and bias 256 + output 1,024 and bias 8 = 2,312; a layer:
  // attn_norm and bias 256, q/k/v 32,768 and biases 256, o 16,384 and bias 128, up 32,768 and
  // bias 256, down 32,768 and bias 128 = 115,712.
  CHECK(kvplan::testing::load_llamacpp_fixture("phi2").spec.params == 2'312 + 4 * 115'712);
  // starcoder: token_embd 1,024 + position_embd 128 x 8,192 + output_norm and bias 256 + output
  // 1,024 = 1,050,880; a layer: 2 norms and biases 512, qkv 128 x 256 and bias 256, o and bias
  // 16,512, up and bias 33,024, down and bias 32,896 = 115,968.
  const kvplan::GgufModel starcoder = kvplan::testing::load_llamacpp_fixture("starcoder");
  CHECK(starcoder.spec.params == 1'050'880 + 4 * 115'968);
  // dbrx: 2,176 outside the layers; a layer: attn_norm 128, qkv 32,768, o 16,384, attn_output_norm
  // 128, router 512, 3 x 128 x 256 x 4 experts = 393,216; 2 of 4 experts active.
  const kvplan::GgufModel dbrx = kvplan::testing::load_llamacpp_fixture("dbrx");
  CHECK(dbrx.spec.params == 2'176 + 4 * 443'136);
  CHECK(dbrx.spec.active_params == dbrx.spec.params - 4 * 393'216 + 4 * 196'608);
}

TEST_CASE("grovemoe's chunk experts, chameleon's vocabulary and plm's expanded latent, by hand", "[gguf_archs]") {
  // grovemoe: 2,176 outside the layers; a layer: attention 49,280 and q/k norms 64, ffn_norm 128,
  // router 512, 3 x 128 x 32 x 4 experts = 49,152, 3 x 128 x 16 x 2 chunk experts = 12,288.
  CHECK(kvplan::testing::load_llamacpp_fixture("grovemoe").spec.params == 2'176 + 4 * 111'424);
  // chameleon: token_embd 128 x 8,200 (tied) + output_norm 128; a layer: attention 49,280, q/k
  // norms per head 128 + 64, ffn_norm and gate/up/down 98,432.
  CHECK(kvplan::testing::load_llamacpp_fixture("chameleon").spec.params == 1'049'728 + 4 * 147'904);
  // plm: 1,152 outside the layers (tied); a layer: attn_norm 128, q 128 x 192, kv_a_mqa 128 x 48,
  // kv_a_norm 32, kv_b 32 x 256, o 128 x 128, ffn_norm 128, up and down 2 x 32,768 = 121,120.
  const kvplan::GgufModel plm = kvplan::testing::load_llamacpp_fixture("plm");
  CHECK(plm.spec.params == 1'152 + 4 * 121'120);
  // The cache holds the expanded heads, not the latent: 4 heads of K 48 and V 32.
  CHECK(plm.spec.layers[0].kv_heads == 4);
  CHECK(plm.spec.layers[0].k_head_dim == 48);
  CHECK(plm.spec.layers[0].v_head_dim == 32);
  CHECK(plain_arch_kv_bytes(plm, 4096) == 4ull * 4096 * 4 * (48 + 32) * 2);
}

TEST_CASE("nanbeige: every loop keeps cells of its own over one copy of the weights", "[gguf_archs]") {
  // 2 blocks x num_loops 2: the cache has 4 layers (above), the weights 2: 2,176 + 2 x 147,712.
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("nanbeige");
  CHECK(m.spec.params == 2'176 + 2 * 147'712);
  REQUIRE(m.spec.layer_weights_bytes.size() == 4);
  CHECK(m.spec.layer_weights_bytes[1] == 147'712 * 4);
  CHECK(m.spec.layer_weights_bytes[2] == 0);  // the second pass over block 0 owns no tensor
  // num_loops 0 is llama.cpp's assert; 2 blocks x 257 loops is more than its 512 layers.
  for (const std::uint32_t loops : {0u, 257u}) {
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("nanbeige");
    w.add_uint32("nanbeige.num_loops", loops);
    CHECK(kvplan::testing::gguf_load_outcome(w).first == kvplan::ExitCode::invalid_input);
  }
}

TEST_CASE("graniteswitch: llama.cpp's router layer is a fifth cache layer of 1 KV head", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("graniteswitch");
  CHECK(kvplan::describe_layers(m.spec) == "5 full");
  CHECK(m.spec.layers[4].kv_heads == 1);
  CHECK(m.spec.layers[4].k_head_dim == 32);
  CHECK(m.spec.layer_weights_bytes[4] == 0);
  // 2,176 outside the layers; a layer: llama's 147,712 (q/k/v fused) and LoRA pairs of rank 4 over 2
  // slots: q 2,048, k 1,536, v 1,536, o 2,048, gate, up and down 3,072 each = 16,384.
  CHECK(m.spec.params == 2'176 + 4 * (147'712 + 16'384));
  // llama.cpp's log at -c 4096 -fa off: 5 layers, K 2.25 MiB (4 x 64 + 32 wide), V 2.50 MiB (every
  // V row padded to the widest, 64).
  CHECK(plain_arch_kv_bytes(m, 4096) == 4096ull * 2 * (4 * 64 + 32) + 4096ull * 2 * 5 * 64);
  // The adapter id arrays must hold adapters.count ids each, as llama.cpp checks.
  kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("graniteswitch");
  w.add_float32("graniteswitch.logit_scale", 1.0f);
  w.add_uint32("graniteswitch.adapters.count", 2);
  w.add_uint32("graniteswitch.adapters.lora_rank", 4);
  w.add_array_int32("graniteswitch.adapters.token_ids_activate", {5, 6});
  w.add_array_int32("graniteswitch.adapters.token_ids_substitute", {1});
  const auto [code, message] = kvplan::testing::gguf_load_outcome(w);
  CHECK(code == kvplan::ExitCode::invalid_input);
  CHECK_THAT(message, Catch::Contains("adapters.token_ids_substitute"));
}

TEST_CASE("plm: llama.cpp aborts with flash attention, so kvplan refuses -fa on and auto", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("plm");
  kvplan::LlamaCppSettings s;
  s.n_ctx = 1024;
  s.type_k = &kvplan::ggml_type_by_name("f16");
  s.type_v = &kvplan::ggml_type_by_name("f16");
  for (const kvplan::LlamaCppFlashAttn fa : {kvplan::LlamaCppFlashAttn::on, kvplan::LlamaCppFlashAttn::automatic}) {
    s.flash_attn = fa;
    CHECK_THROWS_WITH(kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec)),
                      Catch::Contains("llama.cpp aborts here: plm's graph fails a GGML_ASSERT"));
  }
  s.flash_attn = kvplan::LlamaCppFlashAttn::off;
  CHECK(kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec)).v_trans);
}

TEST_CASE("plain-attention GGUF architectures: keys llama.cpp requires are required", "[gguf_archs]") {
  // Each changes no cache, but without it llama.cpp does not load the file.
  for (const char* arch : {"qwen2vl", "qwen3vl", "qwen3vlmoe", "minimax-m2", "bailingmoe2", "deepseek", "dbrx",
                           "gptneox", "talkie", "deepseek2-ocr", "plm", "grovemoe", "graniteswitch"}) {
    INFO(arch);
    CHECK(plain_arch_bare_code(arch) == kvplan::ExitCode::invalid_input);
  }
  // The others need nothing beyond what every architecture reads.
  for (const char* arch : {"mistral3", "glm4", "chatglm", "phi2", "olmo", "paddleocr", "chameleon"}) {
    INFO(arch);
    CHECK(plain_arch_bare_code(arch) == kvplan::ExitCode::ok);
  }
}

TEST_CASE("grok: llama.cpp forces flash attention off, so a quantized V cache is refused", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("grok");
  kvplan::LlamaCppSettings s;
  s.n_ctx = 4096;
  s.type_k = &kvplan::ggml_type_by_name("f16");
  s.type_v = &kvplan::ggml_type_by_name("f16");
  s.flash_attn = kvplan::LlamaCppFlashAttn::on;
  const kvplan::LlamaCppResult r = kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec));
  CHECK_FALSE(r.flash_attn);
  CHECK(r.v_trans);  // V stored transposed, as without flash attention
  s.type_v = &kvplan::ggml_type_by_name("q8_0");
  CHECK_THROWS_WITH(kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec)),
                    Catch::Contains("quantized V cache requires flash_attn to be enabled"));
}

TEST_CASE("bloom's token_embd_norm stays with layer 0, lfm2's tensor of that name is its output norm", "[gguf_archs]") {
  // -ngl 5 of 5 puts every layer and the output on the GPU; -ngl 4 leaves layer 0 on the host.
  const auto gpu_bytes = [](const kvplan::GgufModel& m, std::int32_t ngl) {
    kvplan::LlamaCppSettings s;
    s.n_ctx = 4096;
    s.type_k = &kvplan::ggml_type_by_name("f16");
    s.type_v = &kvplan::ggml_type_by_name("f16");
    s.n_gpu_layers = ngl;
    return kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec)).model_gpu_bytes;
  };
  // bloom: layer 0 and token_embd_norm's weight and bias (2 x 128 f32 = 1,024 B) leave together.
  const kvplan::GgufModel bloom = kvplan::testing::load_llamacpp_fixture("bloom");
  CHECK(gpu_bytes(bloom, 5) - gpu_bytes(bloom, 4) == bloom.spec.layer_weights_bytes[0] + 1'024);
  // lfm2: its output norm (OUTPUT_NORM_LFM2, named token_embd_norm) stays with the output.
  const kvplan::GgufModel lfm2 = kvplan::testing::load_llamacpp_fixture("lfm2");
  CHECK(gpu_bytes(lfm2, 5) - gpu_bytes(lfm2, 4) == lfm2.spec.layer_weights_bytes[0]);
}

TEST_CASE("plain-attention GGUF architectures without GQA, and openelm's per-layer heads", "[gguf_archs]") {
  // jais2, cogvlm, deepseek2-ocr, qwen: K and V as wide as Q, 4 heads of 32: twice llama's cache.
  for (const char* arch : {"jais2", "cogvlm", "deepseek2-ocr", "qwen"}) {
    INFO(arch);
    const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture(arch);
    CHECK(m.spec.layers[0].kv_heads == 4);
    CHECK(plain_arch_kv_bytes(m, 4096) == 8'388'608);
  }
  // openelm: KV heads 1, 2, 2, 1 of 32. K: 6 heads x 32 x 4096 cells x 2 B = 1,572,864; V, stored
  // transposed without flash attention, padded to the widest layer's 64: 4 x 64 x 4096 x 2 B.
  const kvplan::GgufModel elm = kvplan::testing::load_llamacpp_fixture("openelm");
  CHECK(elm.spec.layers[0].kv_heads == 1);
  CHECK(elm.spec.layers[1].kv_heads == 2);
  CHECK(plain_arch_kv_bytes(elm, 4096) == 1'572'864 + 2'097'152);
}

TEST_CASE("deci: layers without KV heads keep a 0-wide cache slot in llama.cpp", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("deci");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.layers[0].kind == kvplan::LayerKind::full);
  CHECK(m.spec.layers[1].kind == kvplan::LayerKind::none);  // a linear replacement: heads, no KV heads
  CHECK(m.spec.layers[2].kind == kvplan::LayerKind::none);  // no attention
  CHECK(m.spec.layers[3].kind == kvplan::LayerKind::full);
  CHECK(m.spec.file->empty_kv_layers == std::vector<std::uint32_t>{1, 2});
  kvplan::LlamaCppSettings s;
  s.n_ctx = 4096;
  s.type_k = &kvplan::ggml_type_by_name("f16");
  s.type_v = &kvplan::ggml_type_by_name("f16");
  s.flash_attn = kvplan::LlamaCppFlashAttn::off;
  s.n_gpu_layers = 0;
  // K: 2 layers x 4096 x 64 x 2 B = 1,048,576; V stored transposed, every one of the 4 layers'
  // rows padded to 64: 2,097,152. llama.cpp's log: 4 layers, K 1.00 MiB, V 2.00 MiB.
  const kvplan::LlamaCppResult off = kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec));
  REQUIRE(off.caches.size() == 1);
  CHECK(off.caches[0].layers == 4);
  CHECK(off.caches[0].k_bytes == 1'048'576);
  CHECK(off.caches[0].v_bytes == 2'097'152);
  // With flash attention V is stored row by row, each layer at its own width: the empty ones 0.
  s.flash_attn = kvplan::LlamaCppFlashAttn::on;
  const kvplan::LlamaCppResult on = kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec));
  CHECK(on.caches[0].v_bytes == 1'048'576);
}

TEST_CASE("mistral4: deepseek2's class, its MLA cache", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("mistral4");
  const kvplan::GgufModel ds = kvplan::testing::load_llamacpp_fixture("deepseek2");
  CHECK(m.spec.layers[0].kind == kvplan::LayerKind::mla);
  // The same K-only latent rows as deepseek2's fixture (96 latent + 32 rope), to the byte.
  CHECK(plain_arch_kv_bytes(m, 4096) == plain_arch_kv_bytes(ds, 4096));
  CHECK(plain_arch_kv_bytes(m, 4096) == 4ull * 4096 * 128 * 2);
}
