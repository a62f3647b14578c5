// The seed articles' advice about quantized caches, attached to the rows it applies to. Memory
// decides whether a row fits; these say what a row's cache dtype may cost in accuracy.

#include <array>
#include <string_view>

#include "kvplan/plan.h"

namespace kvplan {

namespace {

bool is_fp8(const Dtype* type) { return type && type->name.substr(0, 3) == "fp8"; }
bool is_e5m2(const Dtype* type) { return type && type->name == "fp8_e5m2"; }
/// Narrower than 16 bits a value: block_bytes x 8 < 16 x block_elements.
bool is_quantized(const Dtype* type) { return type && type->block_bytes < 2 * type->block_elements; }
/// At most 5 bits a value (int4, q4_0, q4_1, iq4_nl, nvfp4): the 4-bit formats with their scales.
bool is_4bit(const Dtype* type) {
  return type && std::uint64_t{type->block_bytes} * 8 <= std::uint64_t{type->block_elements} * 5;
}

struct Rule {
  std::string_view code;
  std::string_view text;
  bool (*applies)(const Dtype*);
};

// One line each, in this order. Seed 000: E4M3 is vLLM's fp8 and the default to use, E5M2's 2-bit
// mantissa degrades attention scores with an error that accumulates over layers; scales default to
// 1.0 without calibration, dataset calibration (llm-compressor) recommended for production; exact
// recall over long contexts is the first casualty. Seed 003: below 8 bits the accuracy risk grows.
constexpr std::array kRules = {
    Rule{"fp8_e5m2_cache",
         "fp8_e5m2 has a 2-bit mantissa: it degrades attention scores and the error grows with depth; fp8 (E4M3) is "
         "the default cache format",
         is_e5m2},
    Rule{"fp8_scales",
         "an fp8 cache scales by 1.0 unless calibrated (vLLM's default); scales calibrated on your own data "
         "(llm-compressor) are the safer choice in production",
         is_fp8},
    Rule{"int4_cache_accuracy",
         "a 4-bit cache risks accuracy more than an 8-bit one, and engines' support for it is young: evaluate it on "
         "your own tasks",
         is_4bit},
    Rule{"quantized_cache_recall",
         "long-context exact-recall tasks (needle in a haystack, document QA) show cache quantization damage first: "
         "evaluate retrieval, not perplexity",
         is_quantized},
};

}  // namespace

std::vector<QualityNote> find_quality_notes(const std::vector<Row>& rows) {
  std::vector<QualityNote> notes;
  for (const Rule& rule : kRules) {
    QualityNote note{std::string(rule.code), std::string(rule.text), {}};
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rule.applies(rows[i].cache.k) || rule.applies(rows[i].cache.v)) note.rows.push_back(i);
    if (!note.rows.empty()) notes.push_back(std::move(note));
  }
  return notes;
}

}  // namespace kvplan
