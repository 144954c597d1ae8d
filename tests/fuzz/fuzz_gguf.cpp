// gguf-fuzz: the whole reader on arbitrary bytes. Parses the input, checks what the parser allocated
// against the input's size, walks every key, value, array item and nested array through every typed
// accessor, and dequantizes every tensor with the scalar kernels and every instruction set's kernels (to
// float, f16 and bf16), which must agree bit for bit; reads the bytes as an importance matrix too. Any crash, sanitizer
// report or broken invariant (a trap) is a finding.
//
// Built as a libFuzzer target (GGUF_BUILD_FUZZERS=ON, clang) and, with replay_main.cpp, as a plain
// program that runs the seed corpus through the same code in every build (ctest `fuzz.seeds`).
#include <gguf/gguf.hpp>
#include <gguf/kernels/scalar.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "gguf_json.hpp"

#define FUZZ_CHECK(cond)           \
  do {                             \
    if (!(cond)) __builtin_trap(); \
  } while (0)

namespace {

// ---- allocation accounting (the sanitizer allocator's hooks; absent in a plain build) ----------------

#if defined(__SANITIZE_ADDRESS__)
#define GGUF_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GGUF_FUZZ_ASAN 1
#endif
#endif

#if GGUF_FUZZ_ASAN
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void*, std::size_t),
                                                         void (*)(const volatile void*));
bool counting = false;
std::size_t allocated = 0;
void on_malloc(const volatile void*, std::size_t n) {
  if (counting) allocated += n;
}
void on_free(const volatile void*) {}
[[maybe_unused]] const bool hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0;
#endif

// What the parser may allocate for `size` input bytes: a metadata entry or tensor info (with its index
// slots) per smallest possible entry, about 7 bytes per input byte (SECURITY.md), plus a constant.
[[maybe_unused]] constexpr std::size_t max_parse_allocation(std::size_t size) { return 8 * size + 4096; }

volatile std::uint64_t sink;  // keeps the walk from being optimized away

// ---- metadata ---------------------------------------------------------------------------------------

template <class T>
void check_scalar_access(const gguf::value_view& v) {
  auto r = v.get<T>();
  FUZZ_CHECK(r.has_value() == (v.type() == gguf::value_type_of<T>::value));
  if (r) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      sink = sink + static_cast<std::uint64_t>(std::isnan(*r));
    } else {
      sink = sink + static_cast<std::uint64_t>(*r);
    }
  }
}

void walk_value(const gguf::value_view& v, std::uint32_t depth);

// Every way to read an array's items must see the same items.
template <class T>
void walk_items(const gguf::array_view& a) {
  auto range = a.as<T>();
  FUZZ_CHECK(range.has_value());
  std::uint64_t i = 0;
  for (T item : *range) {
    if (i < 4 || i + 1 == a.size()) {  // random access agrees with iteration (O(i) for strings)
      auto at = a.get<T>(i);
      FUZZ_CHECK(at.has_value());
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        FUZZ_CHECK(std::memcmp(&*at, &item, sizeof(T)) == 0);
      } else if constexpr (std::is_same_v<T, gguf::array_view>) {
        FUZZ_CHECK(at->size() == item.size() && at->bytes().data() == item.bytes().data());
      } else {
        FUZZ_CHECK(*at == item);
      }
    }
    if constexpr (std::is_same_v<T, std::string_view>) {
      sink = sink + item.size();
    } else if constexpr (!std::is_same_v<T, gguf::array_view>) {
      sink = sink + static_cast<std::uint64_t>(item != item);
    }
    ++i;
  }
  FUZZ_CHECK(i == a.size());
  FUZZ_CHECK(a.get<T>(a.size()).error().code == gguf::errc::out_of_range);
  if constexpr (gguf::gguf_scalar<T>) {
    if (auto span = a.as_span<T>()) {
      FUZZ_CHECK(span->size() == a.size());
      FUZZ_CHECK(span->empty() || std::memcmp(span->data(), a.bytes().data(), span->size_bytes()) == 0);
    }
  }
}

