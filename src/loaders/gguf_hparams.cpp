#include "loaders/gguf_hparams.h"

#include <algorithm>
#include <array>

#include "model/checked.h"

namespace kvplan::gguf_keys {

std::string value_text(const GgufValue& v) {
  switch (v.type) {
    case GgufType::array: return fmt::format("[{} values]", v.count);
    case GgufType::string: return v.kept ? fmt::format("\"{}\"", v.string_value) : "(a long string)";
    case GgufType::boolean: return v.uint_value ? "true" : "false";
    case GgufType::float32:
    case GgufType::float64: return fmt::format("{}", v.float_value);
    case GgufType::int8:
    case GgufType::int16:
    case GgufType::int32:
    case GgufType::int64: return fmt::format("{}", v.int_value);
    default: return fmt::format("{}", v.uint_value);
  }
}

namespace {

/// Key suffixes (after "<arch>.") that change what llama.cpp caches. One of them present but not
/// read for the architecture means kvplan does not know what the file asks for: exit 3.
constexpr std::array<std::string_view, 20> kCacheKeyPrefixes = {
    "attention.sliding_window",  // also sliding_window_pattern
    "attention.key_length_swa",   "attention.value_length_swa", "attention.key_length_mla",
    "attention.value_length_mla", "attention.kv_lora_rank",     "attention.shared_kv_layers",
    "attention.recurrent_layers", "attention.indexer.",         "attention.compress_",
    "full_attention_interval",    "ssm.conv_kernel",            "ssm.inner_size",
    "ssm.state_size",             "ssm.time_step_rank",         "ssm.group_count",
    "shortconv.",                 "wkv.",                       "kda.",
    "ple."};

/// llama_hparams::set_swa_pattern(n_pattern, dense_first): with period p, layer il is sliding iff
/// il % p < p - 1 (the last of every p layers is global), or with dense_first iff il % p != 0 (the
/// first is); p = 0 makes every layer sliding. The nextn layers never slide.
void set_swa_pattern(Hparams& hp, std::uint32_t period, bool dense_first = false) {
  for (std::uint32_t il = 0; il < hp.n_layer_all; ++il) {
    const bool sliding = period == 0 || (dense_first ? il % period != 0 : il % period < period - 1);
    hp.swa[il] = il < hp.n_layer && sliding;
  }
}

/// ssm.* as llama_hparams::n_embd_r() / n_embd_s() use them for Mamba-style layers:
///   n_embd_r = (d_conv - 1) x (d_inner + 2 x n_group x d_state)   (conv state)
///   n_embd_s = d_state x d_inner                                    (SSM state)
/// Mamba-1 architectures (mamba, jamba) read no group count: n_group stays 0, and a group_count
/// key in their file is left unread (exit 3).
void read_ssm(KeyReader& r, Hparams& hp, bool grouped = true) {
  const std::string_view why = "llama.cpp requires it for recurrent layers";
  const std::uint64_t d_conv = r.required_u32("ssm.conv_kernel", why);
  const std::uint64_t d_inner = r.required_u32("ssm.inner_size", why);
  const std::uint64_t d_state = r.required_u32("ssm.state_size", why);
  hp.ssm_heads = r.required_u32("ssm.time_step_rank", why);
  const std::uint64_t n_group = grouped ? r.required_u32("ssm.group_count", why) : 0;
  const std::uint64_t conv_rows = d_conv > 0 ? d_conv - 1 : 0;
  // Checked: 2 x n_group x d_state of 32-bit values passes 2^64 (it wrapped past the check below).
  const char* what = "recurrent state";
  hp.n_embd_r = (Checked(conv_rows, what) * (Checked(d_inner, what) + (Checked(2, what) * n_group * d_state))).value();
  hp.n_embd_s = checked_mul(d_state, d_inner, what);
  // llama.cpp computes both in uint32_t; past that it would wrap, so such a file is refused.
  if (hp.n_embd_r > std::numeric_limits<std::uint32_t>::max() || hp.n_embd_s > std::numeric_limits<std::uint32_t>::max())
    r.fail("ssm.inner_size", "makes the recurrent state larger than 2^32 - 1 elements per sequence");
}

/// gemma2/gemma3 read the pattern with get_key_or_arr(key, uint32_t&): a scalar period only; an
/// array is skipped and the default stays.
std::uint32_t scalar_swa_period(KeyReader& r, Hparams& hp, std::uint32_t fallback) {
  const GgufValue* v = r.header().find(r.key("attention.sliding_window_pattern"));
  r.mark_read("attention.sliding_window_pattern");
  if (v == nullptr) {
    hp.notes.push_back(fmt::format(
        "{}: no attention.sliding_window_pattern; llama.cpp's default period {} applies (layer il is sliding "
        "iff il % {} < {})",
        r.arch(), fallback, fallback, fallback - 1));
    return fallback;
  }
  if (v->is_array()) {
    hp.notes.push_back(fmt::format(
        "{}: attention.sliding_window_pattern is an array; llama.cpp reads only a scalar period here and keeps "
        "its default {}",
        r.arch(), fallback));
    return fallback;
  }
  const std::uint32_t period = *r.u32("attention.sliding_window_pattern");
  hp.notes.push_back(period == 0 ? fmt::format("{}: sliding_window_pattern 0: every layer is sliding", r.arch())
                                 : fmt::format("{}: sliding_window_pattern {}: layer il is sliding iff il % {} < {}",
                                               r.arch(), period, period, period - 1));
  return period;
}

/// A window only when `attention.sliding_window` is present and not 0, then a scalar period
/// (`fallback` by default: gemma3 6, olmo2 4, plamo3 8); without one no layer slides and the
/// pattern key is left unread by llama.cpp. False when there is no window.
bool read_optional_window(KeyReader& r, Hparams& hp, std::uint32_t fallback) {
  const std::optional<std::uint32_t> window = r.u32("attention.sliding_window");
  if (!window || *window == 0) {
    r.mark_read("attention.sliding_window_pattern");
    return false;
  }
  hp.n_swa = *window;
  set_swa_pattern(hp, scalar_swa_period(r, hp, fallback));
  return true;
}

/// `attention.sliding_window` where llama.cpp reads it with get_key(..., required).
void read_required_window(KeyReader& r, Hparams& hp) {
  hp.n_swa = r.required_u32("attention.sliding_window", fmt::format("llama.cpp requires it for {}", r.arch()));
  if (hp.n_swa == 0) r.fail("attention.sliding_window", "is 0 (a sliding layer would hold no token)");
}

/// llama_model_gemma4::load_arch_hparams: a standard window (required) on the layers a per-layer
/// pattern marks (required: no default period), and the last shared_kv_layers blocks keeping no
/// cells: create_memory's reuse callback points them at layer n_layer_kv_from_start - 2 (sliding)
/// or - 1 (global).
void read_gemma4(KeyReader& r, Hparams& hp) {
  read_required_window(r, hp);
  const std::optional<std::vector<bool>> pattern = r.per_layer_flags("attention.sliding_window_pattern", hp.n_layer);
  if (!pattern) r.fail("attention.sliding_window_pattern", "is missing (llama.cpp requires it for gemma4)");
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.swa[il] = (*pattern)[il];
  // Both _swa head sizes are required keys here, and the graph needs K and V heads alike
  // (load_arch_tensors throws "Gemma 4 requires n_embd_head_k == n_embd_head_v").
  const std::string_view why = "llama.cpp requires it for gemma4";
  r.required_u32("attention.key_length_swa", why);
  r.required_u32("attention.value_length_swa", why);
  r.required_u32("embedding_length_per_layer_input", why);
  if (hp.head_k != hp.head_v)
    r.fail("attention.value_length", fmt::format("is {}, not key_length {} (llama.cpp requires them equal for gemma4)",
                                                 hp.head_v, hp.head_k));
  if (hp.head_k_swa != hp.head_v_swa)
    r.fail("attention.value_length_swa", fmt::format("is {}, not key_length_swa {} (llama.cpp requires them equal "
                                                     "for gemma4)",
                                                     hp.head_v_swa, hp.head_k_swa));
  const std::uint32_t shared = r.u32("attention.shared_kv_layers").value_or(0);
  if (shared == 0) return;
  // llama.cpp stores n_layer_all - shared in an int32 and asserts it is at least 2 before reusing.
  if (shared > hp.n_layer_all || hp.n_layer_all - shared < 2)
    r.fail("attention.shared_kv_layers",
           fmt::format("is {} of {} blocks (llama.cpp needs at least 2 layers with their own cells)", shared,
                       hp.n_layer_all));
  hp.kv_from_start = hp.n_layer_all - shared;
  hp.notes.push_back(fmt::format("gemma4: the last {} layers keep no cells: sliding ones read layer {}, global ones "
                                 "layer {}",
                                 shared, *hp.kv_from_start - 2, *hp.kv_from_start - 1));
}

/// minimax-01's, minimax-m3's and qwen4exp's graphs assert n_embd_head_v == n_embd_head_k: a file
/// whose value_length differs from its key_length would abort llama.cpp.
void require_equal_head_sizes(KeyReader& r, const Hparams& hp) {
  if (hp.head_k != hp.head_v)
    r.fail("attention.value_length", fmt::format("is {}, not key_length {} (llama.cpp's {} graph asserts they are "
                                                 "equal: it aborts)",
                                                 hp.head_v, hp.head_k, r.arch()));
}

/// A flag array llama.cpp reads with get_arr into a std::array of LLAMA_MAX_LAYERS (required here):
/// a longer one is refused, a shorter one leaves the later layers 0. One flag per trunk layer.
std::vector<bool> required_flag_array(KeyReader& r, const Hparams& hp, std::string_view key, std::string_view why) {
  const GgufValue* value = r.header().find(r.key(key));
  r.mark_read(key);
  if (value == nullptr || !value->is_array()) r.fail(key, fmt::format("is missing or not an array ({})", why));
  if (value->count > kLlamaCppMaxLayers)
    r.fail(key, fmt::format("has {} elements, more than llama.cpp's {}", value->count, kLlamaCppMaxLayers));
  std::vector<bool> flags = *r.header().get_bool_array(r.key(key));
  flags.resize(hp.n_layer, false);
  return flags;
}

/// minimax-m3 (MiniMax Sparse Attention): llama_kv_cache_msa keeps a plain K/V cache on every layer
/// and a second cache on the layers from leading_dense_block_count on, holding the indexer's key
/// (one head of indexer.key_length) and, since the model is not MLA, a V of one head of
/// value_length that nothing writes (llama-kv-cache-msa.cpp copies the hparams and overrides the key
/// only). The sparse path (flash attention) asserts indexer.head_count == head_count_kv, so a file
/// where they differ would abort llama.cpp: refused.
void read_msa(KeyReader& r, Hparams& hp) {
  const std::string_view why = "llama.cpp requires it for minimax-m3";
  const std::uint32_t heads = r.required_u32("attention.indexer.head_count", why);
  const std::uint32_t width = r.required_u32("attention.indexer.key_length", why);
  r.required_u32("attention.indexer.top_k", why);
  r.required_u32("attention.indexer.local_blocks", why);
  if (r.required_u32("attention.indexer.block_size", why) == 0)
    r.fail("attention.indexer.block_size", "is 0 (llama.cpp asserts it is positive: it aborts)");
  if (width == 0) r.fail("attention.indexer.key_length", "is 0 (the indexer cache would hold nothing)");
  for (std::uint32_t il = 0; il < hp.n_layer; ++il)
    if (hp.n_head_kv[il] != heads)
      r.fail("attention.indexer.head_count",
             fmt::format("is {}, not head_count_kv {} (llama.cpp's sparse attention asserts they are equal: it aborts)",
                         heads, hp.n_head_kv[il]));
  require_equal_head_sizes(r, hp);
  const std::uint32_t lead = r.u32("leading_dense_block_count").value_or(0);
  hp.indexer_head = width;
  hp.indexer.assign(hp.n_layer, false);
  for (std::uint32_t il = lead; il < hp.n_layer; ++il) hp.indexer[il] = true;
  hp.notes.push_back(fmt::format("minimax-m3: a second cache holds the indexer's key ({} wide) and an unused V of one "
                                 "head on layers {} to {} (llama_kv_cache_msa)",
                                 width, lead, hp.n_layer - 1));
}

/// dots3note: MLA on every layer, with a latent of its own on the sliding ones (kv_lora_rank_swa),
/// and DSA's lightning indexer on the full ones. llama_kv_cache_dsa_iswa keeps DSA's two K-only
/// caches (the latent, key_length wide, and the indexer key) on the non-sliding trunk layers and a
/// third K-only cache of key_length_swa on the sliding ones, sized as llama_kv_cache_iswa's. The
/// pattern and the indexer types are required arrays (get_arr: 1 = sliding, 1 = full indexer); the
/// graph runs the indexer on exactly the non-sliding layers, writes a one-head K row of the latent
/// and the rope key, and rotates the indexer key by a Hadamard matrix of its width (a power of two
/// from 64); files that break any of these would abort llama.cpp: exit 2.
void read_dots3note(KeyReader& r, Hparams& hp) {
  const std::string_view why = "llama.cpp requires it for dots3note";
  r.required_u32("attention.q_lora_rank", why);
  const std::uint64_t rank = r.required_u32("attention.kv_lora_rank", why);
  const std::uint64_t rank_swa = r.required_u32("attention.kv_lora_rank_swa", why);
  for (const std::string_view key : {"attention.key_length_mla", "attention.value_length_mla",
                                     "attention.key_length_mla_swa", "attention.value_length_mla_swa"})
    if (r.required_u32(key, why) == 0) r.fail(key, "is 0 (llama.cpp: \"DOTS3NOTE architecture requires MLA\")");
  read_required_window(r, hp);
  const std::uint32_t width = r.required_u32("attention.indexer.key_length", why);
  r.required_u32("attention.indexer.head_count", why);
  r.required_u32("attention.indexer.top_k", why);
  if (width < 64 || (width & (width - 1)) != 0)
    r.fail("attention.indexer.key_length", fmt::format("is {}; llama.cpp rotates the indexer key by a Hadamard matrix "
                                                       "of a power of two from 64 and its graph aborts otherwise",
                                                       width));
  if (hp.n_rot > width)
    r.fail("rope.dimension_count", fmt::format("is {}, more than indexer.key_length {} (llama.cpp asserts it)",
                                               hp.n_rot, width));
  const std::vector<bool> sliding = required_flag_array(r, hp, "attention.sliding_window_pattern", why);
  const std::vector<bool> full_indexer = required_flag_array(r, hp, "attention.indexer.types", why);
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) {
    if (full_indexer[il] == sliding[il])
      r.fail("attention.indexer.types",
             fmt::format("marks layer {} {}; llama.cpp's graph runs the indexer on exactly the non-sliding layers", il,
                         sliding[il] ? "full though it slides" : "shared though it does not slide"));
    const std::uint64_t latent = (sliding[il] ? rank_swa : rank) + hp.n_rot;
    const std::uint64_t row = sliding[il] ? hp.head_k_swa : hp.head_k;
    if (hp.n_head_kv[il] != 1 || row != latent)
      r.fail(sliding[il] ? "attention.key_length_swa" : "attention.key_length",
             fmt::format("gives layer {} a K row of {} x {}, not the latent and rope key, {} (llama.cpp's graph "
                         "aborts writing it)",
                         il, hp.n_head_kv[il], row, latent));
    hp.swa[il] = sliding[il];
  }
  hp.mla = true;
  hp.head_v_swa = 0;  // the sliding layers' cache is K only too (MLA)
  hp.indexer_head = width;
  hp.indexer.assign(hp.n_layer, false);
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.indexer[il] = !sliding[il];
  hp.notes.push_back(fmt::format("dots3note: MLA (K only) on every layer, {} wide on the full ones beside the lightning "
                                 "indexer's key ({} wide), {} wide on the sliding ones (llama_kv_cache_dsa_iswa)",
                                 hp.head_k, width, hp.head_k_swa));
}

/// deepseek4 (llama_kv_cache_dsv4): every trunk layer slides (set_swa_pattern(0)) over a K-only
/// latent of one head; attention.compress_ratios adds, per layer, a cache of one entry per 4 tokens
/// (CSA, beside the lightning indexer's key) or per 128 (HCA), each with compressor state. What the
/// loader throws on and what the graph asserts (llama.cpp aborts) are refused here.
void read_deepseek4(KeyReader& r, Hparams& hp) {
  const std::string_view why = "llama.cpp requires it for deepseek4";
  if (hp.n_nextn > 0)
    throw unsupported_architecture(r.key("nextn_predict_layers"),
                                   fmt::format("{} (deepseek4's MTP layers share its compressed caches but not their "
                                               "compressor state; kvplan does not model them: the converter writes "
                                               "them to a file of their own)",
                                               hp.n_nextn));
  read_required_window(r, hp);
  r.required_u32("attention.q_lora_rank", why);
  if (r.required_u32("expert_shared_count", why) == 0)
    r.fail("expert_shared_count", "is 0 (deepseek4's shared expert tensors would have a 0 dimension)");
  if (hp.n_expert == 0 || hp.n_expert_used == 0)
    r.fail(hp.n_expert == 0 ? "expert_count" : "expert_used_count",
           "is missing or 0 (every deepseek4 layer is a MoE block)");
  if (r.required_u32("expert_gating_func", why) != 4)
    r.fail("expert_gating_func", "is not 4 (llama.cpp: \"DeepSeek-V4 loader currently expects sqrtsoftplus MoE "
                                 "scoring\")");
  if (r.required_u32("hyper_connection.count", why) != 4)
    r.fail("hyper_connection.count", "is not 4 (llama.cpp's hyper-connection kernels assert 4: it aborts)");
  if (r.required_u32("hyper_connection.sinkhorn_iterations", why) == 0)
    r.fail("hyper_connection.sinkhorn_iterations", "is 0 (llama.cpp's kernel asserts at least 1: it aborts)");
  r.required_u32("hash_layer_count", why);
  const std::uint32_t groups = r.required_u32("attention.output_group_count", why);
  r.required_u32("attention.output_lora_rank", why);
  if (groups == 0 || hp.n_head[0] % groups != 0)
    r.fail("attention.output_group_count", fmt::format("is {}, which does not divide head_count {} (llama.cpp's "
                                                       "graph asserts it: it aborts)",
                                                       groups, hp.n_head[0]));
  r.required_u32("attention.indexer.head_count", why);
  r.required_u32("attention.indexer.top_k", why);
  const std::uint32_t width = r.required_u32("attention.indexer.key_length", why);
  if (width == 0 || width % 64 != 0)
    r.fail("attention.indexer.key_length", fmt::format("is {}; llama.cpp rotates the indexer key by Hadamard "
                                                       "matrices of 64 or more and aborts unless 64 divides it",
                                                       width));
  // Every layer slides, so the _swa head sizes are the cache's (they default to key_length).
  const std::uint32_t head = hp.head_k_swa;
  if (head == 0 || head != hp.head_v_swa)
    r.fail("attention.value_length", fmt::format("gives a K head of {} and a V head of {}; deepseek4's graph asserts "
                                                 "they are equal (it aborts)",
                                                 head, hp.head_v_swa));
  if (hp.n_rot > head || hp.n_rot > width)
    r.fail("rope.dimension_count", fmt::format("is {}, more than the K head {} or the indexer key {} (llama.cpp "
                                               "asserts it)",
                                               hp.n_rot, head, width));
  for (std::uint32_t il = 0; il < hp.n_layer; ++il)
    if (hp.n_head_kv[il] != 1)
      r.fail("attention.head_count_kv", fmt::format("is {} for layer {}; deepseek4's graph writes one K head per "
                                                    "token and aborts on any other count",
                                                    hp.n_head_kv[il], il));
  const GgufValue* ratios = r.header().find(r.key("attention.compress_ratios"));
  r.mark_read("attention.compress_ratios");
  r.mark_read("attention.compress_rope_freq_base");  // the compressed keys' rope: no cache
  if (ratios == nullptr || !ratios->is_array()) r.fail("attention.compress_ratios", "is missing or not an array (" + std::string(why) + ")");
  if (ratios->count < hp.n_layer_all)
    r.fail("attention.compress_ratios", fmt::format("has {} elements (llama.cpp: \"DeepSeek-V4 compress_ratios is "
                                                    "shorter than block_count\" {})",
                                                    ratios->count, hp.n_layer_all));
  if (ratios->count > kLlamaCppMaxLayers)
    r.fail("attention.compress_ratios", fmt::format("has {} elements, more than llama.cpp's {} (it aborts)",
                                                    ratios->count, kLlamaCppMaxLayers));
  const std::optional<std::vector<std::uint64_t>> values = r.header().get_uint_array(r.key("attention.compress_ratios"));
  if (!values) r.fail("attention.compress_ratios", "is not an array of integers");
  std::uint32_t csa = 0, hca = 0;
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) {
    const std::uint64_t ratio = (*values)[il];
    if (ratio != 0 && ratio != 4 && ratio != 128)
      r.fail("attention.compress_ratios", fmt::format("gives layer {} a ratio of {} (llama.cpp: \"DeepSeek-V4 loader "
                                                      "only supports compression ratios 0, 4, and 128\")",
                                                      il, ratio));
    hp.compress_ratio.push_back(static_cast<std::uint32_t>(ratio));
    csa += ratio == 4 ? 1 : 0;
    hca += ratio == 128 ? 1 : 0;
    hp.swa[il] = true;
  }
  // The graph always builds the lightning indexer's rotation input, whose Hadamard size is found by
  // doubling until it no longer divides the indexer cache's key width: with no CSA layer that width
  // is 0 and the doubling overflows into a division by zero (llama-kv-cache.cpp, build_input_k_rot;
  // the process dies of SIGFPE creating the context, seen with a fixture of ratios 0, 128, 128, 0).
  if (csa == 0)
    r.fail("attention.compress_ratios", "has no layer of ratio 4; llama.cpp then crashes creating the context (SIGFPE "
                                        "sizing the rotation of an empty lightning-indexer cache)");
  hp.head_v_swa = 0;  // K only (dsv4_make_k_only)
  hp.indexer_head = width;
  hp.notes.push_back(fmt::format("deepseek4: every layer slides over {} tokens keeping one K-only head of {}; {} layers "
                                 "compress 4 tokens into one entry (CSA, beside the lightning indexer's key of {}), "
                                 "{} compress 128 (HCA) (llama_kv_cache_dsv4)",
                                 hp.n_swa, head, csa, width, hca));
}

