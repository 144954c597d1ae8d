#ifndef GGUF_JINJA_VALUE_HPP
#define GGUF_JINJA_VALUE_HPP

/**
 * @file
 * The values a Jinja template computes with, as Python has them: None, bool, int, float, str, list,
 * tuple, dict (insertion-ordered), Jinja2's Undefined and namespace, macros, ranges, dict views and
 * loop objects. A value is 16 bytes; what it points to lives in the render's arena and dies with it, so
 * values are copied freely and never freed one by one. Printing (str and repr), truthiness, equality
 * and ordering follow Python.
 */

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/jinja/pystr.hpp"
#include "gguf/text/python_float.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

/// What a value is.
enum class vt : std::uint8_t {
  undefined,    ///< Jinja2's Undefined (`x` says why: a message for errors)
  none,         ///< None
  boolean,      ///< bool
  integer,      ///< int that fits 64 bits
  big_integer,  ///< int beyond 64 bits, kept as its decimal digits (printed, compared for equality, no arithmetic)
  floating,     ///< float
  string,       ///< str (UTF-8)
  list,         ///< list
  tuple,        ///< tuple
  dict,         ///< dict
  ns,           ///< Jinja2's namespace (a dict of attributes, the one thing a template can change)
  macro,        ///< a macro (or a call block's caller)
  function,     ///< a global function (range, namespace, raise_exception, ...): `x` says which
  method,       ///< a method bound to its value (str.strip, dict.items, loop.cycle, ...)
  loop,         ///< a for loop's `loop`
  range,        ///< range(...)
  view,         ///< dict.items(), keys() or values() (`x`: 0, 1, 2)
  cycler,       ///< cycler(...)
  joiner,       ///< joiner(...)
  generator,    ///< what map, select, items... give: iterated once, always true, no len (`x` says which filter)
};

/// markupsafe's `escape`: what Markup does to a plain str it meets (`&<>"'` as entities).
inline std::string escape_html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

struct value;
struct list_object;
struct dict_object;

/// A value: its type and 8 bytes (a bool, an int, a float, a string's bytes, or an object in the arena).
struct value {
  vt type = vt::undefined;  ///< what it is
  /// undefined: 1 when using it is a security error; string: 1 for Markup; tuple: 1 for groupby's named
  /// (grouper, list); function, method, view: which
  std::uint8_t x = 0;
  std::uint32_t len = 0;  ///< a string's (big integer's, undefined message's) length in bytes
  /// The payload, by `type`.
  union {
    bool b;          ///< boolean
    std::int64_t i;  ///< integer
    double f;        ///< floating
    const char* s;   ///< string, big_integer, undefined: the bytes (`len` of them)
    void* p;         ///< an object in the arena
  } u{};

  /// None.
  static value none() noexcept {
    value v;
    v.type = vt::none;
    return v;
  }
  /// A bool.
  static value boolean(bool b) noexcept {
    value v;
    v.type = vt::boolean;
    v.u.b = b;
    return v;
  }
  /// An int.
  static value integer(std::int64_t i) noexcept {
    value v;
    v.type = vt::integer;
    v.u.i = i;
    return v;
  }
  /// A float.
  static value floating(double f) noexcept {
    value v;
    v.type = vt::floating;
    v.u.f = f;
    return v;
  }
  /// A string over bytes that outlive the render (the template, the context, the arena).
  static value string(std::string_view s) noexcept {
    value v;
    v.type = vt::string;
    v.u.s = s.data();
    v.len = static_cast<std::uint32_t>(s.size());
    return v;
  }
  /// An object of the arena (list, dict, macro, ...), or a global function (`p` null, `x` which).
  static value object(vt type, void* p, std::uint8_t x = 0) noexcept {
    value v;
    v.type = type;
    v.u.p = p;
    v.x = x;
    return v;
  }
  /// An Undefined whose use fails with `message`.
  static value undefined(std::string_view message = {}, bool security = false) noexcept {
    value v;
    v.type = vt::undefined;
    v.u.s = message.data();
    v.len = static_cast<std::uint32_t>(message.size());
    v.x = security ? 1 : 0;
    return v;
  }

