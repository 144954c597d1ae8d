// The values of gguf-edit's command line: KEY=TYPE:VALUE with TYPE a GGUF value type name, and arrays as
// array:TYPE:[JSON items]. Numbers read as Python's int(text, 0) and float(text) read them (the
// reference tool is Python), checked against the type's range.
#ifndef GGUF_EXAMPLES_EDIT_ARGS_HPP
#define GGUF_EXAMPLES_EDIT_ARGS_HPP

#include <gguf/detail/utf8.hpp>
#include <gguf/gguf.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edit_args {

/** A parsed value, or why it is not one (a message for the user). */
struct parsed {
  std::optional<gguf::value> value;
  std::string problem;
  /// The text is a value of the type, but one the type or the format cannot hold (out of range, not
  /// UTF-8): bad input rather than a usage error.
  bool out_of_range = false;
};

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/** Python's int(text, 0): a sign, 0x/0o/0b prefixes, underscores between digits, no leading zeros. */
inline bool parse_int(std::string_view text, bool& negative, std::uint64_t& magnitude, bool& overflow) {
  overflow = false;
  std::string_view s = trim(text);
  negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0') {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    if (p == 'x') base = 16;
    if (p == 'o') base = 8;
    if (p == 'b') base = 2;
    if (base != 10) {
      s.remove_prefix(2);
      if (!s.empty() && s[0] == '_') s.remove_prefix(1);  // 0x_ff is valid Python
    }
  }
  if (s.empty()) return false;
  if (base == 10 && s[0] == '0') {  // Python 3 forbids leading zeros ("010"), but not "0" or "00"
    for (char c : s) {
      if (c != '0' && c != '_') return false;
    }
  }
  magnitude = 0;
  bool last_underscore = true;  // no leading underscore
  for (char c : s) {
    if (c == '_') {
      if (last_underscore) return false;
      last_underscore = true;
      continue;
    }
    unsigned d;
    if (c >= '0' && c <= '9') {
      d = static_cast<unsigned>(c - '0');
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      d = static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    } else {
      return false;
    }
    if (d >= base) return false;
    if (magnitude > (std::numeric_limits<std::uint64_t>::max() - d) / base) {
      magnitude = std::numeric_limits<std::uint64_t>::max();  // past every type: out of range
      overflow = true;
    } else {
      magnitude = magnitude * base + d;
    }
    last_underscore = false;
  }
  return !last_underscore;  // no trailing underscore
}

template <class T>
inline parsed integer(std::string_view text, std::string_view type) {
  bool negative = false, overflow = false;
  std::uint64_t m = 0;
  if (!parse_int(text, negative, m, overflow)) {
    return {std::nullopt, "'" + std::string(text) + "' is not a " + std::string(type) + " value"};
  }
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  const bool fits = !overflow && (negative ? (m == 0 || (std::is_signed_v<T> && m - 1 <= max)) : m <= max);
  if (!fits) {
    const std::string range = " (" + std::to_string(std::numeric_limits<T>::min()) + " to " +
                              std::to_string(std::numeric_limits<T>::max()) + ")";
    return {
        std::nullopt,
        "'" + std::string(text) + "' is too " + (negative ? "small" : "large") + " for " + std::string(type) + range,
        true};
  }
  T v{};
  if constexpr (std::is_signed_v<T>) {
    v = negative && m != 0 ? static_cast<T>(-static_cast<std::int64_t>(m - 1) - 1) : static_cast<T>(m);
  } else {
    v = static_cast<T>(m);
  }
  return {gguf::value(v), {}};
}

/** A number's text names infinity or NaN itself ("inf", "-Infinity", "nan"), as opposed to overflowing. */
inline bool names_non_finite(std::string_view text) {
  std::string t(trim(text));
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.erase(0, 1);
  return t == "inf" || t == "infinity" || t == "nan";
}

/** True when the decimal text has a non-zero digit in its mantissa (so 0 is not what it means). */
inline bool has_nonzero_digit(std::string_view text) {
  for (char c : trim(text)) {
    if (c == 'e' || c == 'E') break;
    if (c >= '1' && c <= '9') return true;
  }
  return false;
}

/**
 * A float value of `type` (float32 or float64), refusing what the type cannot hold: a finite number
 * that would become infinite ("too large") or a non-zero one that would become 0 ("too small").
 */