/// Which layers are recurrent in qwen3next's family and minimax-01: attention.recurrent_layers (one
/// flag per layer, nextn layers included), else every layer but each `interval`-th
/// (full_attention_interval, llama.cpp's default per architecture).
void read_recurrent_layers(KeyReader& r, Hparams& hp, std::uint32_t default_interval) {
  if (std::optional<std::vector<bool>> recurrent = r.per_layer_flags("attention.recurrent_layers", hp.n_layer_all)) {
    hp.recr = *recurrent;
    return;
  }
  const std::uint32_t interval = r.u32("full_attention_interval").value_or(default_interval);
  if (interval == 0) r.fail("full_attention_interval", "is 0 (llama.cpp divides by it)");
  for (std::uint32_t il = 0; il < hp.n_layer_all; ++il) hp.recr[il] = il < hp.n_layer && (il + 1) % interval != 0;
  hp.notes.push_back(fmt::format("{}: layer il is full attention iff (il + 1) % {} == 0{}", r.arch(), interval,
                                 r.has("full_attention_interval")
                                     ? ""
                                     : fmt::format(" (llama.cpp's default interval {})", default_interval)));
}

/// qwen4exp: Qwen3.5's hybrid (Gated DeltaNet state where recurrent, gated attention elsewhere)
/// with hyper-connections (weights only) and a sparse-attention indexer whose cache
/// (llama_memory_hybrid_idx, "idx_" tensors) is minimax-m3's: one head of indexer.key_length and an
/// unused V of one head of value_length on every attention layer. Its load_arch_hparams throws on a
/// zero SSM size, indexer size or low rank, and on fewer than 2 hyper-connections; its graph asserts
/// key_length == value_length and inner_size == state_size x time_step_rank. PLE (ple.*) adds a
/// third state row kvplan does not model: those keys stay unread (exit 3).
void read_qwen4exp(KeyReader& r, Hparams& hp) {
  const std::string_view why = "llama.cpp requires it for qwen4exp";
  const GgufValue* sections = r.header().find(r.key("rope.dimension_sections"));
  if (sections == nullptr || !sections->is_array() || sections->count != 4)
    r.fail("rope.dimension_sections", "must be an array of 4 (llama.cpp requires it for qwen4exp)");
  read_ssm(r, hp);
  for (const std::string_view key : {"ssm.conv_kernel", "ssm.inner_size", "ssm.state_size", "ssm.time_step_rank",
                                     "ssm.group_count", "hyper_connection.low_rank", "attention.indexer.head_count",
                                     "attention.indexer.key_length", "attention.indexer.top_k"})
    if (r.required_u32(key, why) == 0) r.fail(key, "is 0 (llama.cpp's qwen4exp loader refuses it)");
  if (r.required_u32("hyper_connection.count", why) <= 1)
    r.fail("hyper_connection.count", "must be greater than one (llama.cpp's qwen4exp loader refuses it)");
  const std::uint64_t d_inner = *r.u32("ssm.inner_size"), d_state = *r.u32("ssm.state_size");
  const std::uint32_t dt_rank = *r.u32("ssm.time_step_rank"), n_group = *r.u32("ssm.group_count");
  if (d_inner != d_state * dt_rank)
    r.fail("ssm.inner_size", fmt::format("is {}, not state_size x time_step_rank = {} (llama.cpp's graph asserts it: "
                                         "it aborts)",
                                         d_inner, d_state * dt_rank));
  if (dt_rank % n_group != 0)
    r.fail("ssm.group_count", fmt::format("does not divide time_step_rank {} (the delta net asserts it: it aborts)",
                                          dt_rank));
  require_equal_head_sizes(r, hp);
  r.mark_read("attention.compress_ratios");  // QSA's pooled keys live in the graph, not the cache
  read_recurrent_layers(r, hp, 4);
  hp.indexer_head = *r.u32("attention.indexer.key_length");
  hp.indexer.assign(hp.n_layer, false);
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.indexer[il] = !hp.recr[il];
  hp.notes.push_back(fmt::format("qwen4exp: a third cache holds the indexer's key ({} wide) and an unused V of one head "
                                 "on every attention layer (llama_memory_hybrid_idx)",
                                 hp.indexer_head));
}