  /// The bytes of a string, big integer or Undefined's message.
  std::string_view str() const noexcept { return {u.s, len}; }
  /// A bool, int or float (Python's numbers: True is 1).
  bool is_number() const noexcept { return type == vt::boolean || type == vt::integer || type == vt::floating; }
  /// A bool or int.
  bool is_int() const noexcept { return type == vt::boolean || type == vt::integer; }
  /// The int of a bool or int.
  std::int64_t as_int() const noexcept { return type == vt::boolean ? (u.b ? 1 : 0) : u.i; }
  /// The float of any number.
  double as_double() const noexcept { return type == vt::floating ? u.f : static_cast<double>(as_int()); }
  /// The list of a list or tuple.
  list_object* list() const noexcept { return static_cast<list_object*>(u.p); }
  /// The dict of a dict or namespace.
  dict_object* dict() const noexcept { return static_cast<dict_object*>(u.p); }
};

/// A list or tuple: its items.
struct list_object {
  value* items = nullptr;  ///< in the arena
  std::uint32_t size = 0;  ///< how many
};

/// A dict or namespace: keys and values in insertion order (a namespace can grow).
struct dict_object {
  value* keys = nullptr;       ///< in insertion order
  value* values = nullptr;     ///< the value of each key
  std::uint32_t size = 0;      ///< how many
  std::uint32_t capacity = 0;  ///< room for this many
  /// Beyond a few keys, an open-addressing index of `slot_mask + 1` slots (a power of two, at least
  /// twice the capacity): the position of a key plus one, 0 when empty. A context's object or a
  /// template's dict may hold many keys; finding one stays O(1).
  std::uint32_t* slots = nullptr;
  std::uint32_t slot_mask = 0;  ///< slots - 1
};

/// range(start, stop, step).
struct range_object {
  std::int64_t start = 0;  ///< the first
  std::int64_t stop = 0;   ///< the bound, not reached
  std::int64_t step = 1;   ///< never 0
  /// len(range).
  std::int64_t length() const noexcept {
    if (step > 0) return start < stop ? (stop - start - 1) / step + 1 : 0;
    return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
  }
  /// Item `k`.
  std::int64_t at(std::int64_t k) const noexcept { return start + k * step; }
};

/// A method bound to a value.
struct method_object {
  value self;              ///< the value it belongs to
  std::uint8_t which = 0;  ///< a `meth`
};

/// A generator: the items it has left to give.
struct generator_object {
  list_object items;      ///< all it gives
  std::uint32_t pos = 0;  ///< how many it gave
};

/// cycler(...) and joiner(...): their state.
struct cycler_object {
  list_object items;      ///< a cycler's items
  std::uint32_t pos = 0;  ///< the cycler's next
  std::string_view sep;   ///< a joiner's separator
  bool used = false;      ///< a joiner was called before
};

/**
 * The render's memory: a bump allocator in chunks. Everything a render makes lives here and goes with
 * it; `used()` is checked against the render's memory limit.
 */
class arena {
 public:
  // first_ is left unwritten: every byte handed out is written before it is read, and zeroing 16 KiB would
  // cost every render. next_ and left_ are set in the body: GCC 12 takes first_.data() in a member
  // initializer for a read of the uninitialized array.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init)
  arena() noexcept {
    next_ = first_.data();  // NOLINT(cppcoreguidelines-prefer-member-initializer)
    left_ = first_.size();  // NOLINT(cppcoreguidelines-prefer-member-initializer)
  }
  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;
  arena(arena&&) = delete;
  arena& operator=(arena&&) = delete;
  ~arena() = default;

  /// `n` bytes aligned to 16, or nullptr past `limit` bytes in all.
  void* allocate(std::size_t n) {
    n = (n + 15) & ~std::size_t{15};
    if (n > left_ || n > limit_ || used_ > limit_ - n) return allocate_slow(n);
    void* p = next_;
    next_ += n;
    left_ -= n;
    used_ += n;
    return p;
  }
  /// Bytes handed out.
  std::size_t used() const noexcept { return used_; }
  /// The most bytes it hands out.
  void set_limit(std::size_t limit) noexcept { limit_ = limit; }

 private:
  // the first bytes in the object itself: a usual render (a conversation with tools: 5-10 KiB of
  // values) allocates nothing from the heap
  alignas(16) std::array<std::byte, 16384> first_;

