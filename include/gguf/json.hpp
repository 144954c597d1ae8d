#ifndef GGUF_JSON_HPP
#define GGUF_JSON_HPP

/**
 * @file
 * A JSON value and reader, as Python's `json` module reads JSON: what a chat template's context is made
 * of (`messages`, `tools`, ...). Objects keep their keys in the order they came (a key given twice keeps
 * its first place and its last value, as a Python dict does), integers of any size keep their digits,
 * NaN and Infinity are numbers, and every limit (depth, size) is checked before it is passed.
 */

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "gguf/detail/utf8.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * A JSON value: null, a boolean, an integer (64-bit, or the digits of a larger one), a floating-point
 * number, a string (UTF-8), an array, or an object whose keys keep their order. A value type: copies
 * are deep.
 */
class json {
 public:
  /// What a value is.
  enum class kind : std::uint8_t {
    null,         ///< null
    boolean,      ///< true or false
    integer,      ///< an integer that fits 64 bits
    big_integer,  ///< an integer that does not: its decimal digits, kept as text
    number,       ///< a floating-point number (NaN and infinities included)
    string,       ///< a UTF-8 string
    array,        ///< a list of values
    object,       ///< keys and values, in their order
  };
  /// An array's items.
  using array_type = std::vector<json>;
  /// An object's members, in order.
  using object_type = std::vector<std::pair<std::string, json>>;