/// minimax-01 (MiniMax-Text-01): lightning-attention layers keep a state of head_k x head_k per
/// head and sequence (llama_hparams::n_embd_s() for n_embd_head_la, f32) and no conv rows (n_embd_r()
/// is 0: llama.cpp creates 0-byte R tensors); the softmax layers keep K and V as llama's. Its graph
/// asserts key_length == value_length; residual_scale is required (kRequiredKeys).
void read_lightning(KeyReader& r, Hparams& hp) {
  if (hp.n_head[0] == 0 || hp.head_k == 0) r.fail("attention.head_count", "is 0 (lightning layers need heads)");
  require_equal_head_sizes(r, hp);
  hp.n_embd_r = 0;
  hp.n_embd_s = (Checked(hp.head_k, "recurrent state") * hp.head_k * hp.n_head[0]).value();
  if (hp.n_embd_s > std::numeric_limits<std::uint32_t>::max())
    r.fail("attention.key_length", "makes the lightning state larger than 2^32 - 1 elements per sequence");
  read_recurrent_layers(r, hp, 8);
  hp.notes.push_back(fmt::format("minimax-01: lightning layers keep {} x {} x {} f32 per sequence (no conv rows); the "
                                 "others K and V",
                                 hp.head_k, hp.head_k, hp.n_head[0]));
}

