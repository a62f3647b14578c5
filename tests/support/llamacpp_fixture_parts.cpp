#include "support/llamacpp_fixture_parts.h"

#include <fmt/format.h>

namespace kvplan::testing::fixture_parts {

/// The keys every fixture has: architecture, the smallest workable gpt2 vocabulary, sizes.
void common_keys(GgufWriter& w, const std::string& arch, std::uint32_t layers, bool heads,
                 std::uint32_t context, std::uint32_t vocab) {
  w.add_string("general.architecture", arch);
  // llama.cpp's vocabulary marks "</s>" when general.name contains "phi3" or "phi-3" (and our
  // 8-token vocabulary has none): the phi3 fixture's name avoids both spellings.
  w.add_string("general.name", "kvplan fixture " + (arch == "phi3" ? std::string("phi three") : arch));
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "default");
  std::vector<std::string> tokens = {"<|endoftext|>", "a", "b", "c", "d", "e", "f", "\xC4\x8A"};
  for (std::uint32_t t = 8; t < vocab; ++t) tokens.push_back(fmt::format("t{}", t));
  tokens.resize(vocab);
  std::vector<std::int32_t> types(vocab, 1);
  types[0] = 3;
  w.add_array_string("tokenizer.ggml.tokens", std::move(tokens));
  w.add_array_int32("tokenizer.ggml.token_type", std::move(types));
  w.add_array_string("tokenizer.ggml.merges", {});
  w.add_uint32("tokenizer.ggml.bos_token_id", 0);
  w.add_uint32("tokenizer.ggml.eos_token_id", 0);
  w.add_uint32(arch + ".context_length", context);
  w.add_uint32(arch + ".embedding_length", kEmbd);
  w.add_uint32(arch + ".block_count", layers);
  w.add_float32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
  if (heads) w.add_uint32(arch + ".attention.head_count", 4);
}

std::string blk(std::uint32_t i, std::string_view rest) { return fmt::format("blk.{}.{}", i, rest); }

void embeddings(GgufWriter& w, bool output_head) {
  w.add_tensor("token_embd.weight", kF32, {kEmbd, kVocab});
  w.add_tensor("output_norm.weight", kF32, {kEmbd});
  if (output_head) w.add_tensor("output.weight", kF32, {kEmbd, kVocab});
}

/// attn_norm + q/k/v/o with `head` dims, 4 query heads and `kv_heads` KV heads.
void attention(GgufWriter& w, std::uint32_t i, std::uint64_t head, std::uint64_t kv_heads, bool qk_norm,
               bool bias) {
  const std::uint64_t q = head * 4, kv = head * kv_heads;
  w.add_tensor(blk(i, "attn_norm.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "attn_q.weight"), kF32, {kEmbd, q});
  w.add_tensor(blk(i, "attn_k.weight"), kF32, {kEmbd, kv});
  w.add_tensor(blk(i, "attn_v.weight"), kF32, {kEmbd, kv});
  w.add_tensor(blk(i, "attn_output.weight"), kF32, {q, kEmbd});
  if (bias) {
    w.add_tensor(blk(i, "attn_q.bias"), kF32, {q});
    w.add_tensor(blk(i, "attn_k.bias"), kF32, {kv});
    w.add_tensor(blk(i, "attn_v.bias"), kF32, {kv});
  }
  if (qk_norm) {
    w.add_tensor(blk(i, "attn_q_norm.weight"), kF32, {head});
    w.add_tensor(blk(i, "attn_k_norm.weight"), kF32, {head});
  }
}

void ffn(GgufWriter& w, std::uint32_t i, bool norm) {
  if (norm) w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "ffn_gate.weight"), kF32, {kEmbd, kFf});
  w.add_tensor(blk(i, "ffn_up.weight"), kF32, {kEmbd, kFf});
  w.add_tensor(blk(i, "ffn_down.weight"), kF32, {kFf, kEmbd});
}

/// Gemma 2 to 4's layer: attention and the FFN, each followed by a norm of its own.
void sandwich_layer(GgufWriter& w, std::uint32_t i, std::uint64_t head, std::uint64_t kv_heads, bool qk_norm) {
  attention(w, i, head, kv_heads, qk_norm);
  w.add_tensor(blk(i, "post_attention_norm.weight"), kF32, {kEmbd});
  ffn(w, i);
  w.add_tensor(blk(i, "post_ffw_norm.weight"), kF32, {kEmbd});
}

void experts(GgufWriter& w, std::uint32_t i, std::uint64_t n_ff_exp) {
  w.add_tensor(blk(i, "ffn_norm.weight"), kF32, {kEmbd});
  w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 4});
  w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, n_ff_exp, 4});
  w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, n_ff_exp, 4});
  w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {n_ff_exp, kEmbd, 4});
}

void shared_expert_64(GgufWriter& w, std::uint32_t i) {
  w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 64});
  w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 64});
  w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {64, kEmbd});
}

void dense_first_moe(GgufWriter& w, std::uint32_t i, bool selection_bias) {
  if (i == 0) {
    ffn(w, i);
    return;
  }
  experts(w, i, 32);
  if (selection_bias) w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {4});
  shared_expert_64(w, i);
}

/// A MoE block of 2 routed experts of 64 with a selection bias (exp_probs_b) and a shared expert
/// of 64 (minimax-m3, dots3note, deepseek4).
void biased_moe_2x64(GgufWriter& w, std::uint32_t i) {
  w.add_tensor(blk(i, "ffn_gate_inp.weight"), kF32, {kEmbd, 2});
  w.add_tensor(blk(i, "exp_probs_b.bias"), kF32, {2});
  w.add_tensor(blk(i, "ffn_gate_exps.weight"), kF32, {kEmbd, 64, 2});
  w.add_tensor(blk(i, "ffn_down_exps.weight"), kF32, {64, kEmbd, 2});
  w.add_tensor(blk(i, "ffn_up_exps.weight"), kF32, {kEmbd, 64, 2});
  w.add_tensor(blk(i, "ffn_gate_shexp.weight"), kF32, {kEmbd, 64});
  w.add_tensor(blk(i, "ffn_down_shexp.weight"), kF32, {64, kEmbd});
  w.add_tensor(blk(i, "ffn_up_shexp.weight"), kF32, {kEmbd, 64});
}

}  // namespace kvplan::testing::fixture_parts