  // a new chunk (twice the last, up to 16 MiB), or nullptr past the limit; apart, so that the usual
  // path inlines
  GGUF_COLD void* allocate_slow(std::size_t n) {
    if (n > limit_ || used_ > limit_ - n) return nullptr;
    if (n > left_) {
      const std::size_t chunk = std::max<std::size_t>(n, std::max<std::size_t>(std::size_t{8} << 10, last_ * 2));
      chunks_.push_back(
          std::unique_ptr<std::byte[]>(new std::byte[chunk + 16]));  // not zeroed: a render writes before it reads
      const auto addr = reinterpret_cast<std::uintptr_t>(chunks_.back().get());
      next_ = chunks_.back().get() + ((16 - addr % 16) % 16);
      left_ = chunk;
      last_ = std::min<std::size_t>(chunk, std::size_t{1} << 24);
    }
    void* p = next_;
    next_ += n;
    left_ -= n;
    used_ += n;
    return p;
  }
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  std::byte* next_ = nullptr;
  std::size_t left_ = 0, used_ = 0, last_ = 0, limit_ = ~std::size_t{0};
};

/// Whether `n` bytes at `a` and `b` are the same: short ones (a dict key, a role) by fixed-size loads
/// in place, not a call.
inline bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
  const auto load8 = [](const char* p) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    return x;
  };
  const auto load4 = [](const char* p) {
    std::uint32_t x;
    std::memcpy(&x, p, 4);
    return x;
  };
  if (n >= 8 && n <= 16) return load8(a) == load8(b) && load8(a + n - 8) == load8(b + n - 8);
  if (n >= 4 && n < 8) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
  if (n < 4) {
    for (std::size_t k = 0; k < n; ++k)
      if (a[k] != b[k]) return false;
    return true;
  }
  return std::memcmp(a, b, n) == 0;
}

/// Text built a piece at a time through a pointer, grown by doubling: what tojson writes (a
/// std::string's append is a call per piece, and a schema is thousands of pieces). Kept by the renderer
/// and cleared between uses, so that it allocates once a render.
class text_buffer {
 public:
  text_buffer() = default;
  text_buffer(const text_buffer&) = delete;
  text_buffer& operator=(const text_buffer&) = delete;
  text_buffer(text_buffer&&) = delete;
  text_buffer& operator=(text_buffer&&) = delete;
  ~text_buffer() = default;

  /// Appends a byte.
  GGUF_HOT_INLINE text_buffer& operator+=(char c) {
    if (size_ == capacity_) grow(1);
    data_[size_++] = c;
    return *this;
  }
  /// Appends bytes.
  GGUF_HOT_INLINE text_buffer& operator+=(std::string_view s) {
    const std::size_t n = s.size();
    if (n > 16 || capacity_ - size_ < 16) return append_long(s);
    copy_short(data_.get() + size_, s.data(), n);
    size_ += n;
    return *this;
  }
  /// Copies n <= 16 bytes: most pieces are a few bytes (a key, ", ", an indent), for which two
  /// fixed-size moves cost less than a call of memcpy.
  GGUF_HOT_INLINE static void copy_short(char* to, const char* from, std::size_t n) noexcept {
    if (n >= 8) {
      move_bytes<8>(to, from);
      move_bytes<8>(to + n - 8, from + n - 8);
    } else if (n >= 4) {
      move_bytes<4>(to, from);
      move_bytes<4>(to + n - 4, from + n - 4);
    } else if (n != 0) {
      to[0] = from[0];
      to[n / 2] = from[n / 2];
      to[n - 1] = from[n - 1];
    }
  }
  /// The bytes written.
  std::string_view view() const noexcept { return {data_.get(), size_}; }
  /// How many.
  std::size_t size() const noexcept { return size_; }
  /// Empties it (its room is kept).
  void clear() noexcept { size_ = 0; }
  /// Its room.
  std::size_t capacity() const noexcept { return capacity_; }
  /// Where the next `n` bytes go: write them there, then advance(n).
  char* room(std::size_t n) {
    if (capacity_ - size_ < n) grow(n);
    return data_.get() + size_;
  }
  /// Counts `n` bytes written at room(n).
  void advance(std::size_t n) noexcept { size_ += n; }
  /// Empties it and frees its room.
  void release() noexcept {
    data_.reset();
    size_ = capacity_ = 0;
  }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, capacity_ = 0;

  template <std::size_t N>
  static void move_bytes(char* to, const char* from) noexcept {
    char x[N];
    std::memcpy(x, from, N);
    std::memcpy(to, x, N);
  }
  text_buffer& append_long(std::string_view s) {  // or into a buffer with less than 16 bytes of room
    if (capacity_ - size_ < s.size()) grow(s.size());
    if (!s.empty()) std::memcpy(data_.get() + size_, s.data(), s.size());
    size_ += s.size();
    return *this;
  }
  GGUF_COLD void grow(std::size_t more) {
    // from 4 KiB: a tool's schema fits, with one allocation a render
    const std::size_t capacity = std::max<std::size_t>({size_ + more, capacity_ * 2, 4096});
    std::unique_ptr<char[]> bigger(new char[capacity]);
    if (size_) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }
};

