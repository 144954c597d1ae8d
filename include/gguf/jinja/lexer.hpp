#ifndef GGUF_JINJA_LEXER_HPP
#define GGUF_JINJA_LEXER_HPP

/**
 * @file
 * Jinja2's lexer, rule for rule (jinja2/lexer.py of Jinja2 3.1), in the environment transformers renders
 * chat templates in: `{{ }}`, `{% %}` and `{# #}` tags, `trim_blocks` (the newline after a block or
 * comment tag goes) and `lstrip_blocks` (the spaces and tabs before one, on its line, go), `-` and `+`
 * at a tag's edges, `{% raw %}`, string escapes as Python's "unicode-escape" reads them, and the one
 * trailing newline of the source dropped.
 */

#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/jinja/pystr.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

/// What a token is.
enum class tok : std::uint8_t {
  data,            ///< template text
  variable_begin,  ///< {{
  variable_end,    ///< }}
  block_begin,     ///< {%
  block_end,       ///< %}
  name,            ///< an identifier (keywords too: the parser tells them by their text)
  string,          ///< a string literal, unescaped
  integer,         ///< an integer literal
  floating,        ///< a float literal
  // operators
  add,
  sub,
  div,
  floordiv,
  mul,
  mod,
  pow,
  tilde,
  lbracket,
  rbracket,
  lparen,
  rparen,
  lbrace,
  rbrace,
  eq,
  ne,
  gt,
  gteq,
  lt,
  lteq,
  assign,
  dot,
  colon,
  pipe,
  comma,
  semicolon,
  eof,  ///< the end of the template
};

/// One token: its kind, its text (data, names, unescaped strings), its value (numbers) and line.
struct token {
  tok type = tok::eof;       ///< the kind
  std::string_view text;     ///< data, a name, a string's value, a number's digits
  std::int64_t integer = 0;  ///< an integer literal's value (when it fits 64 bits)
  double floating = 0;       ///< a float literal's value
  bool big = false;          ///< an integer literal beyond 64 bits (`text` holds its decimal digits)
  std::uint32_t line = 1;    ///< its line (1-based)
};

/// A syntax error: the message (a literal or held by the lexer's strings) and its line.
struct syntax_error {
  std::string message;     ///< what is wrong, as Jinja2 words it where it can
  std::uint32_t line = 0;  ///< where
  bool limit = false;      ///< a limit was met (the template is too large or nests too deeply), not a syntax error
};

/**
 * The lexer: the template's tokens. The source (normalized: "\r\n" and "\r" to "\n", one trailing
 * newline dropped) and the strings escapes made are kept here; the tokens point into them.
 */