void walk_array(const gguf::array_view& a, std::uint32_t depth) {
  // As value_views (the generic way), recursing into nested arrays.
  std::uint64_t n = 0;
  for (const gguf::value_view item : a) {
    FUZZ_CHECK(item.type() == a.item_type());
    walk_value(item, depth + 1);
    ++n;
  }
  FUZZ_CHECK(n == a.size());
  // As the item type's C++ type.
  switch (a.item_type()) {
    case gguf::value_type::uint8: walk_items<std::uint8_t>(a); break;
    case gguf::value_type::int8: walk_items<std::int8_t>(a); break;
    case gguf::value_type::uint16: walk_items<std::uint16_t>(a); break;
    case gguf::value_type::int16: walk_items<std::int16_t>(a); break;
    case gguf::value_type::uint32: walk_items<std::uint32_t>(a); break;
    case gguf::value_type::int32: walk_items<std::int32_t>(a); break;
    case gguf::value_type::float32: walk_items<float>(a); break;
    case gguf::value_type::boolean: walk_items<bool>(a); break;
    case gguf::value_type::string: walk_items<std::string_view>(a); break;
    case gguf::value_type::array: walk_items<gguf::array_view>(a); break;
    case gguf::value_type::uint64: walk_items<std::uint64_t>(a); break;
    case gguf::value_type::int64: walk_items<std::int64_t>(a); break;
    case gguf::value_type::float64: walk_items<double>(a); break;
  }
  // Asking for the wrong item type is an error, never a reinterpretation.
  if (a.item_type() != gguf::value_type::uint32) FUZZ_CHECK(!a.as<std::uint32_t>());
  if (a.item_type() != gguf::value_type::string) FUZZ_CHECK(!a.get<std::string_view>(0));
}

void walk_value(const gguf::value_view& v, std::uint32_t depth) {
  FUZZ_CHECK(depth <= 64);  // the parser's default max_depth
  check_scalar_access<std::uint8_t>(v);
  check_scalar_access<std::int8_t>(v);
  check_scalar_access<std::uint16_t>(v);
  check_scalar_access<std::int16_t>(v);
  check_scalar_access<std::uint32_t>(v);
  check_scalar_access<std::int32_t>(v);
  check_scalar_access<std::uint64_t>(v);
  check_scalar_access<std::int64_t>(v);
  check_scalar_access<float>(v);
  check_scalar_access<double>(v);
  check_scalar_access<bool>(v);
  sink = sink + static_cast<std::uint64_t>(v.as_integer<std::int8_t>().has_value()) +
         static_cast<std::uint64_t>(v.as_integer<std::uint64_t>().has_value());
  auto s = v.get<std::string_view>();
  FUZZ_CHECK(s.has_value() == v.is_string());
  if (s) FUZZ_CHECK(s->size() == v.bytes().size());
  auto a = v.get<gguf::array_view>();
  FUZZ_CHECK(a.has_value() == v.is_array());
  if (a) walk_array(*a, depth);
}

void walk_metadata(const gguf::file& f) {
  const gguf::metadata_table& m = f.metadata();
  for (const gguf::metadata_entry& e : m) {
    FUZZ_CHECK(!e.key.empty());
    FUZZ_CHECK(m.find(e.key) == &e);  // keys are unique, and the index finds each
    FUZZ_CHECK(m.contains(e.key) && m.value(e.key).has_value());
    FUZZ_CHECK(m.get_integer<std::uint64_t>(e.key).has_value() == e.value.as_integer<std::uint64_t>().has_value());
    FUZZ_CHECK(e.offset < f.bytes().size());
    walk_value(e.value, 0);
  }
  sink = sink + m.architecture().size();
  sink = sink + static_cast<std::uint64_t>(m.get_arch<std::uint32_t>("context_length").has_value());
}

// ---- tensors ----------------------------------------------------------------------------------------

constexpr std::size_t chunk_weights = 4096;
constexpr std::uint64_t max_weights_per_input = std::uint64_t{1} << 21;  // keep every input fast

