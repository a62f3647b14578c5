#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "support/temp_dir.h"
#include "kvplan/error.h"
#include "model/ggml_type.h"
#include "loaders/gguf.h"
#include "support/gguf_writer.h"

using kvplan::GgufHeader;
using kvplan::GgufType;
using kvplan::read_gguf_header;
using kvplan::read_gguf_model;
using kvplan::testing::ByteWriter;
using kvplan::testing::GgufWriter;
using kvplan::testing::write_file;

using kvplan::testing::TempDir;

namespace {


/// The message of the Error that reading `path` throws; fails the test when nothing is thrown.
std::string read_error(const std::string& path) {
  try {
    read_gguf_header(path);
  } catch (const kvplan::Error& e) {
    CHECK(e.code() == kvplan::ExitCode::invalid_input);
    return e.what();
  }
  FAIL("reading " << path << " did not throw");
  return "";
}

/// "GGUF", version, tensor count, kv count: the fixed start of every file.
ByteWriter preamble(std::uint32_t version, std::uint64_t n_tensors, std::uint64_t n_kv) {
  ByteWriter w;
  w.raw("GGUF");
  w.u32(version);
  w.u64(n_tensors);
  w.u64(n_kv);
  return w;
}

/// A small but complete model: a few metadata values and three tensors of different types.
GgufWriter small_model() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_uint32("llama.block_count", 2);
  w.add_array_int32("llama.attention.head_count_kv", {2, 4});
  w.add_array_string("tokenizer.ggml.tokens", {"<s>", "a", "b"});
  w.add_tensor("token_embd.weight", 8, {64, 3});  // q8_0
  w.add_tensor("output_norm.weight", 0, {64});    // f32
  w.add_tensor("output.weight", 1, {64, 3});      // f16
  return w;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ggml types

TEST_CASE("ggml types are found by id and by name in any case", "[gguf][ggml_type]") {
  REQUIRE(kvplan::find_ggml_type(8) != nullptr);
  CHECK(kvplan::find_ggml_type(8)->name == "q8_0");
  CHECK(kvplan::ggml_type_by_name("Q8_0").id == 8);
  CHECK(kvplan::ggml_type_by_name("q8_0").id == 8);
  CHECK(kvplan::ggml_type_by_name("f16").id == 1);
  CHECK(kvplan::ggml_type_by_name("BF16").id == 30);
  CHECK(kvplan::ggml_type_by_name("Q4_K").name == "q4_K");
  CHECK(kvplan::ggml_type_by_name("mxfp4").id == 39);
  CHECK(kvplan::find_ggml_type_by_name("q4_2") == nullptr);

  // Ids llama.cpp removed are not types.
  for (std::uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u})
    CHECK(kvplan::find_ggml_type(removed) == nullptr);
  CHECK_THROWS_WITH(kvplan::ggml_type_by_id(99), "unknown ggml type id 99 (known ids: 0-3, 6-30, 34, 35, 39-42)");
  CHECK_THROWS_WITH(kvplan::ggml_type_by_name("q8_O"),
                    Catch::Contains("unknown ggml type \"q8_O\"") && Catch::Contains("did you mean"));

  // The table is sorted by id with unique ids and names.
  const auto types = kvplan::ggml_types();
  for (std::size_t i = 1; i < types.size(); ++i) CHECK(types[i - 1].id < types[i].id);
}

