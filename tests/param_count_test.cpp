// count_params against published parameter counts. Each model's config comes from its real
// config.json fixture (tests/fixtures/hf/<id>/config.json) when present, else from the inline JSON
// below, which holds the fields shared/reference/models.jsonl records for it. Exact counts are
// keras-hub's preset counts and safetensors total_size / 2 for bf16 checkpoints (sources in
// tests/fixtures/hf/SOURCES.md and models.jsonl).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "loaders/param_count.h"
#include "loaders/json_reader.h"

using kvplan::count_params;
using kvplan::ParamCount;
using nlohmann::json;

namespace {

std::filesystem::path fixture_dir(const std::string& id) {
  return std::filesystem::path(KVPLAN_SOURCE_DIR) / "tests" / "fixtures" / "hf" / id;
}

std::optional<json> read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return kvplan::parse_json_document(text.str(), path.string());
}

/// The language-model part of a config.json: `text_config` when nested, with the top-level
/// fields it lacks (tie_word_embeddings, ...) merged in, as the loader passes it.
json language_config(const json& document) {
  if (!document.contains("text_config")) return document;
  json config = document.at("text_config");
  for (const auto& [key, value] : document.items())
    if (key != "text_config" && key != "vision_config" && !config.contains(key)) config[key] = value;
  return config;
}

/// The model's config: its real fixture when there is one, else `inline_fields`.
json model_config(const std::string& id, const char* inline_fields) {
  if (const auto document = read_json(fixture_dir(id) / "config.json")) return language_config(*document);
  return json::parse(inline_fields);
}

/// metadata.total_size of the fixture's model.safetensors.index.json, when there is one.
std::optional<std::uint64_t> safetensors_total_size(const std::string& id) {
  const auto index = read_json(fixture_dir(id) / "model.safetensors.index.json");
  if (!index) return std::nullopt;
  return index->at("metadata").at("total_size").get<std::uint64_t>();
}

bool within(std::uint64_t actual, double expected, double fraction) {
  const double a = static_cast<double>(actual);
  return a >= expected * (1 - fraction) && a <= expected * (1 + fraction);
}

struct Exact {
  const char* id;
  const char* inline_fields;
  std::uint64_t total;
};

