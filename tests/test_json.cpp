// The JSON printer of gguf-dump: Python's float repr and json.dumps string rules, which the oracle uses.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "gguf_json.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_json {

namespace {
std::string f(double x) {
  std::string s;
  gguf_json::append_float(s, x);
  return s;
}
std::string s(std::string_view in) {
  std::string out;
  gguf_json::append_string(out, in);
  return out;
}
}  // namespace

TEST_CASE("floats print as Python's repr") {
  CHECK(f(0.0) == "0.0");
  CHECK(f(-0.0) == "-0.0");
  CHECK(f(1.0) == "1.0");
  CHECK(f(100.0) == "100.0");
  CHECK(f(0.5) == "0.5");
  CHECK(f(0.0001) == "0.0001");
  CHECK(f(0.00001) == "1e-05");
  CHECK(f(1e16) == "1e+16");
  CHECK(f(1234567890123456.0) == "1234567890123456.0");
  CHECK(f(1.5e300) == "1.5e+300");
  CHECK(f(static_cast<double>(1e-5f)) == "9.999999747378752e-06");
  CHECK(f(static_cast<double>(0.1f)) == "0.10000000149011612");
  CHECK(f(5e-324) == "5e-324");
  CHECK(f(std::numeric_limits<double>::quiet_NaN()) == "\"nan\"");
  CHECK(f(std::numeric_limits<double>::infinity()) == "\"inf\"");
  CHECK(f(-std::numeric_limits<double>::infinity()) == "\"-inf\"");
}

TEST_CASE("strings are escaped as json.dumps(ensure_ascii=False) does") {
  CHECK(s("plain") == "\"plain\"");
  CHECK(s("q\"b\\") == "\"q\\\"b\\\\\"");
  CHECK(s("\n\r\t\b\f") == "\"\\n\\r\\t\\b\\f\"");
  CHECK(s("\x01\x1f") == "\"\\u0001\\u001f\"");
  CHECK(s("\x7f") == "\"\x7f\"");
  CHECK(s("\xc3\xa9\xe2\x96\x81\xf0\x9f\x98\x80") == "\"\xc3\xa9\xe2\x96\x81\xf0\x9f\x98\x80\"");  // é ▁ 😀 kept
}

TEST_CASE("a NUL ends the string, as in ggml's C API") { CHECK(s(std::string_view("ab\0cd", 5)) == "\"ab\""); }

TEST_CASE("invalid UTF-8 becomes U+FFFD, one per maximal ill-formed subpart") {
  const std::string r = "\xef\xbf\xbd";
  CHECK(s("\x80") == "\"" + r + "\"");
  CHECK(s("a\xff"
          "b") == "\"a" + r + "b\"");
  CHECK(s("\xc0\xaf") == "\"" + r + r + "\"");  // overlong lead: each byte
  CHECK(s("\xe2\x82") == "\"" + r + "\"");      // truncated 3-byte: one
  CHECK(s("\xe2\x82"
          "A") == "\"" + r + "A\"");
  CHECK(s("\xed\xa0\x80") == "\"" + r + r + r + "\"");          // surrogate: lead, then lone continuations
  CHECK(s("\xf4\x90\x80\x80") == "\"" + r + r + r + r + "\"");  // above U+10FFFF
  CHECK(s("\xf0\x9f\x98") == "\"" + r + "\"");
}

}  // namespace test_json
