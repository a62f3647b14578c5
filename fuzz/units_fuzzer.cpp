// The strings users type for sizes, contexts, fractions, counts, dtypes, GPUs and formats: every
// parser either answers within its documented range or throws a one-line kvplan::Error, and what
// it answers formats without trouble.

#include <limits>

#include "fuzz_support.h"
#include "kvplan/catalog.h"
#include "kvplan/dtype.h"
#include "kvplan/error.h"
#include "kvplan/gpu.h"
#include "kvplan/report.h"
#include "kvplan/units.h"

using namespace kvplan;

namespace {

template <typename Parse>
void parse(std::string_view what, Parse&& parse_text) {
  try {
    parse_text();
  } catch (const Error& error) {
    fuzz::require_message(error.what(), what);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte picks the family, so the cheap numeric parsers are not slowed down by the
  // "did you mean" edit distances of the name lookups.
  if (size == 0) return 0;
  const unsigned family = data[0] % 3;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  if (family == 1) {
    const Dtype& bf16 = parse_weight_dtype("bf16");
    parse("parse_kv_dtype", [&] { (void)parse_kv_dtype(text, bf16); });
    parse("parse_weight_dtype", [&] { (void)parse_weight_dtype(text); });
    parse("parse_torch_dtype", [&] { (void)parse_torch_dtype(text); });
    parse("parse_output_format", [&] { (void)parse_output_format(text); });
    return 0;
  }
  if (family == 2) {
    parse("resolve_gpu", [&] {
      const GpuSpec gpu = resolve_gpu(text, builtin_gpus());
      fuzz::require(gpu.memory_bytes >= 1, "a GPU with no memory");
    });
    parse("builtin_models().find", [&] { (void)builtin_models().find(text); });
    return 0;
  }

  parse("parse_token_count", [&] {
    const std::uint64_t tokens = parse_token_count(text, "--ctx");
    fuzz::require(tokens >= 1 && tokens <= (std::uint64_t{1} << 63), "token count out of range");
    (void)format_thousands(tokens);
  });
  parse("parse_memory_size", [&] {
    const std::uint64_t bytes = parse_memory_size(text, "--gpu");
    fuzz::require(bytes >= 1, "memory size of zero");
    (void)format_bytes_compact(bytes);
    if (bytes <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      (void)format_gib(static_cast<std::int64_t>(bytes));
      (void)format_gib(-static_cast<std::int64_t>(bytes));
    }
    (void)format_param_count(bytes);
  });
  parse("parse_fraction_millionths", [&] {
    const std::uint32_t millionths = parse_fraction_millionths(text, "--util");
    fuzz::require(millionths >= 1 && millionths <= 1'000'000, "fraction out of (0, 1]");
    (void)scale_by_millionths(std::numeric_limits<std::uint64_t>::max(), millionths);
  });
  parse("parse_positive_integer", [&] { fuzz::require(parse_positive_integer(text, "--batch") >= 1, "zero batch"); });
  return 0;
}