// ---- Python's text of numbers ------------------------------------------------------------------------

/// Appends Python's repr of a float.
inline void append_float(std::string& out, double d) { text::append_python_float(out, d); }

/// Appends an int's decimal digits (to a std::string or a text_buffer).
template <class Text>
void append_int(Text& out, std::int64_t i) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, i);
  out += std::string_view(buf, static_cast<std::size_t>(r.ptr - buf));
}

// ---- printing ------------------------------------------------------------------------------------

/// How deep printing, comparing and serializing go into nested values: Python's recursion limit stops
/// Jinja2 near 990 levels (a template can nest a list in itself a million times: `set x = [x]`).
inline constexpr std::uint32_t max_value_depth = 1000;

namespace detail {
// the namespaces being printed, innermost first: a namespace is the one value that can hold itself
struct repr_path {
  const void* object;
  const repr_path* up;
};
}  // namespace detail

[[nodiscard]] inline bool append_repr(std::string& out, const value& v, std::uint32_t depth = 0,
                                      const detail::repr_path* path = nullptr);

/// Appends Python's str() of `v` (what `{{ v }}` prints); false when it nests beyond `max_value_depth`.
[[nodiscard]] inline bool append_str(std::string& out, const value& v) {
  switch (v.type) {
    case vt::undefined: return true;
    case vt::string: out.append(v.u.s, v.len); return true;
    default: return append_repr(out, v);
  }
}
/// Python's repr of a type's objects: the name Jinja2's messages and Python's print.
inline const char* type_name(const value& v) noexcept {
  switch (v.type) {
    case vt::undefined: return "Undefined";
    case vt::none: return "NoneType";
    case vt::boolean: return "bool";
    case vt::integer:
    case vt::big_integer: return "int";
    case vt::floating: return "float";
    case vt::string: return "str";
    case vt::list: return "list";
    case vt::tuple: return "tuple";
    case vt::dict: return "dict";
    case vt::ns: return "Namespace";
    case vt::macro: return "Macro";
    case vt::function: return "function";
    case vt::method: return "builtin_function_or_method";
    case vt::loop: return "LoopContext";
    case vt::range: return "range";
    case vt::view: return v.x == 0 ? "dict_items" : v.x == 1 ? "dict_keys" : "dict_values";
    case vt::cycler: return "Cycler";
    case vt::joiner: return "Joiner";
    case vt::generator: return "generator";
  }
  return "object";
}

/**
 * Appends Python's repr of `v` (what a list prints of its items); a namespace within itself prints as
 * `<Namespace {...}>`, as Python's reprs of recursive containers do.
 * @return false when `v` nests beyond `max_value_depth` (Python raises RecursionError)
 */
inline bool append_repr(std::string& out, const value& v, std::uint32_t depth, const detail::repr_path* path) {
  if (depth > max_value_depth) return false;
  switch (v.type) {
    case vt::undefined: out += "Undefined"; return true;
    case vt::none: out += "None"; return true;
    case vt::boolean: out += v.u.b ? "True" : "False"; return true;
    case vt::integer: append_int(out, v.u.i); return true;
    case vt::big_integer: out.append(v.u.s, v.len); return true;
    case vt::floating: append_float(out, v.u.f); return true;
    case vt::string: py::append_repr(out, v.str()); return true;
    case vt::list:
    case vt::tuple: {
      const list_object* l = v.list();
      out += v.type == vt::list ? '[' : '(';
      for (std::uint32_t k = 0; k < l->size; ++k) {
        if (k) out += ", ";
        if (!append_repr(out, l->items[k], depth + 1, path)) return false;
      }
      if (v.type == vt::tuple && l->size == 1) out += ',';
      out += v.type == vt::list ? ']' : ')';
      return true;
    }
    case vt::dict:
    case vt::ns: {
      const dict_object* d = v.dict();
      const detail::repr_path here{d, path};
      if (v.type == vt::ns) {
        out += "<Namespace ";
        for (const detail::repr_path* p = path; p; p = p->up) {
          if (p->object == d) {
            out += "{...}>";
            return true;
          }
        }
        path = &here;
      }
      out += '{';
      for (std::uint32_t k = 0; k < d->size; ++k) {
        if (k) out += ", ";
        if (!append_repr(out, d->keys[k], depth + 1, path)) return false;
        out += ": ";
        if (!append_repr(out, d->values[k], depth + 1, path)) return false;
      }
      out += '}';
      if (v.type == vt::ns) out += '>';
      return true;
    }
    case vt::range: {
      const auto* r = static_cast<const range_object*>(v.u.p);
      out += "range(";
      append_int(out, r->start);
      out += ", ";
      append_int(out, r->stop);
      if (r->step != 1) {
        out += ", ";
        append_int(out, r->step);
      }
      out += ')';
      return true;
    }
    case vt::view: {
      const dict_object* d = static_cast<const dict_object*>(v.u.p);
      out += type_name(v);
      out += "([";
      for (std::uint32_t k = 0; k < d->size; ++k) {
        if (k) out += ", ";
        if (v.x == 0) {
          out += '(';
          if (!append_repr(out, d->keys[k], depth + 2, path)) return false;
          out += ", ";
          if (!append_repr(out, d->values[k], depth + 2, path)) return false;
          out += ')';
        } else if (!append_repr(out, v.x == 1 ? d->keys[k] : d->values[k], depth + 1, path)) {
          return false;
        }
      }
      out += "])";
      return true;
    }
    default:
      out += '<';
      out += type_name(v);
      out += " object>";
      return true;
  }
}

