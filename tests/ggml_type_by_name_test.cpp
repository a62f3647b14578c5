// find_ggml_type_by_name looks a name up in a hash table built at compile time. It must answer
// what a scan of the table in order answers, for every name in any case and for names that are
// not types (near misses, prefixes, extensions, empty, non-ASCII bytes).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "model/ggml_type.h"

namespace {

/// The answer of a plain scan, ASCII case folded: what the table must agree with.
const kvplan::GgmlType* ggml_by_name_scanned(std::string_view name) {
  const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (const kvplan::GgmlType& type : kvplan::ggml_types()) {
    if (type.name.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size(); ++i) same = same && fold(type.name[i]) == fold(name[i]);
    if (same) return &type;
  }
  return nullptr;
}

std::string ggml_name_cased(std::string_view name, unsigned mask) {
  std::string out(name);
  for (std::size_t i = 0; i < out.size(); ++i)
    if ((mask >> (i % 8)) & 1u) {
      const char c = out[i];
      if (c >= 'a' && c <= 'z') out[i] = static_cast<char>(c - 'a' + 'A');
      else if (c >= 'A' && c <= 'Z') out[i] = static_cast<char>(c - 'A' + 'a');
    }
  return out;
}

}  // namespace

TEST_CASE("every ggml type is found by its name in any case", "[ggml][fitspeed]") {
  std::size_t checked = 0;
  for (const kvplan::GgmlType& type : kvplan::ggml_types()) {
    for (unsigned mask = 0; mask < 256; ++mask) {
      const std::string name = ggml_name_cased(type.name, mask);
      const kvplan::GgmlType* found = kvplan::find_ggml_type_by_name(name);
      REQUIRE(found == &type);
      REQUIRE(&kvplan::ggml_type_by_name(name) == &type);
      ++checked;
    }
  }
  CHECK(checked == kvplan::ggml_types().size() * 256);
  // A few by hand, from ggml.h's enum: q4_K is 12, mxfp4 39, iq4_nl 20.
  CHECK(kvplan::find_ggml_type_by_name("Q4_K")->id == 12);
  CHECK(kvplan::find_ggml_type_by_name("MXFP4")->id == 39);
  CHECK(kvplan::find_ggml_type_by_name("iq4_NL")->id == 20);
}

TEST_CASE("names that are not ggml types are not found, as a scan would not find them", "[ggml][fitspeed]") {
  std::vector<std::string> names = {"", "q", "q4", "q4_", "q4_k_m", "q4_K_S", "f8", "fp16", "f16 ", " f16", "f1",
                                    "bf", "bf166", "iq4", "iq4_nl_4_4", "q4_0_4_4", "nvfp", "mxfp", "q9_0", "i128",
                                    std::string("f\0" "16", 4), "\xc3\x9f", "F\xff" "16"};
  // Every type's name with one character changed, dropped or added.
  for (const kvplan::GgmlType& type : kvplan::ggml_types()) {
    const std::string name(type.name);
    for (std::size_t i = 0; i < name.size(); ++i) {
      std::string changed = name;
      changed[i] = static_cast<char>(changed[i] + 1);
      names.push_back(changed);
      names.push_back(name.substr(0, i) + name.substr(i + 1));
    }
    names.push_back(name + "_");
    names.push_back("x" + name);
  }
  for (const std::string& name : names) {
    INFO("'" << name << "'");
    CHECK(kvplan::find_ggml_type_by_name(name) == ggml_by_name_scanned(name));
  }
  CHECK(kvplan::find_ggml_type_by_name("q4_k_m") == nullptr);
  CHECK_THROWS_WITH(kvplan::ggml_type_by_name("q4_k_m"), Catch::Contains("unknown ggml type \"q4_k_m\""));
}

TEST_CASE("every ggml type is found by its id, and the gaps between ids are not", "[ggml][fitspeed]") {
  for (const kvplan::GgmlType& type : kvplan::ggml_types()) CHECK(kvplan::find_ggml_type(type.id) == &type);
  // ggml.h's removed ids (q4_2, q4_3; the repacked q4_0_4_4 ... iq4_nl_8_8) and ids past the last.
  for (const std::uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 43u, 63u, 64u, 255u, 4294967295u})
    CHECK(kvplan::find_ggml_type(id) == nullptr);
  CHECK(kvplan::find_ggml_type(39)->name == "mxfp4");
  CHECK_THROWS_WITH(kvplan::ggml_type_by_id(64), Catch::Contains("unknown ggml type id 64"));
}