/// plamo2 (PLaMo 2): Mamba-2 layers where head_count_kv is 0, attention elsewhere, in
/// create_memory's default hybrid branch. Its converter writes head_count as an array with 0 on the
/// Mamba layers, so layer 0 has no heads and the common code skips the head sizes; plamo2 reads
/// key_length and value_length itself. Its graph asserts ssm.group_count == 0 (no groups in the
/// conv state).
void read_plamo2(KeyReader& r, Hparams& hp) {
  read_ssm(r, hp);
  if (*r.u32("ssm.group_count") != 0)
    r.fail("ssm.group_count", "must be 0 (llama.cpp's plamo2 graph asserts n_group == 0: it aborts)");
  if (hp.n_head[0] == 0) {
    hp.head_k = r.u32("attention.key_length").value_or(0);
    hp.head_v = r.u32("attention.value_length").value_or(0);
    hp.head_k_swa = hp.head_k;
    hp.head_v_swa = hp.head_v;
  }
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = hp.n_head_kv[il] == 0;
  hp.notes.push_back("plamo2: a layer is Mamba-2 where head_count_kv is 0, attention elsewhere");
}

/// bailingmoe3's gate keys: the lower bound is required and asserted negative, safe_gate (default
/// true) asserted true; either assert aborts llama.cpp, so kvplan refuses the file.
void read_bailingmoe3_gate(KeyReader& r, std::string_view why) {
  const GgufValue* bound = r.header().find(r.key("kda.gate_lower_bound"));
  if (bound == nullptr) r.fail("kda.gate_lower_bound", fmt::format("is missing ({})", why));
  r.mark_read("kda.gate_lower_bound");
  if (bound->type != GgufType::float32 || !(bound->float_value < 0.0))
    r.fail("kda.gate_lower_bound", "must be a negative f32 (llama.cpp asserts kda_gate_lower_bound < 0: it aborts)");
  if (const GgufValue* safe = r.header().find(r.key("kda.safe_gate"))) {
    r.mark_read("kda.safe_gate");
    if (safe->type != GgufType::boolean || safe->uint_value == 0)
      r.fail("kda.safe_gate", "must be true (llama.cpp asserts kda_safe_gate: it aborts)");
  }
}

/// The MLA layers of bailingmoe3 and kimi-k3 write the latent and the rope key (kv_lora_rank +
/// rope.dimension_count values) into a K row of key_length x head_count_kv: llama.cpp's
/// ggml_set_rows aborts unless the two agree, with one KV head.
void require_latent_row(KeyReader& r, const Hparams& hp) {
  const std::uint64_t latent = std::uint64_t{*r.u32("attention.kv_lora_rank")} + hp.n_rot;
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) {
    if (hp.recr[il]) continue;
    if (hp.n_head_kv[il] != 1 || hp.head_k != latent)
      r.fail(hp.n_head_kv[il] != 1 ? "attention.head_count_kv" : "attention.key_length",
             fmt::format("gives layer {} a K row of {} x {}, not kv_lora_rank + rope.dimension_count = {} (llama.cpp's "
                         "{} graph aborts writing the latent)",
                         il, hp.n_head_kv[il], hp.head_k, latent, r.arch()));
  }
}

