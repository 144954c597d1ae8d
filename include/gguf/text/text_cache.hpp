#ifndef GGUF_TEXT_TEXT_CACHE_HPP
#define GGUF_TEXT_TEXT_CACHE_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/text/token_table.hpp"

GGUF_BEGIN_NAMESPACE
namespace text::detail {

/** Appends `n` ids to `out`: one or two by push_back (a range insert's call costs more than the copy). */
inline void append_ids(std::vector<token_id>& out, const token_id* ids, std::size_t n) {
  if (n <= 2) {
    if (n > 0) out.push_back(ids[0]);
    if (n > 1) out.push_back(ids[1]);
    return;
  }
  out.insert(out.end(), ids, ids + n);
}

/**
 * Makes room in `out` for the ids of `rest` more bytes, at the rate of the stretches encoded so far
 * (`ids` from `bytes`), plus a sixteenth: a long text's id vector grows once to about its size instead of
 * doubling (and copying) from a guess.
 */
inline void reserve_for_rest(std::vector<token_id>& out, std::size_t ids, std::size_t bytes, std::size_t rest) {
  if (bytes == 0) return;
  const double want = static_cast<double>(ids) / static_cast<double>(bytes) * static_cast<double>(rest) * 1.0625;
  const std::size_t need = out.size() + static_cast<std::size_t>(want) + 16;
  if (need > out.capacity()) out.reserve(need);
}

/**
 * Words already encoded in one call: text is split into the same words again and again ("the", " of"),
 * and a word's ids depend on its bytes alone. Open addressing over a byte pool and an id pool.
 *
 * It holds at most `max_words` words (the first ones met; a text's frequent words come early), so its
 * memory is bounded whatever the text: a text of distinct words (random strings, hashes, base64) would
 * otherwise keep a copy of itself and its ids, some 20 bytes per byte.
 */
class word_cache {
 public:
  /// The most words kept: 2^16, a few megabytes at most.
  static constexpr std::size_t max_words = std::size_t{1} << 16;

  /// The ids of `word`, or nullptr; `count` receives their number.
  const token_id* find(std::string_view word, std::uint64_t h, std::size_t& count) const noexcept {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.ids_count == 0) return nullptr;
      if (s.hash == h && s.bytes_count == word.size() &&
          equal_bytes(bytes_.data() + s.bytes_at, word.data(), word.size())) {
        count = s.ids_count;
        return ids_.data() + s.ids_at;
      }
    }
  }
  /// Remembers the ids of `word` (at least one id).
  void insert(std::string_view word, std::uint64_t h, const token_id* ids, std::size_t count) {
    if (count == 0 || word.size() > 256 || used_ >= max_words) return;  // long words rarely repeat
    if (2 * (used_ + 1) > slots_.size()) grow();
    const slot s{h, static_cast<std::uint32_t>(bytes_.size()), static_cast<std::uint32_t>(word.size()),
                 static_cast<std::uint32_t>(ids_.size()), static_cast<std::uint32_t>(count)};
    bytes_.append(word);
    ids_.insert(ids_.end(), ids, ids + count);
    place(s);
    ++used_;
  }

 private:
  struct slot {
    std::uint64_t hash = 0;
    std::uint32_t bytes_at = 0, bytes_count = 0, ids_at = 0, ids_count = 0;
  };
  void place(const slot& s) noexcept {
    for (std::size_t i = s.hash & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].ids_count == 0) {
        slots_[i] = s;
        return;
      }
    }
  }
  void grow() {
    std::vector<slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, slot{});
    mask_ = slots_.size() - 1;
    for (const slot& s : old)
      if (s.ids_count) place(s);
  }
  std::vector<slot> slots_;
  std::size_t mask_ = 0, used_ = 0;
  std::string bytes_;
  std::vector<token_id> ids_;
};

}  // namespace text::detail
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_TEXT_CACHE_HPP
