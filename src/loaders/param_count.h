#pragma once
/// Parameter counts of a language model computed from its Hugging Face config.json: the shapes of
/// every tensor the architecture's modeling code creates, summed exactly. Pure: no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kvplan/model_spec.h"

namespace kvplan {

/// Of an MLA attention block (LayerCount::attention), the parts NVIDIA's lists quantize while
/// keeping the other projections: the output projection, and the DSA indexer's weights.
struct MlaShare {
  std::uint64_t o_proj = 0;
  std::uint64_t indexer = 0;  ///< its weight matrices, weights_proj among them; 0 without one
};

/// The block of a layer a weight matrix belongs to, as quantization lists name them apart.
enum class Block : std::uint8_t { attention, mla_o_proj, indexer, dense_mlp, shared, experts };

/// `copies` weight matrices of `rows` outputs x `cols` inputs in one block of a layer, as
/// checkpoints store them: what scales per 128 x 128 block, per output row or per group of inputs
/// are counted on, partial blocks and groups included.
struct MatrixShape {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::uint64_t copies = 1;
  Block block = Block::attention;
};

/// One decoder layer's share of ParamCount::total, for rules that keep whole layers unquantized
/// or count a scale per weight matrix (NVIDIA ModelOpt).
struct LayerCount {
  std::uint64_t params = 0;   ///< all of the layer's parameters
  std::uint64_t expert = 0;   ///< of them, its routed experts' weight matrices
  std::uint64_t experts = 0;  ///< how many routed experts it holds; 0 for a dense layer
  std::uint64_t matrices_per_expert = 0;  ///< 3 gated, 2 plain
  std::uint64_t router = 0;   ///< of params, its router's weights
  std::uint64_t vectors = 0;  ///< of params, norms and biases where the family counts them apart
  /// Whether the family counts the next two apart (the dense decoder, the Qwen, DeepSeek and
  /// MiniMax families).
  bool modules = false;
  std::uint64_t attention = 0;  ///< of params, the attention's weight matrices (linear attention whole)
  std::uint64_t shared = 0;     ///< of params, the shared experts' weight matrices and their gate
  /// Whether the attention block is a linear one named linear_attn (Qwen3-Next's Gated
  /// DeltaNet), not self_attn: quantization lists name the two apart.
  bool linear_attn = false;
  /// Of params, weight matrices no checkpoint quantizes: the DSA indexer's weights_proj.
  std::uint64_t unquantized = 0;
  /// Where the attention is MLA (the DeepSeek family): the parts of it lists name one by one.
  std::optional<MlaShare> mla;
  /// Of vectors, those engines hold in fp32 whatever the model dtype: DeepSeek's
  /// e_score_correction_bias (vLLM builds it so; DeepSeek-V3's checkpoint stores it so).
  std::uint64_t fp32 = 0;
  /// The quantizable weight matrices (params less router, vectors and unquantized), where the
  /// family records them (the dense decoder, the Qwen, DeepSeek and MiniMax families, and every
  /// family's routed experts); the rules use them only when
  /// they add up to exactly that, and otherwise price the layer's matrices as one run of values.
  std::vector<MatrixShape> shapes;
};

struct ParamCount {
  /// Every parameter in the checkpoint's language model (all experts), excluding MTP/next-token layers.
  std::uint64_t total = 0;
  /// Per token (MoE: routed top-k + shared experts + everything else, input embedding included,
  /// as Qwen and Mistral count it; OpenAI and DeepSeek-V2 leave the embedding out); == total for dense.
  std::uint64_t active = 0;
  /// The routed-expert weight matrices inside total, not their biases (gpt-oss keeps those in
  /// bf16): what MXFP4 / expert-only quantization applies to.
  std::uint64_t expert = 0;
  std::uint64_t embedding = 0;  ///< input embeddings
  std::uint64_t lm_head = 0;    ///< 0 when tied
  /// The MoE routers' weights inside total (experts x input per MoE layer): FP8, AWQ and GPTQ
  /// checkpoints keep them at the model's dtype (modules_to_not_convert, ignore), as they keep
  /// the embeddings and head.
  std::uint64_t router = 0;
  /// Parameters of the num_nextn_predict_layers MTP layers, with the embedding/head copies the
  /// checkpoint stores beside each; NOT included in total.
  std::uint64_t mtp = 0;
  /// Of mtp, what checkpoints keep unquantized (the embedding and head copies, eh_proj), and of
  /// those what every tensor-parallel rank builds whole (eh_proj, a plain nn.Linear).
  std::uint64_t mtp_unquantized = 0;
  std::uint64_t mtp_replicated = 0;
  /// Each MTP layer's decoder layer (they are alike), as `layers` holds the trunk's: its router,
  /// vectors and shapes. What an MTP layer holds beside it (eh_proj, norms, the copies) is kept
  /// unquantized. nullopt where the family does not count it apart.
  std::optional<LayerCount> mtp_layer;
  /// The decoder layers, in order, whose params sum to total less the embeddings, the head and
  /// what lies beside the layers (the final norm, position tables).
  std::vector<LayerCount> layers;
  /// The routed-expert block (the most per-token work, when layers differ); nullopt for dense.
  std::optional<RoutedExperts> routed_experts;
  std::string notes;  ///< assumptions made, in words (e.g. "tie_word_embeddings absent: gemma2 defaults to tied")
};

/// Counts the parameters of the model `config` describes. `config` is a Hugging Face config.json
/// (the language model's `text_config` is read first, then the top level). The model_type values
/// counted are the architecture registry's (src/loaders/arch/, listed in docs/architectures.md).
/// Throws kvplan::Error naming the field when a needed field is missing or malformed, and an
/// unsupported-architecture Error (exit code 3) for a model_type or layer kind it does not understand.
ParamCount count_params(const nlohmann::json& config);

/// The value a model_type's config class gives `field` when an official config.json leaves it out
/// (gemma3_text's vocab_size: 262,208), as count_params uses it; nullopt when kvplan knows none.
/// Loaders that read such a field themselves ask here, so the two never disagree.
std::optional<std::uint64_t> config_field_default(std::string_view model_type, std::string_view field);

}  // namespace kvplan
