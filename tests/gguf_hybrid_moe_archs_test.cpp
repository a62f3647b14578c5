// GGUF hybrids beyond the first ones: the MoE variants nemotron_h_moe (nemotron_h's class in
// llama.cpp v0.4.0) and lfm2moe (lfm2's short-conv cache), Mamba-1 and RWKV, and the hybrids of
// create_memory's default branch (plamo2, bailingmoe3, kimi-k3). The same fixtures run through the
// real llama.cpp in tests/llamacpp/crosscheck.mjs.

#include <initializer_list>
#include <string>
#include <tuple>
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

TEST_CASE("plamo2: Mamba-2 where head_count_kv is 0, attention elsewhere", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("plamo2");
  CHECK(kvplan::describe_layers(m.spec) == "2 linear + 2 full");
  CHECK(m.spec.layers[0].kind == kvplan::LayerKind::linear);
  CHECK(m.spec.layers[1].kind == kvplan::LayerKind::full);
  // No groups: conv (4 - 1) x inner 128 = 384, state 16 x 128 = 2,048.
  REQUIRE(m.spec.layers[0].state.size() == 2);
  CHECK(m.spec.layers[0].state[0].elements == 384);
  CHECK(m.spec.layers[0].state[1].elements == 2'048);
  // 2 attention layers x 4096 cells x 2 streams x 2 B x (64 + 64) = 4,194,304; 2 Mamba layers x
  // 2 cells x 4 B x (384 + 2,048) = 38,912.
  const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
  CHECK(r.kv_bytes == 4'194'304);
  CHECK(r.recurrent_bytes == 38'912);
  // Its graph asserts n_group == 0: a grouped file would abort llama.cpp.
  kvplan::testing::GgufWriter grouped = kvplan::testing::gguf_bare_file("plamo2");
  grouped.add_array_int32("plamo2.attention.head_count_kv", {0, 2, 0, 2});
  grouped.add_uint32("plamo2.ssm.conv_kernel", 4);
  grouped.add_uint32("plamo2.ssm.inner_size", 128);
  grouped.add_uint32("plamo2.ssm.state_size", 16);
  grouped.add_uint32("plamo2.ssm.time_step_rank", 4);
  grouped.add_uint32("plamo2.ssm.group_count", 1);
  const auto [code, message] = kvplan::testing::gguf_load_outcome(grouped);
  CHECK(code == kvplan::ExitCode::invalid_input);
  CHECK_THAT(message, Catch::Contains("n_group == 0"));
}

namespace {

/// A bailingmoe3 or kimi-k3 file of the keys llama.cpp requires and no tensors; `key_length` is
/// the MLA layer's K row (kv_lora_rank 64 + rope 32 = 96 when it agrees).
kvplan::testing::GgufWriter kda_mla_bare(const std::string& arch, std::uint32_t key_length) {
  kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file(arch);
  w.add_array_int32(arch + ".attention.head_count_kv", {0, 0, 0, 1});
  w.add_uint32(arch + ".attention.kv_lora_rank", 64);
  w.add_uint32(arch + ".rope.dimension_count", 32);
  w.add_uint32(arch + ".attention.key_length", key_length);
  w.add_uint32(arch + ".attention.key_length_mla", 64);
  w.add_uint32(arch + ".attention.value_length_mla", 32);
  w.add_uint32(arch + ".ssm.conv_kernel", 4);
  w.add_uint32(arch + ".kda.head_dim", 32);
  w.add_uint32(arch + ".expert_feed_forward_length", 32);
  w.add_uint32(arch + ".expert_shared_count", 1);
  w.add_uint32(arch + ".leading_dense_block_count", 4);
  w.add_uint32(arch + ".expert_gating_func", 2);
  return w;
}

}  // namespace

TEST_CASE("bailingmoe3 and kimi-k3: kimi-linear's KDA state and K-only MLA cache", "[gguf_archs]") {
  // bailingmoe3's KDA heads are 32 wide: conv 3 x 3 x 4 x 32 = 1,152, state 32 x 32 x 4 = 4,096;
  // kimi-k3's 16: 576 and 1,024. Both cache layer 3's latent and rope key, 96 wide, K only.
  for (const auto& [arch, conv, state] : {std::tuple{"bailingmoe3", 1'152u, 4'096u}, {"kimi-k3", 576u, 1'024u}}) {
    INFO(arch);
    const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture(arch);
    CHECK(kvplan::describe_layers(m.spec) == "3 linear + 1 mla");
    CHECK(m.spec.layers[3].k_head_dim == 96);
    CHECK(m.spec.layers[0].state[0].elements == conv);
    CHECK(m.spec.layers[0].state[1].elements == state);
    // K: 4096 cells x 2 streams x 96 x 2 B = 1,572,864; state: 3 layers x 2 cells x 4 B x (conv + state).
    const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
    CHECK(r.kv_bytes == 1'572'864);
    CHECK(r.recurrent_bytes == 3ull * 2 * 4 * (conv + state));
  }
}

TEST_CASE("bailingmoe3 and kimi-k3: what llama.cpp asserts or requires is refused", "[gguf_archs]") {
  const auto outcome = [](const kvplan::testing::GgufWriter& w) { return kvplan::testing::gguf_load_outcome(w); };
  // bailingmoe3: the gate's lower bound must be a negative f32, safe_gate true (asserts: aborts).
  kvplan::testing::GgufWriter ok = kda_mla_bare("bailingmoe3", 96);
  ok.add_float32("bailingmoe3.kda.gate_lower_bound", -5.0f);
  CHECK(outcome(ok).first == kvplan::ExitCode::ok);
  CHECK(outcome(kda_mla_bare("bailingmoe3", 96)).first == kvplan::ExitCode::invalid_input);
  kvplan::testing::GgufWriter positive = kda_mla_bare("bailingmoe3", 96);
  positive.add_float32("bailingmoe3.kda.gate_lower_bound", 0.0f);
  CHECK_THAT(outcome(positive).second, Catch::Contains("kda_gate_lower_bound < 0"));
  kvplan::testing::GgufWriter unsafe = kda_mla_bare("bailingmoe3", 96);
  unsafe.add_float32("bailingmoe3.kda.gate_lower_bound", -5.0f);
  unsafe.add_bool("bailingmoe3.kda.safe_gate", false);
  CHECK_THAT(outcome(unsafe).second, Catch::Contains("kda_safe_gate"));
  // A K row that does not hold the latent and the rope key: set_rows aborts in the graph.
  kvplan::testing::GgufWriter narrow = kda_mla_bare("bailingmoe3", 64);
  narrow.add_float32("bailingmoe3.kda.gate_lower_bound", -5.0f);
  CHECK(outcome(narrow).first == kvplan::ExitCode::invalid_input);
  CHECK_THAT(outcome(narrow).second, Catch::Contains("kv_lora_rank + rope.dimension_count = 96"));
  // kimi-k3 requires its attention-residual block size and both activation betas.
  kvplan::testing::GgufWriter k3 = kda_mla_bare("kimi-k3", 96);
  k3.add_uint32("kimi-k3.attn_res.block_size", 0);
  k3.add_float32("kimi-k3.activation.situ_beta", 1.0f);
  CHECK_THAT(outcome(k3).second, Catch::Contains("kimi-k3.activation.situ_linear_beta"));
  k3.add_float32("kimi-k3.activation.situ_linear_beta", 0.0f);
  CHECK(outcome(k3).first == kvplan::ExitCode::ok);
}

TEST_CASE("minimax-01: lightning-attention state, no conv rows, softmax layers as llama's", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("minimax-01");
  // full_attention_interval 2: layers 1 and 3 softmax, 0 and 2 lightning.
  CHECK(kvplan::describe_layers(m.spec) == "2 linear + 2 full");
  REQUIRE(m.spec.layers[0].state.size() == 1);  // n_embd_r() is 0: the R tensors hold nothing
  CHECK(m.spec.layers[0].state[0].elements == 32 * 32 * 4);
  // 2 softmax layers x 4096 cells x 2 streams x 2 B x (64 + 64) = 4,194,304; 2 lightning layers x
  // 2 cells x 4 B x 4,096 = 65,536.
  const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
  CHECK(r.kv_bytes == 4'194'304);
  CHECK(r.recurrent_bytes == 65'536);
  // Without full_attention_interval llama.cpp's default is 8: every one of 4 layers lightning.
  // Its graph asserts key_length == value_length.
  const auto bare = [](std::uint32_t value_length, bool interval) {
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("minimax-01");
    w.add_float32("minimax-01.residual_scale", 1.0f);
    w.add_uint32("minimax-01.attention.value_length", value_length);
    if (interval) w.add_uint32("minimax-01.full_attention_interval", 2);
    return kvplan::testing::gguf_load_outcome(w);
  };
  CHECK(bare(32, true).first == kvplan::ExitCode::ok);
  kvplan::testing::GgufWriter no_interval = kvplan::testing::gguf_bare_file("minimax-01");
  no_interval.add_float32("minimax-01.residual_scale", 1.0f);
  kvplan::testing::TempDir dir;
  no_interval.write(dir.file("model.gguf"));
  CHECK(kvplan::describe_layers(kvplan::load_gguf_model(dir.file("model.gguf")).spec) == "4 linear");
  CHECK(bare(64, true).first == kvplan::ExitCode::invalid_input);
  CHECK_THAT(bare(64, true).second, Catch::Contains("asserts they are equal"));
}

TEST_CASE("minimax-m3: llama_kv_cache_msa's indexer cache keeps a V of one head", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("minimax-m3");
  CHECK(kvplan::describe_layers(m.spec) == "1 full + 3 full+indexer(64)");
  // The main cache: 4 layers x 4096 cells x 2 streams x 2 B x (64 + 64) = 8,388,608. The indexer
  // cache on layers 1-3: 3 x 4096 x 2 x 2 B x (key 64 + V 32) = 4,718,592.
  const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
  REQUIRE(r.caches.size() == 2);
  CHECK(r.caches[0].role == "main KV");
  CHECK(r.caches[0].k_bytes + r.caches[0].v_bytes == 8'388'608);
  CHECK(r.caches[1].role == "indexer KV");
  CHECK(r.caches[1].layers == 3);
  CHECK(r.caches[1].k_bytes == 3ull * 4096 * 2 * 2 * 64);
  CHECK(r.caches[1].v_bytes == 3ull * 4096 * 2 * 2 * 32);
  CHECK(r.kv_bytes == 8'388'608 + 4'718'592);
  // The sparse path asserts indexer.head_count == head_count_kv; block_size 0 is an assert too.
  const auto bare = [](std::uint32_t indexer_heads, std::uint32_t block_size) {
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("minimax-m3");
    w.add_uint32("minimax-m3.attention.head_count_kv", 2);
    w.add_uint32("minimax-m3.expert_feed_forward_length", 64);
    w.add_uint32("minimax-m3.expert_shared_count", 1);
    w.add_uint32("minimax-m3.expert_gating_func", 2);
    w.add_uint32("minimax-m3.attention.indexer.head_count", indexer_heads);
    w.add_uint32("minimax-m3.attention.indexer.key_length", 64);
    w.add_uint32("minimax-m3.attention.indexer.top_k", 4);
    w.add_uint32("minimax-m3.attention.indexer.block_size", block_size);
    w.add_uint32("minimax-m3.attention.indexer.local_blocks", 1);
    return kvplan::testing::gguf_load_outcome(w);
  };
  CHECK(bare(2, 16).first == kvplan::ExitCode::ok);
  CHECK_THAT(bare(4, 16).second, Catch::Contains("sparse attention asserts they are equal"));
  CHECK_THAT(bare(2, 0).second, Catch::Contains("block_size"));
}

namespace {

/// Each fixture planned under vLLM, SGLang and TensorRT-LLM: exit 3 with `reason` in the message.
void check_refused_by_paged_engines(std::initializer_list<const char*> fixtures, const char* reason) {
  for (const char* fixture : fixtures) {
    const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture(fixture);
    for (const char* runtime : {"vllm", "sglang", "trtllm"}) {
      INFO(fixture << " under " << runtime);
      const auto [code, message] = kvplan::testing::plan_outcome(m.spec, runtime);
      CHECK(code == kvplan::ExitCode::unsupported_architecture);
      CHECK_THAT(message, Catch::Contains(reason));
    }
  }
}

}  // namespace

TEST_CASE("minimax-m3 and qwen4exp: the engines with DSA's indexer rules refuse an indexer beside plain attention",
          "[gguf_archs]") {
  // vLLM, SGLang and TensorRT-LLM price an indexer as DSA's on MLA layers; these two keep theirs
  // on plain attention layers, a layout only the llama.cpp profile has read (exit 3).
  check_refused_by_paged_engines({"minimax-m3", "qwen4exp"}, "a sparse-attention indexer beside plain attention");
  // DSA's indexer on MLA layers stays theirs to size.
  CHECK(kvplan::testing::plan_outcome(kvplan::testing::load_llamacpp_fixture("deepseek32").spec, "vllm").first ==
        kvplan::ExitCode::ok);
}

TEST_CASE("a GGUF file's recurrent state is llama.cpp's: the other engines ask for the config.json", "[gguf_archs]") {
  // llama.cpp keeps R and S in f32 whatever the model; vLLM, SGLang and TensorRT-LLM keep their own
  // state dtype (mamba_ssm_dtype, the model's dtype), which the GGUF file does not say (exit 3).
  check_refused_by_paged_engines({"plamo2", "kimi-k3", "granitehybrid"},
                                 "llama.cpp's recurrent state (f32), as the GGUF file gives it");
}

TEST_CASE("qwen4exp: Qwen3.5's hybrid with a third cache for the indexer", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("qwen4exp");
  CHECK(kvplan::describe_layers(m.spec) == "2 linear + 2 full+indexer(64)");
  // Gated DeltaNet state: conv (4 - 1) x (128 + 2 x 2 x 32) = 768, state 32 x 128 = 4,096.
  CHECK(m.spec.layers[0].state[0].elements == 768);
  CHECK(m.spec.layers[0].state[1].elements == 4'096);
  // n_ctx 8192, 2 sequences: attention 2 layers x 4096 x 2 x 2 B x (64 + 64) = 4,194,304; the
  // indexer 2 x 4096 x 2 x 2 B x (64 + 32) = 3,145,728; state 2 layers x 2 cells x 4 B x 4,864.
  const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
  REQUIRE(r.caches.size() == 2);
  CHECK(r.caches[0].k_bytes + r.caches[0].v_bytes == 4'194'304);
  CHECK(r.caches[1].k_bytes + r.caches[1].v_bytes == 3'145'728);
  CHECK(r.recurrent_bytes == 2ull * 2 * 4 * 4'864);
  // Its loader refuses a single hyper-connection; its graph asserts inner = state x heads.
  const auto bare = [](std::uint32_t hc, std::uint32_t inner) {
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("qwen4exp");
    w.add_array_int32("qwen4exp.rope.dimension_sections", {6, 5, 5, 0});
    w.add_uint32("qwen4exp.ssm.conv_kernel", 4);
    w.add_uint32("qwen4exp.ssm.inner_size", inner);
    w.add_uint32("qwen4exp.ssm.state_size", 32);
    w.add_uint32("qwen4exp.ssm.time_step_rank", 4);
    w.add_uint32("qwen4exp.ssm.group_count", 2);
    w.add_uint32("qwen4exp.hyper_connection.count", hc);
    w.add_uint32("qwen4exp.hyper_connection.low_rank", 4);
    w.add_uint32("qwen4exp.attention.indexer.head_count", 2);
    w.add_uint32("qwen4exp.attention.indexer.key_length", 64);
    w.add_uint32("qwen4exp.attention.indexer.top_k", 4);
    return kvplan::testing::gguf_load_outcome(w);
  };
  CHECK(bare(2, 128).first == kvplan::ExitCode::ok);
  CHECK_THAT(bare(1, 128).second, Catch::Contains("hyper_connection.count"));
  CHECK_THAT(bare(2, 96).second, Catch::Contains("state_size x time_step_rank = 128"));
  // PLE adds a state row kvplan does not model: its keys stay unread, exit 3.
  kvplan::testing::GgufWriter ple = kvplan::testing::make_llamacpp_fixture("qwen4exp");
  ple.add_array_int32("qwen4exp.ple.layers", {0, 0, 1, 0});
  CHECK(kvplan::testing::gguf_load_outcome(ple).first == kvplan::ExitCode::unsupported_architecture);
}

TEST_CASE("dots3note: DSA's caches on the full layers, a K-only sliding MLA cache", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("dots3note");
  CHECK(kvplan::describe_layers(m.spec) == "2 mla+indexer(64) + 2 sliding(128)");
  CHECK(m.spec.layers[1].k_head_dim == 48);  // the sliding latent 32 + the rope key 16
  CHECK(m.spec.layers[1].v_head_dim == 0);
  // n_ctx 8192 over 2 sequences: main 2 layers x 4096 x 2 x 2 B x 80 = 2,621,440; indexer 2 x 4096
  // x 2 x 2 B x 64 = 2,097,152; sliding pad256(128 + 512) = 768 cells: 2 x 768 x 2 x 2 B x 48.
  const kvplan::LlamaCppResult r = hybrid_moe_plan(m);
  REQUIRE(r.caches.size() == 3);
  CHECK(r.caches[0].role == "main KV");
  CHECK(r.caches[0].k_bytes == 2'621'440);
  CHECK(r.caches[1].role == "indexer KV");
  CHECK(r.caches[1].k_bytes == 2'097'152);
  CHECK(r.caches[2].role == "SWA KV");
  CHECK(r.caches[2].cells == 768);
  CHECK(r.caches[2].k_bytes == 2ull * 768 * 2 * 2 * 48);
  CHECK(r.kv_bytes == 2'621'440 + 2'097'152 + 294'912);
  // What its graph asserts: the indexer on exactly the full layers, a power-of-two indexer key.
  const auto bare = [](std::vector<std::uint32_t> types, std::uint32_t indexer_width) {
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("dots3note");
    for (const char* key : {"expert_feed_forward_length", "expert_shared_count", "expert_gating_func",
                            "leading_dense_block_count", "attention.q_lora_rank"})
      w.add_uint32(std::string("dots3note.") + key, 1);
    w.add_float32("dots3note.rope.freq_base_swa", 10000.0f);
    w.add_uint32("dots3note.attention.head_count_kv", 1);
    w.add_uint32("dots3note.attention.key_length", 80);
    w.add_uint32("dots3note.attention.key_length_swa", 48);
    w.add_uint32("dots3note.rope.dimension_count", 16);
    w.add_uint32("dots3note.attention.kv_lora_rank", 64);
    w.add_uint32("dots3note.attention.kv_lora_rank_swa", 32);
    for (const char* key : {"key_length_mla", "value_length_mla", "key_length_mla_swa", "value_length_mla_swa"})
      w.add_uint32(std::string("dots3note.attention.") + key, 32);
    w.add_uint32("dots3note.attention.sliding_window", 128);
    w.add_array_uint32("dots3note.attention.sliding_window_pattern", {0, 1, 0, 1});
    w.add_uint32("dots3note.attention.indexer.head_count", 4);
    w.add_uint32("dots3note.attention.indexer.key_length", indexer_width);
    w.add_uint32("dots3note.attention.indexer.top_k", 8);
    w.add_array_uint32("dots3note.attention.indexer.types", std::move(types));
    return kvplan::testing::gguf_load_outcome(w);
  };
  CHECK(bare({1, 0, 1, 0}, 64).first == kvplan::ExitCode::ok);
  CHECK_THAT(bare({1, 1, 1, 0}, 64).second, Catch::Contains("full though it slides"));
  CHECK_THAT(bare({1, 0, 1, 0}, 96).second, Catch::Contains("Hadamard"));
  // get_arr reads the arrays into LLAMA_MAX_LAYERS flags: a longer one is refused, as granite_swa's.
  std::vector<std::uint32_t> long_types(513, 0);
  long_types[0] = long_types[2] = 1;
  CHECK_THAT(bare(long_types, 64).second, Catch::Contains("has 513 elements, more than llama.cpp's 512"));
}

TEST_CASE("bailingmoe3: the hybrid's default filter gives a nextn layer K cells too", "[gguf_archs]") {
  // A trunk-only file with one nextn layer: llama.cpp logs 2 cache layers (the MLA layer and the
  // nextn one, both 96 wide), 1.50 MiB at -c 4096, where Qwen3.5's filter would keep 1.
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("bailingmoe3-nextn");
  CHECK(m.spec.mtp_layers == 1);
  const kvplan::LlamaCppResult r = kvplan::testing::llamacpp_cpu_plan(m, 4096, 1);
  REQUIRE(r.caches.size() == 1);
  CHECK(r.caches[0].layers == 2);
  CHECK(r.kv_bytes == 2ull * 4096 * 96 * 2);
}
