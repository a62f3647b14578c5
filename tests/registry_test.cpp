// The architecture registry (src/loaders/arch/): every model_type in one family, and every family
// with its rules in words and real fixtures that load as its own.

#include <filesystem>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "kvplan/error.h"
#include "loaders/architecture.h"
#include "loaders/hf_config.h"
#include "support/run_binary.h"
#include "loaders/json_reader.h"

using namespace kvplan;
using kvplan::testing::read_file;
using kvplan::testing::source_path;

TEST_CASE("every model_type belongs to exactly one family") {
  std::set<std::string_view> seen;
  for (const arch::Family* family : arch::families()) {
    INFO(family->name);
    CHECK_FALSE((family->types.empty() && family->wrappers.empty()));
    for (const arch::ModelType& type : family->types) {
      INFO(type.name);
      CHECK(seen.insert(type.name).second);
      CHECK(arch::find_family(type.name) == family);
    }
  }
  CHECK(arch::find_family("futurenet") == nullptr);
  std::set<std::string_view> wrappers;
  for (const arch::Family* family : arch::families())
    for (const std::string_view wrapper : family->wrappers) {
      INFO(wrapper);
      CHECK(wrappers.insert(wrapper).second);
      CHECK(family->towers != nullptr);
    }
}

TEST_CASE("every family says what it reads and is tested on real configs that load as its own") {
  const std::string sources = read_file(source_path("tests/fixtures/hf/SOURCES.md"));
  for (const arch::Family* family : arch::families()) {
    INFO(family->name);
    CHECK(std::filesystem::exists(source_path("src/loaders/arch/" + std::string(family->name) + ".cpp")));
    CHECK_FALSE(family->rules.empty());
    CHECK_FALSE(family->gguf.empty());
    // mllama: no config.json was found (its test reads the quoted fields inline).
    if (family->name != "mllama") REQUIRE_FALSE(family->fixtures.empty());
    for (const std::string_view id : family->fixtures) {
      INFO(id);
      const std::string folder = source_path("tests/fixtures/hf/" + std::string(id));
      REQUIRE(std::filesystem::exists(folder + "/config.json"));
      CHECK(sources.find("| `" + std::string(id) + "` |") != std::string::npos);
      const ModelSpec spec = load_hf_model(folder);
      const nlohmann::json config = kvplan::parse_json_document(read_file(folder + "/config.json"), folder);
      const arch::Family* language = arch::find_family(spec.architecture);
      // Its own language model, or (a wrapper family) its towers.
      CHECK((language == family || arch::find_wrapper(config.value("model_type", "")) == family));
      // Counted, unless the family counts nothing (its params then say why); a wrapper's towers too.
      if (language && language->count) CHECK(spec.params > 0);
      else CHECK_THAT(spec.params_source, Catch::Contains("not counted"));
      if (arch::find_wrapper(config.value("model_type", "")) == family)
        for (const ModelPart& part : spec.parts) CHECK(part.params > 0);
    }
  }
}

TEST_CASE("docs/architectures.md is the registry's own listing") {
  const std::string docs = read_file(source_path("docs/architectures.md"));
  const std::string listing = kvplan::testing::run_kvplan("models --architectures").out;
  REQUIRE_FALSE(listing.empty());
  INFO("regenerate the listing in docs/architectures.md with: build/kvplan models --architectures");
  CHECK(docs.find(listing) != std::string::npos);
  CHECK(listing == arch::architectures_markdown());
  for (const arch::Family* family : arch::families())
    for (const arch::ModelType& type : family->types) CHECK(listing.find("| `" + std::string(type.name) + "` |") != std::string::npos);
}
