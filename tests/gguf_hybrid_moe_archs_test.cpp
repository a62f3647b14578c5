// The MoE variants of two GGUF hybrids: nemotron_h_moe (Nemotron 3) is nemotron_h's class in
// llama.cpp v0.4.0 and lfm2moe (LFM2-8B-A1B) reads lfm2's short-conv cache; only their
// feed-forward blocks differ. The same fixtures run through the real llama.cpp in
// tests/llamacpp/crosscheck.mjs.

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "engines/llamacpp/rules.h"
#include "kvplan/error.h"
#include "kvplan/model_spec.h"
#include "loaders/gguf_model.h"
#include "support/gguf_writer.h"
#include "support/llamacpp_fixture_model.h"
#include "support/llamacpp_fixtures.h"

namespace {

/// n_ctx 8192 over 2 sequences, f16, flash attention off, every layer on the host.
kvplan::LlamaCppResult hybrid_moe_plan(const kvplan::GgufModel& m) {
  return kvplan::testing::llamacpp_cpu_plan(m, 8192, 2);
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
  const auto [code, message] = kvplan::testing::gguf_load_outcome(w);
  CHECK(code == kvplan::ExitCode::unsupported_architecture);
  CHECK_THAT(message, Catch::Contains("lfm2moe.attention.sliding_window"));
}


TEST_CASE("mamba and jamba: Mamba-1 state without groups", "[gguf_archs]") {
  // Per sequence and layer: conv (4 - 1) x 256 = 768 and state 16 x 256 = 4,096 f32 values
  // (n_embd_r with n_group 0, n_embd_s).
  const kvplan::GgufModel mamba = kvplan::testing::load_llamacpp_fixture("mamba");
  CHECK(kvplan::describe_layers(mamba.spec) == "4 linear");
  REQUIRE(mamba.spec.layers[0].state.size() == 2);
  CHECK(mamba.spec.layers[0].state[0].elements == 768);
  CHECK(mamba.spec.layers[0].state[1].elements == 4'096);
  // 4 layers x 2 sequences x 4 B x 4,864 = 155,648; no KV cache.
  const kvplan::LlamaCppResult m = hybrid_moe_plan(mamba);
  CHECK(m.kv_bytes == 0);
  CHECK(m.recurrent_bytes == 155'648);
  // jamba: attention on layer 2 alone (1 x 4096 cells x 64 x 2 B x 2 streams x (K + V)), the
  // Mamba-1 state on the other 3 (3 x 2 x 4 B x 4,864).
  const kvplan::GgufModel jamba = kvplan::testing::load_llamacpp_fixture("jamba");
  CHECK(kvplan::describe_layers(jamba.spec) == "3 linear + 1 full");
  const kvplan::LlamaCppResult j = hybrid_moe_plan(jamba);
  CHECK(j.kv_bytes == 2'097'152);
  CHECK(j.recurrent_bytes == 116'736);
  // llama.cpp's mamba accepts only an inner size of twice the width (exit 2), and neither reads a
  // group count (left unread: exit 3).
  kvplan::testing::GgufWriter narrow;
  narrow.add_string("general.architecture", "mamba");
  narrow.add_uint32("mamba.block_count", 4);
  narrow.add_uint32("mamba.embedding_length", 128);
  narrow.add_uint32("mamba.context_length", 8192);
  narrow.add_uint32("mamba.ssm.conv_kernel", 4);
  narrow.add_uint32("mamba.ssm.inner_size", 384);
  narrow.add_uint32("mamba.ssm.state_size", 16);
  narrow.add_uint32("mamba.ssm.time_step_rank", 8);
  narrow.add_tensor("token_embd.weight", 0, {128, 8});
  CHECK(kvplan::testing::gguf_load_outcome(narrow).first == kvplan::ExitCode::invalid_input);
  CHECK_THAT(kvplan::testing::gguf_load_outcome(narrow).second, Catch::Contains("only an expansion factor of 2 is supported"));
  kvplan::testing::GgufWriter grouped = kvplan::testing::make_llamacpp_fixture("jamba");
  grouped.add_uint32("jamba.ssm.group_count", 1);
  CHECK(kvplan::testing::gguf_load_outcome(grouped).first == kvplan::ExitCode::unsupported_architecture);
  CHECK_THAT(kvplan::testing::gguf_load_outcome(grouped).second, Catch::Contains("jamba.ssm.group_count"));
}

TEST_CASE("rwkv6 and rwkv7: a token-shift and a WKV state per layer, no KV cache", "[gguf_archs]") {
  for (const char* arch : {"rwkv6", "rwkv7"}) {
    INFO(arch);
    const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture(arch);
    CHECK(kvplan::describe_layers(m.spec) == "4 linear");
    REQUIRE(m.spec.layers[0].state.size() == 2);
    CHECK(m.spec.layers[0].state[0].elements == 256);    // token_shift_count 2 x n_embd 128
    CHECK(m.spec.layers[0].state[1].elements == 4'096);  // n_embd 128 x wkv.head_size 32
    // 4 layers x 2 sequences x 4 B x (256 + 4096) = 139,264, whatever the context.
    const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
    CHECK(r.kv_bytes == 0);
    CHECK(r.recurrent_bytes == 139'264);
  }
}

TEST_CASE("arwkv7 and rwkv6qwen2: RWKV time mixing on Qwen 2 layers, one token to shift", "[gguf_archs]") {
  for (const std::string arch : {"arwkv7", "rwkv6qwen2"}) {
    INFO(arch);
    const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture(arch);
    CHECK(kvplan::describe_layers(m.spec) == "4 linear");
    CHECK(m.spec.layers[0].state[0].elements == 128);    // token_shift_count 1 x n_embd 128
    CHECK(m.spec.layers[0].state[1].elements == 4'096);  // n_embd 128 x wkv.head_size 32
    // 4 layers x 2 sequences x 4 B x (128 + 4096) = 135,168.
    CHECK(hybrid_moe_plan(m).recurrent_bytes == 135'168);
    // Their graphs assert n_embd == token_shift_count x n_embd: any other count (absent means 2)
    // aborts llama.cpp, so kvplan refuses it.
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file(arch);
    w.add_uint32(arch + ".wkv.head_size", 32);
    w.add_uint32(arch + ".time_mix_extra_dim", 16);
    w.add_uint32(arch + ".time_decay_extra_dim", 16);
    w.add_uint32(arch + ".attention.decay_lora_rank", 16);
    w.add_uint32(arch + ".attention.iclr_lora_rank", 16);
    w.add_uint32(arch + ".attention.value_residual_mix_lora_rank", 8);
    const auto [code, message] = kvplan::testing::gguf_load_outcome(w);
    CHECK(code == kvplan::ExitCode::invalid_input);
    CHECK_THAT(message, Catch::Contains("token_shift_count"));
    w.add_uint32(arch + ".token_shift_count", 1);
    CHECK(kvplan::testing::gguf_load_outcome(w).first == kvplan::ExitCode::ok);
  }
}
