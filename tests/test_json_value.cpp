// gguf::json and parse_json: a chat template's context, read as Python's json.loads reads it.
#include <doctest/doctest.h>
#include <gguf/json.hpp>

#include <cmath>
#include <string>

namespace test_json_value {

namespace {
using gguf::errc;
using gguf::json;

gguf::errc error_of(std::string_view text, const gguf::json_limits& limits = {}) {
  const auto j = gguf::parse_json(text, limits);
  return j ? errc::success : j.error().code;
}
}  // namespace

TEST_CASE("values of every kind") {
  const auto j = gguf::parse_json(R"( {"n": null, "t": true, "f": false, "i": -42, "x": 2.5e3, "s": "a\"b",
                                       "a": [1, [2, {}]], "o": {"k": "v"}} )");
  REQUIRE(j);
  CHECK(j->type() == json::kind::object);
  CHECK(j->find("n")->is_null());
  CHECK(j->find("t")->as_bool());
  CHECK_FALSE(j->find("f")->as_bool());
  CHECK(j->find("i")->as_int() == -42);
  CHECK(j->find("x")->as_double() == 2500.0);
  CHECK(j->find("s")->as_string() == "a\"b");
  CHECK(j->find("a")->items().size() == 2);
  CHECK(j->find("o")->find("k")->as_string() == "v");
  CHECK(j->find("nope") == nullptr);
}

TEST_CASE("integers: 64 bits exactly, larger ones keep their digits, a fraction or exponent makes a float") {
  CHECK(gguf::parse_json("9223372036854775807")->as_int() == INT64_MAX);
  CHECK(gguf::parse_json("-9223372036854775808")->as_int() == INT64_MIN);
  const auto big = gguf::parse_json("-123456789012345678901234567890");
  CHECK(big->type() == json::kind::big_integer);
  CHECK(big->as_string() == "-123456789012345678901234567890");
  CHECK(gguf::parse_json("1.0")->type() == json::kind::number);
  CHECK(gguf::parse_json("1e2")->as_double() == 100.0);
  CHECK(gguf::parse_json("-0")->as_int() == 0);
}

TEST_CASE("Python's extensions and edges: NaN, Infinity, overflow to infinity, underflow to zero") {
  CHECK(std::isnan(gguf::parse_json("NaN")->as_double()));
  CHECK(gguf::parse_json("-Infinity")->as_double() == -HUGE_VAL);
  CHECK(gguf::parse_json("1e999")->as_double() == HUGE_VAL);
  CHECK(gguf::parse_json("1e-999")->as_double() == 0.0);
}

TEST_CASE("strings: escapes, surrogate pairs, UTF-8 kept as is") {
  CHECK(gguf::parse_json(R"("\n\t\\\/\b\f\r\u00e9\ud83d\ude00")")->as_string() ==
        "\n\t\\/\b\f\r\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(gguf::parse_json("\"\xE6\x97\xA5\"")->as_string() == "\xE6\x97\xA5");
  CHECK(error_of("\"a\nb\"") == errc::bad_json);  // a raw control character
  CHECK(error_of(R"("\x")") == errc::bad_json);
  CHECK(error_of(R"("abc)") == errc::bad_json);
}

TEST_CASE("a key given twice keeps its first place and its last value, as a Python dict") {
  const auto j = gguf::parse_json(R"({"a": 1, "b": 2, "a": 3})");
  REQUIRE(j);
  REQUIRE(j->members().size() == 2);
  CHECK(j->members()[0].first == "a");
  CHECK(j->members()[0].second.as_int() == 3);
  CHECK(j->members()[1].first == "b");
  // many keys, many repeats: the same rule, in linear time
  std::string text = "{";
  for (int k = 0; k < 50000; ++k) text += (k ? ",\"k" : "\"k") + std::to_string(k % 1000) + "\":" + std::to_string(k);
  text += "}";
  const auto many = gguf::parse_json(text);
  REQUIRE(many);
  REQUIRE(many->members().size() == 1000);
  CHECK(many->members()[7].first == "k7");
  CHECK(many->members()[7].second.as_int() == 49007);
}

TEST_CASE("malformed documents are bad_json at the offending byte") {
  for (const char* bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "tru", "nul", "[1 2]", "{\"a\" 1}",
                          "{1: 2}", "1 2", "'a'", "\"\\u12\""}) {
    CAPTURE(bad);
    CHECK(error_of(bad) == errc::bad_json);
  }
  const auto j = gguf::parse_json("[1, 2, x]");
  REQUIRE_FALSE(j);
  CHECK(j.error().offset == 7);
}

TEST_CASE("limits: depth and size are checked before they are passed") {
  gguf::json_limits limits;
  limits.max_depth = 3;
  CHECK(error_of("[[[1]]]", limits) == errc::success);
  CHECK(error_of("[[[[1]]]]", limits) == errc::too_deep);
  CHECK(error_of(std::string(100000, '['), {}) == errc::too_deep);  // no recursion past the limit
  limits.max_bytes = 4;
  CHECK(error_of("[1,2]", limits) == errc::limit_exceeded);
}

TEST_CASE("a value type: built in code, compared deeply, copied deeply") {
  json o = json(json::object_type{});
  o.set("messages", json(json::array_type{json(json::object_type{{"role", "user"}, {"content", "hi"}})}));
  o.set("n", 1);
  o.set("n", 2);  // replaced in place
  CHECK(o == *gguf::parse_json(R"({"messages": [{"role": "user", "content": "hi"}], "n": 2})"));
  json copy = o;
  copy.set("n", 3);
  CHECK(o.find("n")->as_int() == 2);
  CHECK(json(1) != json(1.0));  // an integer is not a float
}

}  // namespace test_json_value