TEST_CASE("ggml block sizes match llama.cpp", "[gguf][ggml_type]") {
  struct Expected {
    const char* name;
    std::uint32_t id, elements, bytes;
  };
  // (block elements, bytes per block) from ggml-common.h's block structs.
  const Expected expected[] = {
      {"f32", 0, 1, 4},         {"f16", 1, 1, 2},         {"q4_0", 2, 32, 18},      {"q4_1", 3, 32, 20},
      {"q5_0", 6, 32, 22},      {"q5_1", 7, 32, 24},      {"q8_0", 8, 32, 34},      {"q8_1", 9, 32, 36},
      {"q2_K", 10, 256, 84},    {"q3_K", 11, 256, 110},   {"q4_K", 12, 256, 144},   {"q5_K", 13, 256, 176},
      {"q6_K", 14, 256, 210},   {"q8_K", 15, 256, 292},   {"iq2_xxs", 16, 256, 66}, {"iq2_xs", 17, 256, 74},
      {"iq3_xxs", 18, 256, 98}, {"iq1_s", 19, 256, 50},   {"iq4_nl", 20, 32, 18},   {"iq3_s", 21, 256, 110},
      {"iq2_s", 22, 256, 82},   {"iq4_xs", 23, 256, 136}, {"i8", 24, 1, 1},         {"i16", 25, 1, 2},
      {"i32", 26, 1, 4},        {"i64", 27, 1, 8},        {"f64", 28, 1, 8},        {"iq1_m", 29, 256, 56},
      {"bf16", 30, 1, 2},       {"tq1_0", 34, 256, 54},   {"tq2_0", 35, 256, 66},   {"mxfp4", 39, 32, 17},
      {"nvfp4", 40, 64, 36},    {"q1_0", 41, 128, 18},    {"q2_0", 42, 64, 18},
  };
  REQUIRE(kvplan::ggml_types().size() == std::size(expected));
  for (const Expected& e : expected) {
    INFO(e.name);
    const kvplan::GgmlType& t = kvplan::ggml_type_by_id(e.id);
    CHECK(t.name == e.name);
    CHECK(t.block_elements == e.elements);
    CHECK(t.block_bytes == e.bytes);
  }
}

TEST_CASE("tensor bytes are exact", "[gguf][ggml_type]") {
  using kvplan::ggml_row_bytes;
  using kvplan::ggml_tensor_bytes;
  using Dims = std::vector<std::uint64_t>;
  // q8_0: 4096 x 4096 values in 32-value blocks of 34 bytes = 524288 blocks x 34.
  CHECK(ggml_tensor_bytes(8, Dims{4096, 4096}) == 4096ull * 4096 / 32 * 34);
  CHECK(ggml_tensor_bytes(8, Dims{4096, 4096}) == 17825792);
  // q4_K: 256-value super-blocks of 144 bytes (4.5 bits a value): 65536 blocks x 144.
  CHECK(ggml_tensor_bytes(12, Dims{4096, 4096}) == 9437184);
  // mxfp4: 32 values in 17 bytes. gpt-oss expert tensor 2880 x 2880 x 32 experts: 90 blocks a row.
  CHECK(ggml_tensor_bytes(39, Dims{2880, 2880, 32}) == 90ull * 17 * 2880 * 32);
  // q6_K row of 4096: 16 super-blocks x 210 bytes = 3360.
  CHECK(ggml_row_bytes(14, 4096) == 3360);
  // f16 and bf16: 2 bytes a value; f32 4.
  CHECK(ggml_tensor_bytes(1, Dims{4096, 32000}) == 4096ull * 32000 * 2);
  CHECK(ggml_tensor_bytes(30, Dims{128, 8, 4, 2}) == 128ull * 8 * 4 * 2 * 2);
  CHECK(ggml_tensor_bytes(0, Dims{}) == 4);  // no dims: a scalar
  // iq4_xs row of 11008 (43 super-blocks x 136).
  CHECK(ggml_row_bytes(23, 11008) == 43 * 136);
  // tq1_0 row of 2048: 8 x 54.
  CHECK(ggml_row_bytes(34, 2048) == 8 * 54);
  // nvfp4 row of 128: 2 blocks of 64 values x 36 bytes.
  CHECK(ggml_row_bytes(40, 128) == 72);

  CHECK_THROWS_WITH(ggml_row_bytes(8, 33), "a q8_0 row of 33 elements is not a whole number of 32-element blocks");
  CHECK_THROWS_WITH(ggml_row_bytes(12, 4000),
                    "a q4_K row of 4000 elements is not a whole number of 256-element blocks");
  CHECK_THROWS_AS(ggml_row_bytes(4, 32), kvplan::Error);
  CHECK_THROWS_WITH(ggml_tensor_bytes(0, Dims{1ull << 32, 1ull << 32}), Catch::Contains("overflows 64 bits"));
}

// ---------------------------------------------------------------------------------------------
// Reading valid files

