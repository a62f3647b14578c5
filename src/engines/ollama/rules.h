#pragma once
/// The Ollama profile: what Ollama (v0.2.0 to v0.33, by era) decides for a model and its settings,
/// and what the llama.cpp it runs then allocates. A pure function: no I/O.
///
/// Ollama hands llama.cpp n_ctx = num_ctx x parallel and n_seq = parallel in every era
/// (llm/server.go), so the cache is the llama.cpp profile's, byte-exact (engines/llamacpp/rules.h).
/// What Ollama adds is the choice of those settings (defaults per version, the flash-attention
/// rule that turns a quantized cache back into f16) and how many layers go to the GPU:
///   E1 v0.2.0 - v0.12.10   llm/memory.go EstimateGPULayers: its own estimate, -ngl to the runner
///   E3 v0.12.11 - v0.29.x  llm/server.go buildLayout / assignLayers / greedyFit on that estimate
///   E4 v0.30.0 -           llama-server --fit places the layers; Ollama picks the GPUs
/// Sources and eras: docs/engines/ollama.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/llamacpp/rules.h"
#include "kvplan/model_spec.h"

namespace kvplan {

struct OllamaVersion {
  std::uint32_t major = 0, minor = 33, patch = 0;
  bool latest = true;  ///< "latest": the newest rules kvplan has read (v0.33.0-rc2)

