// The MoE variants of two GGUF hybrids: nemotron_h_moe (Nemotron 3) is nemotron_h's class in
// llama.cpp v0.4.0 and lfm2moe (LFM2-8B-A1B) reads lfm2's short-conv cache; only their
// feed-forward blocks differ. The same fixtures run through the real llama.cpp in
// tests/llamacpp/crosscheck.mjs.

#include <catch2/catch.hpp>

#include "engines/llamacpp/rules.h"
#include "kvplan/error.h"
#include "kvplan/model_spec.h"
#include "loaders/gguf_model.h"
#include "support/gguf_writer.h"
#include "support/llamacpp_fixture_model.h"
#include "support/llamacpp_fixtures.h"
#include "support/temp_dir.h"

namespace {

/// n_ctx 8192 over 2 sequences, f16, flash attention off, every layer on the host.
kvplan::LlamaCppResult hybrid_moe_plan(const kvplan::GgufModel& m) {
  kvplan::LlamaCppSettings s;
  s.n_ctx = 8192;
  s.n_parallel = 2;
  s.type_k = &kvplan::ggml_type_by_name("f16");
  s.type_v = &kvplan::ggml_type_by_name("f16");
  s.flash_attn = kvplan::LlamaCppFlashAttn::off;
  s.n_batch = s.n_ubatch = 512;
  s.n_gpu_layers = 0;
  return kvplan::plan_llamacpp(m.spec, s, kvplan::llamacpp_facts(m.spec));
}

}  // namespace

TEST_CASE("nemotron_h_moe: nemotron_h's layers, a MoE block without cache", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("nemotron_h_moe");
  REQUIRE(m.spec.layers.size() == 4);
  CHECK(m.spec.layers[0].kind == kvplan::LayerKind::linear);
  CHECK(m.spec.layers[1].kind == kvplan::LayerKind::full);
  CHECK(m.spec.layers[2].kind == kvplan::LayerKind::none);  // the MoE block: heads 0, n_ff 256
  CHECK(m.spec.layers[3].kind == kvplan::LayerKind::linear);
  // As nemotron_h's fixture: 1 attention layer x 4096 cells x 64 x 2 B x 2 streams x (K + V) =
  // 2,097,152; 2 Mamba-2 layers x 2 cells x 4 B x (864 + 4096) = 79,360.
  const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
  CHECK(r.kv_bytes == 2'097'152);
  CHECK(r.recurrent_bytes == 79'360);
  // Routed experts: up and down 2 x 128 x 32 x 4 = 32,768, 2 of 4 active.
  CHECK(m.spec.active_params == m.spec.params - 32'768 + 16'384);
}

TEST_CASE("lfm2moe: lfm2's short-conv state and attention, MoE after the first layer", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("lfm2moe");
  CHECK(kvplan::describe_layers(m.spec) == "2 linear + 2 full");
  REQUIRE(m.spec.layers[0].state.size() == 1);
  CHECK(m.spec.layers[0].state[0].elements == 256);  // n_embd x (l_cache - 1)
  // 2 attention layers x 4096 cells x 64 x 2 B x 2 streams x (K + V) = 4,194,304; 2 short-conv
  // layers x 2 cells x 4 B x 256 = 4,096.
  const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
  CHECK(r.kv_bytes == 4'194'304);
  CHECK(r.recurrent_bytes == 4'096);
  // Routed experts on layers 1-3: gate, up and down 3 x 128 x 32 x 4 = 49,152 each, 2 of 4 active.
  CHECK(m.spec.active_params == m.spec.params - 3 * 49'152 + 3 * 24'576);
  // lfm2moe reads no window: a window key is not understood (exit 3), where lfm2 slides.
  kvplan::testing::GgufWriter w = kvplan::testing::make_llamacpp_fixture("lfm2moe");
  w.add_uint32("lfm2moe.attention.sliding_window", 128);
  kvplan::testing::TempDir dir;
  const std::string path = dir.file("model.gguf");
  w.write(path);
  try {
    kvplan::load_gguf_model(path);
    FAIL("an lfm2moe file with a window loaded");
  } catch (const kvplan::Error& e) {
    CHECK(e.code() == kvplan::ExitCode::unsupported_architecture);
    CHECK_THAT(e.what(), Catch::Contains("lfm2moe.attention.sliding_window"));
  }
}
