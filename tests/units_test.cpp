#include <catch2/catch.hpp>

#include "kvplan/error.h"
#include "kvplan/units.h"

using namespace kvplan;

TEST_CASE("token counts: plain, k = 1024, M = 1024 x 1024") {
  CHECK(parse_token_count("32768", "--ctx") == 32768);
  CHECK(parse_token_count("32k", "--ctx") == 32768);
  CHECK(parse_token_count("32K", "--ctx") == 32768);
  CHECK(parse_token_count("128k", "--ctx") == 131072);
  CHECK(parse_token_count("1M", "--ctx") == 1048576);
  CHECK(parse_token_count("100000", "--ctx") == 100000);
  CHECK(parse_token_count("1.5k", "--ctx") == 1536);
}

TEST_CASE("token counts refuse what is not a positive whole count") {
  for (const char* bad : {"", "0", "-5", "+5", "abc", "32x", "1e5", "12.5", "k", "0k", "99999999999999999999"})
    CHECK_THROWS_AS(parse_token_count(bad, "--ctx"), Error);
  CHECK_THROWS_WITH(parse_token_count("-5", "--ctx"), Catch::StartsWith("--ctx: '-5' is not a token count"));
  CHECK_THROWS_WITH(parse_token_count("0", "--ctx"), Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(parse_token_count("9000000000000M", "--ctx"), Catch::Contains("too large"));  // 9e12 x 2^20 > 2^63
}

TEST_CASE("memory sizes: GiB and GB are different units, a bare G means GiB") {
  CHECK(parse_memory_size("24GiB", "--gpu") == 24 * GiB);
  CHECK(parse_memory_size("24GB", "--gpu") == 24'000'000'000);
  CHECK(parse_memory_size("80G", "--gpu") == 80 * GiB);
  CHECK(parse_memory_size("512MiB", "--gpu") == 512 * MiB);
  CHECK(parse_memory_size("1.5GiB", "--gpu") == 3 * GiB / 2);
  CHECK(parse_memory_size("1024B", "--overhead") == 1024);
  // A size without a unit is refused: "24" is 24 bytes to one reader and 24 GiB to another.
  // (Before: "--overhead 2" was read as 2 bytes and every row looked better than it is.)
  CHECK_THROWS_WITH(parse_memory_size("24", "--gpu"), Catch::Contains("'24' has no unit"));
  CHECK_THROWS_WITH(parse_memory_size_or_zero("2", "--overhead"), Catch::Contains("'2' has no unit"));
  CHECK(parse_memory_size("24 gib", "--gpu") == 24 * GiB);
  for (const char* bad : {"0GB", "0", "-24GB", "24XB", "GB", "", "1..5G"}) CHECK_THROWS_AS(parse_memory_size(bad, "--gpu"), Error);
  CHECK_THROWS_WITH(parse_memory_size("0GB", "--gpu"), Catch::Contains("more than zero"));
  CHECK_THROWS_AS(parse_memory_size("99999999999TiB", "--gpu"), Error);  // overflows 64 bits
}

TEST_CASE("an overhead may be zero in any spelling, but not negative or malformed") {
  CHECK(parse_memory_size_or_zero("0", "--overhead") == 0);
  CHECK(parse_memory_size_or_zero("0GiB", "--overhead") == 0);
  CHECK(parse_memory_size_or_zero("0.5GiB", "--overhead") == GiB / 2);
  CHECK(parse_memory_size_or_zero("3GB", "--overhead") == 3'000'000'000);
  for (const char* bad : {"-1GiB", "", "GiB", "1..5G", "2XB"})
    CHECK_THROWS_WITH(parse_memory_size_or_zero(bad, "--overhead"), Catch::StartsWith("--overhead: '"));
}

TEST_CASE("32-bit engine settings: 4,294,967,295 is the largest") {
  CHECK(parse_positive_u32("4294967295", "-tp") == 4'294'967'295u);
  CHECK_THROWS_WITH(parse_positive_u32("4294967296", "-tp"), "-tp: 4294967296 is too large");
  CHECK_THROWS_WITH(parse_positive_u32("0", "-np"), Catch::Contains("must be at least 1"));
}

TEST_CASE("utilization is kept in exact millionths") {
  CHECK(parse_fraction_millionths("0.9", "--util") == 900'000);
  CHECK(parse_fraction_millionths("1", "--util") == 1'000'000);
  CHECK(parse_fraction_millionths("1.0", "--util") == 1'000'000);
  CHECK(parse_fraction_millionths("0.875", "--util") == 875'000);
  for (const char* bad : {"0", "1.1", "-0.5", "abc", "90%"}) CHECK_THROWS_AS(parse_fraction_millionths(bad, "--util"), Error);
  // floor(24 GiB x 0.9) = floor(23,192,823,398.4)
  CHECK(scale_by_millionths(24 * GiB, 900'000) == 23'192'823'398);
}

TEST_CASE("checked arithmetic refuses to wrap") {
  CHECK(checked_mul(1ull << 31, 1ull << 32, "x") == 1ull << 63);
  CHECK_THROWS_WITH(checked_mul(1ull << 32, 1ull << 32, "cache size"), Catch::StartsWith("cache size overflows 64 bits"));
  CHECK_THROWS_AS(checked_add(~0ull, 1, "x"), Error);
}

TEST_CASE("GiB print with two decimals and their label") {
  CHECK(format_gib(16'060'522'496) == "14.96 GiB");
  CHECK(format_gib(4 * GiB) == "4.00 GiB");
  CHECK(format_gib(-1'041'719'808) == "-0.97 GiB");
  CHECK(format_gib(0) == "0.00 GiB");
  CHECK(format_bytes_compact(131072) == "128 KiB");
  CHECK(format_bytes_compact(78336) == "76.50 KiB");
  CHECK(format_bytes_compact(576) == "576 B");
  CHECK(format_thousands(131072) == "131,072");
  CHECK(format_thousands(999) == "999");
  CHECK(format_param_count(8'030'261'248) == "8.03B");
  CHECK(format_param_count(999'885'952) == "1.00B");  // Gemma 3 1B
  CHECK(format_param_count(494'032'768) == "494M");
  CHECK(format_param_count(1'026'408'232'448) == "1.03T");
}