TEST_CASE("every metadata value type round-trips", "[gguf]") {
  const std::uint32_t version = GENERATE(2u, 3u);
  TempDir dir;
  GgufWriter w(version);
  w.add_uint8("u8", 200);
  w.add_int8("i8", -100);
  w.add_uint16("u16", 60000);
  w.add_int16("i16", -30000);
  w.add_uint32("u32", 4000000000u);
  w.add_int32("i32", -2000000000);
  w.add_uint64("u64", std::numeric_limits<std::uint64_t>::max());
  w.add_int64("i64", std::numeric_limits<std::int64_t>::min());
  w.add_float32("f32", 0.1f);
  w.add_float64("f64", 1e300);
  w.add_bool("yes", true);
  w.add_bool("no", false);
  w.add_string("str", "hello, world");
  w.add_string("empty", "");
  w.add_array_uint8("a_u8", {1, 255});
  w.add_array_int8("a_i8", {-1, 127});
  w.add_array_uint16("a_u16", {65535});
  w.add_array_int16("a_i16", {-32768, 5});
  w.add_array_uint32("a_u32", {1, 2, 3});
  w.add_array_int32("a_i32", {-5, 0, 7});
  w.add_array_uint64("a_u64", {1ull << 40});
  w.add_array_int64("a_i64", {-(1ll << 40)});
  w.add_array_float32("a_f32", {0.5f, -1.25f});
  w.add_array_float64("a_f64", {3.5});
  w.add_array_bool("a_bool", {true, false, true});
  w.add_array_string("a_str", {"x", "", "zz"});
  w.add_array_uint32("a_empty", {});
  {
    // [[1, 2], [], [[true]]]: arrays of arrays, three levels deep.
    ByteWriter nested;
    nested.type(GgufType::array);
    nested.u64(3);
    nested.type(GgufType::uint32);
    nested.u64(2);
    nested.u32(1);
    nested.u32(2);
    nested.type(GgufType::string);
    nested.u64(0);
    nested.type(GgufType::array);
    nested.u64(1);
    nested.type(GgufType::boolean);
    nested.u64(1);
    nested.u8(1);
    w.add_raw_value("nested", GgufType::array, nested.bytes);
  }
  const std::string path = dir.file("values.gguf");
  w.write(path);

  const GgufHeader h = read_gguf_header(path);
  CHECK(h.version == version);
  CHECK(h.metadata.size() == 28);
  CHECK(h.tensors.empty());
  CHECK(h.file_size == std::filesystem::file_size(path));
  CHECK(h.data_offset == h.file_size);  // no tensors: no padding, no data

  CHECK(h.find("u8")->type == GgufType::uint8);
  CHECK(h.get_uint("u8") == 200u);
  CHECK(h.find("i8")->int_value == -100);
  CHECK(h.get_uint("u16") == 60000u);
  CHECK(h.find("i16")->int_value == -30000);
  CHECK(h.get_uint("u32") == 4000000000u);
  CHECK(h.find("i32")->int_value == -2000000000);
  CHECK(h.get_uint("u64") == std::numeric_limits<std::uint64_t>::max());
  CHECK(h.find("i64")->int_value == std::numeric_limits<std::int64_t>::min());
  CHECK(h.get_float("f32") == static_cast<double>(0.1f));
  CHECK(h.get_float("f64") == 1e300);
  CHECK(h.get_bool("yes") == true);
  CHECK(h.get_bool("no") == false);
  CHECK(h.get_string("str") == "hello, world");
  CHECK(h.get_string("empty") == "");
  CHECK(h.find("str")->count == 12);

  CHECK(h.find("a_u8")->element_type == GgufType::uint8);
  CHECK(h.find("a_u8")->uints == std::vector<std::uint64_t>{1, 255});
  CHECK(h.find("a_i8")->ints == std::vector<std::int64_t>{-1, 127});
  CHECK(h.find("a_u16")->uints == std::vector<std::uint64_t>{65535});
  CHECK(h.find("a_i16")->ints == std::vector<std::int64_t>{-32768, 5});
  CHECK(h.get_uint_array("a_u32") == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(h.find("a_i32")->ints == std::vector<std::int64_t>{-5, 0, 7});
  CHECK(h.get_uint_array("a_u64") == std::vector<std::uint64_t>{1ull << 40});
  CHECK(h.find("a_i64")->ints == std::vector<std::int64_t>{-(1ll << 40)});
  CHECK(h.find("a_f32")->floats == std::vector<double>{0.5, -1.25});
  CHECK(h.find("a_f64")->floats == std::vector<double>{3.5});
  CHECK(h.get_bool_array("a_bool") == std::vector<bool>{true, false, true});
  CHECK(h.get_uint_array("a_bool") == std::vector<std::uint64_t>{1, 0, 1});
  CHECK(h.find("a_str")->strings == std::vector<std::string>{"x", "", "zz"});
  CHECK(h.find("a_str")->kept);
  CHECK(h.find("a_empty")->count == 0);
  CHECK(h.get_uint_array("a_empty") == std::vector<std::uint64_t>{});

  const kvplan::GgufValue& nested = *h.find("nested");
  CHECK(nested.element_type == GgufType::array);
  REQUIRE(nested.arrays.size() == 3);
  CHECK(nested.arrays[0].element_type == GgufType::uint32);
  CHECK(nested.arrays[0].uints == std::vector<std::uint64_t>{1, 2});
  CHECK(nested.arrays[1].element_type == GgufType::string);
  CHECK(nested.arrays[1].count == 0);
  REQUIRE(nested.arrays[2].arrays.size() == 1);
  CHECK(nested.arrays[2].arrays[0].uints == std::vector<std::uint64_t>{1});
}

TEST_CASE("metadata getters check types", "[gguf]") {
  TempDir dir;
  GgufWriter w;
  w.add_int32("negative", -3);
  w.add_string("name", "x");
  w.add_array_int32("layers", {4, -1});
  w.add_array_float32("floats", {1.0f});
  w.write(dir.file("m.gguf"));
  const GgufHeader h = read_gguf_header(dir.file("m.gguf"));
  const std::string path = dir.file("m.gguf");

  CHECK(h.get_uint("absent") == std::nullopt);
  CHECK(h.get_string("absent") == std::nullopt);
  CHECK(h.get_uint_array("absent") == std::nullopt);
  CHECK_THROWS_WITH(h.get_uint("negative"), path + ": metadata 'negative' is negative (-3)");
  CHECK(h.get_float("negative") == -3.0);
  CHECK_THROWS_WITH(h.get_uint("name"), path + ": metadata 'name' is string, expected an integer");
  CHECK_THROWS_WITH(h.get_string("negative"), path + ": metadata 'negative' is int32, expected a string");
  CHECK_THROWS_WITH(h.get_uint_array("layers"), path + ": metadata 'layers' element 1 is negative (-1)");
  CHECK_THROWS_WITH(h.get_uint_array("floats"),
                    path + ": metadata 'floats' is array of float32, expected an array of integers");
  CHECK_THROWS_WITH(h.get_bool("name"), path + ": metadata 'name' is string, expected a bool");
}

TEST_CASE("tensor infos, alignment and data layout", "[gguf]") {
  TempDir dir;
  const std::uint32_t alignment = GENERATE(0u, 64u);  // 0: the default 32
  GgufWriter w = small_model();
  if (alignment != 0) w.add_uint32("general.alignment", alignment);
  const std::uint64_t align = alignment == 0 ? 32 : alignment;
  const std::string path = dir.file("model.gguf");
  w.write(path);

  const GgufHeader h = read_gguf_header(path);
  CHECK(h.alignment == align);
  REQUIRE(h.tensors.size() == 3);
  CHECK(h.tensors[0].name == "token_embd.weight");
  CHECK(h.tensors[0].type == 8);
  CHECK(h.tensors[0].dims == std::vector<std::uint64_t>{64, 3});
  // q8_0 64 x 3: 2 blocks a row x 34 bytes x 3 rows = 204.
  CHECK(h.tensors[0].bytes == 204);
  CHECK(h.tensors[0].offset == 0);
  CHECK(h.tensors[1].bytes == 64 * 4);
  CHECK(h.tensors[1].offset == (204 + align - 1) / align * align);
  CHECK(h.tensors[2].bytes == 64 * 3 * 2);
  CHECK(h.tensors[2].offset == h.tensors[1].offset + 256);  // 256 is a multiple of both alignments
  CHECK(h.tensor_data_bytes() == 204 + 256 + 384);
  CHECK(h.find_tensor("output.weight") == &h.tensors[2]);
  CHECK(h.find_tensor("missing") == nullptr);
  CHECK(h.get_uint_array("llama.attention.head_count_kv") == std::vector<std::uint64_t>{2, 4});

  CHECK(h.data_offset % align == 0);
  // The data section is written in full, the last tensor padded too.
  CHECK(h.file_size == h.data_offset + h.tensors[2].offset + (384 + align - 1) / align * align);
  CHECK(w.bytes().size() == h.file_size);
}

TEST_CASE("the writer fills f32, f16 and bf16 tensors with small non-zero values", "[gguf][writer]") {
  GgufWriter w;
  w.add_tensor("a", 0, {2});   // f32
  w.add_tensor("b", 1, {2});   // f16
  w.add_tensor("c", 30, {2});  // bf16
  w.add_tensor("d", 2, {32});  // q4_0: one zero block
  const std::vector<std::uint8_t> bytes = w.bytes();
  TempDir dir;
  write_file(dir.file("t.gguf"), bytes);
  const GgufHeader h = read_gguf_header(dir.file("t.gguf"));
  auto at = [&](std::size_t tensor, std::size_t byte) {
    return bytes[h.data_offset + h.tensors[tensor].offset + byte];
  };
  // Element i is (1 + (i % 16) / 16) x 2^-10. f32 of element 0: 0x3A800000, little-endian.
  CHECK(at(0, 0) == 0x00);
  CHECK(at(0, 3) == 0x3A);
  CHECK(at(0, 7) == 0x3A);
  CHECK(at(0, 6) == 0x88);  // element 1: 0x3A880000
  // f16: 0x1400, then 0x1440.
  CHECK(at(1, 0) == 0x00);
  CHECK(at(1, 1) == 0x14);
  CHECK(at(1, 2) == 0x40);
  // bf16: the top half of the f32 bits, 0x3A80 then 0x3A88.
  CHECK(at(2, 1) == 0x3A);
  CHECK(at(2, 0) == 0x80);
  CHECK(at(2, 2) == 0x88);
  for (std::size_t i = 0; i < 18; ++i) CHECK(at(3, i) == 0);
  CHECK_THROWS_AS(w.add_tensor("bad", 8, {33}), kvplan::Error);
  CHECK_THROWS_AS(w.add_tensor("bad", 8, {32, 1, 1, 1, 1}), kvplan::Error);
}

TEST_CASE("a 150,000-token vocabulary is counted, not stored", "[gguf]") {
  TempDir dir;
  GgufWriter w;
  w.add_string("general.architecture", "qwen2");
  std::vector<std::string> tokens;
  tokens.reserve(150000);
  for (int i = 0; i < 150000; ++i) tokens.push_back("token_" + std::to_string(i));
  w.add_array_string("tokenizer.ggml.tokens", tokens);
  w.add_array_float32("tokenizer.ggml.scores", std::vector<float>(150000, 0.5f));
  w.add_array_int32("tokenizer.ggml.token_type", std::vector<std::int32_t>(150000, 1));
  w.add_array_string("tokenizer.ggml.merges", std::vector<std::string>(100000, "a b"));
  w.add_uint32("qwen2.block_count", 24);
  w.add_tensor("token_embd.weight", 8, {64, 2});
  const std::string path = dir.file("vocab.gguf");
  w.write(path);

  const auto start = std::chrono::steady_clock::now();
  const GgufHeader h = read_gguf_header(path);
  const auto elapsed = std::chrono::steady_clock::now() - start;

  const kvplan::GgufValue& vocab = *h.find("tokenizer.ggml.tokens");
  CHECK(vocab.element_type == GgufType::string);
  CHECK(vocab.count == 150000);
  CHECK_FALSE(vocab.kept);
  CHECK(vocab.strings.empty());
  CHECK_FALSE(h.find("tokenizer.ggml.scores")->kept);
  CHECK(h.find("tokenizer.ggml.scores")->floats.empty());
  CHECK(h.find("tokenizer.ggml.token_type")->count == 150000);
  CHECK(h.find("tokenizer.ggml.merges")->count == 100000);
  // Values after the skipped arrays are read correctly.
  CHECK(h.get_uint("qwen2.block_count") == 24u);
  CHECK(h.tensors.size() == 1);
  CHECK_THROWS_WITH(
      h.get_uint_array("tokenizer.ggml.token_type"),
      path + ": metadata 'tokenizer.ggml.token_type' (150000 elements or bytes) is too large to keep in memory");
  // Well under 20 ms in a release build; the bound is loose for sanitizer and debug builds.
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() < 500);
}

