// GGUF headers (read_gguf_header). The input is the file: it is written to an in-memory file
// (memfd) and read through its /proc path, the same code path as a file on disk. A header that
// reads must describe a file whose every tensor lies inside it; every getter either answers or
// throws kvplan::Error.

#include <string>

#include "fuzz_support.h"
#include "kvplan/error.h"
#include "loaders/gguf.h"

using namespace kvplan;

namespace {


template <typename Getter>
void try_get(Getter&& getter) {
  try {
    getter();
  } catch (const Error& error) {
    fuzz::require_message(error.what(), "a GgufHeader getter");  // quotes the key it was given
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_memfd(data, size);
  GgufHeader header;
  try {
    header = read_gguf_header(path);
  } catch (const Error& error) {
    fuzz::require_one_line(error.what(), "read_gguf_header");
    return 0;
  }
  fuzz::require(header.file_size == size, "file_size is not the input size");
  fuzz::require(header.data_offset <= size, "data section starts past the end of the file");
  for (const GgufTensorInfo& tensor : header.tensors) {
    const std::uint64_t section = size - header.data_offset;
    fuzz::require(tensor.offset <= section && tensor.bytes <= section - tensor.offset,
                  "tensor '" + tensor.name + "' lies outside the file");
  }
  try_get([&] { (void)header.tensor_data_bytes(); });
  for (const auto& entry : header.metadata) {
    const std::string& key = entry.first;  // clang 14 cannot capture a structured binding
    try_get([&] { (void)header.get_uint(key); });
    try_get([&] { (void)header.get_float(key); });
    try_get([&] { (void)header.get_bool(key); });
    try_get([&] { (void)header.get_string(key); });
    try_get([&] { (void)header.get_uint_array(key); });
    try_get([&] { (void)header.get_bool_array(key); });
  }
  return 0;
}
