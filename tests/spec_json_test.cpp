#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/plan.h"
#include "kvplan/catalog.h"
#include "kvplan/error.h"
#include "kvplan/model_loader.h"
#include "loaders/spec_json.h"

using namespace kvplan;

namespace {

constexpr std::string_view kLlama8B = R"({
  "name": "Llama 3.1 8B", "params": 8030261248, "weight_dtype": "bf16",
  "layers": 32, "attention_heads": 32, "kv_heads": 8, "head_dim": 128
})";

/// kLlama8B with one field replaced (or added), as text.
std::string with_field(const std::string& key, const nlohmann::json& value) {
  nlohmann::json document = nlohmann::json::parse(kLlama8B);
  if (value.is_discarded()) document.erase(key);
  else document[key] = value;
  return document.dump();
}

std::string error_of(std::string_view text) {
  try {
    parse_model_spec(text, "my-model.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a minimal spec gives one full-attention layer per layer") {
  const ModelSpec spec = parse_model_spec(kLlama8B, "my-model.json");
  CHECK(spec.id == "my-model.json");
  REQUIRE(spec.layers.size() == 32);
  CHECK(spec.layers[31].kind == LayerKind::full);
  CHECK(spec.layers[0].kv_heads == 8);
  CHECK(spec.layers[0].k_head_dim == 128);
  CHECK(spec.layers[0].v_head_dim == 128);
  CHECK(describe_layers(spec) == "32 full");
}

TEST_CASE("head_dim defaults to hidden_size / heads and kv_heads to heads") {
  nlohmann::json document = nlohmann::json::parse(kLlama8B);
  document.erase("head_dim");
  document.erase("kv_heads");
  document["hidden_size"] = 4096;
  const ModelSpec spec = parse_model_spec(document.dump(), "x.json");
  CHECK(spec.layers[0].k_head_dim == 128);
  CHECK(spec.layers[0].kv_heads == 32);
}

TEST_CASE("layer patterns, windows and MLA") {
  const ModelSpec gemma = parse_model_spec(
      R"({"name":"g","params":1,"weight_dtype":"bf16","layers":12,"attention_heads":32,"kv_heads":16,"head_dim":128,
          "sliding_window":1024,"layer_pattern":["sliding","sliding","sliding","sliding","sliding","full"]})",
      "g.json");
  CHECK(describe_layers(gemma) == "10 sliding(1024) + 2 full");
  CHECK(gemma.layers[5].kind == LayerKind::full);
  CHECK(gemma.layers[6].window == 1024);

  const ModelSpec mla = parse_model_spec(
      R"({"name":"d","params":1,"weight_dtype":"bf16","layers":3,"attention_heads":128,
          "mla":{"kv_lora_rank":512,"qk_rope_head_dim":64}})",
      "d.json");
  CHECK(mla.layers[0].kind == LayerKind::mla);
  CHECK(mla.layers[0].elements_per_token() == 576);
}

TEST_CASE("every bad spec is one clear error naming the field") {
  CHECK(error_of(R"({"name": "x", "layers": 32,)") .find("my-model.json:1:") == 0);
  CHECK(error_of("{\n  \"name\": \"x\",\n  \"layers\": 3x\n}").find("my-model.json:3:") == 0);
  CHECK(error_of("") .find("my-model.json:1:1: invalid JSON") == 0);
  CHECK(error_of("[1,2]").find("expected a JSON object") != std::string::npos);
  CHECK(error_of(with_field("layers", nlohmann::json::value_t::discarded)) == "my-model.json: field 'layers': is missing");
  CHECK(error_of(with_field("layers", 0)) == "my-model.json: field 'layers': must be at least 1");
  CHECK(error_of(with_field("layers", -3)) == "my-model.json: field 'layers': expected a whole number of at least 0, got a negative number");
  CHECK(error_of(with_field("layers", 3.5)) == "my-model.json: field 'layers': expected a whole number of at least 0, got a fractional number");
  CHECK(error_of(with_field("layers", "32")) == "my-model.json: field 'layers': expected a whole number of at least 0, got string");
  CHECK(error_of(with_field("kv_heads", 0)) == "my-model.json: field 'kv_heads': must be at least 1");
  CHECK(error_of(with_field("kv_heads", 5)) == "my-model.json: layer 0: attention_heads (32) is not divisible by kv_heads (5)");
  CHECK(error_of(with_field("weight_dtype", "bf17")).find("unknown weight dtype 'bf17' (did you mean: bf16") == 0);
  CHECK(error_of(with_field("head_dimm", 128)) == "my-model.json: unknown field 'head_dimm'");
  CHECK(error_of(with_field("params", 0)) .find("my-model.json: field 'params'") == 0);
  CHECK(error_of(R"({"name":"x","params":1,"weight_dtype":"bf16","layers":1,"attention_heads":1,"head_dim":1e400})") ==
        "my-model.json: invalid JSON: number overflow parsing '1e400'");
  CHECK(error_of(std::string(300, '[') + std::string(300, ']')).find("nested deeper than 256") != std::string::npos);
}

