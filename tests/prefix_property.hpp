// The property of parse_prefix, stated once for the tests and the fuzzer: for a cut of a file, the parse
// of the first `cut` bytes (the file's size known, or not) either asks for more bytes, exactly as many
// as let it get further, or gives what the parse of the whole file gives.
#ifndef GGUF_TESTS_PREFIX_PROPERTY_HPP
#define GGUF_TESTS_PREFIX_PROPERTY_HPP

#include <gguf/format/parser.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace prefix_property {

/** The first rule a header parsed from a prefix breaks against the whole file's, or nullptr. */
inline const char* header_differs(const gguf::file& whole, const gguf::file& part) {
  if (part.version() != whole.version() || part.byte_order() != whole.byte_order() ||
      part.alignment() != whole.alignment() || part.data_offset() != whole.data_offset()) {
    return "header fields differ";
  }
  if (part.metadata().size() != whole.metadata().size()) return "metadata count differs";
  for (std::size_t i = 0; i < whole.metadata().size(); ++i) {
    const gguf::metadata_entry& a = whole.metadata()[i];
    const gguf::metadata_entry& b = part.metadata()[i];
    if (a.key != b.key || a.offset != b.offset || a.value.type() != b.value.type()) return "a key differs";
    const auto x = a.value.bytes(), y = b.value.bytes();
    if (x.size() != y.size() || !std::equal(x.begin(), x.end(), y.begin())) return "a value differs";
  }
  if (part.tensors().size() != whole.tensors().size()) return "tensor count differs";
  for (std::size_t i = 0; i < whole.tensors().size(); ++i) {
    const gguf::tensor_info& a = whole.tensors()[i];
    const gguf::tensor_info& b = part.tensors()[i];
    if (a.name != b.name || a.type != b.type || a.n_dims != b.n_dims || a.ne != b.ne || a.offset != b.offset ||
        a.file_offset != b.file_offset || a.n_bytes != b.n_bytes || a.byte_order != b.byte_order) {
      return "a tensor info differs";
    }
    // Its data is there exactly when the prefix holds it, at the same place.
    if (b.has_data() != (a.n_bytes == 0 || a.file_offset + a.n_bytes <= part.bytes().size())) {
      return "a tensor's data is there when the prefix does not hold it, or the reverse";
    }
    if (b.has_data() && b.n_bytes > 0 && b.data.data() - part.bytes().data() != a.data.data() - whole.bytes().data()) {
      return "a tensor's data is elsewhere";
    }
  }
  return nullptr;
}

/** What one cut gave: the need_more of the known-size parse (0 when it did not ask), or a violation. */
struct cut_result {
  std::uint64_t needed = 0;
  const char* violation = nullptr;
};

/**
 * Parses the first `cut` bytes of `bytes` (copied to a block of exactly that size, so that a sanitizer
 * sees a read past it) with the size known and unknown, against `full`, the parse of all of `bytes`.
 */
inline cut_result check_cut(std::span<const std::byte> bytes, const gguf::result<gguf::file>& full, std::size_t cut) {
  const std::vector<std::byte> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
  const std::uint64_t size = bytes.size();
  cut_result out;
  {
    const auto r = gguf::parse_prefix(prefix, size);
    if (r) {
      if (!full) return {0, "a prefix parses where the whole file does not"};
      if (const char* d = header_differs(*full, *r)) return {0, d};
    } else if (r.error() == gguf::errc::need_more) {
      out.needed = r.error().needed;
      if (out.needed <= cut) return {0, "need_more asks for no more than it has"};
      if (out.needed > size) return {0, "need_more asks for more than the file's size"};
    } else {
      if (full) return {0, "a prefix fails where the whole file parses"};
      if (r.error().code != full.error().code || r.error().offset != full.error().offset) {
        return {0, "a prefix fails otherwise than the whole file"};
      }
    }
  }
  {  // The size unknown: the same, but tensor bounds cannot be checked.
    const auto r = gguf::parse_prefix(prefix);
    if (r) {
      if (full) {
        if (const char* d = header_differs(*full, *r)) return {0, d};
      } else if (full.error().code != gguf::errc::out_of_bounds && full.error().code != gguf::errc::truncated) {
        return {0, "a prefix of unknown size parses where the whole file breaks a rule of the header"};
      }
    } else if (r.error() == gguf::errc::need_more) {
      if (r.error().needed <= cut) return {0, "need_more (size unknown) asks for no more than it has"};
    } else {
      if (full) return {0, "a prefix of unknown size fails where the whole file parses"};
      const gguf::errc got = r.error().code, want = full.error().code;
      // A count or length no file of that size holds is a truncation; no file at all, a limit.
      const bool limit_for_truncation = got == gguf::errc::limit_exceeded && want == gguf::errc::truncated;
      // Without the size the bounds are not checked, so the checks after them may fail instead.
      const bool later_check = (want == gguf::errc::out_of_bounds || want == gguf::errc::truncated) &&
                               (got == gguf::errc::duplicate_tensor || got == gguf::errc::overlapping_tensors);
      // A tensor past the file's end is not seen without the size, so a later one past the end of any
      // file (its offset and size overflow) is what fails.
      const bool later_tensor = want == gguf::errc::out_of_bounds && got == gguf::errc::out_of_bounds &&
                                r.error().offset > full.error().offset;
      // A file too short for its data section (truncated, at the section's start) is not seen without
      // the size either, so a tensor whose bounds no file holds (its offset and size overflow, an
      // out_of_bounds at its info, before the section) is what fails.
      const bool overflow_for_short_data =
          want == gguf::errc::truncated && got == gguf::errc::out_of_bounds && r.error().offset < full.error().offset;
      if (!limit_for_truncation && !later_check && !later_tensor && !overflow_for_short_data &&
          (got != want || r.error().offset != full.error().offset)) {
        return {0, "a prefix of unknown size fails otherwise than the whole file"};
      }
    }
  }
  return out;
}

/**
 * Every cut from 0 to the whole file, each need_more exact: from the cut that first asks for M bytes,
 * every longer prefix short of M asks for M, and M bytes get further.
 */
inline const char* check_every_cut(std::span<const std::byte> bytes, std::size_t* failed_cut = nullptr) {
  const auto full = gguf::parse(bytes);
  std::uint64_t pending = 0;
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    if (failed_cut) *failed_cut = cut;
    const cut_result r = check_cut(bytes, full, cut);
    if (r.violation) return r.violation;
    if (pending > cut && r.needed != pending) return "a longer prefix short of what was asked asks otherwise";
    if (pending == cut && pending != 0 && r.needed == pending) return "the bytes asked for do not get further";
    pending = r.needed;
  }
  return nullptr;
}

/** One cut and, when it asks for M bytes, the cuts M - 1 (the same answer) and M (further). */
inline const char* check_cut_exact(std::span<const std::byte> bytes, const gguf::result<gguf::file>& full,
                                   std::size_t cut) {
  const cut_result r = check_cut(bytes, full, cut);
  if (r.violation || r.needed == 0) return r.violation;
  if (r.needed - 1 > cut) {
    const cut_result before = check_cut(bytes, full, static_cast<std::size_t>(r.needed - 1));
    if (before.violation) return before.violation;
    if (before.needed != r.needed) return "a longer prefix short of what was asked asks otherwise";
  }
  const cut_result at = check_cut(bytes, full, static_cast<std::size_t>(r.needed));
  if (at.violation) return at.violation;
  if (at.needed == r.needed) return "the bytes asked for do not get further";
  return nullptr;
}

}  // namespace prefix_property

#endif  // GGUF_TESTS_PREFIX_PROPERTY_HPP