/// llama_model_kimi_linear::load_arch_hparams: a layer whose head_count_kv is 0 is Kimi Delta
/// Attention (recurrent), every other layer MLA. Its state per sequence, from
/// llama_hparams::n_embd_r() / n_embd_s() (the n_embd_head_kda branch, in uint32_t):
///   conv: 3 (Q, K and V) x (d_conv - 1, or 3 when d_conv is 0) x n_head x kda.head_dim
///   recurrent: kda.head_dim^2 x n_head
/// The MLA layers cache K only, key_length (kv_lora_rank + rope) wide, as deepseek2's MLA.
/// bailingmoe3 (Ling 3) and kimi-k3 keep the same two caches by the same rules (create_memory's
/// default hybrid branch); they differ in the keys llama.cpp requires and asserts on.
void read_kimi_linear(KeyReader& r, Hparams& hp) {
  const std::string& arch = r.arch();
  const std::string why = fmt::format("llama.cpp requires it for {}", arch);
  r.required_u32("attention.kv_lora_rank", why);
  const std::uint32_t k_mla = r.required_u32("attention.key_length_mla", why);
  const std::uint32_t v_mla = r.required_u32("attention.value_length_mla", why);
  // A 0 makes llama.cpp's is_mla() false (it asserts both or neither): the graph's MLA layers would
  // then read a cache llama.cpp never created; kvplan does not model that file.
  if (k_mla == 0 || v_mla == 0)
    throw unsupported_architecture(r.key(k_mla == 0 ? "attention.key_length_mla" : "attention.value_length_mla"),
                                   fmt::format("0 ({} without MLA head sizes: llama.cpp's graph expects the MLA cache; "
                                               "kvplan will not guess its layout)",
                                               arch));
  const std::uint64_t d_conv = r.required_u32("ssm.conv_kernel", why);
  const std::uint64_t head = r.required_u32("kda.head_dim", why);
  if (head == 0) r.fail("kda.head_dim", "is 0 (KDA layers would keep no state)");
  // Keys llama.cpp requires that change no cache: without them it does not load the file.
  for (const std::string_view key : {"expert_feed_forward_length", "expert_shared_count", "expert_gating_func"})
    if (!r.has(key)) r.fail(key, fmt::format("is missing ({})", why));
  if (arch == "bailingmoe3") read_bailingmoe3_gate(r, why);
  if (arch == "kimi-k3") {
    for (const std::string_view key : {"attn_res.block_size", "activation.situ_beta", "activation.situ_linear_beta"})
      if (!r.has(key)) r.fail(key, fmt::format("is missing ({})", why));
    r.mark_read("kda.gate_lower_bound");  // optional here: it picks the gate's function, no state
  }
  const std::uint64_t n_head = hp.n_head[0];  // hparams.n_head(): layer 0's
  if (n_head == 0) r.fail("attention.head_count", "is 0 (KDA and MLA layers need heads)");
  const char* what = "recurrent state";
  const std::uint64_t conv_rows = d_conv > 0 ? d_conv - 1 : 3;
  hp.n_embd_r = (Checked(3, what) * conv_rows * n_head * head).value();
  hp.n_embd_s = (Checked(head, what) * head * n_head).value();
  if (hp.n_embd_r > std::numeric_limits<std::uint32_t>::max() || hp.n_embd_s > std::numeric_limits<std::uint32_t>::max())
    r.fail("kda.head_dim", "makes the recurrent state larger than 2^32 - 1 elements per sequence");
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = hp.n_head_kv[il] == 0;
  if (arch != "kimi-linear") require_latent_row(r, hp);
  hp.mla = true;
  hp.notes.push_back(fmt::format("{}: layers with head_count_kv 0 are KDA: conv 3 x {} x {} x {} and state "
                                 "{} x {} x {} f32 per sequence; the others MLA (K only, key_length wide)",
                                 arch, conv_rows, n_head, head, head, head, n_head));
}

/// llama_model_deepseek32 / llama_model_glm_dsa::load_arch_hparams and load_arch_tensors: MLA is
/// required (the tensors throw "... architecture requires MLA" without both _mla head sizes), and
/// the lightning indexer's keys are read with get_key (required). create_memory makes a
/// llama_kv_cache_dsa: the K-only MLA cache plus a second K-only cache of one indexer key
/// (key_length wide, hparams_lid's one head) per cell on the trunk layers filter_lid keeps
/// (il < n_layer(); glm-dsa: and is_indexer_full(il)).
void read_dsa(KeyReader& r, Hparams& hp) {
  const bool glm = r.arch() == "glm-dsa";
  const std::string why = fmt::format("llama.cpp requires it for {}", r.arch());
  r.required_u32("attention.q_lora_rank", why);
  r.required_u32("attention.kv_lora_rank", why);
  const std::uint32_t k_mla = r.u32("attention.key_length_mla").value_or(0);
  const std::uint32_t v_mla = r.u32("attention.value_length_mla").value_or(0);
  if (k_mla == 0 || v_mla == 0)
    r.fail(k_mla == 0 ? "attention.key_length_mla" : "attention.value_length_mla",
           fmt::format("is missing or 0 (llama.cpp: \"{} architecture requires MLA\")", glm ? "GLM_DSA" : "DEEPSEEK32"));
  r.required_u32("attention.indexer.head_count", why);
  r.required_u32("attention.indexer.top_k", why);
  const std::uint32_t width = r.required_u32("attention.indexer.key_length", why);
  // The graph asserts n_rot <= the indexer head (its layout is [rope | nope]).
  if (width == 0 || width < hp.n_rot)
    r.fail("attention.indexer.key_length",
           fmt::format("is {}, less than rope.dimension_count {} (llama.cpp's graph asserts n_rot <= it)", width,
                       hp.n_rot));
  // Keys llama.cpp requires that change no cache: without them it does not load the file
  // (glm-dsa defaults expert_gating_func to sigmoid).
  for (const std::string_view key : {"expert_feed_forward_length", "expert_shared_count", "expert_gating_func"})
    if (!r.has(key) && !(glm && key == "expert_gating_func")) r.fail(key, fmt::format("is missing ({})", why));
  hp.mla = true;
  hp.indexer_head = width;
  hp.indexer.assign(hp.n_layer, true);
  if (!glm) {
    hp.notes.push_back(fmt::format("deepseek32: MLA (K only, key_length wide) and the DSA indexer's keys, {} wide, in "
                                   "a second K-only cache on all {} trunk layers",
                                   width, hp.n_layer));
    return;
  }
  // glm-dsa: the indexer cache holds only the "full" indexer layers (the others reuse the previous
  // full layer's top-k). attention.indexer.types gives one flag per trunk layer; without it, GLM 5
  // and 5.1 (trained context below 1,048,576) are full everywhere and GLM 5.2 takes llama.cpp's
  // GLM_5_2_DEFAULT_INDEXER_TYPES: layers 0 and 1, then every 4th from 2 up to 74 (78 entries, 0 beyond).
  const std::optional<std::vector<bool>> types = r.per_layer_flags("attention.indexer.types", hp.n_layer);
  const bool pre_5_2 = hp.n_ctx_train < 1'048'576;
  for (std::uint32_t il = 0; il < hp.n_layer; ++il)
    hp.indexer[il] = types ? (*types)[il] : pre_5_2 || il < 2 || (il < 78 && (il - 2) % 4 == 0);
  // The graph asserts "shared indexer layer must follow a previous full indexer layer".
  if (hp.n_layer > 0 && !hp.indexer[0])
    r.fail("attention.indexer.types", "marks layer 0 shared (llama.cpp's graph asserts a shared indexer layer follows "
                                      "a full one)");
  const auto full = static_cast<std::size_t>(std::count(hp.indexer.begin(), hp.indexer.end(), true));
  hp.notes.push_back(fmt::format(
      "glm-dsa: MLA (K only, key_length wide) and the DSA indexer's keys, {} wide, in a second K-only cache on the {} "
      "of {} trunk layers whose indexer is full ({})",
      width, full, hp.n_layer,
      types     ? "attention.indexer.types"
      : pre_5_2 ? "no attention.indexer.types, trained context below 1,048,576: every layer"
                : "no attention.indexer.types: llama.cpp's built-in GLM 5.2 table"));
}