float reference[chunk_weights], candidate[chunk_weights];
gguf::f16 half_candidate[chunk_weights];
gguf::bf16 bf16_candidate[chunk_weights];

// Bit for bit, except that any NaN matches any NaN: IEEE 754 leaves the sign and payload of a NaN
// result open, and a kernel may multiply in another order than the scalar twin (tests/test_simd.cpp
// holds the conversions that are pure functions, f16's NaNs included, to every bit).
bool same_bits(const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return false;
  }
  return true;
}

// Half outputs: the reference floats rounded (to_f16 / to_bf16), any NaN for a NaN.
template <class Half>
bool same_rounded(const float* ref, const Half* got, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const Half want = gguf::kernels::narrow<Half>(ref[i]);
    if (std::isnan(ref[i])) {
      if (!std::isnan(gguf::to_float(got[i]))) return false;
    } else if (got[i] != want) {
      return false;
    }
  }
  return true;
}

// The scalar kernel is the specification; every instruction set and the public API must match it.
void dequantize_tensor(const gguf::tensor_info& t, std::uint64_t& budget) {
  const gguf::type_traits& tt = t.traits();
  FUZZ_CHECK(t.data.size() == t.n_bytes);
  FUZZ_CHECK(t.n_bytes == t.n_elements / tt.block_size * tt.type_size);
  const std::size_t blocks_per_chunk = chunk_weights / tt.block_size;
  const std::uint64_t blocks = t.n_bytes / tt.type_size;
  for (std::uint64_t b = 0; b < blocks && budget > 0; b += blocks_per_chunk) {
    const std::size_t nb = static_cast<std::size_t>(std::min<std::uint64_t>(blocks_per_chunk, blocks - b));
    const std::size_t nw = nb * tt.block_size;
    budget -= std::min<std::uint64_t>(budget, nw);
    const std::byte* src = t.data.data() + b * tt.type_size;
    gguf::kernels::scalar_kernel(t.type)(src, reference, nb);
    for (gguf::dispatch::isa i : gguf::dispatch::all_isas) {
      if (const gguf::dequant_fn k = gguf::dispatch::kernel(t.type, i)) {
        std::memset(candidate, 0xA5, sizeof candidate);
        k(src, candidate, nb);
        FUZZ_CHECK(same_bits(reference, candidate, nw));
      }
      if (const gguf::dequant_fn_to<gguf::f16> k = gguf::dispatch::kernel_to<gguf::f16>(t.type, i)) {
        k(src, half_candidate, nb);
        FUZZ_CHECK(same_rounded(reference, half_candidate, nw));
      }
      if (const gguf::dequant_fn_to<gguf::bf16> k = gguf::dispatch::kernel_to<gguf::bf16>(t.type, i)) {
        k(src, bf16_candidate, nb);
        FUZZ_CHECK(same_rounded(reference, bf16_candidate, nw));
      }
    }
    FUZZ_CHECK(gguf::dequantize(t.type, std::span(src, nb * tt.type_size), std::span(candidate, nw)));
    FUZZ_CHECK(same_bits(reference, candidate, nw));
  }

  // Rows: the first rows that fit the buffer, through dequantize_rows.
  if (t.n_elements > 0 && t.ne[0] <= chunk_weights) {
    const std::uint64_t rows = std::min<std::uint64_t>(t.n_rows(), chunk_weights / t.ne[0]);
    const std::size_t nw = static_cast<std::size_t>(rows * t.ne[0]);
    FUZZ_CHECK(gguf::dequantize_rows(t, 0, rows, std::span(candidate, nw)));
    // The reference reads little-endian blocks: a big-endian file's are swapped first (byte_order.hpp).
    std::vector<std::byte> le(t.data.begin(),
                              t.data.begin() + static_cast<std::ptrdiff_t>(nw / tt.block_size * tt.type_size));
    if (t.byte_order == std::endian::big) gguf::swap_blocks(t.type, le);
    gguf::kernels::scalar_kernel(t.type)(le.data(), reference, nw / tt.block_size);
    FUZZ_CHECK(same_bits(reference, candidate, nw));
    FUZZ_CHECK(!gguf::dequantize_rows(t, t.n_rows(), 1, std::span(candidate, static_cast<std::size_t>(t.ne[0]))));
  }
}

