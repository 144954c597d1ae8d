// Printing: operator<< and to_string for the types people print (and std::format where it exists).
#include <doctest/doctest.h>

#include <gguf/print.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_print {

namespace {
template <class T>
std::string streamed(const T& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}
}  // namespace

TEST_CASE("types, codes and errors print as their names") {
  CHECK(streamed(gguf::ggml_type::q4_K) == "q4_K");
  CHECK(gguf::to_string(gguf::ggml_type::iq2_xxs) == "iq2_xxs");
  CHECK(gguf::to_string(static_cast<gguf::ggml_type>(4)) == "invalid");  // a removed id
  CHECK(streamed(gguf::value_type::float32) == "float32");
  CHECK(streamed(gguf::errc::not_found) == "not found");
  CHECK(streamed(gguf::error{gguf::errc::not_found, "no such metadata key"}.about("x")) == "no such metadata key: 'x'");
}

TEST_CASE("shapes print outermost first, a tensor as name, type and shape") {
  test::file_builder fb;
  fb.tensor("token_embd.weight", gguf::ggml_type::f32, {8, 3}).tensor("scalar", gguf::ggml_type::f32, {});
  const auto bytes = fb.build();
  const auto f = gguf::parse(bytes);
  REQUIRE(f);
  const gguf::tensor_info& t = f->tensors()[0];
  CHECK(streamed(t.shape()) == "[3, 8]");
  CHECK(streamed(t) == "token_embd.weight f32 [3, 8]");
  CHECK(gguf::to_string(f->tensors()[1].shape()) == "[]");
}

TEST_CASE("values print as text, arrays item by item with strings quoted inside them") {
  test::file_builder fb;
  fb.kv<std::uint32_t>("u", 4096)
      .kv<float>("f", 1e-5f)
      .kv<double>("d", 0.1)
      .kv<bool>("b", true)
      .kv("s", "llama")
      .kv_array<std::string>("tokens", {"<s>", "a\"b", "\n"})
      .kv_array<std::int32_t>("ints", {1, -2, 3, 4, 5});
  const auto bytes = fb.build();
  const auto f = gguf::parse(bytes);
  REQUIRE(f);
  const gguf::metadata_table& m = f->metadata();
  CHECK(streamed(m.value("u").value()) == "4096");
  CHECK(streamed(m.value("f").value()) == "1e-05");
  CHECK(streamed(m.value("d").value()) == "0.1");
  CHECK(streamed(m.value("b").value()) == "true");
  CHECK(streamed(m.value("s").value()) == "llama");
  CHECK(streamed(m.value("tokens").value()) == "[\"<s>\", \"a\\\"b\", \"\\x0a\"]");
  CHECK(gguf::to_string(m.value("ints").value(), 3) == "[1, -2, 3, ...]");
  CHECK(gguf::to_string(m.value("ints").value(), 0) == "[...]");
}

#if GGUF_HAS_STD_FORMAT
TEST_CASE("std::format knows the same types") {
  CHECK(std::format("{} {}", gguf::ggml_type::q6_K, gguf::value_type::string) == "q6_K string");
}
#endif

}  // namespace test_print
