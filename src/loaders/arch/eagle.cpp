// EAGLE(-2) draft heads as SGLang serves them (model_type llama, architectures LlamaForCausalLMEagle,
// the lmsys/sglang-EAGLE-* checkpoints): SGLang's LlamaForCausalLMEagle (srt/models/llama_eagle.py).
// Not a model to serve but the draft of --speculative-algorithm EAGLE, priced beside its target.
// vLLM builds EAGLE-1 heads from a plain LlamaForCausalLM config instead (engines/vllm).

#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// embed_tokens vocab_size x H; per layer a LlamaDecoderLayer (attention with attention_bias, a
/// gated MLP with mlp_bias), layer 0 without its input RMSNorm (EAGLE's cnets.py, deleted in
/// __init__); no final norm; lm_head hot_vocab_size (default vocab_size) x H unless
/// tie_word_embeddings. fc is a part (draft_parts).
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 vocab = fields.positive("vocab_size");
  ParamCount count;
  count.embedding = product({vocab, hidden}, "embedding");
  if (!fields.flag("tie_word_embeddings", false))
    count.lm_head = product({fields.uint("hot_vocab_size").value_or(vocab), hidden}, "lm_head");
  fields.ignore({"bias"});  // EAGLE's training switch for fc's bias; SGLang builds one whatever it says
  // Layer 0's input RMSNorm is deleted; the others keep both.
  const auto norms = [](const Layout& l, std::size_t i) { return i == 0 ? l.hidden : 2 * l.hidden; };
  const Counted counted = eagle_draft_layers(fields, layout, norms);
  finish_count(count, fields, counted);
  return count;
}

/// fc: torch.nn.Linear(2 x hidden_size, hidden_size), with its bias (the default): whole on every rank.
std::vector<ModelPart> draft_parts(ConfigFields&, const Layout& layout) {
  const u64 hidden = layout.hidden;
  return {ModelPart{"fc (the target's hidden state in)", product({2, hidden, hidden}, "fc") + hidden, 0}};
}

}  // namespace

const Family& family_eagle() {
  static const Family family{
      .name = "eagle",
      .types = {{"llama_eagle", false, "EAGLE draft heads for SGLang: model_type llama, architectures LlamaForCausalLMEagle"}},
      .gguf = "none (a draft head SGLang loads beside the target)",
      .fixtures = {"sglang-eagle-llama2-chat-7b", "sglang-eagle-llama3-instruct-8b"},
      .rules = "A draft, not a model to serve: give it as --speculative-draft-model-path of SGLang's "
               "--speculative-algorithm EAGLE. num_hidden_layers full-attention layers, cached beside the target's. "
               "Counted as SGLang's LlamaForCausalLMEagle builds it: embed_tokens, each decoder layer (the first "
               "without its input RMSNorm), no final norm, lm_head of hot_vocab_size rows unless tied; fc (2 x "
               "hidden_size in, with a bias) as a part of its own.",
      .unverified = "No published config.json of an lmsys/sglang-EAGLE head was found: the fixtures are the EAGLE "
                    "authors' training configs with the architectures those heads state. The count matches the "
                    "\"mem usage\" SGLang's docs printed loading both (0.93 and 2.43 GB).",
      .count = count,
      .draft_parts = draft_parts,
  };
  return family;
}

}  // namespace kvplan::arch
