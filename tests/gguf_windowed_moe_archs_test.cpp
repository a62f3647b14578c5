// The MoE GGUF architectures with an interleaved sliding window (src/loaders/gguf_model.cpp,
// read_moe_window): each one's window rule as llama.cpp v0.4.0's load_arch_hparams has it, and the
// cache bytes by hand. The same fixtures run through the real llama.cpp in
// tests/llamacpp/crosscheck.mjs.

#include <string>

#include <catch2/catch.hpp>

#include "engines/llamacpp/rules.h"
#include "kvplan/error.h"
#include "kvplan/model_spec.h"
#include "loaders/gguf_model.h"
#include "support/gguf_writer.h"
#include "support/llamacpp_fixture_model.h"

namespace {

/// n_ctx 8192, one sequence, f16, flash attention off, ubatch 512: the non-SWA cache holds 8192
/// cells, a window of 128 holds pad256(128 + 512) = 768.
std::uint64_t windowed_kv_bytes(const kvplan::GgufModel& m) {
  return kvplan::testing::llamacpp_cpu_plan(m, 8192, 1).kv_bytes;
}

bool windowed_sliding(const kvplan::GgufModel& m, std::size_t il) {
  return m.spec.layers.at(il).kind == kvplan::LayerKind::sliding;
}

}  // namespace