inline parsed float_value(std::string_view type, std::string_view text, double d) {
  const bool f32 = type == "float32";
  const bool inf = f32 ? std::isinf(static_cast<float>(d)) : std::isinf(d);
  const bool zero = f32 ? static_cast<float>(d) == 0.0f : d == 0.0;
  if (!names_non_finite(text)) {
    if (inf) {
      return {std::nullopt,
              "'" + std::string(text) + "' is too large for " + std::string(type) +
                  (f32 ? " (at most 3.4028235e38)" : " (at most 1.7976931348623157e308)"),
              true};
    }
    if (zero && has_nonzero_digit(text)) {
      return {std::nullopt,
              "'" + std::string(text) + "' is too small for " + std::string(type) +
                  " (it would become 0; the smallest is " + (f32 ? "1.4e-45)" : "4.9e-324)"),
              true};
    }
  }
  return {f32 ? gguf::value(static_cast<float>(d)) : gguf::value(d), {}};
}

/** Python's float(text): decimal or inf/nan, surrounding spaces allowed. */
inline std::optional<double> parse_float(std::string_view text) {
  const std::string s(trim(text));
  if (s.empty()) return std::nullopt;
  for (char c : s) {
    if (c == 'x' || c == 'X' || c == 'p' || c == 'P') return std::nullopt;  // strtod reads hex floats; Python does not
  }
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return d;  // overflow gives +-inf, as Python's float("1e999")
}

/** True when `s` is well-formed UTF-8. */
inline bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const gguf::detail::utf8_step step = gguf::detail::utf8_next(p + i, s.size() - i);
    if (!step.valid) return false;
    i += step.length;
  }
  return true;
}

inline parsed scalar(std::string_view type, std::string_view text) {
  if (type == "uint8") return integer<std::uint8_t>(text, type);
  if (type == "int8") return integer<std::int8_t>(text, type);
  if (type == "uint16") return integer<std::uint16_t>(text, type);
  if (type == "int16") return integer<std::int16_t>(text, type);
  if (type == "uint32") return integer<std::uint32_t>(text, type);
  if (type == "int32") return integer<std::int32_t>(text, type);
  if (type == "uint64") return integer<std::uint64_t>(text, type);
  if (type == "int64") return integer<std::int64_t>(text, type);
  if (type == "float32" || type == "float64") {
    const auto d = parse_float(text);
    if (!d) return {std::nullopt, "'" + std::string(text) + "' is not a " + std::string(type) + " value"};
    return float_value(type, text, *d);
  }
  if (type == "bool") {
    std::string t(text);
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "true" || t == "1") return {gguf::value(true), {}};
    if (t == "false" || t == "0") return {gguf::value(false), {}};
    return {std::nullopt, "'" + std::string(text) + "' is not a bool value (true, false, 1 or 0)"};
  }
  if (type == "string") {
    if (!valid_utf8(text)) return {std::nullopt, "the string is not valid UTF-8 (GGUF strings are UTF-8)", true};
    return {gguf::value(text), {}};
  }
  return {std::nullopt, "unknown type '" + std::string(type) +
                            "' (uint8 int8 uint16 int16 uint32 int32 uint64 int64 float32 float64 bool string, "
                            "or array:TYPE:[...])"};
}

/** A minimal JSON reader for the items of an array value: numbers, strings, true/false, arrays. */
class json_items {
 public:
  explicit json_items(std::string_view text) : s_(text) {}

  /** The array `s_` holds, items of `item_type` (or nested arrays: "array:TYPE"). */
  parsed array(std::string_view item_type) {
    skip();
    parsed r = read_array(item_type);
    if (!r.value) return r;
    skip();
    if (i_ != s_.size()) return {std::nullopt, "unexpected text after the array"};
    return r;
  }

