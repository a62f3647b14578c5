// --model builds a plain catalog model from the fields the build read out of its models/<id>.json
// (cmake/EmbedFiles.cmake, loaders/model_facts): each such model must be exactly the one the JSON
// parser reads from the same file, every field, or a plan by catalog id would differ from one by
// the file's path.

#include <catch2/catch.hpp>

#include <string>

#include "kvplan/catalog.h"
#include "loaders/embedded_files.h"
#include "loaders/model_facts.h"
#include "loaders/spec_json.h"

namespace {

void check_same(const kvplan::ModelSpec& built, const kvplan::ModelSpec& parsed) {
  INFO(parsed.id);
  CHECK(built.id == parsed.id);
  CHECK(built.name == parsed.name);
  CHECK(built.aliases == parsed.aliases);
  CHECK(built.source == parsed.source);
  CHECK(built.architecture == parsed.architecture);
  CHECK(built.attention_heads == parsed.attention_heads);
  CHECK(built.params == parsed.params);
  CHECK(built.active_params == parsed.active_params);
  CHECK(built.weight_dtype == parsed.weight_dtype);  // the same Dtype object
  CHECK(built.weights_bytes == parsed.weights_bytes);
  CHECK(built.parts.size() == parsed.parts.size());
  CHECK(built.weights_source == parsed.weights_source);
  CHECK(built.params_source == parsed.params_source);
  CHECK(built.layer_weights_bytes == parsed.layer_weights_bytes);
  CHECK(built.mtp_layers == parsed.mtp_layers);
  CHECK(built.mtp_weights_bytes == parsed.mtp_weights_bytes);
  CHECK(built.mtp_replicated_bytes == parsed.mtp_replicated_bytes);
  CHECK(built.max_context == parsed.max_context);
  CHECK(built.vocab_size == parsed.vocab_size);
  CHECK(built.hidden_size == parsed.hidden_size);
  CHECK(built.intermediate_size == parsed.intermediate_size);
  CHECK(built.embedding_params == parsed.embedding_params);
  CHECK(built.lm_head_params == parsed.lm_head_params);
  CHECK(built.file == parsed.file);
  CHECK(built.routed_experts == parsed.routed_experts);
  CHECK(built.rope.has_value() == parsed.rope.has_value());
  if (built.rope && parsed.rope) {
    CHECK(built.rope->type == parsed.rope->type);
    CHECK(built.rope->factor_millionths == parsed.rope->factor_millionths);
    CHECK(built.rope->original_positions == parsed.rope->original_positions);
    CHECK(built.rope->rotary_dim == parsed.rope->rotary_dim);
    CHECK(built.rope->local == parsed.rope->local);
  }
  REQUIRE(built.layers.size() == parsed.layers.size());
  for (std::size_t i = 0; i < built.layers.size(); ++i) {
    const kvplan::LayerSpec& a = built.layers[i];
    const kvplan::LayerSpec& b = parsed.layers[i];
    INFO("layer " << i);
    CHECK(a.kind == b.kind);
    CHECK(a.kv_heads == b.kv_heads);
    CHECK(a.k_head_dim == b.k_head_dim);
    CHECK(a.v_head_dim == b.v_head_dim);
    CHECK(a.mla_rope_dim == b.mla_rope_dim);
    CHECK(a.index_head_dim == b.index_head_dim);
    CHECK(a.window == b.window);
    CHECK(a.state.empty());
    CHECK(b.state.empty());
  }
}

std::size_t index_of(std::string_view name) {
  const auto files = kvplan::embedded::model_files();
  for (std::size_t i = 0; i < files.size(); ++i)
    if (files[i].name == name) return i;
  FAIL("no embedded file " << name);
  return 0;
}

}  // namespace

TEST_CASE("every catalog model with facts is the parser's model of its file", "[catalog][fastpath]") {
  const auto files = kvplan::embedded::model_files();
  const auto facts = kvplan::embedded::model_facts();
  REQUIRE(facts.size() == files.size());
  std::size_t with_facts = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    INFO(files[i].name);
    const std::optional<kvplan::ModelSpec> built = kvplan::model_from_facts(facts[i]);
    CHECK(built.has_value() == facts[i].present);  // no catalog file is refused
    if (!built) continue;
    ++with_facts;
    check_same(*built, kvplan::parse_model_spec(files[i].text, files[i].name));
  }
  // 102 of the 144 files when this was written: 80 dense models and 22 with layer_types of full,
  // sliding, chunked, none or shared layers (a Python count of the files whose keys are all ones
  // ModelFacts carries, kv_heads and head_dim given); 99 since the multimodal entries state their
  // vision_encoder, a nested block the facts do not carry (Llama 4 Scout and Maverick are parsed).
  CHECK(with_facts >= 99);
}