  /** null. */
  json() noexcept = default;
  /** A boolean. */
  static json boolean(bool b) {
    json j;
    j.v_ = b;
    return j;
  }
  /** An integer. */
  json(std::int64_t i) noexcept : v_(i) {}  // NOLINT(google-explicit-constructor): a literal is a value
  /** An integer. */
  json(int i) noexcept : v_(static_cast<std::int64_t>(i)) {}  // NOLINT(google-explicit-constructor)
  /** A floating-point number. */
  json(double d) noexcept : v_(d) {}  // NOLINT(google-explicit-constructor)
  /** A string (UTF-8). */
  json(std::string s) noexcept : v_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  /** A string (UTF-8). */
  json(std::string_view s) : v_(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  /** A string (UTF-8). */
  json(const char* s) : v_(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  /** An array. */
  json(array_type a) noexcept : v_(std::move(a)) {}  // NOLINT(google-explicit-constructor)
  /** An object. */
  json(object_type o) noexcept : v_(std::move(o)) {}  // NOLINT(google-explicit-constructor)
  /** An integer too large for 64 bits, from its decimal digits (an optional '-' first). */
  static json big_integer(std::string digits) {
    json j;
    j.v_ = big{std::move(digits)};
    return j;
  }

  /// What the value is.
  kind type() const noexcept { return static_cast<kind>(v_.index()); }
  /// True for null.
  bool is_null() const noexcept { return type() == kind::null; }
  /// The boolean (false for another kind).
  bool as_bool() const noexcept {
    const bool* b = std::get_if<bool>(&v_);
    return b && *b;
  }
  /// The integer (0 for another kind).
  std::int64_t as_int() const noexcept {
    const std::int64_t* i = std::get_if<std::int64_t>(&v_);
    return i ? *i : 0;
  }
  /// The number (0 for another kind).
  double as_double() const noexcept {
    const double* d = std::get_if<double>(&v_);
    return d ? *d : 0.0;
  }
  /// The string, or the digits of a big integer (empty for another kind).
  std::string_view as_string() const& noexcept {
    if (const std::string* str = std::get_if<std::string>(&v_)) return *str;
    if (const big* b = std::get_if<big>(&v_)) return b->digits;
    return {};
  }
  /// The array's items (empty for another kind).
  const array_type& items() const& noexcept {
    static const array_type none;
    const array_type* a = std::get_if<array_type>(&v_);
    return a ? *a : none;
  }
  /// The array's items, to change.
  array_type& items() & {
    if (type() != kind::array) v_ = array_type{};
    return std::get<array_type>(v_);
  }
  /// The object's members (empty for another kind).
  const object_type& members() const& noexcept {
    static const object_type none;
    const object_type* o = std::get_if<object_type>(&v_);
    return o ? *o : none;
  }
  /// The object's members, to change.
  object_type& members() & {
    if (type() != kind::object) v_ = object_type{};
    return std::get<object_type>(v_);
  }
  /// Refused on a temporary: its insides go with it at the end of the statement.
  std::string_view as_string() const&& = delete;
  /// Refused on a temporary (`for (auto& x : parse(...)->items())` would read freed memory).
  void items() const&& = delete;
  /// Refused on a temporary (`for (auto& m : parse(...)->members())` would read freed memory).
  void members() const&& = delete;
  /// The member `key` of an object, or nullptr.
  const json* find(std::string_view key) const& noexcept {
    for (const auto& [k, v] : members())
      if (k == key) return &v;
    return nullptr;
  }
  /// Refused on a temporary: the member would go with it.
  const json* find(std::string_view key) const&& = delete;
  /**
   * Sets member `key` of an object (a null becomes an object first): replaced in place when it is there,
   * appended when it is not.
   * @return the member
   */
  json& set(std::string_view key, json value) {
    object_type& m = members();
    for (auto& [k, v] : m) {
      if (k == key) return v = std::move(value);
    }
    m.emplace_back(std::string(key), std::move(value));
    return m.back().second;
  }
  /// Deep equality: an integer and a number are not equal; NaN equals NaN, so that a document equals its copy.
  friend bool operator==(const json& a, const json& b) {
    const double* x = std::get_if<double>(&a.v_);
    const double* y = std::get_if<double>(&b.v_);
    if (x && y) return *x == *y || (std::isnan(*x) && std::isnan(*y));
    return a.v_ == b.v_;
  }

 private:
  struct big {
    std::string digits;
    friend bool operator==(const big&, const big&) = default;
  };
  std::variant<std::monostate, bool, std::int64_t, big, double, std::string, array_type, object_type> v_;
};

/// Limits of `parse_json`: what a hostile document can cost.
struct json_limits {
  std::uint32_t max_depth = 512;                     ///< arrays and objects nested at most this deep
  std::uint64_t max_bytes = std::uint64_t{1} << 30;  ///< the longest document read
};

namespace detail {

class json_reader {
 public:
  json_reader(std::string_view s, const json_limits& l) noexcept : s_(s), limits_(l) {}

  result<json> document() {
    if (s_.size() > limits_.max_bytes)
      return fail("a document larger than json_limits::max_bytes", errc::limit_exceeded);
    skip_space();
    json v;
    GGUF_TRY(value(v, 0));
    skip_space();
    if (at_ != s_.size()) return fail("text after the JSON value");
    return v;
  }

 private:
  GGUF_COLD error fail(const char* what, errc code = errc::bad_json) const noexcept { return error{code, at_, what}; }

  void skip_space() noexcept {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }

  bool literal(std::string_view word) noexcept {
    if (s_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  result<void> value(json& out, std::uint32_t depth) {
    if (at_ >= s_.size()) return fail("the document ends where a value should be");
    const char c = s_[at_];
    if (c == '{' || c == '[') {
      if (depth >= limits_.max_depth) {
        return fail("arrays and objects nested deeper than json_limits::max_depth", errc::too_deep);
      }
      ++at_;
      return c == '{' ? object(out, depth + 1) : array(out, depth + 1);
    }
    if (c == '"') {
      std::string s;
      GGUF_TRY(string(s));
      out = json(std::move(s));
      return {};
    }
    if (literal("true")) return out = json::boolean(true), result<void>{};
    if (literal("false")) return out = json::boolean(false), result<void>{};
    if (literal("null")) return out = json(), result<void>{};
    if (literal("NaN")) return out = json(std::nan("")), result<void>{};
    if (literal("Infinity")) return out = json(HUGE_VAL), result<void>{};
    if (literal("-Infinity")) return out = json(-HUGE_VAL), result<void>{};
    return number(out);
  }

  result<void> number(json& out) {
    const std::size_t start = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    const auto digit = [&] { return at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9'; };
    if (!digit()) return fail("not a JSON value");
    if (s_[at_] == '0') {
      ++at_;
    } else {
      while (digit()) ++at_;
    }
    bool is_float = false;
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      if (!digit()) return fail("a number's fraction has no digits");
      while (digit()) ++at_;
      is_float = true;
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (!digit()) return fail("a number's exponent has no digits");
      while (digit()) ++at_;
      is_float = true;
    }
    const std::string_view text = s_.substr(start, at_ - start);
    if (is_float) {
      double d = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
      if (r.ec == std::errc::result_out_of_range) {  // Python: an overflow is infinite, an underflow zero
        const bool negative = text[0] == '-';
        const auto e = text.find_first_of("eE");
        const bool tiny = e != std::string_view::npos && e + 1 < text.size() && text[e + 1] == '-';
        d = tiny ? (negative ? -0.0 : 0.0) : (negative ? -HUGE_VAL : HUGE_VAL);
      } else if (r.ec != std::errc()) {
        return fail("not a number");
      }
      out = json(d);
      return {};
    }
    std::int64_t i = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), i);
    if (r.ec == std::errc::result_out_of_range) {
      out = json::big_integer(std::string(text == "-0" ? "0" : text));
    } else {
      out = json(i);
    }
    return {};
  }

  static bool hex4(std::string_view s, std::size_t at, std::uint32_t& v) noexcept {
    if (at + 4 > s.size()) return false;
    v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = s[at + k];
      std::uint32_t d;
      if (c >= '0' && c <= '9') {
        d = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
      v = v * 16 + d;
    }
    return true;
  }

  static void put(std::string& out, std::uint32_t c) { gguf::detail::append_utf8(out, c); }  // surrogates too

  // a string after its opening quote: escapes decoded, raw UTF-8 checked
  result<void> string(std::string& out) {
    ++at_;
    while (true) {
      const std::size_t run = at_;
      while (at_ < s_.size()) {
        const auto b = static_cast<unsigned char>(s_[at_]);
        if (b == '"' || b == '\\' || b < 0x20 || b >= 0x80) break;
        ++at_;
      }
      out.append(s_.substr(run, at_ - run));
      if (at_ >= s_.size()) return fail("a string without its closing quote");
      const auto b = static_cast<unsigned char>(s_[at_]);
      if (b == '"') {
        ++at_;
        return {};
      }
      if (b < 0x20) return fail("a control character inside a string (escape it)");
      if (b >= 0x80) {
        // RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF
        const auto step =
            gguf::detail::utf8_next(reinterpret_cast<const unsigned char*>(s_.data()) + at_, s_.size() - at_);
        if (!step.valid) return fail("invalid UTF-8 in a string");
        const std::size_t n = step.length;
        out.append(s_.substr(at_, n));
        at_ += n;
        continue;
      }
      // an escape
      if (at_ + 1 >= s_.size()) return fail("a string without its closing quote");
      const char e = s_[at_ + 1];
      at_ += 2;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t c = 0;
          if (!hex4(s_, at_, c)) return fail("a \\u escape without four hex digits");
          at_ += 4;
          std::uint32_t lo = 0;
          if (c >= 0xD800 && c <= 0xDBFF && at_ + 6 <= s_.size() && s_[at_] == '\\' && s_[at_ + 1] == 'u' &&
              hex4(s_, at_ + 2, lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
            at_ += 6;
          }
          put(out, c);
          break;
        }
        default: return fail("an invalid escape in a string");
      }
    }
  }

  result<void> array(json& out, std::uint32_t depth) {
    json::array_type items;
    skip_space();
    if (at_ < s_.size() && s_[at_] == ']') {
      ++at_;
      out = json(std::move(items));
      return {};
    }
    while (true) {
      skip_space();
      items.emplace_back();
      GGUF_TRY(value(items.back(), depth));
      skip_space();
      if (at_ >= s_.size()) return fail("an array without its closing bracket");
      if (s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (s_[at_] == ']') {
        ++at_;
        out = json(std::move(items));
        return {};
      }
      return fail("expected ',' or ']' in an array");
    }
  }

  result<void> object(json& out, std::uint32_t depth) {
    json o = json(json::object_type{});
    skip_space();
    if (at_ < s_.size() && s_[at_] == '}') {
      ++at_;
      out = std::move(o);
      return {};
    }
    while (true) {
      skip_space();
      if (at_ >= s_.size() || s_[at_] != '"') return fail("expected a string key in an object");
      std::string key;
      GGUF_TRY(string(key));
      skip_space();
      if (at_ >= s_.size() || s_[at_] != ':') return fail("expected ':' after an object key");
      ++at_;
      skip_space();
      json v;
      GGUF_TRY(value(v, depth));
      o.members().emplace_back(std::move(key), std::move(v));
      skip_space();
      if (at_ >= s_.size()) return fail("an object without its closing brace");
      if (s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (s_[at_] == '}') {
        ++at_;
        merge_duplicates(o.members());
        out = std::move(o);
        return {};
      }
      return fail("expected ',' or '}' in an object");
    }
  }

  // A key given twice keeps its first place and takes its last value, as a Python dict does; linear
  // in the members (hashed beyond a few), so that a hostile object of many keys costs no more.
  static void merge_duplicates(json::object_type& m) {
    if (m.size() < 2) return;
    std::vector<std::size_t> gone;  // members merged into an earlier one
    if (m.size() <= 16) {
      for (std::size_t i = 1; i < m.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (m[j].first == m[i].first && !std::binary_search(gone.begin(), gone.end(), j)) {
            m[j].second = std::move(m[i].second);
            gone.push_back(i);
            break;
          }
        }
      }
    } else {
      std::unordered_map<std::string_view, std::size_t> first;
      first.reserve(m.size());
      for (std::size_t i = 0; i < m.size(); ++i) {
        const auto [it, fresh] = first.emplace(m[i].first, i);
        if (!fresh) {
          m[it->second].second = std::move(m[i].second);
          gone.push_back(i);
        }
      }
    }
    if (gone.empty()) return;
    std::size_t out = 0, g = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (g < gone.size() && gone[g] == i) {
        ++g;
        continue;
      }
      if (out != i) m[out] = std::move(m[i]);
      ++out;
    }
    m.resize(out);
  }

  std::string_view s_;
  json_limits limits_;
  std::size_t at_ = 0;
};

}  // namespace detail

/**
 * Reads a JSON document as Python's `json.loads` does (NaN, Infinity and -Infinity included; a key given
 * twice keeps its first place and its last value; integers of any size).
 * @param text   the document (UTF-8)
 * @param limits how deep and how large it may be
 * @return the value; `bad_json` naming the broken rule at its byte offset, `too_deep` or `limit_exceeded`
 *         for a limit
 */
inline result<json> parse_json(std::string_view text, const json_limits& limits = {}) {
  return detail::json_reader(text, limits).document();
}

GGUF_END_NAMESPACE

#endif  // GGUF_JSON_HPP