/// The 2025-2026 MoE models with an optional interleaved window (src/models/<arch>.cpp):
///   exaone-moe    window required; period 4 unless a scalar pattern says, the last of each global
///   afmoe         window optional (0 or absent: none); period 4, the last of each global
///   laguna        window optional; period 4, the FIRST of each global (dense_first)
///   smallthinker  window key present and non-zero: llama.cpp's own 4096, whatever the file says;
///                 period 4, dense_first
///   mellum        window optional; then the pattern is required: a scalar period, or one flag
///                 per layer
void read_moe_window(KeyReader& r, Hparams& hp) {
  const std::string& arch = r.arch();
  const bool required = arch == "exaone-moe";
  const std::optional<std::uint32_t> window = required ? r.required_u32("attention.sliding_window",
                                                                        "llama.cpp requires it for exaone-moe")
                                                       : r.u32("attention.sliding_window");
  if (!window || *window == 0) {
    if (required) r.fail("attention.sliding_window", "is 0 (a sliding layer would hold no token)");
    r.mark_read("attention.sliding_window_pattern");
    hp.notes.push_back(fmt::format("{}: no (or zero) attention.sliding_window: every layer keeps the full context", arch));
    return;
  }
  hp.n_swa = *window;
  if (arch == "smallthinker") {
    hp.n_swa = 4096;
    if (*window != 4096)
      hp.notes.push_back(fmt::format("smallthinker: llama.cpp slides over its own 4096 tokens; the file's window {} is "
                                     "not used",
                                     *window));
  }
  if (arch == "mellum") {
    const GgufValue* pattern = r.header().find(r.key("attention.sliding_window_pattern"));
    if (pattern == nullptr)
      r.fail("attention.sliding_window_pattern", "is missing (llama.cpp requires it for mellum with a window)");
    if (pattern->is_array()) {
      const std::vector<bool> flags = *r.per_layer_flags("attention.sliding_window_pattern", hp.n_layer);
      for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.swa[il] = flags[il];
      return;
    }
  }
  const bool dense_first = arch == "laguna" || arch == "smallthinker";
  const std::uint32_t period = scalar_swa_period(r, hp, 4);
  set_swa_pattern(hp, period, dense_first);
  if (dense_first && period > 0)
    hp.notes.push_back(fmt::format("{}: the first of every {} layers is global (dense_first)", arch, period));
}

/// mimo2 (MiMo-V2) and step35 (Step 3.5): the window and a per-layer pattern are both required
/// (get_key_or_arr: one flag per layer, or a scalar for every layer). step35's pattern counts the
/// nextn layers too (n_layer_all entries); neither's nextn layers keep cells in the main context.
void read_required_pattern(KeyReader& r, Hparams& hp) {
  read_required_window(r, hp);
  const std::uint32_t n = r.arch() == "step35" ? hp.n_layer_all : hp.n_layer;
  const std::optional<std::vector<bool>> pattern = r.per_layer_flags("attention.sliding_window_pattern", n);
  if (!pattern)
    r.fail("attention.sliding_window_pattern", fmt::format("is missing (llama.cpp requires it for {})", r.arch()));
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.swa[il] = (*pattern)[il];
}

/// cohere2moe and muse-glimmer: a required window, and a required pattern that is either a scalar
/// period (cohere2moe's first layer of each period global, set_swa_pattern(p, dense_first);
/// muse-glimmer's last) or one flag per layer.
void read_period_or_flags(KeyReader& r, Hparams& hp) {
  read_required_window(r, hp);
  const GgufValue* pattern = r.header().find(r.key("attention.sliding_window_pattern"));
  if (pattern == nullptr)
    r.fail("attention.sliding_window_pattern", fmt::format("is missing (llama.cpp requires it for {})", r.arch()));
  if (pattern->is_array()) {
    const std::vector<bool> flags = *r.per_layer_flags("attention.sliding_window_pattern", hp.n_layer);
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.swa[il] = flags[il];
    return;
  }
  const bool dense_first = r.arch() == "cohere2moe";
  const std::uint32_t period = *r.u32("attention.sliding_window_pattern");
  set_swa_pattern(hp, period, dense_first);
  hp.notes.push_back(fmt::format("{}: the {} of every {} layers is global", r.arch(),
                                 dense_first ? "first (dense_first)" : "last", period));
}

/// granite_swa: a required window on the layers a required flag array marks (get_arr: any length
/// up to 512; layers past its end do not slide).
void read_granite_swa(KeyReader& r, Hparams& hp) {
  read_required_window(r, hp);
  const std::vector<bool> flags =
      required_flag_array(r, hp, "attention.sliding_window_pattern", "llama.cpp requires the array for granite_swa");
  for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.swa[il] = flags[il];
}

/// graniteswitch (Granite with embedded LoRA adapters): llama.cpp adds a router layer after the
/// last block (index block_count, 1 head and 1 KV head of the model's head size, no tensors) whose
/// single causal head reads which adapter is active. It counts as a nextn layer for n_layer(), but
/// no filter keeps it out of the KV cache: block_count + 1 cache layers.
void read_granite_switch(KeyReader& r, Hparams& hp) {
  const std::uint32_t adapters = r.required_u32("adapters.count", "llama.cpp requires it for graniteswitch");
  const std::uint32_t rank = r.required_u32("adapters.lora_rank", "llama.cpp requires it for graniteswitch");
  if (adapters > 4096) r.fail("adapters.count", fmt::format("is {} (llama.cpp: \"invalid adapter count\")", adapters));
  if (rank > 4096) r.fail("adapters.lora_rank", fmt::format("is {} (llama.cpp: \"invalid lora rank\")", rank));
  for (const char* key : {"adapters.token_ids_activate", "adapters.token_ids_substitute"}) {
    const GgufValue* ids = r.header().find(r.key(key));
    if (!ids->is_array() || ids->count != adapters)
      r.fail(key, fmt::format("must be an array of adapters.count ({}) token ids (llama.cpp: \"adapter token id "
                              "arrays ... do not match adapter count\")",
                              adapters));
  }
  if (hp.n_nextn > 0)
    r.fail("nextn_predict_layers", "is set, but llama.cpp takes graniteswitch's nextn slot for its router layer");
  if (hp.n_layer_all + 1 > kLlamaCppMaxLayers)
    r.fail("block_count", fmt::format("is {}: with the router layer more than llama.cpp's {}", hp.n_layer_all,
                                      kLlamaCppMaxLayers));
  hp.router_layer = true;
  hp.notes.push_back(fmt::format("graniteswitch: llama.cpp adds a router layer (layer {}: 1 KV head of {}) to the "
                                 "cache after the {} blocks",
                                 hp.n_layer_all, hp.head_k, hp.n_layer_all));
}

}  // namespace

/// nanbeige: the block_count physical layers run num_loops times (default 1). llama.cpp expands
/// its layer count before allocating (n_layer_all = blocks x loops): every loop's pass keeps cells
/// of its own, while the weights exist once (layer i + j x blocks shares layer i's tensors).
void read_loops(KeyReader& r, Hparams& hp) {
  const std::uint32_t loops = r.u32("num_loops").value_or(1);
  r.mark_read("skip_loop_final_norm");  // a norm between loops: no cache, no tensor
  if (loops == 0) r.fail("num_loops", "is 0 (llama.cpp asserts n_loops >= 1)");
  const std::uint64_t logical = std::uint64_t{hp.n_layer_all} * loops;
  if (logical > kLlamaCppMaxLayers)
    r.fail("num_loops", fmt::format("makes {} x {} = {} layers, more than llama.cpp's {}", hp.n_layer_all, loops,
                                    logical, kLlamaCppMaxLayers));
  if (loops == 1) return;
  const auto tile = [&](std::vector<std::uint32_t>& per_layer) {
    const std::vector<std::uint32_t> one_pass = per_layer;
    for (std::uint32_t j = 1; j < loops; ++j) per_layer.insert(per_layer.end(), one_pass.begin(), one_pass.end());
  };
  tile(hp.n_ff);
  tile(hp.n_head);
  tile(hp.n_head_kv);
  hp.notes.push_back(fmt::format("nanbeige: {} blocks run {} times: {} cache layers over one copy of the weights",
                                 hp.n_layer_all, loops, logical));
  hp.n_layer_all = static_cast<std::uint32_t>(logical);
  hp.n_layer = hp.n_layer_all - hp.n_nextn;
}