TEST_CASE("vocab_size is optional, read, and written only when known") {
  const ModelSpec without = parse_model_spec(kLlama8B, "my-model.json");
  CHECK(without.vocab_size == 0);  // unknown
  CHECK_FALSE(to_spec_json(without).contains("vocab_size"));
  CHECK(model_spec_from_json(to_spec_json(without), "again").vocab_size == 0);

  const ModelSpec with = parse_model_spec(with_field("vocab_size", 128'256), "my-model.json");
  CHECK(with.vocab_size == 128'256);
  CHECK(to_spec_json(with)["vocab_size"] == 128'256);
  const ModelSpec again = model_spec_from_json(to_spec_json(with), "again");
  CHECK(again.vocab_size == 128'256);
  CHECK(to_spec_json(again) == to_spec_json(with));

  CHECK(error_of(with_field("vocab_size", 0)) == "my-model.json: field 'vocab_size': must be at least 1");
  CHECK(error_of(with_field("vocab_size", -1)) ==
        "my-model.json: field 'vocab_size': expected a whole number of at least 0, got a negative number");
  CHECK(error_of(with_field("vocab_size", "x")) ==
        "my-model.json: field 'vocab_size': expected a whole number of at least 0, got string");
  CHECK(error_of(with_field("vocab_size", 1000.5)) ==
        "my-model.json: field 'vocab_size': expected a whole number of at least 0, got a fractional number");
}

TEST_CASE("an unknown layer kind is an unsupported architecture, exit code 3") {
  try {
    parse_model_spec(R"({"name":"x","params":1,"weight_dtype":"bf16","layers":1,"attention_heads":1,"head_dim":8,
                        "layer_types":["hyena"]})", "x.json");
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported_architecture);
    CHECK(std::string(error.what()) == "unsupported architecture: x.json: layer_types[0] = hyena");
  }
}

TEST_CASE("every catalog model round-trips through its own spec format") {
  // Also through a spec file given to --model: the same spec, and the same figures.
  const std::string file =
      (std::filesystem::temp_directory_path() / ("kvplan-round-trip-" + std::to_string(getpid()) + ".json")).string();
  for (const ModelSpec& model : builtin_models().models) {
    INFO(model.id);
    const ModelSpec again = model_spec_from_json(to_spec_json(model), model.id);
    CHECK(to_spec_json(again) == to_spec_json(model));
    CHECK(describe_layers(again) == describe_layers(model));

    std::ofstream(file, std::ios::binary | std::ios::trunc) << to_spec_json(model).dump(2);
    const ModelSpec loaded = load_model(file, ModelCatalog{});
    CHECK(to_spec_json(loaded) == to_spec_json(model));
    RowSettings settings;
    settings.ctx = 131072;
    settings.batch = 3;
    settings.cache = {&parse_kv_dtype("q8_0", *model.weight_dtype), &parse_kv_dtype("fp8", *model.weight_dtype)};
    settings.gpu_memory_bytes = 80 * GiB;
    const Row expected = plan_row(model, settings);
    const Row actual = plan_row(loaded, settings);
    CHECK(actual.kv_bytes == expected.kv_bytes);
    CHECK(actual.weights_bytes == expected.weights_bytes);
    CHECK(actual.total_bytes == expected.total_bytes);
  }
  std::filesystem::remove(file);
}
