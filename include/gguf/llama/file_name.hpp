#ifndef GGUF_LLAMA_FILE_NAME_HPP
#define GGUF_LLAMA_FILE_NAME_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "gguf/llama/file_type.hpp"
#include "gguf/result.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * The parts of a file name in the GGUF naming convention,
 * `<BaseName>-<SizeLabel>-<FineTune>-<Version>-<Encoding>-<Type>-<Shard>.gguf`: views into the name
 * parsed (empty when absent), e.g. `Grok-100B-v1.0-Q4_0-00003-of-00009.gguf` is base "Grok", size
 * "100B", version "v1.0", encoding "Q4_0", shard 3 of 9.
 */
struct file_name_parts {
  std::string_view base_name;     ///< the model's name, words joined by '-' ("Hermes-2-Pro-Llama-3")
  std::string_view size_label;    ///< "8B", "8x7B" (experts x size), "35B-A3B" (total, active); or empty
  std::string_view fine_tune;     ///< "Instruct", "Chat"; or empty
  std::string_view version;       ///< "v0.1"; empty when absent (the convention then means v1.0)
  std::string_view encoding;      ///< the weights' encoding ("Q4_K_M", "F16", "KQ2"); or empty
  std::string_view type;          ///< "LoRA" or "vocab"; empty for a model
  std::uint32_t shard = 0;        ///< k of `-0000k-of-0000n`; 0 when the file is not a shard
  std::uint32_t shard_count = 0;  ///< n of `-0000k-of-0000n`; 0 when the file is not a shard

  /** The expert count of a size label "8x7B" (8); 0 without experts. */
  std::uint32_t expert_count() const noexcept {
    std::uint32_t n = 0;
    for (char c : size_label) {
      if (c == 'x') return n;
      if (c < '0' || c > '9' || n > 100000000) return 0;
      n = n * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return 0;
  }
};

namespace detail {

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_alpha(char c) noexcept { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

// `(\d+x)?(\d+\.)?\d+[A-Za-z]`: "8B", "8x7B", "3.8B", "100M".
constexpr bool is_size_label(std::string_view s) noexcept {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == 'x') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  return i + 1 == s.size() && is_alpha(s[i]);
}

// The second half of "35B-A3B": `[A-Za-z]+(\d+\.)?\d+[A-Za-z]+`.
constexpr bool is_size_suffix(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size() && is_alpha(s[i])) ++i;
  if (i == 0) return false;
  const std::size_t d = i;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '.')) ++i;
  if (i == d || !is_digit(s[i - 1]) || s[d] == '.') return false;
  const std::size_t a = i;
  while (i < s.size() && is_alpha(s[i])) ++i;
  return i == s.size() && i > a;
}

// `v\d+(\.\d+)*`: "v1", "v0.1", "v32.33".
constexpr bool is_version(std::string_view s) noexcept {
  if (s.size() < 2 || s[0] != 'v') return false;
  bool digit = false;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (is_digit(s[i])) {
      digit = true;
    } else if (s[i] == '.' && digit) {
      digit = false;
    } else {
      return false;
    }
  }
  return digit;
}

// An encoding as the convention writes it without a version to set it apart from a fine-tune: a llama.cpp
// file type ("Q4_K_M", "F16") or a letter-digit code such as "KQ2", "Q4_0_4_4", "IQ4_XS", "FP8".
constexpr bool looks_like_encoding(std::string_view s) noexcept {
  if (find_ftype(s) != nullptr) return true;
  std::size_t i = 0;
  while (i < s.size() && is_alpha(s[i]) && s[i] >= 'A' && s[i] <= 'Z') ++i;
  if (i == 0 || i > 4 || i == s.size() || !is_digit(s[i])) return false;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i]) && !is_alpha(s[i]) && s[i] != '_') return false;
  }
  return true;
}

// `\d{5}` as a number.
constexpr bool five_digits(std::string_view s, std::uint32_t& n) noexcept {
  if (s.size() != 5) return false;
  n = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    n = n * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return true;
}

// The text from the start of part `first` to the end of part `last` (inclusive) of `stem`.
constexpr std::string_view span_of(std::string_view stem, const std::string_view* parts, std::size_t first,
                                   std::size_t last) noexcept {
  const auto begin = static_cast<std::size_t>(parts[first].data() - stem.data());
  const auto end = static_cast<std::size_t>(parts[last].data() + parts[last].size() - stem.data());
  return stem.substr(begin, end - begin);
}

}  // namespace detail