void check_tensors(const gguf::file& f) {
  std::uint64_t budget = max_weights_per_input;
  for (const gguf::tensor_info& t : f.tensors()) {
    FUZZ_CHECK(f.find_tensor(t.name) == &t);
    FUZZ_CHECK(t.name.size() < 64 && t.n_dims <= gguf::max_dims);
    FUZZ_CHECK(t.file_offset == f.data_offset() + t.offset && t.offset % f.alignment() == 0);
    FUZZ_CHECK(t.data.data() == f.bytes().data() + t.file_offset);
    if (t.n_elements > 0) FUZZ_CHECK(t.n_rows() * t.row_length() == t.n_elements);
    FUZZ_CHECK(t.dims().size() == t.n_dims);
    const auto shape = t.shape();
    for (std::uint32_t d = 0; d < t.n_dims; ++d) FUZZ_CHECK(shape[d] == t.ne[t.n_dims - 1 - d]);
    if (!t.data.empty()) {  // present data is whole blocks: ggml's check either passes or names a byte in it
      const auto finite = gguf::check_finite(t.type, t.data);
      FUZZ_CHECK(finite || !finite.error().has_offset() || finite.error().offset < t.data.size());
    }
    dequantize_tensor(t, budget);
  }
}

// ---- writing ----------------------------------------------------------------------------------------

bool same_bits(const gguf::value_view& a, const gguf::value_view& b) {
  if (a.type() != b.type()) return false;
  if (!a.is_array()) {  // scalars and strings: their bytes, in the byte order of each file
    if (a.is_string()) return *a.get<std::string_view>() == *b.get<std::string_view>();
    const gguf::value x(a), y(b);  // little-endian copies: the same bits, whatever each file's byte order
    return std::ranges::equal(x.bytes(), y.bytes());
  }
  const gguf::array_view x = *a.get<gguf::array_view>(), y = *b.get<gguf::array_view>();
  if (x.item_type() != y.item_type() || x.size() != y.size()) return false;
  auto j = y.begin();
  for (const gguf::value_view item : x) {
    if (!same_bits(item, *j)) return false;
    ++j;
  }
  return true;
}

// Everything that parses writes, and what is written parses to the same file: keys, values, tensors
// and their bytes, in ggml's layout (v1 becomes v3); and it is a fixed point of writing.
void check_rewrite(const gguf::file& f) {
  std::vector<std::byte> out;
  gguf::vector_sink to(out);
  FUZZ_CHECK(gguf::writer::from(f).write(to));
  const auto g = gguf::parse(out);
  FUZZ_CHECK(g.has_value());
  FUZZ_CHECK(g->byte_order() == f.byte_order() && g->metadata().size() == f.metadata().size());
  for (std::size_t i = 0; i < f.metadata().size(); ++i) {
    FUZZ_CHECK(g->metadata()[i].key == f.metadata()[i].key);
    FUZZ_CHECK(same_bits(g->metadata()[i].value, f.metadata()[i].value));
  }
  FUZZ_CHECK(g->tensors().size() == f.tensors().size());
  for (std::size_t i = 0; i < f.tensors().size(); ++i) {
    const gguf::tensor_info &a = f.tensors()[i], &b = g->tensors()[i];
    FUZZ_CHECK(a.name == b.name && a.type == b.type && a.ne == b.ne && a.byte_order == b.byte_order);
    FUZZ_CHECK(std::equal(a.data.begin(), a.data.end(), b.data.begin(), b.data.end()));
  }
  std::vector<std::byte> again;
  gguf::vector_sink to_again(again);
  FUZZ_CHECK(gguf::writer::from(*g).write(to_again));
  FUZZ_CHECK(again == out);
}

// ---- limits -----------------------------------------------------------------------------------------

