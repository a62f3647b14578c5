#pragma once
/// What Ollama E4 (v0.30.0 and later) decides by itself from its prediction for n_ctx = num_ctx x
/// parallel tokens (server/sched.go): the automatic batch (-b/-ub) and whether one GPU holds the
/// model alone. Both are step functions of n_ctx, and a step can make llama.cpp allocate LESS for
/// more tokens: a lower batch shrinks llama.cpp's compute buffer and each sliding-window stream
/// (pad256(n_swa + n_ubatch) cells), and a split over several GPUs puts less on each. Memory then
/// shrinks where the batch or the context grows (issue #18: gpt-oss-20b at num_ctx 4096 fits a
/// 40 GiB budget at parallel 178 and 187, not at 179 to 186), so the searches ask for these steps.
/// Pure: no I/O.

#include <cstdint>
#include <optional>
#include <vector>

#include "engines/ollama/rules.h"

namespace kvplan {

/// What the choices read.
struct OllamaE4Inputs {
  std::uint64_t file_bytes = 0;           ///< the model file (PredictServerVRAM's first term)
  std::uint64_t layers = 0, heads_kv_min = 0, head_dim = 0;  ///< head_dim = n_embd / heads, as Ollama takes it
  std::vector<std::uint64_t> available;   ///< each GPU's free memory - OLLAMA_GPU_OVERHEAD - MinimumMemory
  std::optional<std::uint32_t> num_batch; ///< given: no automatic batch
  bool flash_attention_off = false;       ///< OLLAMA_FLASH_ATTENTION=0
  bool small_card = false;                ///< a GPU of 8 GiB or less (the batch with flash attention off)
};

OllamaE4Inputs ollama_e4_inputs(const OllamaModelView& m, const ModelSpec& model, const std::vector<OllamaDevice>& gpus,
                                const OllamaOptions& options);

/// PredictServerVRAM: file + 2 · layers · heads_kv_min · head_dim · n_ctx · 2, at most 2^62.
std::uint64_t ollama_e4_predicted(const OllamaE4Inputs& in, std::uint64_t n_ctx);

/// automaticGenerationBatch: 2048 above 32768 tokens, 1024 above 4096, else 512 (flash attention
/// off: 256 above 4096 on a card of 8 GiB or less, else 512), halved while the prediction, its
/// headroom (0.6 for 2048, 0.75 for 1024) and surcharge (2 GiB, 768 MiB) do not fit 80% of the
/// most available memory; num_batch when given.
std::uint32_t ollama_e4_batch(const OllamaE4Inputs& in, std::uint64_t n_ctx);

/// selectLlamaServerPlacement: with several GPUs, the one with the most available memory whose 80%
/// holds the prediction gets the model alone; nullopt: every GPU, split by layers.
std::optional<std::size_t> ollama_e4_single_gpu(const OllamaE4Inputs& in, std::uint64_t n_ctx);

/// The n_ctx values (2 to 2^32 - 1, ascending) at which the choices differ from those at one token
/// fewer in a way that may shrink what llama.cpp allocates: a lower batch, another GPU placement.
std::vector<std::uint64_t> ollama_e4_shrink_totals(const OllamaE4Inputs& in);

/// The values in [2, up_to] of the batch (`along_batch`: parallel at num_ctx `num_ctx`) or of
/// num_ctx (at `parallel` sequences) from which a row may take less memory than at one fewer
/// (Profile::shrink_points). E4: where its own choices step (above). E1 and E3 on several GPUs: where the
/// layout starts to use another GPU (each then holds less), found by bisection on the number of
/// GPUs the rules use, which grows with the batch and the context (up to llama.cpp's 256
/// sequences, or the trained context). E1 and E3 on one GPU: none.
/// `facts`: llamacpp_facts(model), and `view`: ollama_model_view(model, facts), kept by the caller.
std::vector<std::uint64_t> ollama_shrink_points(const ModelSpec& model, const std::vector<OllamaDevice>& gpus,
                                                const OllamaOptions& options, std::uint64_t num_ctx,
                                                std::optional<std::uint32_t> parallel, bool along_batch,
                                                std::uint64_t up_to, const LlamaCppModelFacts* facts = nullptr,
                                                const OllamaModelView* view = nullptr);

}  // namespace kvplan