TEST_CASE("a split model is read part by part and summed", "[gguf][split]") {
  TempDir dir;
  const std::string prefix = dir.file("model");
  auto part_path = [&](int no) { return prefix + "-0000" + std::to_string(no) + "-of-00003.gguf"; };
  std::uint64_t total_size = 0;
  for (int no = 1; no <= 3; ++no) {
    GgufWriter w;
    if (no == 1) {
      w.add_string("general.architecture", "llama");
      w.add_uint32("llama.block_count", 3);
    }
    w.add_uint16("split.no", static_cast<std::uint16_t>(no - 1));
    w.add_uint16("split.count", 3);
    w.add_int32("split.tensors.count", 3);
    w.add_tensor("blk." + std::to_string(no - 1) + ".attn_q.weight", 8, {64, 64});  // 4352 bytes
    w.write(part_path(no));
    total_size += std::filesystem::file_size(part_path(no));
  }

  const GgufHeader model = read_gguf_model(part_path(2));  // any part names the model
  CHECK(model.path == part_path(1));
  CHECK(model.parts == std::vector<std::string>{part_path(1), part_path(2), part_path(3)});
  CHECK(model.get_uint("llama.block_count") == 3u);
  REQUIRE(model.tensors.size() == 3);
  CHECK(model.tensors[2].name == "blk.2.attn_q.weight");
  CHECK(model.tensors[2].split == 2);
  // q8_0 64 x 64: 2 blocks x 34 bytes x 64 rows = 4352, three times.
  CHECK(model.tensor_data_bytes() == 3 * 4352);
  CHECK(model.file_size == total_size);

  // A single file reads as itself.
  CHECK(read_gguf_model(part_path(3)).tensors.size() == 3);
  CHECK(read_gguf_header(part_path(3)).tensors.size() == 1);

  std::filesystem::remove(part_path(3));
  CHECK_THROWS_WITH(read_gguf_model(part_path(1)),
                    part_path(3) + ": missing part 3 of 3 of the split model " + part_path(1));
}