class lexer {
 public:
  /// The tokens of `source`, or the first syntax error.
  bool run(std::string_view source, std::vector<token>& out, syntax_error& err) {
    // newlines as Jinja2 normalizes them, the trailing one dropped (keep_trailing_newline=False)
    source_.clear();
    source_.reserve(source.size());
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        source_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        source_ += source[i];
      }
    }
    if (!source_.empty() && source_.back() == '\n') source_.pop_back();
    s_ = source_;
    out_ = &out;
    err_ = &err;
    return root();
  }

 private:
  std::string source_;
  std::string_view s_;
  std::deque<std::string> strings_;
  std::vector<token>* out_ = nullptr;
  syntax_error* err_ = nullptr;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1;
  bool line_starting_ = true;

  bool fail(std::string msg) {
    err_->message = std::move(msg);
    err_->line = line_;
    return false;
  }

  static std::uint32_t newlines(std::string_view t) noexcept {
    std::uint32_t n = 0;
    for (const char c : t) n += c == '\n';
    return n;
  }

  void emit(tok type, std::string_view text = {}) { out_->push_back(token{type, text, 0, 0, false, line_}); }

  // Python's \s at byte i (Unicode whitespace): its length, or 0
  std::size_t space_at(std::size_t i) const noexcept {
    std::size_t len = 0;
    const char32_t c = py::decode_at(s_, i, len);
    return py::is_space(c) ? len : 0;
  }
  std::size_t skip_spaces(std::size_t i) const noexcept {
    while (i < s_.size()) {
      const std::size_t n = space_at(i);
      if (n == 0) break;
      i += n;
    }
    return i;
  }
  static bool all_space(std::string_view t) noexcept {
    for (std::size_t i = 0; i < t.size();) {
      std::size_t len = 0;
      if (!py::is_space(py::decode_at(t, i, len))) return false;
      i += len;
    }
    return true;
  }

  // `{%` sign? `raw` `-%}`/`%}` at i: its end, or npos
  std::size_t raw_begin_at(std::size_t i) const noexcept {
    if (s_.compare(i, 2, "{%") != 0) return std::string_view::npos;
    std::size_t k = i + 2;
    if (k < s_.size() && (s_[k] == '-' || s_[k] == '+')) ++k;
    k = skip_spaces(k);
    if (s_.compare(k, 3, "raw") != 0) return std::string_view::npos;
    k = skip_spaces(k + 3);
    if (s_.compare(k, 3, "-%}") == 0) return skip_spaces(k + 3);
    if (s_.compare(k, 2, "%}") == 0) return k + 2;
    return std::string_view::npos;
  }

  // The data before a tag, with the tag's whitespace control: `-` strips all whitespace before it;
  // otherwise, for a block or comment tag with lstrip_blocks, the spaces before it on its line go.
  void data_before(std::string_view text, char sign, bool variable) {
    std::uint32_t stripped_lines = 0;
    if (sign == '-') {
      const std::string_view kept = py::strip(text, py::side::right);
      stripped_lines = newlines(text.substr(kept.size()));
      text = kept;
    } else if (sign != '+' && !variable) {
      const std::size_t nl = text.rfind('\n');
      const std::size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < text.size() && all_space(text.substr(l_pos))) {
        text = text.substr(0, l_pos);
      }
    }
    if (!text.empty()) emit(tok::data, text);
    line_ += newlines(text) + stripped_lines;
  }

  bool root() {
    while (pos_ < s_.size()) {
      // the first tag at or after pos_
      std::size_t at = pos_;
      enum { none, block, variable, comment_tag } kind = none;
      std::size_t raw_end = std::string_view::npos;
      for (; at + 1 < s_.size(); ++at) {
        if (s_[at] != '{') continue;
        const char c = s_[at + 1];
        if (c == '%') {
          raw_end = raw_begin_at(at);
          kind = block;
          break;
        }
        if (c == '{') {
          kind = variable;
          break;
        }
        if (c == '#') {
          kind = comment_tag;
          break;
        }
      }
      if (kind == none) {  // no tag: the rest is data
        emit(tok::data, s_.substr(pos_));
        return true;
      }
      const char sign = at + 2 < s_.size() && (s_[at + 2] == '-' || s_[at + 2] == '+') ? s_[at + 2] : '\0';
      data_before(s_.substr(pos_, at - pos_), sign, kind == variable);
      if (raw_end != std::string_view::npos) {  // {% raw %}: data up to {% endraw %}
        line_ += newlines(s_.substr(at, raw_end - at));
        line_starting_ = s_[raw_end - 1] == '\n';
        pos_ = raw_end;
        if (!raw_body()) return false;
        continue;
      }
      std::size_t start = at + 2 + (sign ? 1 : 0);
      line_starting_ = false;  // a tag's opening never ends with a newline
      if (kind == comment_tag) {
        if (!comment(start)) return false;
        continue;
      }
      emit(kind == variable ? tok::variable_begin : tok::block_begin);
      pos_ = start;
      if (!tag(kind == variable)) return false;
    }
    return true;
  }

  bool raw_body() {
    // the first {%(-|+)? \s* endraw \s* (+%} | -%}\s* | %}\n?)
    for (std::size_t at = pos_; at + 1 < s_.size(); ++at) {
      if (s_.compare(at, 2, "{%") != 0) continue;
      std::size_t k = at + 2;
      char sign = 0;
      if (k < s_.size() && (s_[k] == '-' || s_[k] == '+')) sign = s_[k++];
      k = skip_spaces(k);
      if (s_.compare(k, 6, "endraw") != 0) continue;
      k = skip_spaces(k + 6);
      std::size_t end;
      if (s_.compare(k, 3, "+%}") == 0) {
        end = k + 3;
      } else if (s_.compare(k, 3, "-%}") == 0) {
        end = skip_spaces(k + 3);
      } else if (s_.compare(k, 2, "%}") == 0) {
        end = k + 2;
        if (end < s_.size() && s_[end] == '\n') ++end;
      } else {
        continue;
      }
      data_before(s_.substr(pos_, at - pos_), sign, false);
      line_ += newlines(s_.substr(at, end - at));
      line_starting_ = s_[end - 1] == '\n';
      pos_ = end;
      return true;
    }
    return fail("Missing end of raw directive");
  }

  bool comment(std::size_t start) {
    for (std::size_t at = start; at + 1 < s_.size(); ++at) {
      std::size_t end = std::string_view::npos;
      if (s_.compare(at, 3, "+#}") == 0) {
        end = at + 3;
      } else if (s_.compare(at, 3, "-#}") == 0) {
        end = skip_spaces(at + 3);
      } else if (s_.compare(at, 2, "#}") == 0) {
        end = at + 2;
        if (end < s_.size() && s_[end] == '\n') ++end;  // trim_blocks
      }
      if (end == std::string_view::npos) continue;
      line_ += newlines(s_.substr(start, end - start));
      line_starting_ = s_[end - 1] == '\n';
      pos_ = end;
      return true;
    }
    return fail("Missing end of comment tag");
  }

  // the tokens of a tag, up to its end
  bool tag(bool variable) {
    std::vector<char> balance;
    while (true) {
      if (pos_ >= s_.size()) {
        return fail(variable ? "unexpected end of template, expected 'end of print statement'."
                             : "unexpected end of template, expected 'end of statement block'.");
      }
      // the tag's end, when every bracket is closed
      if (balance.empty()) {
        std::size_t end = std::string_view::npos;
        if (variable) {
          if (s_.compare(pos_, 3, "-}}") == 0) {
            end = skip_spaces(pos_ + 3);
          } else if (s_.compare(pos_, 2, "}}") == 0) {
            end = pos_ + 2;
          }
        } else if (s_.compare(pos_, 3, "+%}") == 0) {
          end = pos_ + 3;
        } else if (s_.compare(pos_, 3, "-%}") == 0) {
          end = skip_spaces(pos_ + 3);
        } else if (s_.compare(pos_, 2, "%}") == 0) {
          end = pos_ + 2;
          if (end < s_.size() && s_[end] == '\n') ++end;  // trim_blocks
        }
        if (end != std::string_view::npos) {
          emit(variable ? tok::variable_end : tok::block_end);
          line_ += newlines(s_.substr(pos_, end - pos_));
          line_starting_ = s_[end - 1] == '\n';
          pos_ = end;
          return true;
        }
      }
      // whitespace
      if (const std::size_t n = space_at(pos_)) {
        const std::size_t end = skip_spaces(pos_ + n);
        line_ += newlines(s_.substr(pos_, end - pos_));
        pos_ = end;
        continue;
      }
      const char c = s_[pos_];
      if (c >= '0' && c <= '9') {
        if (!number()) return false;
        continue;
      }
      if (c == '\'' || c == '"') {
        if (!string_literal()) return false;
        continue;
      }
      if (name()) continue;
      if (!op(balance)) return false;
    }
  }

  static bool digit(char c) noexcept { return c >= '0' && c <= '9'; }

  // digits with single underscores between them: (\d+_)*\d+ from i; its end, or i
  std::size_t digits(std::size_t i) const noexcept {
    std::size_t k = i;
    if (k >= s_.size() || !digit(s_[k])) return i;
    while (true) {
      while (k < s_.size() && digit(s_[k])) ++k;
      if (k + 1 < s_.size() && s_[k] == '_' && digit(s_[k + 1])) {
        ++k;
        continue;
      }
      return k;
    }
  }

  bool number() {
    const std::size_t start = pos_;
    // float: (?<!\.)(\d+_)*\d+((\.(\d+_)*\d+)?e[+\-]?(\d+_)*\d+|\.(\d+_)*\d+)
    if (start == 0 || s_[start - 1] != '.') {
      const std::size_t int_end = digits(start);
      std::size_t k = int_end;
      bool frac = false;
      if (k < s_.size() && s_[k] == '.') {
        const std::size_t f = digits(k + 1);
        if (f > k + 1) {
          k = f;
          frac = true;
        }
      }
      std::size_t end = frac ? k : std::string_view::npos;
      if (k < s_.size() && (s_[k] == 'e' || s_[k] == 'E')) {
        std::size_t e = k + 1;
        if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
        const std::size_t d = digits(e);
        if (d > e) end = d;
      }
      if (end != std::string_view::npos) {
        std::string clean;
        for (std::size_t i = start; i < end; ++i)
          if (s_[i] != '_') clean += s_[i];
        double v = 0;
        const auto r = std::from_chars(clean.data(), clean.data() + clean.size(), v);
        if (r.ec == std::errc::result_out_of_range) v = clean.find("e-") != std::string::npos ? 0.0 : HUGE_VAL;
        token t{tok::floating, s_.substr(start, end - start), 0, v, false, line_};
        out_->push_back(t);
        pos_ = end;
        return true;
      }
    }
    // integer: 0b, 0o, 0x, decimal
    std::size_t end = 0;
    int base = 10;
    if (s_[start] == '0' && start + 1 < s_.size() &&
        (s_[start + 1] == 'b' || s_[start + 1] == 'B' || s_[start + 1] == 'o' || s_[start + 1] == 'O' ||
         s_[start + 1] == 'x' || s_[start + 1] == 'X')) {
      const char p = static_cast<char>(s_[start + 1] | 0x20);
      base = p == 'b' ? 2 : p == 'o' ? 8 : 16;
      const auto ok = [&](char c) {
        if (base == 2) return c == '0' || c == '1';
        if (base == 8) return c >= '0' && c <= '7';
        return digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
      };
      std::size_t k = start + 2;
      std::size_t last = start + 1;
      while (k < s_.size()) {
        if (s_[k] == '_' && k + 1 < s_.size() && ok(s_[k + 1])) {
          k += 2;
          last = k;
        } else if (ok(s_[k])) {
          ++k;
          last = k;
        } else {
          break;
        }
      }
      if (last == start + 1) {  // "0b" with no digit: the integer is "0", then a name
        base = 10;
        end = start + 1;
      } else {
        end = last;
      }
    } else if (s_[start] == '0') {
      // 0(_?0)*
      end = start + 1;
      while (end < s_.size()) {
        if (s_[end] == '0') {
          ++end;
        } else if (s_[end] == '_' && end + 1 < s_.size() && s_[end + 1] == '0') {
          end += 2;
        } else {
          break;
        }
      }
    } else {
      end = digits(start);
    }
    std::string clean;
    for (std::size_t i = start + (base == 10 ? 0 : 2); i < end; ++i)
      if (s_[i] != '_') clean += s_[i];
    token t{tok::integer, s_.substr(start, end - start), 0, 0, false, line_};
    const auto r = std::from_chars(clean.data(), clean.data() + clean.size(), t.integer, base);
    if (r.ec == std::errc::result_out_of_range) {
      if (base != 10) return fail("an integer literal beyond 64 bits");
      strings_.push_back(clean);
      t.big = true;
      t.text = strings_.back();
    }
    out_->push_back(t);
    pos_ = end;
    return true;
  }

  bool name() {
    // \w+ (Python's word characters), checked to be an identifier
    std::size_t k = pos_;
    while (k < s_.size()) {
      std::size_t len = 0;
      const char32_t c = py::decode_at(s_, k, len);
      const bool word = c == '_' || (c < 0x80 ? ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || digit(static_cast<char>(c))
                                              : (py::flags(c) & tables::alnum) != 0);
      if (!word) break;
      k += len;
    }
    if (k == pos_) return false;
    if (digit(s_[pos_])) return fail("Invalid character in identifier");
    emit(tok::name, s_.substr(pos_, k - pos_));
    pos_ = k;
    return true;
  }

  bool op(std::vector<char>& balance) {
    static constexpr struct {
      std::string_view text;
      tok type;
    } ops[] = {{"//", tok::floordiv}, {"**", tok::pow},     {"==", tok::eq},    {"!=", tok::ne},
               {">=", tok::gteq},     {"<=", tok::lteq},    {"+", tok::add},    {"-", tok::sub},
               {"/", tok::div},       {"*", tok::mul},      {"%", tok::mod},    {"~", tok::tilde},
               {"[", tok::lbracket},  {"]", tok::rbracket}, {"(", tok::lparen}, {")", tok::rparen},
               {"{", tok::lbrace},    {"}", tok::rbrace},   {">", tok::gt},     {"<", tok::lt},
               {"=", tok::assign},    {".", tok::dot},      {":", tok::colon},  {"|", tok::pipe},
               {",", tok::comma},     {";", tok::semicolon}};
    for (const auto& o : ops) {
      if (s_.compare(pos_, o.text.size(), o.text) != 0) continue;
      const char c = o.text[0];
      if (o.text.size() == 1 && (c == '{' || c == '(' || c == '[')) {
        balance.push_back(c == '{' ? '}' : c == '(' ? ')' : ']');
      } else if (o.text.size() == 1 && (c == '}' || c == ')' || c == ']')) {
        if (balance.empty()) return fail(std::string("unexpected '") + c + "'");
        if (balance.back() != c) return fail(std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
        balance.pop_back();
      }
      emit(o.type, o.text);
      pos_ += o.text.size();
      return true;
    }
    std::size_t len = 0;
    (void)py::decode_at(s_, pos_, len);
    std::string msg = "unexpected char ";
    py::append_repr(msg, s_.substr(pos_, len));
    msg += " at " + std::to_string(py::length(s_.substr(0, pos_)));
    return fail(std::move(msg));
  }

  static int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    return -1;
  }

  // a quoted string: its end found as Jinja2's regex finds it, its escapes as "unicode-escape" reads them
  bool string_literal() {
    const char q = s_[pos_];
    std::size_t k = pos_ + 1;
    while (k < s_.size() && s_[k] != q) k += s_[k] == '\\' ? std::size_t{2} : std::size_t{1};
    if (k >= s_.size()) {
      std::size_t len = 0;
      (void)py::decode_at(s_, pos_, len);
      std::string msg = "unexpected char ";
      py::append_repr(msg, s_.substr(pos_, 1));
      msg += " at " + std::to_string(py::length(s_.substr(0, pos_)));
      return fail(std::move(msg));
    }
    const std::string_view raw = s_.substr(pos_ + 1, k - pos_ - 1);
    std::string v;
    v.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size();) {
      if (raw[i] != '\\') {
        v += raw[i++];
        continue;
      }
      if (i + 1 >= raw.size()) {
        v += '\\';
        ++i;
        continue;
      }
      const char e = raw[i + 1];
      i += 2;
      switch (e) {
        case '\n': break;  // a line continuation
        case '\\': v += '\\'; break;
        case '\'': v += '\''; break;
        case '"': v += '"'; break;
        case 'a': v += '\a'; break;
        case 'b': v += '\b'; break;
        case 'f': v += '\f'; break;
        case 'n': v += '\n'; break;
        case 'r': v += '\r'; break;
        case 't': v += '\t'; break;
        case 'v': v += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          std::uint32_t c = 0;
          for (std::size_t d = 0; d < n; ++d) {
            const int h = i + d < raw.size() ? hex_value(raw[i + d]) : -1;
            if (h < 0) {
              return fail(e == 'x'   ? "truncated \\xXX escape"
                          : e == 'u' ? "truncated \\uXXXX escape"
                                     : "truncated \\UXXXXXXXX escape");
            }
            c = c * 16 + static_cast<std::uint32_t>(h);
          }
          if (c > 0x10FFFF) return fail("illegal Unicode character");
          py::append(v, c);
          i += n;
          break;
        }
        case 'N': return fail("\\N{...} escapes are not supported");
        default:
          if (e >= '0' && e <= '7') {
            std::uint32_t c = static_cast<std::uint32_t>(e - '0');
            for (int d = 0; d < 2 && i < raw.size() && raw[i] >= '0' && raw[i] <= '7'; ++d)
              c = c * 8 + static_cast<std::uint32_t>(raw[i++] - '0');
            py::append(v, c);
          } else if (static_cast<unsigned char>(e) >= 0x80) {
            // backslashreplace wrote the character as an escape, which the backslash now quotes
            std::size_t len = 0;
            const char32_t c = py::decode_at(raw, i - 1, len);
            static constexpr char hex[] = "0123456789abcdef";
            v += '\\';
            const int digits = c < 0x100 ? 2 : c < 0x10000 ? 4 : 8;
            v += c < 0x100 ? 'x' : c < 0x10000 ? 'u' : 'U';
            for (int s = (digits - 1) * 4; s >= 0; s -= 4) v += hex[(c >> s) & 15];
            i += len - 1;
          } else {
            v += '\\';
            v += e;
          }
      }
    }
    strings_.push_back(std::move(v));
    token t{tok::string, strings_.back(), 0, 0, false, line_};
    out_->push_back(t);
    line_ += newlines(s_.substr(pos_, k + 1 - pos_));
    pos_ = k + 1;
    return true;
  }
};

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_LEXER_HPP
