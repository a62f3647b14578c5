// LG AI EXAONE 3.0 / 3.5 (exaone, remote code modeling_exaone.py) and EXAONE 4.0 (transformers
// modeling_exaone4.py).

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/json_reader.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// Exaone4Config without layer_types: sliding unless (i + 1) % sliding_window_pattern == 0 (an
/// integer, default 4), or per the pattern string's letters ("LLLG": L local, G global), repeated.
bool default_kinds(ConfigFields& fields, Layout& layout) {
  if (fields.model_type() != "exaone4" || !fields.uint("sliding_window")) return false;
  const nlohmann::json* pattern = fields.find("sliding_window_pattern");
  for (std::size_t i = 0; i < layout.count(); ++i) {
    bool sliding = (i + 1) % 4 != 0;
    if (pattern && pattern->is_string()) {
      const std::string text = pattern->get<std::string>();
      if (text.empty()) fields.fail("sliding_window_pattern", "is empty");
      const char letter = text[i % text.size()];
      if (letter != 'L' && letter != 'G')
        throw unsupported_architecture(fmt::format("{}: sliding_window_pattern", fields.origin()), text);
      sliding = letter == 'L';
    } else if (pattern) {
      const u64 every = json_to_uint(*pattern, fields.where("sliding_window_pattern"));
      sliding = every == 0 || (i + 1) % every != 0;
    }
    layout.layers[i].kind = sliding ? LayerKind::sliding : LayerKind::full;
  }
  return true;
}

/// EXAONE 3: transformer.h.N.attn.attention.{q,k,v,out}_proj and mlp.c_fc_0 / c_fc_1 / c_proj,
/// all without bias, ln_1 and ln_2 (RMSNorm), ln_f. EXAONE 4: the same projections, per-head
/// q_norm and k_norm (head_dim each), and post-attention / post-feedforward norms (no input norm).
ParamCount count(ConfigFields& fields, const Layout& layout) {
  check_attention(fields, layout);
  ParamCount count = start_count(fields, layout);
  DenseDecoder decoder;
  if (fields.model_type() == "exaone4") decoder.attention.qk_norm = 2 * layout.head_dim;
  decoder.intermediate = fields.positive("intermediate_size");
  decoder.layer_norms = 2 * layout.hidden;
  Counted counted = dense_decoder(layout, decoder);
  counted.final_norm = layout.hidden;
  finish_count(count, fields, counted);
  return count;
}

}  // namespace

const Family& family_exaone() {
  static const Family family{
      .name = "exaone",
      .types = {{"exaone", false, "remote code; num_layers for num_hidden_layers"}, {"exaone4"}},
      .gguf = "exaone, exaone4",
      .fixtures = {"exaone-3.0-7.8b", "exaone-4.0-32b"},
      .rules = "exaone: full attention, the layer count spelt num_layers. exaone4: layer_types (else "
               "sliding_window_pattern, an integer or a string such as LLLG) over sliding_window; the global layers use "
               "no RoPE. llama.cpp enables the window only for the 64-layer model. Counted: no biases; EXAONE 4's "
               "per-head q/k norms and post-norms.",
      .unverified = "Only the nominal sizes (7.8B, 32B) were found: the counts agree with them, not with an exact "
                    "figure.",
      .spellings = {{"num_hidden_layers", "num_layers"}},
      .default_kinds = default_kinds,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