TEST_CASE("split parts must agree with their names", "[gguf][split]") {
  TempDir dir;
  const std::string first = dir.file("m-00001-of-00002.gguf");
  const std::string second = dir.file("m-00002-of-00002.gguf");
  GgufWriter a;
  a.add_uint16("split.no", 0);
  a.add_uint16("split.count", 2);
  a.add_tensor("x", 0, {4});
  a.write(first);
  GgufWriter b;
  b.add_uint16("split.no", 0);  // wrong: the second part is number 1
  b.add_tensor("y", 0, {4});
  b.write(second);
  CHECK_THROWS_WITH(read_gguf_model(first), second + ": split.no is 0, but the file name says 1");

  GgufWriter dup;
  dup.add_uint16("split.no", 1);
  dup.add_tensor("x", 0, {4});
  dup.write(second);
  CHECK_THROWS_WITH(read_gguf_model(first), second + ": tensor 'x' also appears in an earlier part");

  // A part renamed out of the naming scheme cannot find its siblings.
  const std::string renamed = dir.file("renamed.gguf");
  std::filesystem::copy_file(first, renamed);
  CHECK_THROWS_WITH(read_gguf_model(renamed), Catch::Contains("split.count is 2, but the name does not follow"));
}

// ---------------------------------------------------------------------------------------------
// Hostile and broken files

