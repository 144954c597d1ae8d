#ifndef GGUF_TEXT_PAIR_FILTER_HPP
#define GGUF_TEXT_PAIR_FILTER_HPP

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <string_view>

#include "gguf/text/codepoints.hpp"
#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace text::detail {

/**
 * A unit of text (a UTF-8 character, or part of one: at most 4 bytes) as a key for `pair_filter`: its
 * bytes, its length and a kind the caller chooses (0-15), so that units of different kinds never meet.
 */
inline std::uint64_t unit_key(const char* p, std::size_t n, unsigned kind = 0) noexcept {
  // byte loads and shifts: a copy of 3 bytes to a word on the stack stalls the load that reads it back
  const auto b = [p](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i); };
  std::uint64_t w = 0;
  switch (n) {
    case 4: w = b(0) | b(1) | b(2) | b(3); break;
    case 3: w = b(0) | b(1) | b(2); break;
    case 2: w = b(0) | b(1); break;
    case 1: w = b(0); break;
    default: break;
  }
  return w | (std::uint64_t{n & 7} << 32) | (std::uint64_t{kind & 15} << 36);
}

/**
 * The pairs of adjacent units that occur inside some token, as a Bloom filter: one 64-bit word per pair,
 * two bits in it (a single load per question). A pair it says no to occurs in no token, so no merge can
 * join across it: a tokenizer may cut the text there and tokenize the pieces apart (and each distinct
 * piece once), with the ids unchanged. A yes may be wrong (about 2% at the size it is made for), which
 * costs a cut, never an id.
 */
class pair_filter {
 public:
  /** An empty filter: says yes to every pair (cuts nothing). */
  pair_filter() = default;

  /** A filter sized for about `pairs` distinct pairs (ten bits each), holding none yet. */
  explicit pair_filter(std::size_t pairs) {
    std::size_t words = 64;
    while (words * 64 < pairs * 10) words *= 2;
    words_ = std::make_unique<std::uint64_t[]>(words);
    mask_ = words - 1;
  }

  /**
   * The distinct pairs to size a filter for, from the bytes and the number of tokens: real vocabularies
   * have fewer than a third of their bytes, and about two per token; a vocabulary of a few huge tokens
   * (one of a megabyte of one character) is not given megabytes of filter (too small a filter only
   * cuts less).
   */
  static std::size_t pairs_for(std::size_t bytes, std::size_t tokens) noexcept {
    return std::min(bytes / 3, 4 * tokens) + 1;
  }

  /** Whether the filter was made (an empty one cuts nothing). */
  explicit operator bool() const noexcept { return words_ != nullptr; }

  /** Records that unit `b` follows unit `a` inside some token. */
  void add(std::uint64_t a, std::uint64_t b) noexcept {
    const std::uint64_t h = hash(a, b);
    words_[index(h)] |= bits(h);
  }

  /**
   * Records every pair of neighbouring characters in `t`, split as the tokenizers split text (a lead
   * byte and as many bytes as it announces, cut short at the end).
   */
  void add_characters(std::string_view t) noexcept {
    std::uint64_t prev = 0;
    for (std::size_t at = 0; at < t.size();) {
      const std::size_t len =
          std::min<std::size_t>(utf8_sequence_length(static_cast<unsigned char>(t[at])), t.size() - at);
      const std::uint64_t key = unit_key(t.data() + at, len);
      if (at > 0) add(prev, key);
      prev = key;
      at += len;
    }
  }

  /** False when `b` follows `a` inside no token (a filter that was not made says true). */
  bool may_follow(std::uint64_t a, std::uint64_t b) const noexcept {
    if (!words_) return true;
    const std::uint64_t h = hash(a, b), m = bits(h);
    return (words_[index(h)] & m) == m;
  }

  /** The bytes it holds. */
  std::size_t memory_bytes() const noexcept { return words_ ? (mask_ + 1) * sizeof(std::uint64_t) : 0; }

 private:
  // Two multiplications carry every bit of both keys into the product's high half, which is folded onto
  // the low one: the bit positions and the word come from there (the keys' own low bytes vary little:
  // UTF-8 lead bytes). A stronger finalizer cost SPM a fifth of its speed on Thai.
  static std::uint64_t hash(std::uint64_t a, std::uint64_t b) noexcept {
    const std::uint64_t h = ((a * 0x9E3779B97F4A7C15ull) ^ b) * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
  }
  std::size_t index(std::uint64_t h) const noexcept { return static_cast<std::size_t>(h >> 12) & mask_; }
  static std::uint64_t bits(std::uint64_t h) noexcept {
    return (std::uint64_t{1} << (h & 63)) | (std::uint64_t{1} << ((h >> 6) & 63));
  }
  std::unique_ptr<std::uint64_t[]> words_;
  std::size_t mask_ = 0;
};

}  // namespace text::detail
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_PAIR_FILTER_HPP