// Each of these is the published exact count, to the parameter.
const Exact kExact[] = {
    // 32 x (attn 41,943,040 + mlp 3 x 4096 x 14336 = 176,160,768 + norms 8,192) = 6,979,584,000;
    // + embedding and lm_head 2 x 128,256 x 4,096 = 1,050,673,152 + final norm 4,096.
    {"llama3.1-8b",
     R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"tie_word_embeddings":false})",
     8'030'261'248},
    // Tied. Per layer: q 896x896 + 896, k/v 2 x (896x128 + 128), o 896x896 = 1,836,160; mlp
    // 3 x 896 x 4864 = 13,074,432; norms 1,792 -> 14,912,384 x 24 = 357,897,216;
    // + embedding 151,936 x 896 = 136,134,656 + 896.
    {"qwen2.5-0.5b",
     R"({"model_type":"qwen2","hidden_size":896,"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"intermediate_size":4864,"vocab_size":151936,"tie_word_embeddings":true})",
     494'032'768},
    // Qwen2.5-3B and Gemma 2 2B: sum(p.numel()) of the loaded HF models as checked in public
    // scripts (code search: "google/gemma-2-2b|gemma-2-2b|2614341888",
    // "Qwen/Qwen2.5-3B|Qwen2.5-3B|3085938688"); no fixture, inline only.
    {"qwen2.5-3b",
     R"({"model_type":"qwen2","hidden_size":2048,"num_hidden_layers":36,"num_attention_heads":16,"num_key_value_heads":2,"intermediate_size":11008,"vocab_size":151936,"tie_word_embeddings":true})",
     3'085'938'688},
    {"gemma2-2b",
     R"({"model_type":"gemma2","hidden_size":2304,"num_hidden_layers":26,"num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,"intermediate_size":9216,"vocab_size":256000})",
     2'614'341'888},
    {"qwen2.5-7b",
     R"({"model_type":"qwen2","hidden_size":3584,"num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"vocab_size":152064,"tie_word_embeddings":false})",
     7'615'616'512},
    {"qwen2.5-32b",
     R"({"model_type":"qwen2","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":40,"num_key_value_heads":8,"intermediate_size":27648,"vocab_size":152064,"tie_word_embeddings":false})",
     32'763'876'352},
    {"qwen2.5-72b",
     R"({"model_type":"qwen2","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":29568,"vocab_size":152064,"tie_word_embeddings":false})",
     72'706'203'648},
    // Two checkpoints with Qwen2.5's tensor shapes, counted from their own fixtures.
    // DeepSeek-R1-Distill-Qwen-7B (distilled from Qwen2.5-Math-7B, whose keras-hub preset
    // qwen2.5_math_7b_en counts 7,615,616,512; a public capture of Ollama's deepseek-r1 7B GGUF
    // reports general.parameter_count 7615616512): 28 x (q 3584x3584 + 3584, k/v 2 x (3584x512 +
    // 512), o 3584x3584 = 29,364,736; mlp 3 x 3584 x 18944 = 203,685,888; norms 7,168) =
    // 6,525,618,176; + embedding and lm_head 2 x 152,064 x 3,584 = 1,089,994,752 + 3,584.
    {"deepseek-r1-distill-qwen-7b",
     R"({"model_type":"qwen2","hidden_size":3584,"num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"vocab_size":152064,"tie_word_embeddings":false})",
     7'615'616'512},
    // Qwen2.5-Coder-32B-Instruct: the shapes of Qwen2.5-32B-Instruct (keras-hub
    // qwen2.5_instruct_32b_en: 32,763,876,352; Hugging Face's safetensors count of
    // DeepSeek-R1-Distill-Qwen-32B, the same shapes, is the same 32,763,876,352).
    {"qwen2.5-coder-32b-instruct",
     R"({"model_type":"qwen2","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":40,"num_key_value_heads":8,"intermediate_size":27648,"vocab_size":152064,"tie_word_embeddings":false})",
     32'763'876'352},
    // Tied, q/k norms of head_dim 128 in each of 28 layers.
    {"qwen3-0.6b",
     R"({"model_type":"qwen3","hidden_size":1024,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":3072,"vocab_size":151936,"tie_word_embeddings":true})",
     596'049'920},
    {"qwen3-4b",
     R"({"model_type":"qwen3","hidden_size":2560,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":9728,"vocab_size":151936,"tie_word_embeddings":true})",
     4'022'468'096},
    {"qwen3-8b",
     R"({"model_type":"qwen3","hidden_size":4096,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,"vocab_size":151936,"tie_word_embeddings":false})",
     8'190'735'360},
    {"qwen3-14b",
     R"({"model_type":"qwen3","hidden_size":5120,"num_hidden_layers":40,"num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"intermediate_size":17408,"vocab_size":151936,"tie_word_embeddings":false})",
     14'768'307'200},
    {"qwen3-32b",
     R"({"model_type":"qwen3","hidden_size":5120,"num_hidden_layers":64,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,"intermediate_size":25600,"vocab_size":151936,"tie_word_embeddings":false})",
     32'762'123'264},
    {"mistral-7b-v0.1",
     R"({"model_type":"mistral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"tie_word_embeddings":false})",
     7'241'732'096},
    {"mistral-7b-v0.3",
     R"({"model_type":"mistral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32768,"tie_word_embeddings":false})",
     7'248'023'552},
    // Tied by gemma2's default. Per layer: q 3584x4096, k/v 2 x 3584x2048, o 4096x3584 =
    // 44,040,192; mlp 3 x 3584 x 14336 = 154,140,672; 4 norms 14,336 -> 198,195,200 x 42 =
    // 8,324,198,400; + embedding 256,000 x 3,584 = 917,504,000 + 3,584.
    {"gemma2-9b",
     R"({"model_type":"gemma2","hidden_size":3584,"num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"intermediate_size":14336,"vocab_size":256000})",
     9'241'705'984},
    {"gemma2-27b",
     R"({"model_type":"gemma2","hidden_size":4608,"num_hidden_layers":46,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,"intermediate_size":36864,"vocab_size":256000})",
     27'227'128'320},
    {"gemma3-1b",
     R"({"model_type":"gemma3_text","hidden_size":1152,"num_hidden_layers":26,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":256,"intermediate_size":6912,"vocab_size":262144})",
     999'885'952},
    // Fused qkv_proj and gate_up_proj, same shapes as Llama: 32 x (4 x 3072^2 + 3 x 3072 x 8192 +
    // 6,144) = 3,624,075,264; + 2 x 32,064 x 3,072 = 197,001,216 + 3,072.
    {"phi3-mini",
     R"({"model_type":"phi3","hidden_size":3072,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,"intermediate_size":8192,"vocab_size":32064,"tie_word_embeddings":false})",
     3'821'079'552},
    // 48 x (attn 18,874,368 + q/k norms 256 + experts 128 x 3 x 2048 x 768 = 603,979,776 +
    // router 2048 x 128 = 262,144 + norms 4,096) = 29,909,790,720; + 2 x 151,936 x 2,048 =
    // 622,329,856 + 2,048.
    {"qwen3-30b-a3b",
     R"({"model_type":"qwen3_moe","hidden_size":2048,"num_hidden_layers":48,"num_attention_heads":32,"num_key_value_heads":4,"head_dim":128,"intermediate_size":6144,"moe_intermediate_size":768,"vocab_size":151936,"tie_word_embeddings":false,"num_experts_per_tok":8,"decoder_sparse_step":1,"mlp_only_layers":[],"num_experts":128})",
     30'532'122'624},
    {"qwen3-235b-a22b",
     R"({"model_type":"qwen3_moe","hidden_size":4096,"num_hidden_layers":94,"num_attention_heads":64,"num_key_value_heads":4,"head_dim":128,"intermediate_size":12288,"moe_intermediate_size":1536,"vocab_size":151936,"tie_word_embeddings":false,"num_experts_per_tok":8,"decoder_sparse_step":1,"mlp_only_layers":[],"num_experts":128})",
     235'093'634'560},
    // 32 x (attn 41,943,040 + 8 experts x 176,160,768 + router 32,768 + norms 8,192) =
    // 46,440,644,608; + 2 x 32,000 x 4,096 = 262,144,000 + 4,096.
    {"mixtral-8x7b",
     R"({"model_type":"mixtral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"tie_word_embeddings":false,"num_experts_per_tok":2,"num_local_experts":8})",
     46'702'792'704},
    // Per layer: attention q/k/v/o with biases 26,542,080 + 8,000, sinks 64; router 2880 x 32 + 32
    // = 92,192; 32 experts x (2880 x 5760 + 5760 + 2880 x 2880 + 2880 = 24,891,840) =
    // 796,538,880; norms 5,760 -> 823,186,976 x 24 = 19,756,487,424; + 2 x 201,088 x 2,880 =
    // 1,158,266,880 + 2,880.
    {"gpt-oss-20b",
     R"({"model_type":"gpt_oss","hidden_size":2880,"num_hidden_layers":24,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"intermediate_size":2880,"vocab_size":201088,"tie_word_embeddings":false,"num_experts_per_tok":4,"num_local_experts":32})",
     20'914'757'184},
    {"gpt-oss-120b",
     R"({"model_type":"gpt_oss","hidden_size":2880,"num_hidden_layers":36,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"intermediate_size":2880,"vocab_size":201088,"tie_word_embeddings":false,"num_experts_per_tok":4,"num_local_experts":128})",
     116'829'156'672},
};

/// The inline fields of one of kExact's models.
const char* fields_of(const std::string& id) {
  for (const Exact& model : kExact)
    if (id == model.id) return model.inline_fields;
  FAIL("no inline fields for " << id);
  return "";
}

}  // namespace

TEST_CASE("parameter counts match published exact counts to the parameter") {
  for (const Exact& model : kExact) {
    INFO(model.id);
    const ParamCount count = count_params(model_config(model.id, model.inline_fields));
    CHECK(count.total == model.total);
    // The reference's fields describe the same model as the fixture.
    CHECK(count_params(json::parse(model.inline_fields)).total == model.total);
  }
}

TEST_CASE("bf16 checkpoints hold 2 bytes per parameter: total_size / 2 is the count") {
  for (const char* id : {"llama3.1-8b", "llama3.1-70b", "qwen2.5-7b", "qwen2.5-72b", "qwen3-4b", "qwen3-8b",
                         "qwen3-14b", "qwen3-32b", "mixtral-8x7b"}) {
    INFO(id);
    const auto total_size = safetensors_total_size(id);
    if (!total_size) continue;  // the fixture has no index
    const auto document = read_json(fixture_dir(id) / "config.json");
    REQUIRE(document);
    CHECK(count_params(language_config(*document)).total * 2 == *total_size);
  }
  // Llama 3.1 70B: 141,107,412,992 / 2, no keras figure needed.
  if (const auto document = read_json(fixture_dir("llama3.1-70b") / "config.json"))
    CHECK(count_params(*document).total == 70'553'706'496);
}

TEST_CASE("gpt-oss: MXFP4 experts (17 bytes per 32 values) + bf16 rest is the checkpoint size") {
  const ParamCount count = count_params(json::parse(fields_of("gpt-oss-20b")));
  REQUIRE(count.total == 20'914'757'184);
  // Expert matrices: 24 layers x 32 experts x (2880 x 5760 + 2880 x 2880) = 19,110,297,600;
  // their biases stay bf16 with everything else.
  CHECK(count.expert == 19'110'297'600);
  // 19,110,297,600 / 32 x 17 = 10,152,345,600 + (20,914,757,184 - 19,110,297,600) x 2 =
  // 3,608,919,168 -> 13,761,264,768 = gpt-oss-20b's safetensors total_size.
  CHECK(count.expert / 32 * 17 + (count.total - count.expert) * 2 == 13'761'264'768);
  if (const auto total_size = safetensors_total_size("gpt-oss-20b")) CHECK(*total_size == 13'761'264'768);
}

TEST_CASE("MoE active parameters per token") {
  // Qwen3-30B-A3B ("3.3B activated"): total minus 48 layers x 120 idle experts x 4,718,592 =
  // 30,532,122,624 - 27,179,089,920.
  const ParamCount qwen = count_params(model_config("qwen3-30b-a3b", fields_of("qwen3-30b-a3b")));
  CHECK(qwen.active == 3'353'032'704);
  CHECK(qwen.expert == 48ull * 128 * 4'718'592);
  // Mixtral 8x7B ("12.9B active"): 46,702,792,704 - 32 x 6 x 176,160,768.
  CHECK(count_params(json::parse(fields_of("mixtral-8x7b"))).active == 12'879'925'248);
  // gpt-oss: OpenAI's active figures (5.13B, 3.61B) leave out the input embedding (a lookup);
  // kvplan's active includes it, as Qwen's and Mixtral's do.
  const ParamCount oss120 = count_params(json::parse(fields_of("gpt-oss-120b")));
  CHECK(oss120.active - oss120.embedding == 5'132'849'472);
  CHECK(within(oss120.active - oss120.embedding, 5.13e9, 0.001));
  const ParamCount oss20 = count_params(json::parse(fields_of("gpt-oss-20b")));
  CHECK(within(oss20.active - oss20.embedding, 3.61e9, 0.001));
}

TEST_CASE("DeepSeek-V3: MLA + DeepSeekMoE, 671B without its MTP layer, 37B active") {
  const ParamCount count = count_params(model_config("deepseek-v3", R"({"model_type":"deepseek_v3","hidden_size":7168,"num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"vocab_size":129280,"tie_word_embeddings":false,"num_experts_per_tok":8,"n_shared_experts":1,"first_k_dense_replace":3,"moe_layer_freq":1,"kv_lora_rank":512,"q_lora_rank":1536,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,"num_nextn_predict_layers":1,"n_routed_experts":256})"));
  // MLA per layer: q_a 7168 x 1536 + 1536 + q_b 1536 x 128 x 192 + kv_a 7168 x 576 + 512 +
  // kv_b 512 x 128 x 256 + o 16384 x 7168 = 187,107,328.
  // 3 dense layers: 187,107,328 + 3 x 7168 x 18432 + 14,336 = 583,483,392.
  // 58 MoE layers: 187,107,328 + 256 x 44,040,192 + shared 44,040,192 + router 256 x 7168 + 256
  // bias + 14,336 = 11,507,286,272.
  // 1,750,450,176 + 667,422,603,776 + 2 x 926,679,040 + 7,168 = 671,026,419,200.
  CHECK(count.total == 671'026'419'200);
  CHECK(within(count.total, 671e9, 0.005));
  // 37B activated: 671,026,419,200 - 58 x 248 x 44,040,192.
  CHECK(count.active == 37'552'297'472);
  CHECK(within(count.active, 37e9, 0.02));
  // MTP: one MoE layer 11,507,286,272 + enorm/hnorm/shared_head.norm 21,504 + eh_proj
  // 2 x 7168 x 7168 = 102,760,448 = 11,610,068,224 unique (README_WEIGHTS.md: "11.5B unique
  // parameters (excluding the shared 0.9B Embedding and 0.9B Output Head)") + the embedding and
  // head copies the checkpoint stores, 1,853,358,080. The hub's "685B" counts all of them.
  CHECK(count.mtp == 13'463'426'304);
  CHECK(within(count.mtp - 2 * count.embedding, 11.5e9, 0.01));
  CHECK(within(count.total + count.mtp, 685e9, 0.005));
  // Kept unquantized in the fp8 checkpoint (its tensor listing: bf16): the copies, eh_proj, the
  // router (256 x 7,168) and the vectors: the layer's two norms (2 x 7,168), q_a_layernorm
  // (1,536), kv_a_layernorm (512) and e_score_correction_bias (256), and enorm, hnorm and
  // shared_head.norm (3 x 7,168); of them eh_proj, a plain nn.Linear, whole on every rank.
  CHECK(count.mtp_unquantized == 1'853'358'080ull + 102'760'448 + 1'835'008 + 16'640 + 21'504);
  // The trunk's routers, bf16 as well: 58 MoE layers (first_k_dense_replace 3) x 256 x 7,168.
  CHECK(count.router == 106'430'464);
  CHECK(count.mtp_replicated == 102'760'448);
  CHECK_THAT(count.notes, Catch::Contains("11,610,068,224 unique parameters"));
  CHECK(count.lm_head == count.embedding);

  // DeepSeek-R1 has V3's architecture.
  if (const auto r1 = read_json(fixture_dir("deepseek-r1") / "config.json")) CHECK(count_params(*r1).total == count.total);
  // V3.2 adds the sparse-attention indexer to each of the 61 layers: wq_b 1536 x 64 x 128 +
  // wk 7168 x 128 + k_norm 256 + weights_proj 7168 x 64 = 13,959,424 -> + 851,524,864.
  if (const auto v32 = read_json(fixture_dir("deepseek-v3.2") / "config.json"))
    CHECK(count_params(*v32).total == 671'026'419'200 + 61ull * 13'959'424);
}

TEST_CASE("MLA with q_lora_rank null (DeepSeek-V2-Lite) and Kimi K2") {
  const ParamCount lite = count_params(model_config("deepseek-v2-lite", R"({"model_type":"deepseek_v2","hidden_size":2048,"num_hidden_layers":27,"num_attention_heads":16,"num_key_value_heads":16,"intermediate_size":10944,"moe_intermediate_size":1408,"vocab_size":102400,"num_experts_per_tok":6,"n_shared_experts":2,"first_k_dense_replace":1,"moe_layer_freq":1,"kv_lora_rank":512,"q_lora_rank":null,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,"n_routed_experts":64})"));
  // "15.7B total parameters, of which 2.4B are activated": attention q_proj 2048 x 16 x 192 +
  // kv_a 2048 x 576 + 512 + kv_b 512 x 16 x 256 + o 2048 x 2048 = 13,763,072; layer 0 dense
  // (81,007,104), 26 MoE layers of 64 experts + 2 shared (584,847,872 each, no correction bias
  // with topk_method greedy); + 2 x 102,400 x 2,048.
  CHECK(lite.total == 15'706'484'224);
  CHECK(within(lite.total, 15.7e9, 0.005));
  // DeepSeek's 2.4B leaves out the input embedding.
  CHECK(within(lite.active - lite.embedding, 2.4e9, 0.03));

  const ParamCount kimi = count_params(model_config("kimi-k2", R"({"model_type":"kimi_k2","hidden_size":7168,"num_hidden_layers":61,"num_attention_heads":64,"num_key_value_heads":64,"intermediate_size":18432,"moe_intermediate_size":2048,"vocab_size":163840,"tie_word_embeddings":false,"num_experts_per_tok":8,"n_shared_experts":1,"first_k_dense_replace":1,"moe_layer_freq":1,"kv_lora_rank":512,"q_lora_rank":1536,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,"num_nextn_predict_layers":0,"n_routed_experts":384})"));
  // "1T total / 32B active" are round figures: 1.026T and 32.86B.
  CHECK(kimi.total == 1'026'408'232'448);
  CHECK(within(kimi.active, 32e9, 0.03));
  CHECK(kimi.mtp == 0);
}

TEST_CASE("Gemma 3: keras-hub's text-only counts use a 262,144-token embedding, the HF checkpoint 262,208") {
  // keras-hub gemma3 presets: 4B text-only 3,880,099,328, 12B 11,765,788,416, 27B 27,009,002,240.
  // The Hugging Face checkpoints embed 64 more tokens (vocab_size 262,208): + 64 x hidden_size.
  // (keras's multimodal 4B figure 4,299,915,632 adds the SigLIP tower, 416,866,032, and the
  // projector 1152 x 2560 + 1152: the vision side is not counted here.)
  CHECK(count_params(model_config("gemma3-4b", R"({"model_type":"gemma3_text","hidden_size":2560,"num_hidden_layers":34,"num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,"intermediate_size":10240,"vocab_size":262208})")).total ==
        3'880'099'328 + 64 * 2560);
  CHECK(count_params(model_config("gemma3-12b", R"({"model_type":"gemma3_text","hidden_size":3840,"num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"intermediate_size":15360,"vocab_size":262208})")).total ==
        11'765'788'416 + 64 * 3840);
  // The official 27B config has no vocab_size: Gemma3TextConfig's default applies, with a note.
  const ParamCount g27 = count_params(json::parse(R"({"model_type":"gemma3_text","hidden_size":5376,"num_hidden_layers":62,"num_attention_heads":32,"num_key_value_heads":16,"head_dim":128,"intermediate_size":21504})"));
  CHECK(g27.total == 27'009'002'240 + 64 * 5376);
  CHECK(g27.lm_head == 0);
  CHECK_THAT(g27.notes, Catch::Contains("vocab_size absent") && Catch::Contains("tied"));
}

TEST_CASE("tie_word_embeddings: the model type's default when absent") {
  json gemma = json::parse(fields_of("gemma2-9b"));  // gemma2-9b, no tie_word_embeddings
  CHECK(count_params(gemma).lm_head == 0);
  gemma["tie_word_embeddings"] = false;
  CHECK(count_params(gemma).lm_head == 256'000ull * 3584);
  json llama = json::parse(fields_of("llama3.1-8b"));
  llama.erase("tie_word_embeddings");
  const ParamCount untied = count_params(llama);
  CHECK(untied.lm_head == untied.embedding);
  CHECK_THAT(untied.notes, Catch::Contains("llama defaults to untied"));
}

TEST_CASE("head_dim absent or null is hidden_size / heads, num_key_value_heads absent is heads") {
  json config = json::parse(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,"intermediate_size":128,"vocab_size":10,"head_dim":null})");
  // attention 4 x 64 x 64 = 16,384; mlp 3 x 64 x 128 = 24,576; norms 128; embedding + head 1,280;
  // final norm 64.
  CHECK(count_params(config).total == 16'384 + 24'576 + 128 + 1'280 + 64);
  config["attention_bias"] = true;  // q/k/v/o biases: 4 x 64
  config["mlp_bias"] = true;        // gate/up 2 x 128, down 64
  CHECK(count_params(config).total == 16'384 + 24'576 + 128 + 1'280 + 64 + 256 + 320);
}

TEST_CASE("Llama 4: interleaved MoE with a shared expert, dense layers of intermediate_size_mlp") {
  const char* maverick_fields = R"({"model_type":"llama4_text","hidden_size":5120,"num_hidden_layers":48,"num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"intermediate_size":8192,"intermediate_size_mlp":16384,"vocab_size":202048,"num_experts_per_tok":1,"interleave_moe_layer_step":2,"num_local_experts":128})";
  const ParamCount maverick = count_params(model_config("llama4-maverick", maverick_fields));
  // "400B total / 17B active" (the vision tower, ~0.9B, is outside the language model).
  CHECK(within(maverick.total, 400e9, 0.005));
  CHECK(within(maverick.active, 17e9, 0.02));
  const char* scout_fields = R"({"model_type":"llama4_text","hidden_size":5120,"num_hidden_layers":48,"num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"intermediate_size":8192,"intermediate_size_mlp":16384,"vocab_size":202048,"num_experts_per_tok":1,"interleave_moe_layer_step":1,"num_local_experts":16})";
  const ParamCount scout = count_params(model_config("llama4-scout", scout_fields));
  // "109B total" includes the vision encoder; the language model alone is 107.77B.
  CHECK(scout.total == 107'769'861'120);
  CHECK(within(scout.total, 109e9, 0.015));
  CHECK(within(scout.active, 17e9, 0.02));
}

TEST_CASE("Qwen3-Next: Gated DeltaNet and gated full attention, 512 experts + shared expert") {
  const ParamCount count = count_params(model_config("qwen3-next-80b-a3b", R"({"model_type":"qwen3_next","hidden_size":2048,"num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"intermediate_size":5120,"moe_intermediate_size":512,"shared_expert_intermediate_size":512,"vocab_size":151936,"tie_word_embeddings":false,"num_experts_per_tok":10,"decoder_sparse_step":1,"mlp_only_layers":[],"full_attention_interval":4,"linear_num_key_heads":16,"linear_num_value_heads":32,"linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4,"num_experts":512})"));
  // 12 full-attention layers: q_proj (query + gate) 2048 x 16 x 256 x 2 + k/v 2 x 2048 x 512 +
  // o 4096 x 2048 + q/k norms 512 = 27,263,488.
  // 36 Gated DeltaNet layers (key_dim 2048, value_dim 4096): in_proj_qkvz 2048 x 12288 +
  // in_proj_ba 2048 x 64 + conv1d 8192 x 4 + dt_bias/A_log 64 + norm 128 + out_proj 4096 x 2048
  // = 33,718,464.
  // 48 MoE blocks: 512 x 3 x 2048 x 512 + router 2048 x 512 + shared 3 x 2048 x 512 + gate 2048
  // = 1,614,809,088; norms 4,096 per layer.
  // 2 x 151,936 x 2,048 + 2,048 + 12 x 27,263,488 + 36 x 33,718,464 + 48 x 1,614,813,184.
  CHECK(count.total == 79'674'391'296);
  CHECK(within(count.total, 80e9, 0.005));
}

TEST_CASE("Nemotron-H: Mamba2, attention, relu^2 MLP and MoE blocks from hybrid_override_pattern") {
  const auto document = read_json(fixture_dir("nemotron3-nano") / "config.json");
  if (document) {
    const ParamCount nano = count_params(*document);
    // 23 Mamba2 blocks: in_proj 2688 x (4096 + 6144 + 64) + conv 6144 x 4 + 6144 bias +
    // dt_bias/A_log/D 192 + norm 4096 + out_proj 4096 x 2688 = 38,742,208.
    // 6 attention blocks: 2688 x 4096 + 2 x 2688 x 256 + 4096 x 2688 = 23,396,352.
    // 23 MoE blocks: 128 x 2 x 2688 x 1856 + router 2688 x 128 + 128 + shared 2 x 2688 x 3712 =
    // 1,297,465,472. One norm per block, final norm, embedding and head 2 x 131,072 x 2,688.
    CHECK(nano.total == 31'577'940'288);
    // NVIDIA: 31.6B total, 3.6B active including embeddings.
    CHECK(within(nano.active, 3.6e9, 0.01));
    // The same layout as a layers_block_type list gives the same count.
    json listed = *document;
    const std::string pattern = listed["hybrid_override_pattern"].get<std::string>();
    listed.erase("hybrid_override_pattern");
    json types = json::array();
    for (const char block : pattern) types.push_back(block == 'M' ? "mamba" : block == 'E' ? "moe" : block == '*' ? "attention" : "mlp");
    listed["layers_block_type"] = types;
    CHECK(count_params(listed).total == nano.total);
  }
  // Nemotron-H 56B (reference fields under their HF names when the fixture is missing): "56B".
  const ParamCount big = count_params(model_config("nemotron-h-56b", R"({"model_type":"nemotron_h","hidden_size":8192,"num_hidden_layers":118,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,"intermediate_size":32768,"vocab_size":131072,"tie_word_embeddings":false,"hybrid_override_pattern":"M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-","ssm_state_size":256,"mamba_num_heads":256,"mamba_head_dim":64,"n_groups":8,"conv_kernel":4})"));
  CHECK(big.total == 56'324'350'464);
  CHECK(within(big.total, 56e9, 0.01));
  CHECK(big.active == big.total);
}

TEST_CASE("official rounded totals of the other supported models") {
  struct Rounded {
    const char* id;
    double official;
  };
  // Figures from models.jsonl / SOURCES.md (model cards). Text-only counts, without MTP.
  for (const Rounded& model : {Rounded{"llama3.1-405b", 405e9}, Rounded{"llama3.2-1b", 1.23e9}, Rounded{"llama3.2-3b", 3.21e9},
                               Rounded{"qwen2.5-14b", 14.7e9}, Rounded{"mixtral-8x22b", 141e9}, Rounded{"glm4.5-air", 106e9},
                               Rounded{"qwen3.5-397b-a17b", 397e9}}) {
    INFO(model.id);
    const auto document = read_json(fixture_dir(model.id) / "config.json");
    if (!document) continue;
    CHECK(within(count_params(language_config(*document)).total, model.official, 0.01));
  }
}

TEST_CASE("errors name the field or the architecture") {
  json config = json::parse(fields_of("llama3.1-8b"));
  config.erase("intermediate_size");
  CHECK_THROWS_WITH(count_params(config), Catch::Contains("'intermediate_size'") && Catch::Contains("missing"));
  config = json::parse(fields_of("llama3.1-8b"));
  config["hidden_size"] = 4096.5;
  CHECK_THROWS_WITH(count_params(config), Catch::Contains("'hidden_size'"));
  config["hidden_size"] = 0;
  CHECK_THROWS_WITH(count_params(config), Catch::Contains("'hidden_size'"));

  config = json::parse(fields_of("llama3.1-8b"));
  config["model_type"] = "futurenet";
  try {
    count_params(config);
    FAIL("no error");
  } catch (const kvplan::Error& e) {
    CHECK(e.code() == kvplan::ExitCode::unsupported_architecture);
    CHECK_THAT(e.what(), Catch::Contains("model_type = futurenet"));
  }
  config.erase("model_type");
  CHECK_THROWS_WITH(count_params(config), Catch::Contains("'model_type'"));

  json nemotron = json::parse(R"({"model_type":"nemotron_h","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"hybrid_override_pattern":"M?"})");
  CHECK_THROWS_WITH(count_params(nemotron), Catch::Contains("hybrid_override_pattern[1] = ?"));
  nemotron["hybrid_override_pattern"] = "M";
  CHECK_THROWS_WITH(count_params(nemotron), Catch::Contains("has 1 characters for 2 layers"));
  nemotron.erase("hybrid_override_pattern");
  nemotron["layers_block_type"] = {"mamba", "ssm"};
  CHECK_THROWS_WITH(count_params(nemotron), Catch::Contains("layers_block_type[1] = ssm"));
  // The nemotron-h-8b fixture is trimmed: its MLP size is not there.
  if (const auto trimmed = read_json(fixture_dir("nemotron-h-8b") / "config.json"); trimmed && !trimmed->contains("intermediate_size"))
    CHECK_THROWS_WITH(count_params(*trimmed), Catch::Contains("'intermediate_size'"));

  json moe = json::parse(fields_of("mixtral-8x7b"));  // mixtral
  moe["num_experts_per_tok"] = 9;
  CHECK_THROWS_WITH(count_params(moe), Catch::Contains("num_experts_per_tok"));
  moe["num_experts_per_tok"] = 2;
  moe["hidden_size"] = 1ull << 40;
  moe["vocab_size"] = 1ull << 40;
  // Products past 2^64 are errors naming what overflowed, never wraps.
  CHECK_THROWS_WITH(count_params(moe), Catch::Contains("embedding overflows 64 bits"));
}

// The 2026 architectures, counted layer by layer from their fixtures; the arithmetic is in the
// comments. Official figures are rounded (and some include vision/audio towers or MTP layers,
// which the count leaves out), so they are checked loosely where given.

TEST_CASE("Gemma 4 31B: 512-wide K=V global layers beside 256-wide sliding ones") {
  const auto document = read_json(fixture_dir("gemma4-31b") / "config.json");
  REQUIRE(document);
  const ParamCount count = count_params(language_config(*document));
  // Sliding (50): q 5376x8192 + k, v 5376x4096 each + o 8192x5376 = 132,120,576 + q/k norms 512;
  // global (10): q 5376x16384 + k 5376x2048 (no v_proj: K=V) + o 16384x5376 = 187,170,816 + 1,024;
  // every layer MLP 3 x 5376 x 21504 = 346,816,512 + 4 norms 21,504.
  // 50 x 478,959,104 + 10 x 534,009,856 = 29,288,053,760; + tied embedding 262,144 x 5,376 =
  // 1,409,286,144 + final norm 5,376.
  CHECK(count.total == 30'697'345'280ull);
  CHECK(count.lm_head == 0);
  CHECK(within(count.total, 31e9, 0.02));  // keras-hub: 31B (with its vision tower)
}

TEST_CASE("Gemma 4 26B-A4B: a dense MLP and a 128-expert MoE block side by side") {
  const auto document = read_json(fixture_dir("gemma4-26b-a4b") / "config.json");
  REQUIRE(document);
  const ParamCount count = count_params(language_config(*document));
  // Sliding (25): attention 34,603,008 + norms 512; global (5): 49,020,928 + 1,024.
  // Every layer: MLP 3 x 2816 x 2112 = 17,842,176; experts 128 x 3 x 2816 x 704 = 761,266,176;
  // router 2816 x 128 + scale 2,816 + per-expert scale 128 = 363,392; 7 norms 19,712.
  // 25 x 814,094,976 + 5 x 828,513,408 = 24,494,941,440; + embedding 738,197,504 + 2,816.
  CHECK(count.total == 25'233'141'760ull);
  // Inactive: 30 x 120 experts x 5,947,392 = 21,410,611,200.
  CHECK(count.active == count.total - 21'410'611'200ull);
  CHECK(within(count.active, 4e9, 0.05));  // keras-hub: 4B active
}

TEST_CASE("Gemma 4 E2B and Gemma 3n E2B: per-layer embeddings and KV-shared layers") {
  const auto e2b = read_json(fixture_dir("gemma4-e2b") / "config.json");
  REQUIRE(e2b);
  // Own-KV sliding (12): q 1536x2048 + k, v 1536x256 + o 2048x1536 + norms 512 = 7,078,400;
  // own-KV global (3): q 1536x4096 + k, v 1536x512 + o 4096x1536 + norms 1,024 = 14,156,800;
  // shared sliding (16): q + o + q_norm = 6,291,712; shared global (4): 12,583,424.
  // MLP 3 x 1536 x 6144 = 28,311,552, doubled in the 20 shared layers (use_double_wide_mlp);
  // 4 norms 6,144; per-layer input gate + projection 2 x 1536 x 256 + norm 1,536 = 787,968.
  // Layers 1,863,341,568; embedding 262,144 x 1,536 = 402,653,184; per-layer embedding table
  // 262,144 x (35 x 256) = 2,348,810,240, its projection 1536 x 8960 = 13,762,560, norm 256;
  // final norm 1,536.
  const ParamCount gemma4 = count_params(language_config(*e2b));
  CHECK(gemma4.total == 4'628'569'344ull);
  // keras-hub: 2.3B effective = without the per-layer embedding table.
  CHECK(within(gemma4.total - 2'348'810'240ull, 2.3e9, 0.01));

  const auto gemma3n = read_json(fixture_dir("gemma3n-e2b") / "config.json");
  REQUIRE(gemma3n);
  // 30 layers: attention 4,194,304 x 2 + 1,048,576 x 2 + norms 512 = 10,486,272; MLP
  // 3 x 2048 x 8192 = 50,331,648; 4 norms 8,192; AltUp 2048 + 16 + 64 + 8192 + 2048 = 12,368;
  // LAuReL 2 x 2048 x 64 + 2048 = 264,192; per-layer input 1,050,624 -> 62,153,296 x 30 =
  // 1,864,598,880. Embedding 262,400 x 2,048 = 537,395,200; per-layer table 262,144 x 7,680 =
  // 2,013,265,920, projection 15,728,640, norm 256; AltUp projections 6 x 2048^2 = 25,165,824;
  // final norm 2,048.
  CHECK(count_params(language_config(*gemma3n)).total == 4'456'156'768ull);
}

TEST_CASE("GLM-5.x: DeepSeek MLA + DSA indexer, GLM-5.2's shared indexer layers carry none") {
  const auto glm51 = read_json(fixture_dir("glm-5.1") / "config.json");
  const auto glm52 = read_json(fixture_dir("glm-5.2") / "config.json");
  const auto glm5 = read_json(fixture_dir("glm-5") / "config.json");
  REQUIRE(glm51);
  REQUIRE(glm52);
  REQUIRE(glm5);
  const ParamCount full = count_params(*glm51);
  const ParamCount shared = count_params(*glm52);
  // One indexer: wq_b 2048 x 32 x 128 = 8,388,608 + wk 6144 x 128 = 786,432 + k_norm 256 +
  // weights_proj 6144 x 32 = 196,608 -> 9,371,904. GLM-5.2 has it on 21 of 78 layers:
  // 57 x 9,371,904 = 534,198,528 fewer.
  CHECK(full.total - shared.total == 534'198'528ull);
  CHECK(within(full.total, 744e9, 0.002));  // GLM-5: 744B total
  CHECK(within(full.active, 40e9, 0.05));   // 40B active
  // The trimmed GLM-5 copy has no indexer fields: GlmMoeDsaConfig's defaults give the same count.
  const ParamCount trimmed = count_params(*glm5);
  CHECK(trimmed.total == full.total);
  CHECK_THAT(trimmed.notes, Catch::Contains("index_n_heads absent"));
  // Its MTP layer stores no copy of the embedding or head: GLM-5.1's tensor listing (a public
  // model report) counts 753,864,139,008 parameters with it.
  CHECK(full.total + full.mtp == 753'864'139'008ull);
}

TEST_CASE("LFM2: short-convolution and attention layers, LFM2-MoE experts") {
  const auto small = read_json(fixture_dir("lfm2-350m") / "config.json");
  const auto moe = read_json(fixture_dir("lfm2-8b-a1b") / "config.json");
  REQUIRE(small);
  REQUIRE(moe);
  // LFM2-350M: MLP width 6656 -> int(2 x 6656 / 3) = 4437 -> rounded up to 256: 4608.
  // 6 attention layers: qkv 1024 x 2048 + out 1024^2 + q/k norms 128 = 3,145,856;
  // 10 conv layers: in_proj 1024 x 3072 + conv 1024 x 3 + out 1024^2 = 4,197,376;
  // 16 x (MLP 3 x 1024 x 4608 = 14,155,776 + 2 norms 2,048); tied embedding 65,536 x 1,024 =
  // 67,108,864; final norm 1,024.
  CHECK(count_params(*small).total == 354'483'968ull);
  // LFM2-8B-A1B: 6 attention x 10,485,888 + 18 conv x 16,783,360 = 365,015,808; 2 dense MLPs
  // 3 x 2048 x 7168 = 88,080,384; 22 MoE layers x (32 x 3 x 2048 x 1792 = 352,321,536 + gate
  // 65,536 + expert bias 32); 24 x 2 norms 98,304; embedding 134,217,728; final norm 2,048.
  const ParamCount count = count_params(*moe);
  CHECK(count.total == 8'339'930'560ull);
  // 28 of 32 experts idle per token: 22 x 28 x 11,010,048 = 6,782,189,568.
  CHECK(count.active == count.total - 6'782'189'568ull);
  CHECK(within(count.total, 8.3e9, 0.01));  // LiquidAI: 8.3B total, 1.5B active
  CHECK(within(count.active, 1.5e9, 0.04));
}

TEST_CASE("MiniMax-M2.7, MiMo-V2-Flash and Kimi Linear: the 2026 MoE layouts") {
  const auto minimax = read_json(fixture_dir("minimax-m2.7") / "config.json");
  const auto mimo = read_json(fixture_dir("mimo-v2-flash") / "config.json");
  const auto kimi = read_json(fixture_dir("kimi-linear-48b-a3b") / "config.json");
  REQUIRE(minimax);
  REQUIRE(mimo);
  REQUIRE(kimi);
  // MiniMax-M2.7, 62 layers: qkv 3072 x 8192 + o 6144 x 3072 + q_norm 6,144 + k_norm 1,024 =
  // 44,047,360; 256 experts x 3 x 3072 x 1536 = 3,623,878,656; gate 786,432 + routing bias 256;
  // norms 6,144 -> 3,668,718,848 x 62 = 227,460,568,576; + 2 x 200,064 x 3,072 = 1,229,193,216
  // + 3,072.
  CHECK(count_params(*minimax).total == 228'689'764'864ull);
  // MiMo-V2-Flash: 9 full layers qkv 4096 x (64x192 + 4x192 + 4x128) + o 64x128x4096 =
  // 89,128,960; 39 sliding qkv 4096 x (64x192 + 8x192 + 8x128) + o + 64 sink biases =
  // 94,371,904; 47 MoE layers 256 x 3 x 4096 x 2048 + gate 1,048,576 + bias 256 =
  // 6,443,499,776; 1 dense MLP 3 x 4096 x 16384 = 201,326,592; norms 393,216; embedding and head
  // 2 x 152,576 x 4,096 = 1,249,902,592; final norm 4,096.
  const ParamCount flash = count_params(*mimo);
  CHECK(flash.total == 308'778'780'864ull);
  CHECK(within(flash.total, 309e9, 0.005));  // Xiaomi: 309B total, 15B active
  CHECK(within(flash.active, 15e9, 0.04));
  // Kimi Linear: 20 KDA layers (q/k/v/o 4 x 2304 x 4096, f/g low-rank 2 x (2304x128 + 128x4096),
  // dt_bias 4096, b_proj 2304x32, convs 3 x 4096 x 4, A_log 32, o_norm 128 = 39,514,272) and 7
  // MLA layers (q_proj 2304 x 32 x 192 + kv_a 2304 x 576 + kv_a_norm 512 + kv_b 512 x 32 x 256 +
  // o 4096 x 2304 = 29,114,880); layer 0 a dense MLP 3 x 2304 x 9216 = 63,700,992, 26 MoE layers
  // 256 x 3 x 2304 x 1024 + gate 589,824 + bias 256 + shared expert 3 x 2304 x 1024 =
  // 1,819,607,296; 27 x 2 norms 124,416; embedding and head 2 x 163,840 x 2,304 = 754,974,720;
  // final norm 2,304.
  const ParamCount linear = count_params(*kimi);
  CHECK(linear.total == 49'122'681'728ull);
  CHECK(within(linear.total, 49e9, 0.01));  // "48B" without the 0.75B embedding and head
  CHECK(within(linear.active, 3e9, 0.17));
}

TEST_CASE("Ministral 3 3B: Mistral shapes under its own model_type") {
  const auto document = read_json(fixture_dir("ministral3-3b") / "config.json");
  REQUIRE(document);
  // 26 x (q 3072 x 4096 + k/v 2 x 3072 x 1024 + o 4096 x 3072 = 31,457,280 + MLP 3 x 3072 x 9216 =
  // 84,934,656 + norms 6,144) = 3,026,350,080; tied embedding 131,072 x 3,072 = 402,653,184; 3,072.
  // Mistral: "~3.8B including a ~0.4B vision encoder".
  CHECK(count_params(language_config(*document)).total == 3'429'006'336ull);
}

TEST_CASE("Kimi K3: full-rank KDA gate, MLA output gate, latent MoE and attention residuals") {
  const auto document = read_json(fixture_dir("kimi-k3") / "config.json");
  REQUIRE(document);
  // H 7,168; KDA P = 96 x 128 = 12,288; MLA 96 heads, q_lora 1,536, kv_lora 512, nope 128, rope 64, v 128.
  // 69 KDA layers: q/k/v/o 4 x 7168 x 12288 + f_a 7168 x 128 + f_b 128 x 12288 + full-rank gate
  // 12288 x 7168 + dt_bias 12,288 + b_proj 7168 x 96 + convs 3 x 12288 x 4 + A_log 96 + o_norm 128
  // = 443,740,384. 24 MLA layers: q_a 7168 x 1536 + 1,536 + q_b 1536 x 96 x 192 + kv_a 7168 x 576
  // + 512 + kv_b 512 x 96 x 256 + o 12288 x 7168 + output gate 12288 x 7168 = 232,196,096.
  // Every layer: 2 norms + 4 residual vectors = 6 x 7,168. Layer 0: dense 3 x 7168 x 33792.
  // 92 MoE layers: 896 experts x 3 x 3584 x 3072 (latent width) = 29,595,009,024 + router
  // 7168 x 896 + 896 + shared 3 x 7168 x 6144 + latent down/up 2 x 7168 x 3584 + norm 3,584 =
  // 189,927,808. Embedding and head 2 x 163,840 x 7,168, final norm, 2 residual vectors 2 x 7,168.
  const ParamCount k3 = count_params(language_config(*document));
  CHECK(k3.total == 2'779'484'476'000ull);
  // Hugging Face lists 2779.9B with the vision tower (not counted here); Moonshot: "2.8T".
  CHECK(within(k3.total, 2.7799e12, 0.0002));
  // Active: 16 of 896 experts; third parties quote 104B without the input embedding (1.17B).
  CHECK(k3.active == 105'364'017'760ull);
  CHECK(within(k3.active - 163'840ull * 7'168, 104e9, 0.005));
}

TEST_CASE("Granite 4.0-H-Small: Mamba2 and attention layers, each with 72 experts and a shared MLP") {
  const auto document = read_json(fixture_dir("granite-4.0-h-small") / "config.json");
  REQUIRE(document);
  // 36 Mamba2 layers (d_inner 2 x 4096 = 8192, 128 heads, 1 group, state 128): in_proj
  // 4096 x (8192 + 8448 + 128) + conv 8448 x 4 + bias 8,448 + dt_bias/A_log/D 384 + norm 8,192 +
  // out_proj 8192 x 4096 = 102,323,584. 4 attention layers (head dim 128): 4096 x 4096 +
  // 2 x 4096 x 1024 + 4096 x 4096 = 41,943,040. Every layer: 72 experts x 3 x 4096 x 768 =
  // 679,477,248 + router 4096 x 72 + shared 3 x 4096 x 1536 = 698,646,528, 2 norms 8,192.
  // Tied embedding 100,352 x 4,096, final norm 4,096.
  const ParamCount small = count_params(*document);
  CHECK(small.total == 32'207'337'984ull);
  // x 2 B = 64,414,675,968 B = 59.99 GiB, what a listing of the repository's safetensors gives; IBM: 32B / 9B active.
  CHECK(small.total * 2 == 64'414'675'968ull);
  CHECK(within(small.active, 9e9, 0.03));
  // A dense Granite 4.0-H (num_local_experts 0) keeps the shared MLP alone.
  json dense = *document;
  dense["num_local_experts"] = 0;
  CHECK(count_params(dense).total == small.total - 40ull * (72 * 3 * 4096 * 768 + 4096 * 72));
  dense["layer_types"][0] = "linear_attention";
  CHECK_THROWS_AS(count_params(dense), kvplan::Error);
}

TEST_CASE("Nemotron 3 Ultra: layers_block_type without num_hidden_layers, latent MoE") {
  const auto document = read_json(fixture_dir("nemotron3-ultra") / "config.json");
  REQUIRE(document);
  // 48 Mamba2 blocks (256 heads x 64 = 16,384, 8 groups, state 128): in_proj 8192 x (16384 +
  // 18432 + 256) + conv 18432 x 4 + bias 18,432 + 768 + norm 16,384 + out_proj 16384 x 8192 =
  // 421,599,488. 12 attention blocks: 8192 x 8192 + 2 x 8192 x 256 + 8192 x 8192 = 138,412,032.
  // 48 MoE blocks: 512 experts x 2 x 2048 x 5120 (relu^2 in the 2,048-wide latent) =
  // 10,737,418,240 + router 8192 x 512 + 512 + shared 2 x 8192 x 10240 + latent 2 x 8192 x 2048 =
  // 10,943,463,936. One norm per block, final norm, embedding and head 2 x 131,072 x 8,192.
  const ParamCount ultra = count_params(*document);
  CHECK(ultra.total == 549'308'993'536ull);
  CHECK(within(ultra.total, 550e9, 0.002));  // NVIDIA: 550B total, 55B active
  CHECK(within(ultra.active, 55e9, 0.02));
}

TEST_CASE("recorded matrix shapes add up to what each layer's counts say it quantizes") {
  // The rules take a layer's shapes only when they add up exactly (quantized_share); a family
  // whose shapes drifted from its counts would silently lose its exact scales. Every fixture whose
  // layers record attention or MLP shapes (not only routed experts, which every family records)
  // must add up: the dense decoders, the Qwen, DeepSeek and MiniMax families. Qwen's Gated
  // DeltaNet layers record none of their own and are left out.
  std::size_t layers_checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(KVPLAN_SOURCE_DIR) / "tests/fixtures/hf")) {
    const auto document = read_json(entry.path() / "config.json");
    if (!document) continue;
    ParamCount count;
    try {
      count = count_params(language_config(*document));
    } catch (const kvplan::Error&) {
      continue;  // a family that counts no parameters, or a wrapper whose model the loader unwraps
    }
    std::vector<kvplan::LayerCount> layers = count.layers;
    if (count.mtp_layer) layers.push_back(*count.mtp_layer);
    for (const kvplan::LayerCount& layer : layers) {
      const bool beyond_experts = std::any_of(layer.shapes.begin(), layer.shapes.end(), [](const kvplan::MatrixShape& shape) {
        return shape.block != kvplan::Block::experts && shape.block != kvplan::Block::shared;
      });
      if (!beyond_experts || layer.linear_attn) continue;
      std::uint64_t sum = 0;
      for (const kvplan::MatrixShape& shape : layer.shapes) sum += shape.rows * shape.cols * shape.copies;
      INFO(entry.path().filename().string());
      CHECK(sum == layer.params - layer.router - layer.vectors - layer.unquantized);
      ++layers_checked;
    }
  }
  CHECK(layers_checked > 1'000);  // the fixtures hold thousands of such layers: if this drops, the loop broke
}