TEST_CASE("hostile headers are rejected with the byte offset", "[gguf][hostile]") {
  TempDir dir;
  const std::string path = dir.file("bad.gguf");
  auto error_for = [&](const ByteWriter& w) {
    write_file(path, w.bytes);
    return read_error(path);
  };

  SECTION("empty file") { CHECK(error_for(ByteWriter{}) == path + ": truncated at byte 0 while reading the header"); }
  SECTION("wrong magic") {
    ByteWriter w;
    w.raw("GGML");
    w.u32(3);
    CHECK(error_for(w) ==
          path + ": not a GGUF file: magic \"GGML\", expected \"GGUF\" at byte 0 while reading the header");
  }
  SECTION("big-endian") {
    ByteWriter w;
    w.raw("GGUF");
    w.u8(0);
    w.u8(0);
    w.u8(0);
    w.u8(3);  // version 3 written big-endian
    CHECK(error_for(w) == path +
                              ": big-endian GGUF files are not supported (version field reads 0x03000000) at byte 4 "
                              "while reading the header");
  }
  SECTION("versions 1 and 4") {
    const std::uint32_t version = GENERATE(1u, 4u, 0u);
    CHECK(error_for(preamble(version, 0, 0)) ==
          path + ": GGUF version " + std::to_string(version) +
              " is not supported (only versions 2 and 3) at byte 4 while reading the header");
  }
  SECTION("tensor count larger than the file") {
    CHECK(error_for(preamble(3, 1000, 0)) ==
          path + ": tensor count 1000 cannot fit in the 0 bytes left in the file at byte 8 while reading the header");
  }
  SECTION("kv count near 2^64") {
    CHECK(error_for(preamble(3, 0, ~0ull)) ==
          path +
              ": metadata count 18446744073709551615 cannot fit in the 0 bytes left in the file at byte 16 "
              "while reading the header");
  }
  SECTION("key length near 2^64") {
    ByteWriter w = preamble(3, 0, 1);
    w.u64(~0ull - 7);
    w.raw("general.architecture");
    CHECK(error_for(w) == path +
                              ": key length 18446744073709551608 exceeds the 20 bytes left in the file at byte 24 "
                              "while reading metadata key 0");
  }
  SECTION("string value length near 2^64") {
    ByteWriter w = preamble(3, 0, 1);
    w.str("k");
    w.type(GgufType::string);
    w.u64(~0ull);
    w.raw("short");
    CHECK(error_for(w) == path +
                              ": string length 18446744073709551615 exceeds the 5 bytes left in the file at byte 37 "
                              "while reading metadata value 'k'");
  }
  SECTION("array count near 2^64") {
    ByteWriter w = preamble(3, 0, 1);
    w.str("k");
    w.type(GgufType::array);
    w.type(GgufType::uint32);
    w.u64(~0ull);
    w.u32(1);
    CHECK(error_for(w) == path +
                              ": array of 18446744073709551615 uint32 elements needs at least 4 bytes each, but 4 "
                              "bytes are left at byte 41 while reading metadata value 'k'");
  }
  SECTION("string array count near 2^64") {
    ByteWriter w = preamble(3, 0, 1);
    w.str("k");
    w.type(GgufType::array);
    w.type(GgufType::string);
    w.u64(1ull << 62);
    w.str("a");
    CHECK_THAT(error_for(w), Catch::Contains("needs at least 8 bytes each") && Catch::Contains("at byte 41"));
  }
  SECTION("unknown value type") {
    ByteWriter w = preamble(3, 0, 1);
    w.str("k");
    w.u32(13);
    w.u32(0);
    CHECK(error_for(w) == path + ": unknown GGUF value type 13 at byte 33 while reading metadata value 'k'");
  }
  SECTION("duplicate and empty keys") {
    GgufWriter g;
    g.add_uint32("k", 1);
    g.add_uint32("k", 2);
    CHECK_THAT(error_for(ByteWriter{g.bytes()}), Catch::Contains("duplicate metadata key 'k' at byte 41"));
    GgufWriter e;
    e.add_uint32("", 1);
    CHECK_THAT(error_for(ByteWriter{e.bytes()}), Catch::Contains("empty metadata key at byte 24"));
  }
  SECTION("alignment must be a uint32 power of two") {
    GgufWriter g;
    g.add_uint32("general.alignment", 48);
    CHECK_THAT(error_for(ByteWriter{g.bytes()}), Catch::Contains("general.alignment 48 is not a power of two at byte"));
    GgufWriter u;
    u.add_uint64("general.alignment", 32);
    CHECK_THAT(error_for(ByteWriter{u.bytes()}), Catch::Contains("general.alignment must be a uint32, not uint64"));
  }
  SECTION("arrays nested too deep") {
    ByteWriter value;
    for (int i = 0; i < 9; ++i) {
      value.type(GgufType::array);
      value.u64(1);
    }
    value.type(GgufType::uint8);
    value.u64(0);
    GgufWriter g;
    g.add_raw_value("deep", GgufType::array, value.bytes);
    CHECK_THAT(error_for(ByteWriter{g.bytes()}), Catch::Contains("arrays nested deeper than 8 levels at byte"));
  }
}