// ---- truth, equality, order ---------------------------------------------------------------------

/// Python's bool(v).
inline bool truthy(const value& v) noexcept {
  switch (v.type) {
    case vt::undefined:
    case vt::none: return false;
    case vt::boolean: return v.u.b;
    case vt::integer: return v.u.i != 0;
    case vt::big_integer: return true;
    case vt::floating: return v.u.f != 0.0;
    case vt::string: return v.len != 0;
    case vt::list:
    case vt::tuple: return v.list()->size != 0;
    case vt::dict: return v.dict()->size != 0;
    case vt::view: return static_cast<const dict_object*>(v.u.p)->size != 0;
    case vt::range: return static_cast<const range_object*>(v.u.p)->length() != 0;
    default: return true;
  }
}

/// The outcome of `equal`: a nesting beyond `max_value_depth` is neither (Python raises RecursionError).
enum class same : std::uint8_t { no, yes, too_deep };

/// Python's a == b (within `max_value_depth`).
inline same equal(const value& a, const value& b, std::uint32_t depth = 0) noexcept;

/// A hash consistent with `equal` for the values Python can hash (1, 1.0 and True hash alike); a tuple
/// nested beyond `max_value_depth` hashes as its prefix.
inline std::uint64_t hash(const value& v, std::uint32_t depth = 0) noexcept {
  const auto mix = [](std::uint64_t h) {  // splitmix64's finalizer
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
  };
  const auto bytes = [&](std::string_view s, std::uint64_t seed) {  // FNV-1a, then mixed
    std::uint64_t h = 0xcbf29ce484222325ull ^ seed;
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return mix(h);
  };
  switch (v.type) {
    case vt::boolean:
    case vt::integer: return mix(static_cast<std::uint64_t>(v.as_int()));
    case vt::floating: {
      const double d = v.u.f;
      if (d == std::floor(d) && d >= -9.2e18 && d <= 9.2e18)
        return mix(static_cast<std::uint64_t>(static_cast<std::int64_t>(d)));
      std::uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      return mix(bits ^ 0x5555);
    }
    case vt::string: return bytes(v.str(), 1);
    case vt::big_integer: return bytes(v.str(), 2);
    case vt::tuple: {
      std::uint64_t h = 0x345678;
      if (depth > max_value_depth) return h;
      const list_object* l = v.list();
      for (std::uint32_t k = 0; k < l->size; ++k) h = mix(h * 1000003 ^ hash(l->items[k], depth + 1));
      return h;
    }
    default: return static_cast<std::uint64_t>(v.type) * 0x9e3779b97f4a7c15ull;
  }
}

