// --gpu builds a built-in card from the fields the build read out of gpus/gpus.json
// (cmake/EmbedFiles.cmake, loaders/gpu_facts): each card must be exactly the one the JSON parser
// reads from the same file, every field, or a --gpu plan would differ from `kvplan gpus`.

#include <catch2/catch.hpp>

#include "kvplan/catalog.h"
#include "loaders/embedded_files.h"
#include "loaders/gpu_facts.h"

namespace {

void check_same(const kvplan::GpuSpec& built, const kvplan::GpuSpec& parsed) {
  INFO(parsed.id);
  CHECK(built.id == parsed.id);
  CHECK(built.name == parsed.name);
  CHECK(built.aliases == parsed.aliases);
  CHECK(built.vendor == parsed.vendor);
  CHECK(built.arch == parsed.arch);
  CHECK(built.memory_bytes == parsed.memory_bytes);
  CHECK(built.memory_basis == parsed.memory_basis);
  CHECK(built.memory_source == parsed.memory_source);
  CHECK(built.cuda_total_bytes == parsed.cuda_total_bytes);
  CHECK(built.cuda_total_source == parsed.cuda_total_source);
  CHECK(built.fp8 == parsed.fp8);
  CHECK(built.int8 == parsed.int8);
  CHECK(built.bandwidth_gbps == parsed.bandwidth_gbps);  // the same double, bit for bit
  CHECK(built.price_usd_per_hour == parsed.price_usd_per_hour);
  CHECK(built.price_source == parsed.price_source);
  CHECK(built.resolution_note == parsed.resolution_note);
}

}  // namespace

TEST_CASE("every built-in card's facts are the catalog's parsed entry", "[gpu][fastpath]") {
  const auto entries = kvplan::embedded::gpu_entries();
  const auto facts = kvplan::embedded::gpu_facts();
  const kvplan::GpuCatalog& catalog = kvplan::builtin_gpus();
  REQUIRE(entries.size() == catalog.gpus.size());
  REQUIRE(facts.size() == entries.size());
  REQUIRE(entries.size() >= 40);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CHECK(facts[i].names == entries[i].names);  // the index --gpu searches
    check_same(kvplan::gpu_from_facts(facts[i]), catalog.gpus[i]);
    // The entry's own JSON text, parsed alone, is the same card too.
    const kvplan::GpuCatalog alone = kvplan::parse_gpu_catalog("{\"gpus\": [" + std::string(entries[i].text) + "]}", "entry");
    REQUIRE(alone.gpus.size() == 1);
    check_same(kvplan::gpu_from_facts(facts[i]), alone.gpus.front());
  }
}

TEST_CASE("a card's facts hold what gpus/gpus.json says of it", "[gpu][fastpath]") {
  // gpus/gpus.json, "rtx4090": memory_bytes 25757220864, five aliases, bandwidth 1008, $0.34/h,
  // no cuda_total_bytes.
  const std::vector<kvplan::GpuSpec> cards = kvplan::resolve_builtin_gpus("4090", "--gpu");
  REQUIRE(cards.size() == 1);
  const kvplan::GpuSpec& card = cards.front();
  CHECK(card.id == "rtx4090");
  CHECK(card.memory_bytes == 25757220864ULL);
  CHECK(card.aliases == std::vector<std::string>{"4090", "geforce rtx 4090", "nvidia geforce rtx 4090", "rtx 4090", "rtx-4090"});
  CHECK(card.bandwidth_gbps == 1008.0);
  CHECK(card.price_usd_per_hour == 0.34);
  CHECK_FALSE(card.cuda_total_bytes.has_value());
  CHECK(card.fp8);
}