/// The per-architecture part of llama.cpp's load_hparams (src/models/<arch>.cpp).
void read_architecture(KeyReader& r, Hparams& hp) {
  const std::string& arch = r.arch();
  if (arch == "llama") {
    // llama_model_llama::load_arch_hparams never reads the window: Mistral-style files keep full layers.
    if (r.has("attention.sliding_window")) {
      hp.notes.push_back(fmt::format(
          "llama: attention.sliding_window = {} is ignored by llama.cpp for this architecture (n_swa = 0): "
          "every layer keeps the full context",
          value_text(*r.header().find(r.key("attention.sliding_window")))));
      r.mark_read("attention.sliding_window");
    }
  } else if (arch == "phi3") {
    if (const std::optional<std::uint32_t> window = r.u32("attention.sliding_window"); window && *window > 0)
      hp.notes.push_back(fmt::format(
          "phi3: attention.sliding_window = {} is read and then disabled by llama.cpp (\"Phi SWA is currently "
          "disabled\"): every layer keeps the full context",
          *window));
  } else if (arch == "gemma2") {
    // gemma2: swa_type standard always, n_swa 4096 unless the key says otherwise, period 2.
    hp.n_swa = r.u32("attention.sliding_window").value_or(4096);
    if (!r.has("attention.sliding_window"))
      hp.notes.push_back("gemma2: no attention.sliding_window; llama.cpp's default window 4096 applies");
    set_swa_pattern(hp, scalar_swa_period(r, hp, 2));
  } else if (arch == "gemma3") {
    // gemma3: SWA only when the window key is present and non-zero; then period 6 by default.
    if (!read_optional_window(r, hp, 6))
      hp.notes.push_back("gemma3: no (or zero) attention.sliding_window: llama.cpp uses no sliding window at all");
  } else if (arch == "deepseek2" || arch == "mistral4") {
    // MLA when both _mla head sizes are given (llama_hparams::is_mla): the cache holds K only,
    // key_length (= kv_lora_rank + rope dims) wide, n_head_kv (1) heads. mistral4 is deepseek2's
    // class ("reuse load_arch_hparams and load_arch_tensors from llama_model_deepseek2").
    r.required_u32("attention.kv_lora_rank", fmt::format("llama.cpp requires it for {}", arch));
    const std::uint32_t k_mla = r.u32("attention.key_length_mla").value_or(0);
    const std::uint32_t v_mla = r.u32("attention.value_length_mla").value_or(0);
    if ((k_mla == 0) != (v_mla == 0))
      r.fail(k_mla == 0 ? "attention.key_length_mla" : "attention.value_length_mla",
             "is missing or zero while its K/V counterpart is set (llama.cpp asserts both or neither)");
    hp.mla = k_mla != 0;
    hp.notes.push_back(hp.mla ? fmt::format("{}: key_length_mla and value_length_mla present: MLA, the cache holds "
                                            "the compressed latent (K only, key_length wide)",
                                            arch)
                              : fmt::format("{}: no _mla head sizes: llama.cpp caches full K and V per head (pre-MLA "
                                            "file)",
                                            arch));
  } else if (arch == "rwkv6" || arch == "rwkv7" || arch == "arwkv7" || arch == "rwkv6qwen2") {
    // Every layer recurrent (llm_arch_is_recurrent): a token-shift state of token_shift_count
    // (default 2) x n_embd and a WKV state of n_embd x wkv.head_size per sequence, f32.
    const std::uint64_t head = r.required_u32("wkv.head_size", fmt::format("llama.cpp requires it for {}", arch));
    if (head == 0) r.fail("wkv.head_size", "is 0 (the layers would keep no state)");
    const std::uint64_t shift = r.u32("token_shift_count").value_or(2);
    // The Qwen-based graphs shift one token: they assert n_embd == n_embd_r() (src/models/arwkv7.cpp,
    // rwkv6qwen2.cpp), and llama.cpp aborts on any other count, the default 2 included.
    if ((arch == "arwkv7" || arch == "rwkv6qwen2") && shift != 1)
      r.fail("token_shift_count", fmt::format("is {}{}; llama.cpp's {} graph asserts a token shift of 1 x n_embd (the "
                                              "process aborts)",
                                              shift, r.has("token_shift_count") ? "" : " (absent: llama.cpp's default)",
                                              arch));
    const char* what = "recurrent state";
    hp.n_embd_r = checked_mul(shift, hp.n_embd, what);
    hp.n_embd_s = checked_mul(std::uint64_t{hp.n_embd}, head, what);
    if (hp.n_embd_r > std::numeric_limits<std::uint32_t>::max() || hp.n_embd_s > std::numeric_limits<std::uint32_t>::max())
      r.fail("wkv.head_size", "makes the recurrent state larger than 2^32 - 1 elements per sequence");
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = true;
    hp.notes.push_back(fmt::format("{}: every layer recurrent: token shift {} x {} and WKV {} x {} f32 values per "
                                   "sequence",
                                   arch, shift, hp.n_embd, hp.n_embd, head));
  } else if (arch == "mamba2") {
    read_ssm(r, hp);
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = true;
  } else if (arch == "mamba") {
    // Mamba-1 (falcon-mamba): every layer recurrent; load_arch_tensors refuses any inner size
    // but twice the width ("only an expansion factor of 2 is supported for now").
    read_ssm(r, hp, false);
    if (r.u32("ssm.inner_size") != 2 * hp.n_embd)
      r.fail("ssm.inner_size", fmt::format("is not 2 x embedding_length {} (llama.cpp: \"only an expansion factor "
                                           "of 2 is supported for now\")",
                                           hp.n_embd));
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = true;
  } else if (arch == "jamba") {
    // Mamba-1 layers where head_count_kv is 0, attention elsewhere (load_arch_hparams).
    read_ssm(r, hp, false);
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = hp.n_head_kv[il] == 0;
  } else if (arch == "plamo2") {
    read_plamo2(r, hp);
  } else if (arch == "granitehybrid") {
    read_ssm(r, hp);
    // "A layer is recurrent IFF the n_head_kv value is set to 0"
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = hp.n_head_kv[il] == 0;
  } else if (arch == "lfm2" || arch == "lfm2moe") {
    // lfm2moe reads lfm2's short-conv cache and recurrent layers; it reads no window (a window
    // key in an lfm2moe file stays unread: exit 3 below).
    const std::uint32_t l_cache = r.required_u32("shortconv.l_cache", "llama.cpp requires it for lfm2");
    if (l_cache < 2) r.fail("shortconv.l_cache", "must be at least 2 (the conv state holds l_cache - 1 rows)");
    hp.n_embd_r = std::uint64_t{hp.n_embd} * (l_cache - 1);  // llama_hparams::n_embd_r() for LFM2
    hp.n_embd_s = 0;
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.recr[il] = hp.n_head_kv[il] == 0;
    const std::optional<std::uint32_t> window =
        arch == "lfm2" ? r.u32("attention.sliding_window") : std::optional<std::uint32_t>();
    if (window && *window > 0) {
      hp.n_swa = *window;
      for (std::uint32_t il = 0; il < hp.n_layer; ++il) hp.swa[il] = !hp.recr[il];
      hp.notes.push_back("lfm2: attention.sliding_window > 0: every attention layer is sliding");
    }
  } else if (arch == "qwen3next" || arch == "qwen35" || arch == "qwen35moe") {
    // llama_model_qwen35 and _qwen35moe read the state and the recurrent layers exactly as
    // qwen3next does (qwen35moe adds only expert sizes); both also require the rope sections (a
    // rope matter: no cache).
    if (arch != "qwen3next" && !r.has("rope.dimension_sections"))
      r.fail("rope.dimension_sections", fmt::format("is missing (llama.cpp requires it for {})", arch));
    read_ssm(r, hp);
    read_recurrent_layers(r, hp, 4);
  } else if (arch == "minimax-01") {
    read_lightning(r, hp);
  } else if (arch == "minimax-m3") {
    read_msa(r, hp);
  } else if (arch == "qwen4exp") {
    read_qwen4exp(r, hp);
  } else if (arch == "dots3note") {
    read_dots3note(r, hp);
  } else if (arch == "deepseek4") {
    read_deepseek4(r, hp);
  } else if (arch == "nemotron_h" || arch == "nemotron_h_moe") {
    // nemotron_h_moe is nemotron_h's class (the same load_arch_hparams and memory filters); its
    // feed-forward layers are MoE blocks.
    read_ssm(r, hp);
    // "A layer is recurrent IFF the n_head_kv value is set to 0 and the n_ff value is set to 0";
    // create_memory's filters give cells to layers with heads and no FFN, and nothing to the MLP
    // layers (n_ff > 0).
    hp.no_cache.assign(hp.n_layer_all, false);
    for (std::uint32_t il = 0; il < hp.n_layer; ++il) {
      hp.recr[il] = hp.n_head_kv[il] == 0 && hp.n_ff[il] == 0;
      hp.no_cache[il] = hp.n_ff[il] != 0;
    }
    hp.notes.push_back("nemotron_h: a layer is Mamba-2 where head_count_kv and feed_forward_length are both 0, "
                       "attention where only feed_forward_length is 0, an MLP without cache otherwise");
  } else if (arch == "falcon-h1") {
    // Every layer runs attention and a Mamba-2 mixer side by side: create_memory's filters put
    // every layer in both the KV cache and the recurrent memory.
    read_ssm(r, hp);
    hp.parallel_state = true;
    hp.notes.push_back("falcon-h1: every layer keeps K/V cells and Mamba-2 state (a parallel hybrid)");
  } else if (arch == "gpt-oss") {
    // llama_model_openai_moe: the window is a required key; every 2nd layer global by default.
    read_required_window(r, hp);
    set_swa_pattern(hp, scalar_swa_period(r, hp, 2));
  } else if (arch == "cohere2") {
    read_required_window(r, hp);
    set_swa_pattern(hp, scalar_swa_period(r, hp, 4));
  } else if (arch == "gemma3n") {
    read_required_window(r, hp);
    set_swa_pattern(hp, scalar_swa_period(r, hp, 5));
    // llama_model_gemma3n hard-codes n_layer_kv_from_start = 20: the layers after the first 20 keep
    // no cells of their own and read layer 18 (sliding) or 19 (global).
    hp.kv_from_start = 20;
    if (hp.n_layer > 20)
      hp.notes.push_back(fmt::format("gemma3n: llama.cpp gives only the first 20 layers a cache; layers 20 to {} reuse "
                                     "layer 18 (sliding) or 19 (global)",
                                     hp.n_layer - 1));
  } else if (arch == "gemma4") {
    read_gemma4(r, hp);
  } else if (arch == "kimi-linear" || arch == "bailingmoe3" || arch == "kimi-k3") {
    read_kimi_linear(r, hp);
  } else if (arch == "deepseek32" || arch == "glm-dsa") {
    read_dsa(r, hp);
  } else if (arch == "cohere2moe" || arch == "muse-glimmer") {
    read_period_or_flags(r, hp);
  } else if (arch == "granite_swa") {
    read_granite_swa(r, hp);
  } else if (arch == "plamo3") {
    // PLaMo 3: a window when the key is present and non-zero, then period 8 unless a scalar says.
    read_optional_window(r, hp, 8);
  } else if (arch == "mimo2" || arch == "step35") {
    read_required_pattern(r, hp);
  } else if (arch == "exaone-moe" || arch == "afmoe" || arch == "laguna" || arch == "smallthinker" ||
             arch == "mellum") {
    read_moe_window(r, hp);
  } else if (arch == "olmo2") {
    // OLMo 2 has no window; OLMo 3 files (also olmo2) have one, then every 4th layer is global.
    read_optional_window(r, hp, 4);
  } else if (arch == "exaone4") {
    // llama_model_exaone4 turns the window on only for the 64-layer (32B) model: window 4096 unless
    // the key says otherwise, every 4th layer global. Any other depth reads the key and ignores it.
    if (hp.n_layer == 64) {
      hp.n_swa = r.u32("attention.sliding_window").value_or(4096);
      if (hp.n_swa == 0) r.fail("attention.sliding_window", "is 0 (a sliding layer would hold no token)");
      set_swa_pattern(hp, scalar_swa_period(r, hp, 4));
    } else {
      r.mark_read("attention.sliding_window_pattern");
      if (r.u32("attention.sliding_window"))
        hp.notes.push_back(fmt::format("exaone4: attention.sliding_window is ignored by llama.cpp for a {}-layer model "
                                       "(it slides only at 64 layers): every layer keeps the full context",
                                       hp.n_layer));
    }
  } else if (arch == "graniteswitch") {
    read_granite_switch(r, hp);
  } else if (arch == "plm") {
    // llama_model_plm requires the latent rank, but its graph expands the latent to K and V per
    // head before storing them (src/models/plm.cpp): the cache is llama's, key_length and
    // value_length wide.
    r.required_u32("attention.kv_lora_rank", "llama.cpp requires it for plm");
    hp.notes.push_back("plm: kv_lora_rank compresses the projections only; llama.cpp caches full K and V per head");
  } else if (arch == "minicpm3") {
    // llama_model_minicpm3 requires both low ranks; they shape its projections only. The cache
    // holds full K and V per head (key_length = nope + rope dims, value_length): no latent.
    r.required_u32("attention.q_lora_rank", "llama.cpp requires it for minicpm3");
    r.required_u32("attention.kv_lora_rank", "llama.cpp requires it for minicpm3");
    hp.notes.push_back("minicpm3: kv_lora_rank compresses the projections only; llama.cpp caches full K and V per head");
  } else if (arch == "llama4") {
    // llama_model_llama4: chunked attention (3 chunked : 1 global by default) with chunks of 8192
    // tokens whatever the window key says, unless the key is present and 0.
    const std::optional<std::uint32_t> window = r.u32("attention.sliding_window");
    if (window && *window == 0) {
      r.mark_read("attention.sliding_window_pattern");
      hp.notes.push_back("llama4: attention.sliding_window = 0: no chunked attention, every layer keeps the full context");
    } else {
      hp.n_swa = 8192;
      hp.chunked = true;
      set_swa_pattern(hp, scalar_swa_period(r, hp, 4));
      hp.notes.push_back(fmt::format("llama4: chunked attention in chunks of 8192 tokens (llama.cpp's fixed size{})",
                                     window ? fmt::format("; the file's window {} is not used", *window) : ""));
    }
  }
  // llama, qwen2, qwen2moe, qwen3, qwen3moe, gemma, glm4moe, ernie4_5, ernie4_5-moe, hunyuan-moe,
  // smollm3 (its NoPE layers are a rope matter), granite, starcoder2, command-r, olmoe, seed_oss,
  // granitemoe, hunyuan-dense, dots1, bailingmoe, apertus (xIELU constants), arcee, and the
  // plain-attention row of kArchitectures: nothing architecture-specific touches the cache.
}

/// Refuses any cache-changing `<arch>.*` key that llama.cpp does not read for this architecture.
void reject_unread_cache_keys(const KeyReader& r) {
  const std::string prefix = r.arch() + ".";
  for (const auto& [key, value] : r.header().metadata) {
    if (!starts_with(key, prefix)) continue;
    const std::string_view suffix = std::string_view(key).substr(prefix.size());
    const bool cache_key = std::any_of(kCacheKeyPrefixes.begin(), kCacheKeyPrefixes.end(),
                                       [&](std::string_view p) { return starts_with(suffix, p); });
    if (cache_key && !r.read().contains(key))
      throw unsupported_architecture(key, value_text(value) + " (llama.cpp does not read it for " + r.arch() +
                                              "; kvplan will not guess what it does to the cache)");
  }
}

}  // namespace kvplan::gguf_keys