  friend bool operator<(const OllamaVersion& a, const OllamaVersion& b) {
    if (a.major != b.major) return a.major < b.major;
    if (a.minor != b.minor) return a.minor < b.minor;
    return a.patch < b.patch;
  }
  bool at_least(std::uint32_t mj, std::uint32_t mn, std::uint32_t p = 0) const { return !(*this < OllamaVersion{mj, mn, p, false}); }
  std::string text() const;
};

/// "0.5.12", "v0.11.3", "latest". Versions before 0.2.0 (no OLLAMA_NUM_PARALLEL) are refused.
OllamaVersion parse_ollama_version(std::string_view text, std::string_view flag);

enum class OllamaEra { e1, e3, e4 };
OllamaEra ollama_era(const OllamaVersion& version);
std::string_view to_string(OllamaEra era);

/// True when Ollama runs one sequence whatever OLLAMA_NUM_PARALLEL says: mllama; from E4 also
/// qwen3vl(moe), qwen35(moe), qwen3next, lfm2(moe), nemotron_h(_moe, _omni) (server/sched.go load).
bool ollama_forces_single(std::string_view arch, OllamaEra era);

/// One GPU as Ollama sees it.
struct OllamaDevice {
  std::string id;
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t minimum_bytes = 457 * 1024 * 1024;  ///< MinimumMemory (gpu/gpu.go, later ml/device.go): 457 MiB CUDA/ROCm, 0 for the CPU
  bool cpu = false;                                 ///< the CPU pseudo-device (library=cpu)
};

/// Ollama's settings as the user gave them (flags, the Modelfile, OLLAMA_* variables).
struct OllamaOptions {
  OllamaVersion version;
  std::optional<std::uint64_t> num_ctx;  ///< nullopt: the version's default
  std::string num_ctx_from;               ///< where it came from, in words
  std::optional<std::uint32_t> num_parallel;  ///< nullopt: the version's default
  std::optional<std::uint32_t> num_batch;     ///< nullopt: 512 (E4: the automatic batch)
  std::optional<std::int64_t> num_gpu;        ///< nullopt or < 0: Ollama decides
  std::string kv_cache_type;                  ///< "", f16, q8_0, q4_0 (lower case)
  std::optional<bool> flash_attention;        ///< OLLAMA_FLASH_ATTENTION; nullopt: not set
  std::uint64_t gpu_overhead = 0;             ///< OLLAMA_GPU_OVERHEAD, bytes per GPU
  bool words = true;                          ///< false: Ollama's and llama.cpp's rule sentences left out (a probe)
};

/// What Ollama's estimator reads of the model file (fs/ggml): sizes by GGUF layer group.
struct OllamaModelView {
  std::string arch;                 ///< GGUF general.architecture
  std::uint32_t block_count = 0;
  std::uint64_t embedding = 0;
  std::uint64_t heads = 0;          ///< HeadCountMax
  std::uint64_t heads_kv_max = 0, heads_kv_min = 0;
  std::uint64_t head_k = 0, head_v = 0;
  std::uint64_t tokens = 0;         ///< tokenizer.ggml.tokens
  std::uint64_t sliding_window = 0;
  std::vector<std::uint64_t> blk;   ///< Σ of each blk.N group
  std::uint64_t output_layer = 0;   ///< output_norm + output (or token_embd when tied)
  std::uint64_t vision_weights = 0; ///< the Ollama-engine projector (v.* tensors)
  std::uint64_t vision_graph = 0;   ///< VisionGraphSize
  std::uint64_t train_ctx = 0;
  bool flash_attention_capable = true;  ///< key_length == value_length, both non-zero, not gemma2/embedding
  bool exact = true;                    ///< the block sizes are the file's; false: split evenly from the total
};

/// The view of `model`; an unsupported-architecture Error when its weights cannot be placed.
/// `facts`, when given, are llamacpp_facts(model): the output layer's bytes are then read from their
/// sums by layer instead of the whole tensor list (plan_ollama runs once per probe).
OllamaModelView ollama_model_view(const ModelSpec& model, const LlamaCppModelFacts* facts = nullptr);

/// llm/memory.go EstimateGPULayers (E1) or llm/server.go's layout (E3), as Ollama logs it (msg=offload).
struct OllamaEstimate {
  std::vector<std::uint64_t> kv;   ///< per layer, Ollama's estimate (GraphSize)
  std::uint64_t kv_total = 0;      ///< memory.required.kv
  std::uint64_t graph_full = 0, graph_partial = 0;
  std::int64_t layers_requested = -1;
  std::uint32_t layers_model = 0;  ///< block_count + 1
  std::uint32_t layers = 0;        ///< layers.offload (0 for the CPU library)
  std::vector<std::uint32_t> layers_per_gpu;
  std::vector<std::uint64_t> allocations;  ///< memory.required.allocations
  std::uint64_t required_full = 0;     ///< TotalSize: every byte, GPU and CPU
  std::uint64_t required_partial = 0;  ///< VRAMSize: the GPUs' part
  std::uint64_t weights_total = 0, weights_repeating = 0, weights_nonrepeating = 0;
  std::uint64_t projector_weights = 0, projector_graph = 0;
  std::uint64_t layer_buffer = 0;      ///< blk.0 + kv[0], held back on each GPU
  bool fully_loaded = false;
  std::string kv_type;                 ///< the type the estimate priced ("" = f16)
};

/// E1's estimate for `num_ctx` tokens (already x parallel), as `version` computes it.
OllamaEstimate estimate_gpu_layers(const OllamaModelView& model, const std::vector<OllamaDevice>& gpus,
                                   std::uint64_t num_ctx, std::uint32_t parallel, std::uint32_t batch,
                                   std::int64_t num_gpu, std::string_view kv_type, std::uint64_t overhead,
                                   const OllamaVersion& version);

/// Ollama's part of one GPU.
struct OllamaGpuShare {
  std::uint32_t index = 0;
  std::uint32_t layers = 0;         ///< of block_count + 1
  std::uint64_t weights_bytes = 0;  ///< llama.cpp's model buffer on it
  std::uint64_t kv_bytes = 0;       ///< llama.cpp's cache of its layers
  std::uint64_t reserve_bytes = 0;  ///< what Ollama holds back on it (minimum, overhead, graph, layer buffer, projector)
  std::uint64_t capacity_bytes = 0; ///< its free memory
};

struct OllamaResult {
  OllamaEra era = OllamaEra::e4;
  std::string version;              ///< "v0.5.12", "latest (v0.33.0-rc2)"; empty without words (a probe)
  std::uint64_t num_ctx = 0;        ///< per sequence, as Ollama settles it
  std::uint32_t parallel = 1;
  std::uint32_t num_batch = 512;
  std::string kv_type_requested;    ///< OLLAMA_KV_CACHE_TYPE as given
  std::string kv_type;              ///< what the cache is: f16, q8_0, q4_0
  std::string flash_attention;      ///< what Ollama tells the runner: on, off, auto
  std::optional<OllamaEstimate> estimate;  ///< E1 and E3
  std::uint32_t layers_model = 0;
  std::uint32_t gpu_layers = 0;     ///< -ngl as the runner gets it (E4: as --fit would place them, INFERRED)
  bool partly_on_cpu = false;
  std::vector<OllamaGpuShare> gpus;
  std::uint64_t host_weights_bytes = 0;  ///< repeating and output layers left in system RAM
  std::uint64_t host_kv_bytes = 0;
  std::uint64_t whole_weights_bytes = 0; ///< every repeating and output layer
  std::uint64_t whole_kv_bytes = 0;      ///< llama.cpp's cache of every layer
  std::uint64_t whole_reserve_bytes = 0; ///< one GPU's reserve with the full-offload graph
  LlamaCppResult llama;                  ///< what llama.cpp allocates for it
  bool exact = true;
  std::vector<std::string> rules;
};

/// Prices `model` under Ollama with `options` on `gpus` at `num_ctx` tokens per sequence and
/// `parallel` sequences (nullopt: the version's default and auto rules).
/// `facts`: llamacpp_facts(model), and `view`: ollama_model_view(model, facts), when the caller keeps
/// them across calls; nullptr: read here.
OllamaResult plan_ollama(const ModelSpec& model, const std::vector<OllamaDevice>& gpus, const OllamaOptions& options,
                         std::uint64_t num_ctx, std::optional<std::uint32_t> parallel,
                         const LlamaCppModelFacts* facts = nullptr, const OllamaModelView* view = nullptr);

/// num_ctx when nobody sets it: 2048 (to v0.6.6), 4096 (v0.6.7 - v0.15.4), then the VRAM tier of
/// server/routes.go (Σ total - overhead >= 47 GiB: 262144, >= 23 GiB: 32768, else 4096).
std::uint64_t ollama_default_num_ctx(const OllamaVersion& version, const std::vector<OllamaDevice>& gpus,
                                     std::uint64_t overhead, std::string* why = nullptr);

/// OLLAMA_KV_CACHE_TYPE values Ollama accepts: "" f16 q8_0 q4_0 (any case); Error naming `flag` otherwise.
std::string parse_ollama_kv_type(std::string_view text, std::string_view flag);
/// The words of the Error parse_ollama_kv_type throws for `text`; nullopt when Ollama accepts it.
std::optional<std::string> ollama_kv_type_error(std::string_view text, std::string_view flag);

/// Ollama's Modelfile: the PARAMETER lines it sets (num_ctx, num_gpu, num_batch; others ignored).
struct Modelfile {
  std::optional<std::uint64_t> num_ctx;
  std::optional<std::int64_t> num_gpu;
  std::optional<std::uint32_t> num_batch;
  std::string from;  ///< FROM, for messages
};
Modelfile parse_modelfile(std::string_view text, std::string_view path);

}  // namespace kvplan
