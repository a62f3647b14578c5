// GGUF → model spec (gguf_model_from_header): the input is a GGUF file, read as the header fuzzer
// reads it; a header that reads is turned into a spec, which must then plan. Every failure is a
// one-line kvplan::Error.

#include <string>

#include "fuzz_support.h"
#include "kvplan/plan.h"
#include "kvplan/error.h"
#include "loaders/gguf.h"
#include "loaders/gguf_model.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_memfd(data, size);
  ModelSpec spec;
  try {
    spec = gguf_model_from_header(read_gguf_header(path)).spec;
  } catch (const Error& error) {
    fuzz::require_message(error.what(), "gguf_model_from_header");
    return 0;
  }
  fuzz::require_plans(spec, 4096);
  return 0;
}