TEST_CASE("a plain model has facts, one with fields they do not carry is parsed", "[catalog][fastpath]") {
  const auto facts = kvplan::embedded::model_facts();
  // models/llama3.1-8b.json: 32 layers, 32 heads, 8 KV heads of 128, vocab 128256 x hidden 4096,
  // untied: embedding and output head 128256 x 4096 = 525,336,576 parameters each.
  const kvplan::embedded::ModelFacts& llama = facts[index_of("models/llama3.1-8b.json")];
  REQUIRE(llama.present);
  const std::optional<kvplan::ModelSpec> spec = kvplan::model_from_facts(llama);
  REQUIRE(spec);
  CHECK(spec->id == "llama3.1-8b");
  CHECK(spec->aliases.size() == 5);
  CHECK(spec->aliases.back() == "meta-llama/Meta-Llama-3.1-8B-Instruct");
  CHECK(spec->params == 8030261248ULL);
  CHECK(*spec->weights_bytes == 16060522496ULL);
  CHECK(spec->layers.size() == 32);
  CHECK(spec->layers.front().kv_heads == 8);
  CHECK(spec->layers.front().k_head_dim == 128);
  CHECK(spec->embedding_params == 525336576ULL);
  CHECK(spec->lm_head_params == 525336576ULL);
  // DeepSeek-V3 has an mla block: the facts do not carry it, the file is parsed.
  CHECK_FALSE(facts[index_of("models/deepseek-v3.json")].present);
}

TEST_CASE("a model with layer_types is built from its facts, window by layer", "[catalog][fastpath]") {
  // models/gemma3-27b.json: 62 layers listed in layer_types, five sliding then one full, repeated
  // (indices 5, 11, ..., 59 full: 10 full, 52 sliding), sliding_window 1024, 16 KV heads of 128.
  const kvplan::embedded::ModelFacts& gemma = kvplan::embedded::model_facts()[index_of("models/gemma3-27b.json")];
  REQUIRE(gemma.present);
  const std::optional<kvplan::ModelSpec> spec = kvplan::model_from_facts(gemma);
  REQUIRE(spec);
  REQUIRE(spec->layers.size() == 62);
  std::size_t sliding = 0;
  for (const kvplan::LayerSpec& layer : spec->layers) {
    CHECK(layer.kv_heads == 16);
    CHECK(layer.k_head_dim == 128);
    CHECK(layer.v_head_dim == 128);
    if (layer.kind == kvplan::LayerKind::sliding) {
      ++sliding;
      CHECK(layer.window == 1024);
    } else {
      CHECK(layer.kind == kvplan::LayerKind::full);
      CHECK(layer.window == 0);
    }
  }
  CHECK(sliding == 52);
  CHECK(spec->layers[5].kind == kvplan::LayerKind::full);
  CHECK(spec->layers[6].kind == kvplan::LayerKind::sliding);
  CHECK(spec->layers[61].kind == kvplan::LayerKind::sliding);
}

TEST_CASE("a catalog id is found through its facts, an alias through the scan", "[catalog][fastpath]") {
  // Both ways end in the same model: the id by its file's facts, the alias (another file name) by
  // scanning the files that hold it as a JSON string.
  const std::optional<kvplan::ModelSpec> by_id = kvplan::find_builtin_model("LLAMA3.1-8B");
  const std::optional<kvplan::ModelSpec> by_alias = kvplan::find_builtin_model("meta-llama/Llama-3.1-8B-Instruct");
  REQUIRE(by_id);
  REQUIRE(by_alias);
  check_same(*by_id, *by_alias);
  CHECK(by_id->id == "llama3.1-8b");
  CHECK_FALSE(kvplan::find_builtin_model("llama3.1-8b-nonexistent"));
}
