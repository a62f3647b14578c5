// printable(): what a report line or an error quotes reaches the terminal escaped and bounded.
// Plain ASCII is copied in runs (issue #10: the table's lines went through it byte by byte); the
// escapes and the limit must be what they were.

#include <string>

#include <catch2/catch.hpp>

#include "model/text.h"

TEST_CASE("printable escapes controls and bad UTF-8 and stops at the limit", "[text]") {
  using kvplan::printable;
  CHECK(printable("plain text, 24 GiB") == "plain text, 24 GiB");
  CHECK(printable("a\x1b[2Jb") == "a\\x1b[2Jb");                 // ESC: a terminal escape
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("tab\there") == "tab\\x09here");
  CHECK(printable("fits \xe2\x9c\x85") == "fits \xe2\x9c\x85");  // U+2705 is kept
  CHECK(printable("c1 \xc2\x9b") == "c1 \\xc2\\x9b");            // U+009B, a C1 control
  CHECK(printable("cut \xe2\x9c") == "cut \\xe2\\x9c");          // a truncated sequence
  // The limit counts output bytes: 5 of "abcdefgh", then "...".
  CHECK(printable("abcdefgh", 5) == "abcde...");
  CHECK(printable("abcde", 5) == "abcde");                        // exactly the limit: nothing cut
  CHECK(printable("ab\x01" "cdef", 5) == "ab\\x01...");             // an escape may pass the limit, then it stops
  CHECK(printable(std::string(300, 'x')) == std::string(200, 'x') + "...");  // the default limit, 200
}