TEST_CASE("exaone-moe and afmoe: the last of every 4 layers global", "[gguf_archs]") {
  for (const char* arch : {"exaone-moe", "afmoe"}) {
    INFO(arch);
    const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture(arch);
    CHECK(windowed_sliding(m, 0));
    CHECK(windowed_sliding(m, 2));
    CHECK_FALSE(windowed_sliding(m, 3));
    CHECK(m.spec.layers[0].window == 128);
    // 1 full layer x 8192 cells x 64 x 2 B x (K + V) + 3 sliding x 768 cells x 256 B.
    CHECK(windowed_kv_bytes(m) == 2'097'152 + 589'824);
  }
}

TEST_CASE("laguna and smallthinker: the first of every 4 layers global", "[gguf_archs]") {
  const kvplan::GgufModel laguna = kvplan::testing::load_llamacpp_fixture("laguna");
  CHECK_FALSE(windowed_sliding(laguna, 0));
  CHECK(windowed_sliding(laguna, 1));
  CHECK(windowed_sliding(laguna, 3));
  CHECK(windowed_kv_bytes(laguna) == 2'097'152 + 589'824);
  // smallthinker: its file says 512, llama.cpp slides over 4096: pad256(4096 + 512) = 4608 cells.
  const kvplan::GgufModel small = kvplan::testing::load_llamacpp_fixture("smallthinker");
  CHECK_FALSE(windowed_sliding(small, 0));
  CHECK(small.spec.layers[1].window == 4'096);
  CHECK(windowed_kv_bytes(small) == 2'097'152 + 3ull * 4'608 * 256);
}

TEST_CASE("mellum: a per-layer pattern, required with a window", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("mellum");
  CHECK(windowed_sliding(m, 0));
  CHECK_FALSE(windowed_sliding(m, 1));
  CHECK(windowed_sliding(m, 2));
  // 2 full x 8192 x 256 B + 2 sliding x 768 x 256 B.
  CHECK(windowed_kv_bytes(m) == 4'194'304 + 393'216);
  // A window without a pattern: llama.cpp's required get_key_or_arr throws (exit 2); exaone-moe
  // without a window likewise.
  for (const char* arch : {"mellum", "exaone-moe"}) {
    INFO(arch);
    const std::string a = arch;
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file(a);
    w.add_uint32(a + ".expert_feed_forward_length", 32);
    w.add_uint32(a + ".expert_gating_func", 2);
    if (a == "mellum") w.add_uint32(a + ".attention.sliding_window", 128);
    CHECK(kvplan::testing::gguf_load_outcome(w).first == kvplan::ExitCode::invalid_input);
  }
}

TEST_CASE("mimo2 and step35: a required per-layer pattern, nextn layers filtered", "[gguf_archs]") {
  const kvplan::GgufModel mimo = kvplan::testing::load_llamacpp_fixture("mimo2");
  CHECK_FALSE(windowed_sliding(mimo, 0));
  CHECK(windowed_sliding(mimo, 1));
  CHECK(windowed_sliding(mimo, 3));
  CHECK(windowed_kv_bytes(mimo) == 2'097'152 + 589'824);
  const kvplan::GgufModel step = kvplan::testing::load_llamacpp_fixture("step35");
  CHECK(windowed_sliding(step, 0));
  CHECK_FALSE(windowed_sliding(step, 1));
  CHECK(windowed_kv_bytes(step) == 4'194'304 + 393'216);
  // A fifth block declared nextn: the main context's filter (il < n_layer) gives it no cells.
  const kvplan::GgufModel nextn = kvplan::testing::load_llamacpp_fixture("mimo2-nextn");
  CHECK(nextn.spec.mtp_layers == 1);
  CHECK(windowed_kv_bytes(nextn) == windowed_kv_bytes(mimo));
}

TEST_CASE("qwen35's nextn layers keep no cells: the hybrid's attention filter is il < n_layer", "[gguf_archs]") {
  kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("qwen35");
  const std::uint64_t trunk = windowed_kv_bytes(m);
  m.spec.mtp_layers = 1;  // as a file with nextn_predict_layers 1 loads
  CHECK(windowed_kv_bytes(m) == trunk);
  // qwen3's default branch has no filter: its nextn layer gets cells like the last layer's.
  kvplan::GgufModel plain = kvplan::testing::load_llamacpp_fixture("qwen3");
  const std::uint64_t plain_trunk = windowed_kv_bytes(plain);
  plain.spec.mtp_layers = 1;
  CHECK(windowed_kv_bytes(plain) == plain_trunk + plain_trunk / 4);
}

TEST_CASE("cohere2moe, granite_swa and plamo3: their own window rules", "[gguf_archs]") {
  // cohere2moe: a scalar period 4 with dense_first (layer 0 global).
  const kvplan::GgufModel cohere = kvplan::testing::load_llamacpp_fixture("cohere2moe");
  CHECK_FALSE(windowed_sliding(cohere, 0));
  CHECK(windowed_sliding(cohere, 1));
  CHECK(windowed_kv_bytes(cohere) == 2'097'152 + 589'824);
  // granite_swa: the array marks layers 0-2.
  const kvplan::GgufModel granite = kvplan::testing::load_llamacpp_fixture("granite_swa");
  CHECK(windowed_sliding(granite, 0));
  CHECK_FALSE(windowed_sliding(granite, 3));
  CHECK(windowed_kv_bytes(granite) == 2'097'152 + 589'824);
  // plamo3: period 8 over 4 layers: every layer slides, and the non-SWA cache has none.
  const kvplan::GgufModel plamo = kvplan::testing::load_llamacpp_fixture("plamo3");
  CHECK(kvplan::describe_layers(plamo.spec) == "4 sliding(128)");
  CHECK(windowed_kv_bytes(plamo) == 4ull * 768 * 256);
}

TEST_CASE("muse-glimmer: a required pattern, a scalar period with the last layer of each global", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("muse-glimmer");
  CHECK(windowed_sliding(m, 0));
  CHECK_FALSE(windowed_sliding(m, 1));
  CHECK(windowed_sliding(m, 2));
  CHECK_FALSE(windowed_sliding(m, 3));
  CHECK(windowed_kv_bytes(m) == 2 * 2'097'152 + 2 * 768 * 256);
  // The window, the pattern and logit_scale are each required (llama.cpp's get_key and
  // get_key_or_arr without a default): a file missing any one of them is exit 2.
  const auto bare = [](bool window, bool pattern, bool logit_scale) {
    kvplan::testing::GgufWriter w = kvplan::testing::gguf_bare_file("muse-glimmer");
    if (window) w.add_uint32("muse-glimmer.attention.sliding_window", 128);
    if (pattern) w.add_uint32("muse-glimmer.attention.sliding_window_pattern", 2);
    if (logit_scale) w.add_float32("muse-glimmer.logit_scale", 1.0f);
    return kvplan::testing::gguf_load_outcome(w).first;
  };
  CHECK(bare(true, true, true) == kvplan::ExitCode::ok);
  CHECK(bare(false, true, true) == kvplan::ExitCode::invalid_input);
  CHECK(bare(true, false, true) == kvplan::ExitCode::invalid_input);
  CHECK(bare(true, true, false) == kvplan::ExitCode::invalid_input);
}

TEST_CASE("hy_v3: llama's cache, its nextn layer filtered out", "[gguf_archs]") {
  const kvplan::GgufModel m = kvplan::testing::load_llamacpp_fixture("hy_v3");
  CHECK(kvplan::describe_layers(m.spec) == "4 full");
  CHECK(m.spec.mtp_layers == 1);
  // 4 layers x 8192 cells x 64 x 2 B x (K + V): the nextn block (il 4) keeps no cells.
  CHECK(windowed_kv_bytes(m) == 8'388'608);
}
