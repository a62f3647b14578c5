// EAGLE-3 draft heads of Llama's layout (model_type llama, architectures LlamaForCausalLMEagle3),
// as vLLM builds them (model_executor/models/llama_eagle3.py, Eagle3LlamaForCausalLM): not a model
// to serve but the draft of --speculative-config's eagle3 method, priced beside its target.

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Whether the draft reads three of the target's hidden states through fc (eagle_config's
/// use_aux_hidden_state, default true).
bool reads_aux_hidden_states(ConfigFields& fields) {
  const nlohmann::json* eagle = fields.find("eagle_config");
  if (eagle == nullptr) return true;
  if (!eagle->is_object()) fields.fail("eagle_config", "expected an object");
  const auto it = eagle->find("use_aux_hidden_state");
  if (it == eagle->end() || it->is_null()) return true;
  if (!it->is_boolean()) fields.fail("eagle_config", "use_aux_hidden_state must be true or false");
  return it->get<bool>();
}

/// embed_tokens vocab_size x H (VocabParallelEmbedding); per layer LlamaAttention with qkv_proj
/// reading 2 H in layer 0 (the embeddings and the hidden states side by side) and H after, biases
/// on q, k, v and o with attention_bias, a gated MLP (+ mlp_bias), three RMSNorms (input,
/// post-attention, hidden_norm); the final norm; lm_head draft_vocab_size x H (default vocab_size),
/// never tied. fc is a part (draft_parts).
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 vocab = fields.positive("vocab_size");
  ParamCount count;
  count.embedding = product({vocab, hidden}, "embedding");
  count.lm_head = product({fields.uint("draft_vocab_size").value_or(vocab), hidden}, "lm_head");
  fields.ignore({"tie_word_embeddings", "norm_before_residual", "target_hidden_size"});
  const auto three_norms = [](const Layout& l, std::size_t) { return 3 * l.hidden; };
  // Layer 0's q, k and v read the embeddings beside the hidden states: 2 x hidden in.
  const auto wider_qkv = [](const Layout& l, std::size_t i) -> u64 {
    if (i != 0) return 0;
    const LayerPlan& layer = l.layers[i];
    return product({l.hidden, l.heads * layer.k_dim + layer.kv_heads * (layer.k_dim + layer.v_dim)}, "qkv_proj");
  };
  Counted counted = eagle_draft_layers(fields, layout, three_norms, wider_qkv);
  counted.final_norm = hidden;
  finish_count(count, fields, counted);
  return count;
}

/// fc: 3 x target_hidden_size (default hidden_size) in, hidden_size out, no bias (ReplicatedLinear).
std::vector<ModelPart> draft_parts(ConfigFields& fields, const Layout& layout) {
  if (!reads_aux_hidden_states(fields)) return {};
  const u64 target_hidden = fields.uint("target_hidden_size").value_or(layout.hidden);
  return {ModelPart{"fc (the target's hidden states in)", product({3, target_hidden, layout.hidden}, "fc"), 0}};
}

}  // namespace

const Family& family_eagle3() {
  static const Family family{
      .name = "eagle3",
      .types = {{"llama_eagle3", false, "EAGLE-3 draft heads: model_type llama, architectures LlamaForCausalLMEagle3"}},
      .gguf = "none (a draft head vLLM and SGLang load beside the target)",
      .fixtures = {"eagle3-llama3.1-8b"},
      .rules = "A draft, not a model to serve: give it as the model of --speculative-config's eagle3 method. "
               "num_hidden_layers full-attention layers (num_key_value_heads of head_dim, else hidden_size / heads), "
               "cached beside the target's. Counted as vLLM's Eagle3LlamaForCausalLM builds it: embed_tokens, layer "
               "0's qkv_proj reading 2 x hidden_size, a gated MLP and three RMSNorms a layer, the final norm, lm_head "
               "of draft_vocab_size rows; fc (3 x target_hidden_size in) as a part of its own.",
      .unverified = "No published config.json of an EAGLE-3 head was found: the fixture is SpecForge's template of "
                    "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B's. The count matches vLLM's 0.11 \"Model loading took\" "
                    "for Llama 3.1 8B with that head (15.8114 GiB logged; 15.81133 priced).",
      .count = count,
      .draft_parts = draft_parts,
  };
  return family;
}

}  // namespace kvplan::arch