/**
 * Splits a file name written in the GGUF naming convention into its parts. The directory, if any, is
 * ignored. Accepted: the spec's pattern, plus names without a version (`Hermes-2-Pro-Llama-3-8B-F16.gguf`,
 * which the spec's own examples use; the last part is then the encoding when it looks like one) and base
 * names with dots ("Qwen2.5"). The size label is the first part after the base name that reads as one.
 * @return the parts (views into `name`); `out_of_range` naming the rule broken: no ".gguf" ending, an
 *         empty part between dashes, neither a size label nor a version after a base name, more than one
 *         part after the version, a shard number 0 or above the count
 */
inline result<file_name_parts> parse_file_name(std::string_view name) noexcept {
  if (const std::size_t slash = name.find_last_of("/\\"); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  const auto refuse = [&](const char* why) { return error{errc::out_of_range, why}.about(name); };
  constexpr std::string_view ext = ".gguf";
  if (name.size() <= ext.size() || name.substr(name.size() - ext.size()) != ext) {
    return refuse("a GGUF file name ends in .gguf");
  }
  const std::string_view stem = name.substr(0, name.size() - ext.size());
  constexpr std::size_t max_parts = 64;
  std::array<std::string_view, max_parts> parts{};
  std::size_t n = 0;
  for (std::size_t from = 0;;) {
    const std::size_t dash = stem.find('-', from);
    if (n == max_parts) return refuse("more than 64 parts between dashes");
    parts[n++] = stem.substr(from, dash == std::string_view::npos ? std::string_view::npos : dash - from);
    if (parts[n - 1].empty()) return refuse("an empty part between dashes");
    if (dash == std::string_view::npos) break;
    from = dash + 1;
  }
  file_name_parts p;
  // From the right: shard, type.
  if (n >= 4 && parts[n - 2] == "of" && detail::five_digits(parts[n - 3], p.shard) &&
      detail::five_digits(parts[n - 1], p.shard_count)) {
    if (p.shard == 0 || p.shard > p.shard_count) return refuse("a shard number is 1 to the shard count");
    n -= 3;
  }
  if (n >= 2 && (parts[n - 1] == "LoRA" || parts[n - 1] == "vocab")) p.type = parts[--n];
  // From the left: the base name runs to the size label (or to the version when there is none).
  std::size_t size_at = 0, version_at = 0;
  for (std::size_t i = 1; i < n && !size_at && !version_at; ++i) {
    if (detail::is_size_label(parts[i])) size_at = i;
    if (detail::is_version(parts[i])) version_at = i;
  }
  if (!size_at && !version_at) return refuse("no size label (8B, 8x7B) or version (v1.0) after the base name");
  std::size_t next = size_at ? size_at + 1 : version_at;
  p.base_name = detail::span_of(stem, parts.data(), 0, (size_at ? size_at : version_at) - 1);
  if (size_at) {
    if (next < n && detail::is_size_suffix(parts[next])) ++next;
    p.size_label = detail::span_of(stem, parts.data(), size_at, next - 1);
    for (std::size_t i = next; i < n && !version_at; ++i) {
      if (detail::is_version(parts[i])) version_at = i;
    }
  }
  if (version_at) {
    if (version_at > next) p.fine_tune = detail::span_of(stem, parts.data(), next, version_at - 1);
    p.version = parts[version_at];
    if (n > version_at + 2) return refuse("more than one part (the encoding) after the version");
    if (n == version_at + 2) p.encoding = parts[version_at + 1];
  } else if (next < n) {
    std::size_t last = n - 1;
    if (detail::looks_like_encoding(parts[last])) {
      p.encoding = parts[last];
    } else {
      last = n;
    }
    if (last > next) p.fine_tune = detail::span_of(stem, parts.data(), next, last - 1);
  }
  return p;
}

/**
 * The file name of `p` in the naming convention: its non-empty parts joined by '-' in the convention's
 * order, spaces of the base name written as '-', the shard as `-0000k-of-0000n`, then ".gguf".
 */
inline std::string format_file_name(const file_name_parts& p) {
  std::string s;
  const auto add = [&s](std::string_view part) {
    if (part.empty()) return;
    if (!s.empty()) s += '-';
    for (char c : part) s += c == ' ' ? '-' : c;
  };
  add(p.base_name);
  add(p.size_label);
  add(p.fine_tune);
  add(p.version);
  add(p.encoding);
  add(p.type);
  if (p.shard_count != 0) {
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), "%05u-of-%05u", static_cast<unsigned>(p.shard),
                  static_cast<unsigned>(p.shard_count));
    add(buf.data());
  }
  return s + ".gguf";
}

GGUF_END_NAMESPACE

#endif  // GGUF_LLAMA_FILE_NAME_HPP