TEST_CASE("hostile tensor infos are rejected with the byte offset", "[gguf][hostile]") {
  TempDir dir;
  const std::string path = dir.file("bad.gguf");
  auto error_for = [&](const GgufWriter& w) {
    w.write(path);
    return read_error(path);
  };
  // With no metadata the first tensor info starts at byte 24: name length, name, n_dims at 24 + 8 + 1.

  SECTION("five dimensions") {
    GgufWriter w;
    w.add_tensor_info("t", 0, {1, 1, 1, 1, 1}, 0);
    CHECK(error_for(w) == path + ": 5 dimensions (ggml allows at most 4) at byte 33 while reading tensor info 0 ('t')");
  }
  SECTION("dimensions whose product overflows") {
    GgufWriter w;
    w.add_tensor_info("t", 0, {1ull << 32, 1ull << 32}, 0);
    CHECK(error_for(w) == path +
                              ": dimensions overflow: element count past 2^63 at dimension 1 at byte 45 while reading "
                              "tensor info 0 ('t')");
  }
  SECTION("negative dimension") {
    GgufWriter w;
    w.add_tensor_info("t", 0, {~0ull}, 0);
    CHECK_THAT(error_for(w), Catch::Contains("dimension 0 is negative (-1) at byte 37"));
  }
  SECTION("bytes that overflow though the element count fits") {
    GgufWriter w;
    w.add_tensor_info("t", 27, {1ull << 62}, 0);  // i64: 2^62 elements x 8 bytes
    CHECK_THAT(error_for(w), Catch::Contains("overflows 64 bits") && Catch::Contains("at byte 33"));
  }
  SECTION("unknown ggml type id") {
    const std::uint32_t id = GENERATE(99u, 4u, 31u);
    GgufWriter w;
    w.add_tensor_info("t", id, {32}, 0);
    CHECK(error_for(w) ==
          path + ": unknown ggml type id " + std::to_string(id) + " at byte 45 while reading tensor info 0 ('t')");
  }
  SECTION("row not a whole number of blocks") {
    GgufWriter w;
    w.add_tensor_info("t", 8, {33, 2}, 0);
    CHECK_THAT(error_for(w),
               Catch::Contains("a q8_0 row of 33 elements is not a whole number of 32-element blocks at byte 33"));
  }
  SECTION("tensor name too long or repeated") {
    GgufWriter w;
    w.add_tensor_info(std::string(64, 'x'), 0, {1}, 0);
    CHECK_THAT(error_for(w), Catch::Contains("tensor name of 64 bytes is longer than 63 bytes at byte 24"));
    GgufWriter d;
    d.add_tensor("t", 0, {8});
    d.add_tensor("t", 0, {8});
    CHECK_THAT(error_for(d), Catch::Contains("duplicate tensor name 't'"));
  }
  SECTION("data offset not where llama.cpp expects it") {
    GgufWriter w;
    w.add_tensor("a", 0, {8});
    w.add_tensor_info("b", 0, {8}, 64);
    CHECK_THAT(error_for(w), Catch::Contains("data offset 64 is not the expected 32") &&
                                 Catch::Contains("while reading tensor info 1 ('b')"));
  }
  SECTION("data past the end of the file") {
    GgufWriter w;
    w.add_tensor_info("huge", 0, {1ull << 40}, 0);
    CHECK_THAT(error_for(w), Catch::Contains("truncated at byte") &&
                                 Catch::Contains("while reading the data of tensor 'huge', which ends at byte"));
  }
  SECTION("data offset near 2^64") {
    GgufWriter w;
    w.add_tensor_info("far", 0, {1}, ~0ull - 31);
    CHECK_THAT(error_for(w), Catch::Contains("data offset 18446744073709551584 is not the expected 0"));
  }
}

TEST_CASE("a file cut at any byte is an error, never a crash", "[gguf][hostile]") {
  TempDir dir;
  GgufWriter w = small_model();
  w.add_array_float32("scores", {1.0f, 2.0f});
  w.add_bool("flag", true);
  const std::vector<std::uint8_t> full = w.bytes();
  const std::string path = dir.file("cut.gguf");
  write_file(path, full);
  REQUIRE_NOTHROW(read_gguf_header(path));

  for (std::size_t length = 0; length < full.size(); ++length) {
    INFO("cut at " << length << " of " << full.size());
    write_file(path, std::span(full.data(), length));
    const std::string message = read_error(path);
    CHECK_THAT(message, Catch::StartsWith(path + ": ") && Catch::Contains(" at byte "));
  }
}

TEST_CASE("a file that is not there or not a file", "[gguf]") {
  TempDir dir;
  CHECK_THROWS_WITH(read_gguf_header(dir.file("nope.gguf")), dir.file("nope.gguf") + ": cannot open: no such file");
  CHECK_THROWS_WITH(read_gguf_header(dir.file("")), Catch::Contains("not a regular file"));
}