bool is_limit(gguf::errc c) { return c == gguf::errc::limit_exceeded || c == gguf::errc::too_deep; }

// Limits can only refuse sooner: a tightly limited parse that fails for another reason fails exactly
// like the default one, and one that succeeds finds the same file.
void check_limits(std::span<const std::byte> bytes, const gguf::result<gguf::file>& full) {
  gguf::parse_options tight;
  tight.max_depth = 1;
  tight.max_string_length = 24;
  tight.max_array_length = 16;
  tight.max_metadata_bytes = bytes.size() / 2;
  const auto t = gguf::parse(bytes, tight);
  if (t) {
    FUZZ_CHECK(full.has_value());
    FUZZ_CHECK(t->metadata().size() == full->metadata().size() && t->tensors().size() == full->tensors().size());
    FUZZ_CHECK(t->data_offset() == full->data_offset());
  } else if (!is_limit(t.error().code)) {
    FUZZ_CHECK(!full.has_value());
    FUZZ_CHECK(t.error().code == full.error().code && t.error().offset == full.error().offset);
  }
}

}  // namespace

// ---- model facts --------------------------------------------------------------------------------------

// Hostile hyperparameters (absurd counts, arrays of any length, keys of any type): typed keys, counts and
// the memory estimate give values or errors, never a crash, an overflow or an endless loop.
void check_facts(const gguf::file& f) {
  const auto facts = gguf::facts(f.metadata(), f.tensors());
  if (!facts) {
    FUZZ_CHECK(facts.error().code == gguf::errc::type_mismatch || facts.error().code == gguf::errc::bad_hparams);
    return;
  }
  FUZZ_CHECK(facts->params.total == facts->census.total.elements);
  FUZZ_CHECK(facts->params.shared + facts->params.experts == facts->params.total);
  for (const std::uint32_t context : {0u, 1u, 4096u}) {
    gguf::memory_options o;
    o.context = context;
    const auto m = gguf::estimate_memory(facts->hp, f.tensors(), o);
    if (m) FUZZ_CHECK(m->total() >= m->weights && m->cells % gguf::kv_cells_padding == 0);
  }
  const gguf::size_notation label = facts->label();
  sink = sink + label.view().size();
  if (const auto n = gguf::parse_file_name(facts->hp.name.value_or("")))
    sink = sink + gguf::format_file_name(*n).size();
}

// The same bytes as an importance matrix (GGUF, or legacy for anything else): a refusal, or entries
// whose spans are theirs and found by name; ggml's finiteness check of every tensor's floats.
void check_imatrix(std::span<const std::byte> bytes) {
  const auto m = gguf::read_imatrix(bytes);
  if (!m) {
    FUZZ_CHECK(m.error().code != gguf::errc::success);
    return;
  }
  for (const gguf::imatrix::entry& e : m->entries()) {
    const std::span<const float> v = m->find(e.name);
    FUZZ_CHECK(v.data() == m->values(e).data() && v.size() == e.size && e.size > 0);
    for (const float x : v) sink = sink + (x == x ? 1u : 0u);
  }
  sink = sink + (m->check_finite() ? 1u : 0u);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  check_imatrix(bytes);

#if GGUF_FUZZ_ASAN
  allocated = 0;
  counting = true;
#endif
  const auto f = gguf::parse(bytes);
#if GGUF_FUZZ_ASAN
  counting = false;
  FUZZ_CHECK(allocated <= max_parse_allocation(size));
#endif

  check_limits(bytes, f);
  if (!f) {
    const gguf::error e = f.error();
    FUZZ_CHECK(e.code != gguf::errc::success && e.offset <= size && e.detail != nullptr);
    sink = sink + gguf::explain(bytes, e).size();
    return 0;
  }
  FUZZ_CHECK(f->data_offset() <= size && f->bytes().data() == bytes.data());
  walk_metadata(*f);
  check_tensors(*f);
  check_rewrite(*f);
  check_facts(*f);
  sink = sink + gguf_json::to_json(*f).size();  // gguf-dump --json's writer, on everything that parses
  return 0;
}