/// The position of `key` in `d`, or -1 (Python's equality: 1, 1.0 and True are one key).
inline std::int64_t find_index(const dict_object* d, const value& key) noexcept {
  if (d->slots) {
    for (std::uint64_t at = hash(key);; ++at) {
      const std::uint32_t slot = d->slots[at & d->slot_mask];
      if (slot == 0) return -1;
      if (equal(d->keys[slot - 1], key, 0) == same::yes) return slot - 1;
    }
  }
  if (key.type == vt::string) {  // the common case, a str key: only a str of its length can equal it
    for (std::uint32_t k = 0; k < d->size; ++k) {
      const value& x = d->keys[k];
      if (x.type == vt::string && x.len == key.len && same_bytes(x.u.s, key.u.s, key.len)) return k;
    }
    return -1;
  }
  for (std::uint32_t k = 0; k < d->size; ++k)
    if (equal(d->keys[k], key, 0) == same::yes) return k;
  return -1;
}

/// The value of `key` in `d`, or nullptr.
inline const value* find_key(const dict_object* d, const value& key) noexcept {
  const std::int64_t k = find_index(d, key);
  return k < 0 ? nullptr : &d->values[k];
}

inline same equal(const value& a, const value& b, std::uint32_t depth) noexcept {
  if (a.is_number() && b.is_number()) {
    if (a.type == vt::floating || b.type == vt::floating) return a.as_double() == b.as_double() ? same::yes : same::no;
    return a.as_int() == b.as_int() ? same::yes : same::no;
  }
  if (a.type != b.type) return same::no;  // a list is never a tuple
  if (depth > max_value_depth) return same::too_deep;
  switch (a.type) {
    case vt::undefined:
    case vt::none: return same::yes;
    case vt::string:
    case vt::big_integer: return a.len == b.len && same_bytes(a.u.s, b.u.s, a.len) ? same::yes : same::no;
    case vt::list:
    case vt::tuple: {
      const list_object *x = a.list(), *y = b.list();
      if (x->size != y->size) return same::no;
      for (std::uint32_t k = 0; k < x->size; ++k) {
        const same s = equal(x->items[k], y->items[k], depth + 1);
        if (s != same::yes) return s;
      }
      return same::yes;
    }
    case vt::dict: {
      const dict_object *x = a.dict(), *y = b.dict();
      if (x->size != y->size) return same::no;
      for (std::uint32_t k = 0; k < x->size; ++k) {
        const value* other = find_key(y, x->keys[k]);
        if (!other) return same::no;
        const same s = equal(x->values[k], *other, depth + 1);
        if (s != same::yes) return s;
      }
      return same::yes;
    }
    case vt::range: {
      const auto *x = static_cast<const range_object*>(a.u.p), *y = static_cast<const range_object*>(b.u.p);
      const std::int64_t n = x->length();
      if (n != y->length()) return same::no;
      if (n == 0) return same::yes;
      return x->start == y->start && (n == 1 || x->step == y->step) ? same::yes : same::no;
    }
    default: return a.u.p == b.u.p && a.x == b.x ? same::yes : same::no;
  }
}

/// The outcome of `compare`: less, equal, greater, unordered (a NaN: every comparison false), no order
/// at all (Python raises TypeError), or nested beyond `max_value_depth` (RecursionError).
enum class order { less, equal, greater, unordered, none, too_deep };

/// Python's ordering of a and b (numbers, strings, lists and tuples of the same kind).
inline order compare(const value& a, const value& b, std::uint32_t depth = 0) noexcept {
  if (a.is_number() && b.is_number()) {
    if (a.type == vt::floating || b.type == vt::floating) {
      const double x = a.as_double(), y = b.as_double();
      if (std::isnan(x) || std::isnan(y)) return order::unordered;
      return x < y ? order::less : x > y ? order::greater : order::equal;
    }
    const std::int64_t x = a.as_int(), y = b.as_int();
    return x < y ? order::less : x > y ? order::greater : order::equal;
  }
  if (a.type == vt::string && b.type == vt::string) {
    const int c = a.str().compare(b.str());  // UTF-8 byte order is code point order
    return c < 0 ? order::less : c > 0 ? order::greater : order::equal;
  }
  if ((a.type == vt::list || a.type == vt::tuple) && a.type == b.type) {
    if (depth > max_value_depth) return order::too_deep;
    const list_object *x = a.list(), *y = b.list();
    const std::uint32_t n = std::min(x->size, y->size);
    for (std::uint32_t k = 0; k < n; ++k) {
      const same s = equal(x->items[k], y->items[k], depth + 1);
      if (s == same::yes) continue;
      if (s == same::too_deep) return order::too_deep;
      return compare(x->items[k], y->items[k], depth + 1);
    }
    return x->size < y->size ? order::less : x->size > y->size ? order::greater : order::equal;
  }
  return order::none;
}

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_VALUE_HPP