 private:
  parsed read_array(std::string_view item_type) {
    if (!eat('[')) return {std::nullopt, "an array value starts with '['"};
    const bool nested = item_type.rfind("array:", 0) == 0;
    std::vector<gguf::value> arrays;
    std::vector<std::string> texts;  // each scalar item's text (numbers, bools) or content (strings)
    skip();
    if (!eat(']')) {
      while (true) {
        skip();
        if (nested) {
          parsed inner = read_array(item_type.substr(6));
          if (!inner.value) return inner;
          arrays.push_back(std::move(*inner.value));
        } else if (peek() == '"') {
          std::string str;
          if (!read_string(str)) return {std::nullopt, "bad JSON string in the array"};
          if (item_type != "string") return {std::nullopt, "a string item in an array of " + std::string(item_type)};
          texts.push_back(std::move(str));
        } else {
          const std::size_t b = i_;
          while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ']' && !std::isspace(static_cast<unsigned char>(s_[i_])))
            ++i_;
          if (b == i_) return {std::nullopt, "an empty item in the array"};
          if (item_type == "string") return {std::nullopt, "an item that is not a string in an array of strings"};
          texts.emplace_back(s_.substr(b, i_ - b));
        }
        skip();
        if (eat(']')) break;
        if (!eat(',')) return {std::nullopt, "items are separated by ','"};
      }
    }
    if (nested) {
      auto v = gguf::value::arrays(arrays);
      if (!v) return {std::nullopt, gguf::to_string(v.error())};
      return {std::move(*v), {}};
    }
    return typed(item_type, texts);
  }

  static parsed typed(std::string_view type, const std::vector<std::string>& texts) {
    if (type == "string") {
      for (const std::string& t : texts) {
        if (!valid_utf8(t)) return {std::nullopt, "a string item is not valid UTF-8 (GGUF strings are UTF-8)", true};
      }
      return {gguf::value::strings(std::span<const std::string>(texts)), {}};
    }
    // Each item as a scalar of `type`, then all of them as one array.
    std::vector<gguf::value> items;
    for (const std::string& t : texts) {
      const std::string_view item = t == "true" ? "1" : t == "false" ? "0" : std::string_view(t);
      parsed p = scalar(type, type == "bool" ? std::string_view(t) : item);
      if (!p.value) return p;
      items.push_back(std::move(*p.value));
    }
    return {gather(type, items), {}};
  }

  template <class T>
  static gguf::value gather_as(const std::vector<gguf::value>& items) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is not contiguous
      const std::unique_ptr<bool[]> xs(new bool[items.empty() ? 1 : items.size()]);
      for (std::size_t i = 0; i < items.size(); ++i) xs[i] = *items[i].view().get<bool>();
      return gguf::value::array(std::span<const bool>(xs.get(), items.size()));
    } else {
      std::vector<T> xs;
      xs.reserve(items.size());
      for (const gguf::value& v : items) xs.push_back(*v.view().get<T>());
      return gguf::value::array(std::span<const T>(xs));
    }
  }
  static gguf::value gather(std::string_view type, const std::vector<gguf::value>& items) {
    if (type == "uint8") return gather_as<std::uint8_t>(items);
    if (type == "int8") return gather_as<std::int8_t>(items);
    if (type == "uint16") return gather_as<std::uint16_t>(items);
    if (type == "int16") return gather_as<std::int16_t>(items);
    if (type == "uint32") return gather_as<std::uint32_t>(items);
    if (type == "int32") return gather_as<std::int32_t>(items);
    if (type == "uint64") return gather_as<std::uint64_t>(items);
    if (type == "int64") return gather_as<std::int64_t>(items);
    if (type == "float32") return gather_as<float>(items);
    if (type == "float64") return gather_as<double>(items);
    return gather_as<bool>(items);
  }

  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  static void utf8(std::string& out, unsigned cp) { gguf::detail::append_utf8(out, cp); }

  bool hex4(unsigned& out) {
    if (i_ + 4 > s_.size()) return false;
    out = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        out |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        out |= static_cast<unsigned>(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  bool read_string(std::string& out) {
    if (!eat('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
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
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && i_ + 2 <= s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            i_ += 2;
            unsigned lo = 0;
            if (!hex4(lo) || lo < 0xDC00 || lo >= 0xE000) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

/** KEY=TYPE:VALUE or KEY=array:TYPE:[...]: the key and its value, or the problem. */
inline std::pair<std::string, parsed> edit(std::string_view arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return {{}, {std::nullopt, "'" + std::string(arg) + "' is not KEY=TYPE:VALUE"}};
  const std::string key(arg.substr(0, eq));
  const std::string_view rest = arg.substr(eq + 1);
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return {key, {std::nullopt, "'" + std::string(arg) + "' is not KEY=TYPE:VALUE"}};
  const std::string_view type = rest.substr(0, colon), text = rest.substr(colon + 1);
  if (type != "array") return {key, scalar(type, text)};
  // array:TYPE:[...], where TYPE may itself be array:TYPE for arrays of arrays
  std::size_t bracket = text.find('[');
  if (bracket == std::string_view::npos || bracket == 0 || text[bracket - 1] != ':') {
    return {key, {std::nullopt, "an array is array:TYPE:[v1,v2,...]"}};
  }
  return {key, json_items(text.substr(bracket)).array(text.substr(0, bracket - 1))};
}

}  // namespace edit_args

#endif  // GGUF_EXAMPLES_EDIT_ARGS_HPP
