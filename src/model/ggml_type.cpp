#include "model/ggml_type.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kvplan/error.h"
#include "model/suggest.h"
#include "kvplan/units.h"
#include "model/wide_int.h"

namespace kvplan {

namespace {

constexpr std::uint32_t QK_K = 256;  // super-block of the k-quants and i-quants (ggml-common.h)

// Ids from `enum ggml_type` (ggml/include/ggml.h), names from `type_traits[].type_name`
// (ggml/src/ggml.c), bytes from the `block_*` structs and their static_asserts
// (ggml/src/ggml-common.h). Each byte count is spelled as its struct's fields add up.
constexpr std::array kTypes = {
    GgmlType{0, "f32", 1, 4},
    GgmlType{1, "f16", 1, 2},
    GgmlType{2, "q4_0", 32, 2 + 32 / 2},                 // d, qs[16]
    GgmlType{3, "q4_1", 32, 2 + 2 + 32 / 2},             // d, m, qs[16]
    // 4 (q4_2) and 5 (q4_3) were removed from ggml.
    GgmlType{6, "q5_0", 32, 2 + 4 + 32 / 2},             // d, qh[4], qs[16]
    GgmlType{7, "q5_1", 32, 2 + 2 + 4 + 32 / 2},         // d, m, qh[4], qs[16]
    GgmlType{8, "q8_0", 32, 2 + 32},                     // d, qs[32]
    GgmlType{9, "q8_1", 32, 2 + 2 + 32},                 // d, s, qs[32] (two halves, not floats)
    GgmlType{10, "q2_K", QK_K, QK_K / 16 + QK_K / 4 + 2 + 2},         // scales, qs, d, dmin = 84
    GgmlType{11, "q3_K", QK_K, QK_K / 8 + QK_K / 4 + 12 + 2},         // hmask, qs, scales, d = 110
    GgmlType{12, "q4_K", QK_K, 2 + 2 + 12 + QK_K / 2},                // d, dmin, scales, qs = 144
    GgmlType{13, "q5_K", QK_K, 2 + 2 + 12 + QK_K / 8 + QK_K / 2},     // + qh = 176
    GgmlType{14, "q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + 2},  // ql, qh, scales, d = 210
    GgmlType{15, "q8_K", QK_K, 4 + QK_K + QK_K / 16 * 2},             // float d, qs, bsums = 292
    GgmlType{16, "iq2_xxs", QK_K, 2 + QK_K / 8 * 2},                  // d, u16 qs = 66
    GgmlType{17, "iq2_xs", QK_K, 2 + QK_K / 8 * 2 + QK_K / 32},       // + scales = 74
    GgmlType{18, "iq3_xxs", QK_K, 2 + 3 * (QK_K / 8)},                // = 98
    GgmlType{19, "iq1_s", QK_K, 2 + QK_K / 8 + QK_K / 32 * 2},        // d, qs, u16 qh = 50
    GgmlType{20, "iq4_nl", 32, 2 + 32 / 2},                           // d, qs[16] = 18
    GgmlType{21, "iq3_s", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 8 + QK_K / 64},  // = 110
    GgmlType{22, "iq2_s", QK_K, 2 + QK_K / 4 + QK_K / 32 + QK_K / 32},             // = 82
    GgmlType{23, "iq4_xs", QK_K, 2 + 2 + QK_K / 64 + QK_K / 2},                    // = 136
    GgmlType{24, "i8", 1, 1},
    GgmlType{25, "i16", 1, 2},
    GgmlType{26, "i32", 1, 4},
    GgmlType{27, "i64", 1, 8},
    GgmlType{28, "f64", 1, 8},
    GgmlType{29, "iq1_m", QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32},    // qs, qh, scales = 56
    GgmlType{30, "bf16", 1, 2},
    // 31-33 (q4_0_4_4, q4_0_4_8, q4_0_8_8) were removed from GGUF files: runtime repacking instead.
    GgmlType{34, "tq1_0", QK_K, (QK_K - 4 * QK_K / 64) / 5 + QK_K / 64 + 2},  // qs, qh, d = 54
    GgmlType{35, "tq2_0", QK_K, QK_K / 4 + 2},                                 // qs, d = 66
    // 36-38 (iq4_nl_4_4, iq4_nl_4_8, iq4_nl_8_8) were removed likewise.
    GgmlType{39, "mxfp4", 32, 1 + 32 / 2},         // E8M0 exponent, qs[16] = 17
    GgmlType{40, "nvfp4", 64, 64 / 16 + 64 / 2},   // four UE4M3 scales, qs[32] = 36
    GgmlType{41, "q1_0", 128, 2 + 128 / 8},        // d, one bit per value = 18
    GgmlType{42, "q2_0", 64, 2 + 64 / 4},          // d, two bits per value = 18
};

constexpr std::uint32_t block_bytes_of(std::uint32_t id) {
  for (const GgmlType& type : kTypes)
    if (type.id == id) return type.block_bytes;
  return 0;
}

// The totals llama.cpp's static_asserts and gguf-py's GGML_QUANT_SIZES state outright.
static_assert(block_bytes_of(8) == 34 && block_bytes_of(10) == 84 && block_bytes_of(11) == 110 &&
              block_bytes_of(12) == 144 && block_bytes_of(13) == 176 && block_bytes_of(14) == 210 &&
              block_bytes_of(15) == 292 && block_bytes_of(16) == 66 && block_bytes_of(17) == 74 &&
              block_bytes_of(18) == 98 && block_bytes_of(19) == 50 && block_bytes_of(21) == 110 &&
              block_bytes_of(22) == 82 && block_bytes_of(23) == 136 && block_bytes_of(29) == 56 &&
              block_bytes_of(34) == 54 && block_bytes_of(35) == 66 && block_bytes_of(39) == 17 &&
              block_bytes_of(40) == 36 && block_bytes_of(41) == 18);

/// ASCII case folding, as std::tolower in the "C" locale kvplan runs in, without its call per
/// character (a type is looked up by name for every tensor and cache row: 8% of `kvplan fit`).
constexpr char folded(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool same_folded(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return folded(x) == folded(y); });
}

/// The types by name: an open-addressed table of the folded names' hashes, built at compile time
/// (a tensor's type is looked up by name for every tensor of an Ollama tag's mix and every cache:
/// comparing the name with each of the table's was 6% of `kvplan fit --runtime llama.cpp`).
constexpr std::size_t kNameSlots = 128;  // a power of two, over twice the types
constexpr std::uint8_t kNoType = 0xff;
static_assert(kTypes.size() < kNameSlots / 2 && kTypes.size() < kNoType);

constexpr std::size_t name_hash(std::string_view name) {
  std::uint32_t h = static_cast<std::uint32_t>(name.size());
  for (const char c : name) h = h * 54 + static_cast<unsigned char>(folded(c));  // 54: no two types collide today
  return h % kNameSlots;
}

constexpr std::array<std::uint8_t, kNameSlots> kByName = [] {
  std::array<std::uint8_t, kNameSlots> slots{};
  for (std::uint8_t& slot : slots) slot = kNoType;
  for (std::size_t i = 0; i < kTypes.size(); ++i) {
    std::size_t at = name_hash(kTypes[i].name);
    while (slots[at] != kNoType) at = (at + 1) % kNameSlots;  // a collision takes the next free slot
    slots[at] = static_cast<std::uint8_t>(i);
  }
  return slots;
}();

/// kTypes' index of each id up to the largest (kNoType: no such type).
constexpr std::array<std::uint8_t, 64> kById = [] {
  std::array<std::uint8_t, 64> index{};
  for (std::uint8_t& slot : index) slot = kNoType;
  for (std::size_t i = 0; i < kTypes.size(); ++i) index[kTypes[i].id] = static_cast<std::uint8_t>(i);
  return index;
}();
static_assert(kTypes.back().id < kById.size(), "a type id past the index: widen kById");
static_assert([] {
  for (std::size_t i = 1; i < kTypes.size(); ++i)
    if (kTypes[i].id <= kTypes[i - 1].id) return false;
  return true;
}(), "the types are listed by ascending id, each once");

constexpr bool folded_names_distinct() {
  for (std::size_t i = 0; i < kTypes.size(); ++i)
    for (std::size_t j = i + 1; j < kTypes.size(); ++j)
      if (same_folded(kTypes[i].name, kTypes[j].name)) return false;
  return true;
}
static_assert(folded_names_distinct(), "two types whose names differ only in case: a lookup by name would be ambiguous");

}  // namespace

std::span<const GgmlType> ggml_types() { return kTypes; }

const GgmlType* find_ggml_type(std::uint32_t id) {
  // The ids have gaps: an index by id, built at compile time (every tensor row of an Ollama tag's
  // mix is sized by its type's id).
  return id < kById.size() && kById[id] != kNoType ? &kTypes[kById[id]] : nullptr;
}

const GgmlType& ggml_type_by_id(std::uint32_t id) {
  if (const GgmlType* type = find_ggml_type(id)) return *type;
  throw Error(fmt::format("unknown ggml type id {} (known ids: 0-3, 6-30, 34, 35, 39-42)", id));
}

const GgmlType* find_ggml_type_by_name(std::string_view name) {
  // Two names that fold alike are one type (the table's are distinct folded), so the first match
  // along the probe is the table's first match, as a scan in table order would find.
  for (std::size_t at = name_hash(name); kByName[at] != kNoType; at = (at + 1) % kNameSlots)
    if (same_folded(kTypes[kByName[at]].name, name)) return &kTypes[kByName[at]];
  return nullptr;
}

const GgmlType& ggml_type_by_name(std::string_view name) {
  if (const GgmlType* type = find_ggml_type_by_name(name)) return *type;
  std::vector<std::string> names;
  for (const GgmlType& type : kTypes) names.emplace_back(type.name);
  throw Error(fmt::format("unknown ggml type \"{}\"{}", name, did_you_mean(name, names)));
}

std::uint64_t ggml_row_bytes(std::uint32_t type_id, std::uint64_t n_elements) {
  const GgmlType& type = ggml_type_by_id(type_id);
  if (n_elements % type.block_elements != 0)
    throw Error(fmt::format("a {} row of {} elements is not a whole number of {}-element blocks", type.name,
                            n_elements, type.block_elements));
  // The words only when it overflows: formatting them for every row was 7% of `kvplan fit --runtime
  // llama.cpp` (each Ollama tag's tensors are sized row by row).
  const std::uint64_t blocks = n_elements / type.block_elements;
  const u128 bytes = u128{blocks} * type.block_bytes;
  if (bytes > std::numeric_limits<std::uint64_t>::max())
    return checked_mul(blocks, type.block_bytes, fmt::format("bytes of a {} row", type.name));  // throws
  return static_cast<std::uint64_t>(bytes);
}

std::uint64_t ggml_tensor_bytes(std::uint32_t type_id, std::span<const std::uint64_t> dims) {
  const std::uint64_t row_length = dims.empty() ? 1 : dims[0];
  std::uint64_t bytes = ggml_row_bytes(type_id, row_length);
  for (std::size_t i = 1; i < dims.size(); ++i) bytes = checked_mul(bytes, dims[i], "tensor size in bytes");
  return bytes;
}

}  // namespace kvplan
