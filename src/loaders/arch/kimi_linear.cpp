// Moonshot Kimi Linear and Kimi K3 (vLLM kimi_linear.py, layers/kda.py; llama.cpp
// conversion/kimi_k3.py): MLA layers among Kimi Delta Attention layers, DeepSeek-style experts.

#include <fmt/format.h>

#include "kvplan/error.h"
#include "loaders/json_reader.h"
#include "loaders/tensor_parts.h"

namespace kvplan::arch {

namespace {

/// MLA layers as DeepSeek's (mla_params); Kimi Delta Attention layers q, k, v projections H x P
/// (P = num_heads x head_dim), f_a H x d, f_b d x P, dt_bias P, b_proj H x heads, q/k/v depthwise
/// convs P x kernel each, A_log heads, g_a H x d, g_b d x P, o_norm d, o_proj P x H; MoE from
/// first_k_dense_replace (every moe_layer_freq-th): gate H x E, e_score_correction_bias E, experts
/// E x 3 x H x moe_intermediate_size, shared experts one MLP of num_shared_experts x
/// moe_intermediate_size; dense MLP 3 x H x intermediate_size.
/// Kimi K3's additions, as llama.cpp's converter (conversion/kimi_k3.py) maps its tensors:
/// use_full_rank_gate replaces g_a/g_b by one P x H gate (f_a/f_b stay low-rank);
/// mla_use_output_gate adds a heads x v_head_dim by H output gate to each MLA layer;
/// routed_expert_hidden_size R runs the routed experts in a latent space: down H x R and up R x H
/// projections (+ an R norm with latent_moe_use_norm) per MoE layer, experts E x 3 x R x I;
/// attn_res_block_size (Attention Residuals) adds 4 vectors of H per layer (attention and MLP
/// residual norm and projection) and 2 beside the layers.
ParamCount count(ConfigFields& fields, const Layout& layout) {
  ParamCount count = start_count(fields, layout);
  const u64 hidden = layout.hidden;
  const u64 layers = layout.count();
  const nlohmann::json* config = fields.find("linear_attn_config");
  if (!config || !config->is_object()) fields.fail("linear_attn_config", "is missing");
  const auto number = [&](const char* key) {
    const auto it = config->find(key);
    if (it == config->end()) fields.fail(fmt::format("linear_attn_config.{}", key), "is missing");
    return json_to_uint(*it, fields.where(fmt::format("linear_attn_config.{}", key)));
  };
  const auto full_rank = config->find("use_full_rank_gate");
  const bool full_rank_gate = full_rank != config->end() && full_rank->is_boolean() && full_rank->get<bool>();
  const u64 heads = number("num_heads");
  const u64 dim = number("head_dim");
  const u64 kernel = number("short_conv_kernel_size");
  const u64 projection = product({heads, dim}, "KDA projection");
  Sum kda;
  kda.add(product({4, hidden, projection}, "KDA q/k/v/o"), "KDA");
  kda.add(product({hidden, dim}, "KDA f_a"), "KDA");
  kda.add(product({dim, projection}, "KDA f_b"), "KDA");
  if (full_rank_gate) {
    kda.add(product({projection, hidden}, "KDA full-rank gate"), "KDA");
  } else {
    kda.add(product({hidden, dim}, "KDA g_a"), "KDA");
    kda.add(product({dim, projection}, "KDA g_b"), "KDA");
  }
  kda.add(projection, "KDA");  // dt_bias
  kda.add(product({hidden, heads}, "KDA b_proj"), "KDA");
  kda.add(product({3, projection, kernel}, "KDA convs"), "KDA");
  kda.add(heads + dim, "KDA");  // A_log, o_norm
  u64 mla = mla_params(fields, hidden);
  if (fields.flag("mla_use_output_gate", false))
    mla = checked_add(mla, product({fields.positive("num_attention_heads"), fields.positive("v_head_dim"), hidden}, "MLA output gate"),
                      "MLA");
  const u64 residual_vectors = fields.uint_or("attn_res_block_size", 0) > 0 ? product({4, hidden}, "attention residuals") : 0;

  Counted counted;
  counted.final_norm = hidden;
  counted.experts = fields.positive("num_experts");
  counted.top_k = fields.positive("num_experts_per_token");
  if (residual_vectors) counted.model_extra = product({2, hidden}, "attention residuals");
  const u64 moe_width = fields.positive("moe_intermediate_size");
  const u64 latent = fields.uint_or("routed_expert_hidden_size", 0);
  const u64 expert_width = latent > 0 ? latent : hidden;
  const u64 latent_params = latent > 0 ? checked_add(product({2, hidden, latent}, "latent projections"),
                                                     fields.flag("latent_moe_use_norm", false) ? latent : 0, "latent norm")
                                       : 0;
  const u64 shared = fields.uint_or("num_shared_experts", 0);
  const u64 first_moe = fields.uint_or("first_k_dense_replace", 0);
  const u64 freq = fields.positive_or("moe_layer_freq", 1);
  Sum always;
  always.add(checked_add(product({hidden, counted.experts}, "router"), counted.experts, "router"), "MoE");
  if (shared) always.add(mlp_params(hidden, product({shared, moe_width}, "shared experts"), true, false), "MoE");
  always.add(latent_params, "MoE");
  for (u64 i = 0; i < layers; ++i) {
    Sum sum;
    sum.add(layout.layers[i].kind == LayerKind::linear ? kda.value : mla, "layer");
    sum.add(product({2, hidden}, "norms"), "layer");
    sum.add(residual_vectors, "layer");
    LayerParams layer;
    if (i >= first_moe && i % freq == 0)
      layer = moe_layer(counted.experts, counted.top_k, expert_width, moe_width, always.value);
    else
      sum.add(mlp_params(hidden, fields.positive("intermediate_size"), true, false), "layer");
    counted.layers.push_back(plus(layer, sum.value));
  }
  counted.extra_note = "attention residual vectors";
  finish_count(count, fields, counted);
  return count;
}

/// Kimi Delta Attention (vLLM kda_state_shape / kda_state_dtype): conv (k - 1) x (H D + 2 H D) for
/// q, k and v at the model dtype; recurrent H x D x D in float32, which vLLM hard-codes.
std::vector<StateTensor> state(ConfigFields& fields, const Layout&, const Dtype& dtype) {
  const nlohmann::json& config = *fields.find("linear_attn_config");
  u64 heads = 0, head_dim = 0, kernel = 0;
  for (const auto& [key, value] : config.items()) {
    const std::string where = fmt::format("linear_attn_config.{}", key);
    const nlohmann::json& item = value;  // clang 14 cannot capture a structured binding
    const auto number = [&] { return json_to_uint(item, fields.where(where)); };
    if (key == "num_heads") heads = number();
    else if (key == "head_dim") head_dim = number();
    else if (key == "short_conv_kernel_size") kernel = number();
    else if (key == "full_attn_layers" || key == "kda_layers" || key == "gate_lower_bound" || key == "use_full_rank_gate")
      continue;  // the layout (read above) and the gate's shape, which the state does not depend on
    else if (!value.is_null()) {
      std::string shown = value.dump();
      if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
      throw unsupported_architecture(fmt::format("{}: {}", fields.origin(), where), shown);
    }
  }
  if (heads == 0 || head_dim == 0 || kernel == 0)
    fields.fail("linear_attn_config", "needs num_heads, head_dim and short_conv_kernel_size of at least 1");
  return {{"conv", (kernel - 1) * 3 * heads * head_dim, &dtype, heads},
          {"recurrent", heads * head_dim * head_dim, &parse_weight_dtype("fp32"), heads}};
}

}  // namespace

const Family& family_kimi_linear() {
  static const Family family{
      .name = "kimi_linear",
      .types = {{"kimi_linear"}},
      .gguf = "kimi-linear, kimi-k3",
      .fixtures = {"kimi-linear-48b-a3b", "kimi-k3"},
      .rules = "linear_attn_config.full_attn_layers (MLA, counted from 1) and kda_layers (Kimi Delta Attention): MLA "
               "layers cache the latent, KDA layers keep a conv state at the model dtype and an H x D x D recurrent "
               "state in float32 (vLLM). Counted with Kimi K3's full-rank gate, MLA output gate, latent experts and "
               "attention residuals.",
      .linear_state = state,
      .count = count,
  };
  return family;
}

}  // namespace kvplan::arch
