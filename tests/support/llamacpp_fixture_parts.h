#pragma once
/// The pieces the llama.cpp fixtures are built from (tests/support/llamacpp_fixtures*.cpp): the
/// keys every file has and the tensors most layers share, at the fixtures' sizes (n_embd 128, 4
/// query heads, n_ff 256, 8 tokens), every tensor F32 (tests/llamacpp/ARCHS.md says why).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "support/gguf_writer.h"
#include "support/llamacpp_fixtures.h"

namespace kvplan::testing::fixture_parts {

constexpr std::uint32_t kF32 = 0;
constexpr std::uint64_t kEmbd = 128;
constexpr std::uint64_t kFf = 256;
constexpr std::uint64_t kVocab = 8;

/// The keys every fixture has: architecture, a gpt2 vocabulary of `vocab` tokens (the smallest
/// workable is 8, with "\n"), sizes.
void common_keys(GgufWriter& w, const std::string& arch, std::uint32_t layers, bool heads = true,
                 std::uint32_t context = 8192, std::uint32_t vocab = kVocab);

/// "blk.<i>.<rest>"
std::string blk(std::uint32_t i, std::string_view rest);

/// token_embd and output_norm, and the output head unless it is tied to token_embd.
void embeddings(GgufWriter& w, bool output_head);

/// attn_norm + q/k/v/o with `head` dims, 4 query heads and `kv_heads` KV heads.
void attention(GgufWriter& w, std::uint32_t i, std::uint64_t head, std::uint64_t kv_heads, bool qk_norm = false,
               bool bias = false);

/// ffn_norm (unless `norm` is false) and a gated MLP of kFf.
void ffn(GgufWriter& w, std::uint32_t i, bool norm = true);

/// Gemma 2 to 4's layer: attention and the FFN, each followed by a norm of its own.
void sandwich_layer(GgufWriter& w, std::uint32_t i, std::uint64_t head, std::uint64_t kv_heads, bool qk_norm);

/// ffn_norm, a router over 4 experts and their stacked gate/up/down of `n_ff_exp`.
void experts(GgufWriter& w, std::uint32_t i, std::uint64_t n_ff_exp);

/// A gated shared expert of 64 (gate, up, down).
void shared_expert_64(GgufWriter& w, std::uint32_t i);

/// The leading_dense_block_count 1 MoE layout: layer 0 a gated MLP of kFf, the others 4 routed
/// experts of 32 (and a selection bias, exp_probs_b, when `selection_bias`) and a shared expert
/// of 64.
void dense_first_moe(GgufWriter& w, std::uint32_t i, bool selection_bias);
/// A MoE block of 2 routed experts of 64 with a selection bias (exp_probs_b) and a shared expert
/// of 64 (minimax-m3, dots3note, deepseek4).
void biased_moe_2x64(GgufWriter& w, std::uint32_t i);

/// A fixture's name and description, and how to write it.
struct FixtureRecipe {
  LlamaCppFixture fixture;
  std::function<GgufWriter()> make;
};

/// Architectures whose cache llama.cpp lays out as llama's (K and V on every layer, no window):
/// only their tensors and keys differ (tests/support/llamacpp_fixtures_plain.cpp).
std::vector<FixtureRecipe> plain_attention_recipes();

/// MoE architectures with an interleaved sliding window (tests/support/llamacpp_fixtures_windowed_moe.cpp).
std::vector<FixtureRecipe> windowed_moe_recipes();

/// RWKV architectures, recurrent state only (tests/support/llamacpp_fixtures_rwkv.cpp).
std::vector<FixtureRecipe> rwkv_recipes();
/// Hybrids in create_memory's default branch: plamo2 (Mamba-2), bailingmoe3 and kimi-k3 (KDA and
/// MLA) (tests/support/llamacpp_fixtures_hybrid.cpp).
std::vector<FixtureRecipe> hybrid_recipes();
/// deepseek4: a window, compressed caches and compressor states (tests/support/llamacpp_fixtures_deepseek4.cpp).
std::vector<FixtureRecipe> deepseek4_recipes();

}  // namespace kvplan::testing::fixture_parts
