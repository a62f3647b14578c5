// fmt's formatting engine, compiled once for all of kvplan.
//
// With FMT_HEADER_ONLY every file that calls fmt::format compiled the whole engine again (integer
// and float writers, Dragonbox, the format-string parser): about 6 of a small file's 8.5 s at -O3,
// in each of the ~260 files of the library and its tests. Debian's libfmt-dev has no static
// archive, and the kvplan binary is static, so the engine is built here, from fmt's own
// implementation header, as libfmt would build it; kvplan's other files see only declarations.
// Each instantiation below is one the rest of kvplan needs and fmt's headers declare extern.

#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// Shortest round-trip float and double output (format_to into an iterator of kvplan's own).
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

// Locale-aware formatting ({:L}) is declared with the locale type erased.
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;

// The one entry every fmt::format of a char string reaches.
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
