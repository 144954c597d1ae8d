#ifndef GGUF_JINJA_RENDER_HPP
#define GGUF_JINJA_RENDER_HPP

/**
 * @file
 * Rendering a compiled template: Jinja2's runtime (jinja2/runtime.py, the code its compiler writes, and
 * the immutable sandbox of jinja2/sandbox.py) over the values of `jinja/value.hpp`. Scopes are Jinja2's:
 * a for loop's body is a fresh scope each iteration, an `if` none, a macro sees the scope it was
 * defined in as it is when called. Every render is bounded: output, memory, steps (loop iterations and
 * calls), call depth and time.
 */

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/jinja/program.hpp"
#include "gguf/jinja/stack.hpp"
#include "gguf/jinja/value.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

namespace detail {
struct filter_call;
// a name bound in a scope
struct binding {
  std::uint32_t sym = 0;
  value v;
  binding* next = nullptr;
};

/// Objects used one a nesting level (the text a macro call captures, a call's argument lists), kept for
/// the render and cleared rather than freed: a macro or filter called for each message allocates once a
/// render, not once a call. A `lease` has the next level's object, empty, for as long as it lives.
template <class T>
class level_pool {
 public:
  /// The next level's object, cleared; given back when the lease ends (leases nest).
  class lease {
   public:
    /// Takes the next level's object of `p`.
    explicit lease(level_pool& p) : p_(p) {
      if (p.used_ == p.items_.size()) p.items_.push_back(std::make_unique<T>());
      x_ = p.items_[p.used_++].get();
      x_->clear();
    }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    lease(lease&&) = delete;
    lease& operator=(lease&&) = delete;
    ~lease() { --p_.used_; }
    /// The object.
    T& operator*() const noexcept { return *x_; }
    /// Its members.
    T* operator->() const noexcept { return x_; }

   private:
    level_pool& p_;
    T* x_;
  };

 private:
  std::vector<std::unique_ptr<T>> items_;  // stable addresses: an outer lease's object stays put
  std::size_t used_ = 0;

 public:
  /// Frees its objects (none may be leased).
  void release() noexcept {
    if (used_ == 0) items_.clear();
  }
  /// The bytes its objects hold, `size_of` each.
  template <class F>
  std::size_t room(F size_of) const {
    std::size_t n = 0;
    for (const auto& x : items_) n += size_of(*x);
    return n;
  }
};

/// A call's positional and keyword arguments.
struct arg_list {
  std::vector<value> args;                                 ///< positional
  std::vector<std::pair<std::string_view, value>> kwargs;  ///< by name, in order
  /// Empties both (their room kept).
  void clear() noexcept {
    args.clear();
    kwargs.clear();
  }
};
}  // namespace detail

/**
 * The heap buffers a render works in: kept by a caller that renders many times on one thread and lent
 * to each render (see renderer), they are allocated once rather than once a render (five to ten
 * allocations in a render with macros, calls or tojson). One render at a time uses one: a render made
 * while another holds it (a render started from a conversion's Python code) uses buffers of its own.
 */
struct render_workspace {
  std::string scratch;                             ///< renderer's text stack
  detail::level_pool<std::string> captures;        ///< captured texts, one a nesting level
  detail::level_pool<detail::arg_list> arg_lists;  ///< argument lists, one a nesting level
  text_buffer json;                                ///< tojson's text
  std::string json_newlines;                       ///< tojson's separator, newline and indents
  bool busy = false;                               ///< a render holds it

  /// Frees everything when the buffers hold more than `keep` bytes of room (after a huge render).
  void trim(std::size_t keep) {
    const std::size_t room = scratch.capacity() + json.capacity() + json_newlines.capacity() +
                             captures.room([](const std::string& s) { return s.capacity(); }) +
                             arg_lists.room([](const detail::arg_list& a) {
                               return a.args.capacity() * sizeof(value) + a.kwargs.capacity() * sizeof(a.kwargs[0]);
                             });
    if (room <= keep || busy) return;
    std::string().swap(scratch);
    std::string().swap(json_newlines);
    json.release();
    captures.release();
    arg_lists.release();
  }
};

/// A scope: its bindings and the scope it sees into.
struct frame {
  frame* parent = nullptr;          ///< the scope it sees into
  detail::binding* head = nullptr;  ///< its bindings, newest first
  std::uint32_t count = 0;          ///< bindings made by `renderer::bind`
  /// From 16 bindings on (a macro of many parameters, a template of many `set`s), an open-addressing
  /// index of `mask + 1` slots by symbol, so that a name is found in O(1) however many there are.
  std::uint32_t mask = 0;
  detail::binding** slots = nullptr;  ///< the index, or null
};

/// A macro (or call block's caller): its definition, the scope it closes over, its caller if any.
struct macro_object {
  const node* def = nullptr;  ///< the macro (or call block) node
  frame* closure = nullptr;   ///< the scope it was defined in
  value caller;               ///< a call block's caller, passed to the macro it calls
};

/// A for loop's `loop`.
struct loop_object {
  list_object items;            ///< what it goes over (after its filter)
  std::uint32_t index0 = 0;     ///< the current item
  std::uint32_t depth0 = 0;     ///< a recursive loop's depth
  const node* def = nullptr;    ///< for `loop(...)` of a recursive loop
  frame* scope = nullptr;       ///< the scope the loop runs in (a recursive call's)
  value last_changed;           ///< loop.changed's last arguments
  bool changed_called = false;  ///< loop.changed was called
};

/// Methods a value can have bound (`method_object::which`).
enum class meth : std::uint8_t {
  // str
  s_capitalize,
  s_casefold,
  s_center,
  s_count,
  s_endswith,
  s_find,
  s_format,
  s_index,
  s_isalnum,
  s_isalpha,
  s_isascii,
  s_isdecimal,
  s_isdigit,
  s_islower,
  s_isnumeric,
  s_isprintable,
  s_isspace,
  s_istitle,
  s_isupper,
  s_join,
  s_ljust,
  s_lower,
  s_lstrip,
  s_partition,
  s_removeprefix,
  s_removesuffix,
  s_replace,
  s_rfind,
  s_rindex,
  s_rjust,
  s_rpartition,
  s_rsplit,
  s_rstrip,
  s_split,
  s_splitlines,
  s_startswith,
  s_strip,
  s_swapcase,
  s_title,
  s_upper,
  s_zfill,
  s_isidentifier,
  s_expandtabs,
  // dict
  d_get,
  d_items,
  d_keys,
  d_values,
  d_copy,
  // list, tuple
  l_count,
  l_index,
  l_copy,
  // loop, cycler
  loop_cycle,
  loop_changed,
  cycler_next,
  cycler_reset,
  // unsafe: calling one is a SecurityError
  unsafe,
};

/**
 * One render of a program: the context's values bound by symbol, the output, the scopes, the limits.
 * Single-threaded; a program may be rendered by many renderers at once.
 */
class renderer {
 public:
  /// A renderer of `p`, within `l`, with `now` for strftime_now (null: the local time, read when a
  /// template first asks, so that a render that never asks reads no clock). Every failure from here on,
  /// making the context's values included, is reported in `err` (which must outlive the renderer). The
  /// time limit counts from the render's first 256 steps (a few microseconds: no clock is read before).
  /// `ws`, when given and not in use, lends the render its buffers (a caller that renders many times on
  /// one thread keeps their room from one render to the next: pygguf does).
  renderer(const program& p, const limits& l, const std::tm* now, error_info& err, render_workspace* ws = nullptr)
      : p_(p),
        limits_(l),
        now_(now ? *now : std::tm{}),
        now_set_(now != nullptr),
        ws_(ws && !ws->busy ? *ws : own_),
        err_(&err) {
    ws_.busy = true;
    scratch_.clear();
    arena_.set_limit(l.max_memory);
    // the context's slots, one a symbol, in the arena
    const std::size_t n = p.symbols.size();
    ctx_ = static_cast<value*>(arena_.allocate(std::max<std::size_t>(n, 1) * sizeof(value)));
    ctx_set_ = static_cast<std::uint8_t*>(arena_.allocate(std::max<std::size_t>(n, 1) * 2));
    if (!ctx_ || !ctx_set_) {
      ctx_ = nullptr;
      out_of_memory();  // run() then reports it
      return;
    }
    // ctx_ is left unwritten: a slot is read only once ctx_set_ says the context gave it
    bound_ = ctx_set_ + std::max<std::size_t>(n, 1);
    std::memset(ctx_set_, 0, std::max<std::size_t>(n, 1) * 2);
  }
  renderer(const renderer&) = delete;
  renderer& operator=(const renderer&) = delete;
  renderer(renderer&&) = delete;
  renderer& operator=(renderer&&) = delete;
  ~renderer() { ws_.busy = false; }

  /// Binds a context variable (a name the template never uses is ignored).
  void bind(std::string_view name, value v) { bind_symbol(symbol(name), v); }
  /// The symbol of a variable's name, or -1 for a name the template never uses (whose value it cannot
  /// read: a caller need not make it).
  std::int64_t symbol(std::string_view name) const noexcept { return p_.symbols.find(name); }
  /// Binds the context variable of symbol `s` (-1 is ignored).
  void bind_symbol(std::int64_t s, value v) noexcept {
    if (s < 0 || !ctx_) return;
    ctx_[static_cast<std::size_t>(s)] = v;
    ctx_set_[static_cast<std::size_t>(s)] = 1;
  }

  /// Calls `hook(context)` once when the render turns out long (at most 256 steps, a few microseconds,
  /// after this call; never in a render that ends sooner): pygguf, which sets it once it has made the
  /// context, releases the GIL there (for a short render that would cost more than the render).
  void on_long_render(void (*hook)(void*), void* context) noexcept {
    long_render_ = hook;
    long_render_context_ = context;
  }

  /// The arena values of the context are made in.
  arena& memory() noexcept { return arena_; }

  /// Renders the template into `out`; false with the error set on a failure (`out` then holds part of it).
  bool run(std::string& out) {
    if (err_->type != error_info::kind::none) return false;  // the context failed to build
    stack_ = stack_budget(limits_.max_stack);
    out_ = &out;
    frame root;
    const flow f = exec(p_.body, &root);
    return f != flow::fail;
  }

  // ---- making values (public: the context is built with them) ----------------------------------

  /// A string copied into the arena.
  bool make_string(std::string_view s, value& out) {
    if (s.size() > limits_.max_output) return fail(error_info::kind::limit, "a string larger than the output limit");
    if (s.size() >= 4096 && !charge(s.size() >> 12)) return false;
    char* p = static_cast<char*>(arena_.allocate(s.size() + 1));
    if (!p) return out_of_memory();
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    out = value::string(std::string_view(p, s.size()));
    return true;
  }
  /// A list (or tuple) of `n` undefined items.
  bool make_list(std::size_t n, value& out, vt type = vt::list) {
    if (n > 0xFFFFFFF0u) return out_of_memory();
    if (n >= 16 && !charge(n >> 4)) return false;  // filling a list is work too (range(...)|list)
    auto* l = static_cast<list_object*>(arena_.allocate(sizeof(list_object)));
    value* items = n ? static_cast<value*>(arena_.allocate(n * sizeof(value))) : nullptr;
    if (!l || (n && !items)) return out_of_memory();
    for (std::size_t k = 0; k < n; ++k) new (&items[k]) value();
    l->items = items;
    l->size = static_cast<std::uint32_t>(n);
    out = value::object(type, l);
    return true;
  }
  /// An empty dict (or namespace) with room for `capacity` items.
  bool make_dict(std::size_t capacity, value& out, vt type = vt::dict) {
    if (capacity - 1 < 15) {  // 1 to 15 keys, the usual (no index): the dict and its room in one piece
      constexpr std::size_t head = (sizeof(dict_object) + 15) & ~std::size_t{15};
      auto* p = static_cast<std::byte*>(arena_.allocate(head + 2 * capacity * sizeof(value)));
      if (!p) return out_of_memory();
      auto* d = new (p) dict_object{};
      d->keys = reinterpret_cast<value*>(p + head);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
      d->values = d->keys + capacity;
      d->capacity = static_cast<std::uint32_t>(capacity);
      out = value::object(type, d);
      return true;
    }
    auto* d = static_cast<dict_object*>(arena_.allocate(sizeof(dict_object)));
    if (!d) return out_of_memory();
    *d = dict_object{};
    if (capacity && !grow(d, capacity)) return false;
    out = value::object(type, d);
    return true;
  }
  /// Sets d[key] = v: replaced in place when the key is there (Python's equality: 1, 1.0 and True are one key).
  bool dict_set(dict_object* d, const value& key, const value& v) {
    const std::int64_t at = find_index(d, key);
    if (at >= 0) {
      d->values[at] = v;
      return true;
    }
    return dict_append(d, key, v);
  }
  /// Appends d[key] = v, `key` known to be new (a JSON object's keys are).
  bool dict_append(dict_object* d, const value& key, const value& v) {
    if (d->size < d->capacity && !d->slots) {  // the usual, inline
      d->keys[d->size] = key;
      d->values[d->size] = v;
      ++d->size;
      return true;
    }
    return dict_append_growing(d, key, v);
  }

 private:
  // full, or indexed (16 keys on): apart, so that dict_append inlines
  GGUF_COLD bool dict_append_growing(dict_object* d, const value& key, const value& v) {
    if (d->size == d->capacity && !grow(d, d->capacity ? std::size_t{d->capacity} * 2 : 4)) return false;
    d->keys[d->size] = key;
    d->values[d->size] = v;
    ++d->size;
    if (d->slots) index_key(d, d->size - 1);
    return true;
  }

  friend struct builtins;
  friend struct detail::filter_call;
  enum class flow : std::uint8_t { normal, brk, cont, fail };

  const program& p_;
  limits limits_;
  std::tm now_;
  bool now_set_ = false;  // now_ holds the clock (given, or read once)
  arena arena_;
  value* ctx_ = nullptr;             // the context's value of each symbol (arena)
  std::uint8_t* ctx_set_ = nullptr;  // whether the context gives it
  // whether a scope of the render has bound it (a variable no `set`, loop or macro binds, such as
  // `messages`, is looked up in the context without a walk through the scopes)
  std::uint8_t* bound_ = nullptr;
  std::string* out_ = nullptr;
  render_workspace own_;  // the buffers, unless the caller lends its own
  render_workspace& ws_;
  // Text built before it is copied into the arena or written: used as a stack (each use appends after
  // what an enclosing use holds and cuts back to where it began), so that nested uses cannot clobber
  // each other and a render allocates it once rather than a string per concatenation or message.
  std::string& scratch_ = ws_.scratch;
  // The texts that macro calls, recursive loops, set and filter blocks capture, and the argument lists
  // of calls, filters and tests: one a nesting level, reused (see detail::level_pool).
  detail::level_pool<std::string>& captures_ = ws_.captures;
  detail::level_pool<detail::arg_list>& arg_lists_ = ws_.arg_lists;
  using capture_buffer = detail::level_pool<std::string>::lease;
  using call_args = detail::level_pool<detail::arg_list>::lease;
  error_info* err_ = nullptr;
  std::uint64_t steps_ = 0;
  std::uint32_t depth_ = 0;
  std::uint32_t line_ = 0;
  bool autoescape_ = false;
  bool ensure_ascii_ = false;                       // tojson's, for the call under way
  text_buffer& json_ = ws_.json;                    // tojson's text (no template code runs while it is written)
  std::string& json_newlines_ = ws_.json_newlines;  // tojson's item separator, newline and indents, in a row
  std::chrono::steady_clock::time_point start_;     // of the time limit, once started_
  bool started_ = false;
  void (*long_render_)(void*) = nullptr;  // see on_long_render
  void* long_render_context_ = nullptr;
  stack_budget stack_{0};

  // ---- errors and limits --------------------------------------------------------------------------

  bool fail(error_info::kind k, std::string msg) {
    if (err_->type == error_info::kind::none) {
      err_->type = k;
      err_->message = std::move(msg);
      err_->line = line_;
    }
    return false;
  }
  bool out_of_memory() { return fail(error_info::kind::limit, "the render needs more memory than its limit"); }
  bool type_error(std::string msg) { return fail(error_info::kind::type, std::move(msg)); }
  bool undefined_error(const value& v) {
    if (v.x == 1) return fail(error_info::kind::security, std::string(v.str()));
    return fail(error_info::kind::undefined, v.len ? std::string(v.str()) : std::string("'undefined' is undefined"));
  }
  // a value printed, compared or serialized beyond max_value_depth (Python raises RecursionError)
  bool too_deep_value() {
    return fail(error_info::kind::limit, "a value nests too deeply (maximum recursion depth exceeded)");
  }
  bool repr_to(std::string& out, const value& v) { return append_repr(out, v) || too_deep_value(); }
  bool str_to(std::string& out, const value& v) { return append_str(out, v) || too_deep_value(); }
  bool same_as(const value& a, const value& b, bool& out) {
    const same s = equal(a, b);
    if (s == same::too_deep) return too_deep_value();
    out = s == same::yes;
    return true;
  }
  // every recursion of the renderer passes here: statements, expressions, macro calls
  bool too_deep() {
    if (!stack_.exceeded()) return false;
    fail(error_info::kind::limit, "the template nests too deeply (beyond the render's stack limit)");
    return true;
  }
  bool step() { return charge(1); }
  // a string of `bytes` may be made: checked before it is built (a width of 10**9 is refused at once)
  bool fits(std::uint64_t bytes) {
    return bytes <= limits_.max_output || fail(error_info::kind::limit, "a string larger than the output limit");
  }
  // work in proportion to `units` (items gone through, or 4 KiB of text): counted as steps, the clock
  // read every 256 of them (a few microseconds of work; a read costs as much as 20 steps), so that no
  // single filter or method outruns the limits by much
  bool charge(std::uint64_t units) {
    const std::uint64_t before = steps_;
    steps_ += units;
    if (steps_ > limits_.max_steps) return fail(error_info::kind::limit, "the render takes more steps than its limit");
    if ((before >> 8) != (steps_ >> 8) && past_time_limit()) {
      return fail(error_info::kind::limit, "the render takes longer than its time limit");
    }
    return true;
  }
  // The clock, every 256 steps: the first read starts the time limit (a render shorter than that reads
  // no clock); the caller's long-render hook is called at the first read after it was set.
  GGUF_COLD bool past_time_limit() {
    if (long_render_) std::exchange(long_render_, nullptr)(long_render_context_);
    const auto now = std::chrono::steady_clock::now();
    if (!started_) {
      started_ = true;
      start_ = now;
      return false;
    }
    return now - start_ > limits_.max_time;
  }
  bool write(std::string_view s) {
    if (out_->size() + s.size() > limits_.max_output) {
      return fail(error_info::kind::limit, "the render writes more than its output limit");
    }
    out_->append(s);
    return true;
  }

  // room for `capacity` keys; from 16 on, with an index of twice as many slots
  bool grow(dict_object* d, std::size_t capacity) {
    if (capacity > 0x3FFFFFFF) return out_of_memory();
    auto* keys = static_cast<value*>(arena_.allocate(capacity * sizeof(value)));
    auto* vals = static_cast<value*>(arena_.allocate(capacity * sizeof(value)));
    if (!keys || !vals) return out_of_memory();
    for (std::uint32_t k = 0; k < d->size; ++k) {
      keys[k] = d->keys[k];
      vals[k] = d->values[k];
    }
    d->keys = keys;
    d->values = vals;
    d->capacity = static_cast<std::uint32_t>(capacity);
    if (capacity >= 16) {
      std::size_t n = 32;
      while (n < capacity * 2) n *= 2;
      auto* slots = static_cast<std::uint32_t*>(arena_.allocate(n * sizeof(std::uint32_t)));
      if (!slots) return out_of_memory();
      std::memset(slots, 0, n * sizeof(std::uint32_t));
      d->slots = slots;
      d->slot_mask = static_cast<std::uint32_t>(n - 1);
      for (std::uint32_t k = 0; k < d->size; ++k) index_key(d, k);
    }
    return true;
  }
  static void index_key(dict_object* d, std::uint32_t k) noexcept {
    std::uint64_t at = hash(d->keys[k]);
    while (d->slots[at & d->slot_mask] != 0) ++at;
    d->slots[at & d->slot_mask] = k + 1;
  }

  template <class T>
  T* make() {
    void* p = arena_.allocate(sizeof(T));
    if (!p) return nullptr;
    return new (p) T();
  }

  bool make_string(const std::string& s, value& out) { return make_string(std::string_view(s), out); }
  // `a` and `b` as one string of the arena (no string in between)
  bool make_concat(std::string_view a, std::string_view b, value& out) {
    const std::size_t n = a.size() + b.size();
    if (n > limits_.max_output) return fail(error_info::kind::limit, "a string larger than the output limit");
    if (n >= 4096 && !charge(n >> 12)) return false;
    char* p = static_cast<char*>(arena_.allocate(n + 1));
    if (!p) return out_of_memory();
    if (!a.empty()) std::memcpy(p, a.data(), a.size());
    if (!b.empty()) std::memcpy(p + a.size(), b.data(), b.size());
    out = value::string(std::string_view(p, n));
    return true;
  }
  // the end of scratch_ from `base` as a string of the arena; scratch_ cut back to `base`
  bool make_string_from_scratch(std::size_t base, value& out) {
    const bool ok = make_string(std::string_view(scratch_).substr(base), out);
    scratch_.resize(base);
    return ok;
  }

  // An Undefined carrying Jinja2's message.
  value undefined_msg(std::string_view msg, bool security = false) {
    value v;
    if (!make_string(msg, v)) return value::undefined();
    return value::undefined(v.str(), security);
  }
  // "'dict object' has no attribute 'x'" (a str name) or "dict object has no element 5"
  value missing(const value& obj, const value& name) {
    const std::size_t base = scratch_.size();
    std::string& msg = scratch_;
    const auto obj_repr = [&] {
      if (obj.type == vt::none) {
        msg += "None";
      } else {
        msg += type_name(obj);
        msg += " object";
      }
    };
    if (name.type == vt::string) {
      msg += '\'';
      obj_repr();
      msg += "' has no attribute ";
      py::append_repr(msg, name.str());
    } else {
      obj_repr();
      msg += " has no element ";
      if (!append_repr(msg, name)) msg += "(a value nested too deeply to print)";
    }
    const value v = undefined_msg(std::string_view(msg).substr(base));
    msg.resize(base);
    return v;
  }

  // ---- scopes -------------------------------------------------------------------------------------

  // the binding of `sym` in `f` itself, or nullptr
  static detail::binding* find_binding(const frame* f, std::uint32_t sym) noexcept {
    if (f->slots) {
      for (std::uint32_t at = sym * 0x9e3779b9u;; ++at) {
        detail::binding* b = f->slots[at & f->mask];
        if (!b || b->sym == sym) return b;
      }
    }
    for (detail::binding* b = f->head; b; b = b->next)
      if (b->sym == sym) return b;
    return nullptr;
  }
  static void index_binding(frame* f, detail::binding* b) noexcept {
    std::uint32_t at = b->sym * 0x9e3779b9u;
    while (f->slots[at & f->mask]) ++at;
    f->slots[at & f->mask] = b;
  }

  bool bind(frame* f, std::uint32_t sym, const value& v) {
    if (detail::binding* b = find_binding(f, sym)) {
      b->v = v;
      return true;
    }
    auto* b = make<detail::binding>();
    if (!b) return out_of_memory();
    bound_[sym] = 1;
    *b = detail::binding{sym, v, f->head};
    f->head = b;
    ++f->count;
    if (f->count >= 16 && f->count * 2 > f->mask) {  // (re)build the index at twice the room
      std::uint32_t n = 64;
      while (n < f->count * 4) n *= 2;
      auto** slots = static_cast<detail::binding**>(arena_.allocate(n * sizeof(detail::binding*)));
      if (!slots) return out_of_memory();
      std::memset(static_cast<void*>(slots), 0, n * sizeof(detail::binding*));
      f->slots = slots;
      f->mask = n - 1;
      for (detail::binding* x = f->head; x; x = x->next) {
        if (!find_binding(f, x->sym)) index_binding(f, x);  // the newest binding of a symbol wins
      }
    } else if (f->slots) {
      index_binding(f, b);
    }
    return true;
  }

  // a name's value: the scopes out, the context, the globals, else Undefined
  value lookup(const frame* f, std::uint32_t sym) {
    if (bound_[sym]) {
      for (; f; f = f->parent)
        if (const detail::binding* b = find_binding(f, sym)) return b->v;
    }
    if (ctx_set_[sym]) return ctx_[sym];
    return lookup_global(sym);
  }
  // a name no scope binds and the context does not give: a global function, or Undefined
  GGUF_COLD value lookup_global(std::uint32_t sym) {
    if (p_.globals[sym] != global_fn::none)
      return value::object(vt::function, nullptr, static_cast<std::uint8_t>(p_.globals[sym]));
    const std::size_t base = scratch_.size();
    scratch_ += '\'';
    scratch_ += p_.symbols.name(sym);
    scratch_ += "' is undefined";
    const value v = undefined_msg(std::string_view(scratch_).substr(base));
    scratch_.resize(base);
    return v;
  }

  // ---- statements ---------------------------------------------------------------------------------

  flow exec(const std::vector<const node*>& body, frame* f) {
    for (const node* n : body) {
      const flow r = exec(n, f);
      if (r != flow::normal) return r;
    }
    return flow::normal;
  }

  flow exec(const node* n, frame* f) {
    if (too_deep()) return flow::fail;
    line_ = n->line;
    switch (n->kind) {
      case nk::output: return exec_output(n, f);
      case nk::for_loop: return exec_for(n, f);
      case nk::if_stmt: {
        value t;
        if (!eval(n->a, f, t)) return flow::fail;
        return truthy(t) ? exec(n->body, f) : exec(n->orelse, f);
      }
      case nk::assign: {
        value v;
        if (!eval(n->b, f, v) || !assign(n->a, v, f)) return flow::fail;
        return flow::normal;
      }
      case nk::assign_block: {
        frame inner{f, nullptr};
        value v;
        {
          capture_buffer text(captures_);
          if (!capture(n->body, &inner, *text) || !make_string(*text, v)) return flow::fail;
        }
        if (n->c && !apply_filter_chain(n->c, v, f, v)) return flow::fail;
        return assign(n->a, v, f) ? flow::normal : flow::fail;
      }
      case nk::macro: {
        auto* m = make<macro_object>();
        if (!m) return out_of_memory(), flow::fail;
        m->def = n;
        m->closure = f;
        return bind(f, n->sym, value::object(vt::macro, m)) ? flow::normal : flow::fail;
      }
      case nk::call_block: return exec_call_block(n, f);
      case nk::filter_block: {
        frame inner{f, nullptr};
        value v;
        {
          capture_buffer text(captures_);
          if (!capture(n->body, &inner, *text) || !make_string(*text, v)) return flow::fail;
        }
        if (!apply_filter_chain(n->a, v, f, v)) return flow::fail;
        return print(v) ? flow::normal : flow::fail;
      }
      case nk::with_stmt: {
        frame inner{f, nullptr};
        for (std::size_t k = 0; k < n->items.size(); ++k) {
          value v;
          if (!eval(n->values[k], f, v) || !assign(n->items[k], v, &inner)) return flow::fail;
        }
        return exec(n->body, &inner);
      }
      case nk::scope: {
        frame inner{f, nullptr};
        return exec(n->body, &inner);
      }
      case nk::autoescape: {
        value v;
        if (!eval(n->a, f, v)) return flow::fail;
        const bool saved = autoescape_;
        autoescape_ = truthy(v);
        frame inner{f, nullptr};
        const flow r = exec(n->body, &inner);
        autoescape_ = saved;
        return r;
      }
      case nk::brk: return flow::brk;
      case nk::cont: return flow::cont;
      case nk::unsupported:
        fail(error_info::kind::unsupported,
             "'" + std::string(n->text) + "' needs a template loader, which a chat template's environment has not");
        return flow::fail;
      default: return flow::normal;
    }
  }

  // renders `body` into `text` instead of the output
  bool capture(const std::vector<const node*>& body, frame* f, std::string& text) {
    std::string* saved = out_;
    out_ = &text;
    const flow r = exec(body, f);
    out_ = saved;
    return r != flow::fail;
  }

  bool print(const value& v) {
    if (v.type == vt::string && !autoescape_) return write(v.str());
    const std::size_t base = scratch_.size();
    bool ok = str_to(scratch_, v);
    if (ok) {
      const std::string_view s = std::string_view(scratch_).substr(base);
      ok = autoescape_ ? write(escape_html(s)) : write(s);
    }
    scratch_.resize(base);
    return ok;
  }

  flow exec_output(const node* n, frame* f) {
    for (const node* item : n->items) {
      if (item->kind == nk::data) {
        if (!write(item->text)) return flow::fail;
        continue;
      }
      line_ = item->line;
      if (!autoescape_ && item->kind == nk::binary && item->oper == op::add) {
        if (!print_sum(item, f)) return flow::fail;
        continue;
      }
      if (!autoescape_ && item->kind == nk::concat) {
        if (!print_concat(item, f)) return flow::fail;
        continue;
      }
      value v;
      if (!eval(item, f, v) || !print(v)) return flow::fail;
    }
    return flow::normal;
  }

  // A sum `a + b + c ...` (a chain of up to 16 operands) evaluated left to right: while the operands are
  // plain strings, only their bytes are kept (`parts`, `m` of them; true returned with `sum` untouched);
  // from the first that is not, the sum as Python makes it, in `sum` (`m` then 0), so that an error comes
  // where Jinja2's does. A longer chain is evaluated as any expression.
  struct sum_part {  // a plain string's bytes
    const char* s;
    std::uint32_t len;
  };
  static constexpr std::size_t sum_most = 16;
  bool eval_sum_parts(const node* n, frame* f, sum_part* parts, std::size_t& m, value& sum) {
    m = 0;
    const node* leaves[sum_most];
    std::size_t first = sum_most;
    const node* x = n;
    while (x->kind == nk::binary && x->oper == op::add && first > 1) {
      leaves[--first] = x->b;
      x = x->a;
    }
    if (x->kind == nk::binary && x->oper == op::add) {  // a longer sum: its head first, as Python
      value a, b;
      return eval(n->a, f, a) && eval(n->b, f, b) && binary(op::add, a, b, sum);
    }
    leaves[--first] = x;
    for (std::size_t i = first; i < sum_most; ++i) {
      value v;
      if (!eval(leaves[i], f, v)) return false;
      if (v.type == vt::string && v.x == 0) {
        parts[m++] = sum_part{v.u.s, v.len};
        continue;
      }
      const auto plain = [&](std::size_t k) { return value::string(std::string_view(parts[k].s, parts[k].len)); };
      sum = m ? plain(0) : v;
      for (std::size_t k = 1; k < m; ++k)
        if (!binary(op::add, sum, plain(k), sum)) return false;
      if (m && !binary(op::add, sum, v, sum)) return false;
      m = 0;
      for (++i; i < sum_most; ++i) {
        if (!eval(leaves[i], f, v) || !binary(op::add, sum, v, sum)) return false;
      }
      return true;
    }
    return true;
  }
  // the total size of `m` parts, refused past the output limit as the sum would have been
  bool sum_size(const sum_part* parts, std::size_t m, std::size_t& total) {
    total = 0;
    for (std::size_t k = 0; k < m; ++k) total += parts[k].len;
    return fits(total);
  }

  // `{{ 'a' + x + 'b' }}`, the commonest output of a chat template: plain strings written one after
  // another, with no sum made
  bool print_sum(const node* n, frame* f) {
    sum_part parts[sum_most];  // NOLINT(cppcoreguidelines-pro-type-member-init): written before read
    std::size_t m = 0, total = 0;
    value sum;
    if (!eval_sum_parts(n, f, parts, m, sum)) return false;
    if (m == 0) return print(sum);
    if (!sum_size(parts, m, total)) return false;
    for (std::size_t k = 0; k < m; ++k)
      if (!write(std::string_view(parts[k].s, parts[k].len))) return false;
    return true;
  }

  // `set content = '<|start|>' + message.role + '\n' + message.content`: one string of the total
  // size, not one per `+`
  bool eval_sum(const node* n, frame* f, value& out) {
    sum_part parts[sum_most];  // NOLINT(cppcoreguidelines-pro-type-member-init): written before read
    std::size_t m = 0, total = 0;
    if (!eval_sum_parts(n, f, parts, m, out)) return false;
    if (m == 0) return true;
    if (!sum_size(parts, m, total)) return false;
    if (total >= 4096 && !charge(total >> 12)) return false;
    char* p = static_cast<char*>(arena_.allocate(total + 1));
    if (!p) return out_of_memory();
    std::size_t at = 0;
    for (std::size_t k = 0; k < m; ++k) {
      if (parts[k].len) std::memcpy(p + at, parts[k].s, parts[k].len);
      at += parts[k].len;
    }
    out = value::string(std::string_view(p, total));
    return true;
  }

  // `{{ a ~ b ~ c }}`: each operand's str written where it goes, with no joined string made
  bool print_concat(const node* n, frame* f) {
    for (const node* item : n->items) {
      value v;
      if (!eval(item, f, v)) return false;
      if (v.type == vt::string) {
        if (!write(v.str())) return false;
      } else if (!str_to(*out_, v)) {
        return false;
      }
      if (out_->size() > limits_.max_output) {
        return fail(error_info::kind::limit, "the render writes more than its output limit");
      }
    }
    return true;
  }

  // assignment to a name, a tuple of names, or a namespace's attribute
  bool assign(const node* target, const value& v, frame* f) {
    if (target->kind == nk::name) return bind(f, target->sym, v);
    if (target->kind == nk::nsref) {
      const value ns = lookup(f, target->sym);
      if (ns.type != vt::ns) {
        return fail(error_info::kind::runtime, "cannot assign attribute on non-namespace object");
      }
      value key;
      return make_string(target->attr, key) && dict_set(ns.dict(), key, v);
    }
    // a tuple: unpack
    list_object items;
    if (!iterate(v, items)) return false;
    if (items.size != target->items.size()) {
      if (items.size > target->items.size()) {
        return fail(error_info::kind::value,
                    "too many values to unpack (expected " + std::to_string(target->items.size()) + ")");
      }
      return fail(error_info::kind::value, "not enough values to unpack (expected " +
                                               std::to_string(target->items.size()) + ", got " +
                                               std::to_string(items.size) + ")");
    }
    for (std::uint32_t k = 0; k < items.size; ++k)
      if (!assign(target->items[k], items.items[k], f)) return false;
    return true;
  }

  flow exec_for(const node* n, frame* f) {
    value seq;
    if (!eval(n->b, f, seq)) return flow::fail;
    list_object items;
    if (!iterate(seq, items)) return flow::fail;
    return run_loop(n, f, items, 0, nullptr);
  }

  // the loop `n` over `items` (a recursive loop's inner call writes into `text`)
  flow run_loop(const node* n, frame* f, list_object items, std::uint32_t depth0, std::string* text) {
    // the inline filter first: loop.length and the indices count what it keeps
    if (n->c) {
      value kept;
      if (!make_list(items.size, kept)) return flow::fail;
      list_object* k = kept.list();
      std::uint32_t m = 0;
      for (std::uint32_t i = 0; i < items.size; ++i) {
        if (!step()) return flow::fail;
        frame test_scope{f, nullptr};
        if (!assign(n->a, items.items[i], &test_scope)) return flow::fail;
        value t;
        if (!eval(n->c, &test_scope, t)) return flow::fail;
        if (truthy(t)) k->items[m++] = items.items[i];
      }
      k->size = m;
      items = *k;
    }
    std::string* saved = out_;
    if (text) out_ = text;
    auto* loop = make<loop_object>();
    if (!loop) return out_of_memory(), flow::fail;
    loop->items = items;
    loop->depth0 = depth0;
    loop->def = n;
    loop->scope = f;
    const value loop_value = value::object(vt::loop, loop);
    bound_[p_.sym_loop] = 1;
    const bool persistent = (n->extra & 8) != 0;  // a macro defined inside may outlive the iteration
    flow result = flow::normal;
    for (std::uint32_t i = 0; i < items.size; ++i) {
      if (!step()) {
        result = flow::fail;
        break;
      }
      loop->index0 = i;
      frame stack_scope{f, nullptr};
      frame* scope = &stack_scope;
      if (persistent) {
        scope = make<frame>();
        if (!scope) {
          out_of_memory();
          result = flow::fail;
          break;
        }
        scope->parent = f;
      }
      detail::binding loop_binding{p_.sym_loop, loop_value, nullptr};
      scope->head = &loop_binding;
      if (persistent) {
        auto* b = make<detail::binding>();
        if (!b) {
          out_of_memory();
          result = flow::fail;
          break;
        }
        *b = loop_binding;
        scope->head = b;
      }
      if (!assign(n->a, items.items[i], scope)) {
        result = flow::fail;
        break;
      }
      const flow r = exec(n->body, scope);
      if (r == flow::fail) {
        result = flow::fail;
        break;
      }
      if (r == flow::brk) break;
    }
    if (result != flow::fail && items.size == 0 && !n->orelse.empty()) result = exec(n->orelse, f);
    out_ = saved;
    return result == flow::fail ? flow::fail : flow::normal;
  }

  flow exec_call_block(const node* n, frame* f) {
    // the caller: an anonymous macro of the block's body and signature
    auto* caller = make<macro_object>();
    if (!caller) return out_of_memory(), flow::fail;
    caller->def = n;
    caller->closure = f;
    const value caller_value = value::object(vt::macro, caller);
    const node* call = n->a;
    value callee;
    if (!eval(call->a, f, callee)) return flow::fail;
    call_args a(arg_lists_);
    if (!eval_args(call, f, a->args, a->kwargs)) return flow::fail;
    a->kwargs.emplace_back("caller", caller_value);
    value result;
    if (!call_value(callee, a->args, a->kwargs, result)) return flow::fail;
    return print(result) ? flow::normal : flow::fail;
  }

  // ---- expressions --------------------------------------------------------------------------------

  // The leaves (most of what is evaluated) here, in a function small enough to cost no frame; the rest,
  // recursing, in eval_node behind the stack check.
  bool eval(const node* n, frame* f, value& out) {
    switch (n->kind) {
      case nk::constant: return constant(n, out);
      case nk::name: out = lookup(f, n->sym); return true;
      default: return eval_node(n, f, out);
    }
  }

  bool eval_node(const node* n, frame* f, value& out) {
    if (too_deep()) return false;
    switch (n->kind) {
      case nk::tuple:
      case nk::list: {
        if (!make_list(n->items.size(), out, n->kind == nk::tuple ? vt::tuple : vt::list)) return false;
        list_object* l = out.list();
        for (std::size_t k = 0; k < n->items.size(); ++k)
          if (!eval(n->items[k], f, l->items[k])) return false;
        return true;
      }
      case nk::dict: {
        if (!make_dict(n->items.size() / 2, out)) return false;
        for (std::size_t k = 0; k + 1 < n->items.size(); k += 2) {
          value key, v;
          if (!eval(n->items[k], f, key) || !eval(n->items[k + 1], f, v)) return false;
          if (!hashable(key)) return false;
          if (!dict_set(out.dict(), key, v)) return false;
        }
        return true;
      }
      case nk::getattr: {
        value obj, name;
        if (!eval(n->a, f, obj)) return false;
        name = value::string(n->text);
        if (n->extra == 1 && obj.type == vt::dict) {  // a message's .role: no method has the name
          if (const value* v = find_key(obj.dict(), name)) {
            out = *v;
            return true;
          }
        }
        return get_attr(obj, name, out);
      }
      case nk::getitem: {
        value obj;
        if (!eval(n->a, f, obj)) return false;
        if (n->b->kind == nk::slice) return eval_slice(obj, n->b, f, out);
        value key;
        if (!eval(n->b, f, key)) return false;
        return get_item(obj, key, out);
      }
      case nk::call: {
        value callee;
        if (!eval(n->a, f, callee)) return false;
        call_args a(arg_lists_);
        if (!eval_args(n, f, a->args, a->kwargs)) return false;
        return call_value(callee, a->args, a->kwargs, out);
      }
      case nk::filter: {
        value input;
        if (n->a && !eval(n->a, f, input)) return false;
        return apply_filter(n, input, f, out);
      }
      case nk::test: {
        value input;
        if (!eval(n->a, f, input)) return false;
        bool r = false;
        if (!apply_test(n, input, f, r)) return false;
        out = value::boolean(r);
        return true;
      }
      case nk::unary: {
        value v;
        if (!eval(n->a, f, v)) return false;
        if (n->oper == op::not_) {
          out = value::boolean(!truthy(v));
          return true;
        }
        return unary(n->oper, v, out);
      }
      case nk::binary: {
        if (n->oper == op::add && n->a->kind == nk::binary && n->a->oper == op::add) return eval_sum(n, f, out);
        value a, b;
        if (!eval(n->a, f, a) || !eval(n->b, f, b)) return false;
        return binary(n->oper, a, b, out);
      }
      case nk::logical: {
        if (!eval(n->a, f, out)) return false;
        const bool t = truthy(out);
        if (n->oper == op::and_ ? !t : t) return true;  // Python's and/or give an operand
        return eval(n->b, f, out);
      }
      case nk::concat: {
        const std::size_t base = scratch_.size();
        for (const node* item : n->items) {
          value v;
          if (!eval(item, f, v) || !str_to(scratch_, v)) {
            scratch_.resize(base);
            return false;
          }
          if (scratch_.size() - base > limits_.max_output) {
            scratch_.resize(base);
            return fail(error_info::kind::limit, "the render writes more than its output limit");
          }
        }
        return make_string_from_scratch(base, out);
      }
      case nk::compare: {
        value left;
        if (!eval(n->a, f, left)) return false;
        for (std::size_t k = 0; k < n->ops.size(); ++k) {
          value right;
          if (!eval(n->items[k], f, right)) return false;
          bool r = false;
          const op o = n->ops[k];
          if ((o == op::eq || o == op::ne) && left.type == vt::string && right.type == vt::string) {
            // `message.role == 'user'`, the commonest test of a chat template: two strs' bytes
            r = left.len == right.len && same_bytes(left.u.s, right.u.s, left.len);
            if (o == op::ne) r = !r;
          } else if (!compare_op(o, left, right, r)) {
            return false;
          }
          if (!r) {
            out = value::boolean(false);
            return true;
          }
          left = right;
        }
        out = value::boolean(true);
        return true;
      }
      case nk::condexpr: {
        value t;
        if (!eval(n->a, f, t)) return false;
        if (truthy(t)) return eval(n->b, f, out);
        if (n->c) return eval(n->c, f, out);
        out = undefined_msg("the inline if-expression on line " + std::to_string(n->line) +
                            " evaluated to false and no else section was defined.");
        return true;
      }
      default: return fail(error_info::kind::runtime, "a statement where an expression should be");
    }
  }

  static bool constant(const node* n, value& out) {
    switch (n->lit.type) {
      case literal::kind::none: out = value::none(); return true;
      case literal::kind::boolean: out = value::boolean(n->lit.b); return true;
      case literal::kind::integer: out = value::integer(n->lit.i); return true;
      case literal::kind::floating: out = value::floating(n->lit.f); return true;
      case literal::kind::string: out = value::string(n->text); return true;
      case literal::kind::big_integer:
        out = value::string(n->text);
        out.type = vt::big_integer;
        return true;
    }
    return true;
  }

  // Python's hash(key) succeeds: no list, dict or namespace in it (a tuple's items count), within max_value_depth
  bool hashable(const value& key, std::uint32_t depth = 0) {
    if (key.type == vt::list || key.type == vt::dict || key.type == vt::ns) {
      return type_error(std::string("unhashable type: '") + type_name(key) + "'");
    }
    if (key.type == vt::tuple) {
      if (depth > max_value_depth) return too_deep_value();
      const list_object* l = key.list();
      for (std::uint32_t k = 0; k < l->size; ++k)
        if (!hashable(l->items[k], depth + 1)) return false;
    }
    return true;
  }

  bool eval_args(const node* n, frame* f, std::vector<value>& args,
                 std::vector<std::pair<std::string_view, value>>& kwargs) {
    args.reserve(n->items.size());
    for (const node* a : n->items) {
      value v;
      if (!eval(a, f, v)) return false;
      args.push_back(v);
    }
    for (std::size_t k = 0; k < n->names.size(); ++k) {
      value v;
      if (!eval(n->values[k], f, v)) return false;
      kwargs.emplace_back(n->names[k], v);
    }
    if (n->b) {  // *args
      value v;
      if (!eval(n->b, f, v)) return false;
      list_object extra;
      if (!iterate(v, extra)) return false;
      for (std::uint32_t k = 0; k < extra.size; ++k) args.push_back(extra.items[k]);
    }
    if (n->c) {  // **kwargs
      value v;
      if (!eval(n->c, f, v)) return false;
      if (v.type != vt::dict) return type_error("argument after ** must be a mapping");
      const dict_object* d = v.dict();
      for (std::uint32_t k = 0; k < d->size; ++k) {
        if (d->keys[k].type != vt::string) return type_error("keywords must be strings");
        kwargs.emplace_back(d->keys[k].str(), d->values[k]);
      }
    }
    return true;
  }

  // ---- iteration ----------------------------------------------------------------------------------

  // the items iterating `v` gives (a dict: its keys; a string: its characters; Undefined: none)
  bool iterate(const value& v, list_object& out) {
    switch (v.type) {
      case vt::list:
      case vt::tuple: out = *v.list(); return true;
      case vt::undefined: out = list_object{}; return v.x == 1 ? undefined_error(v) : true;
      case vt::dict:
      case vt::ns: {
        if (v.type == vt::ns) return type_error("'Namespace' object is not iterable");
        value l;
        const dict_object* d = v.dict();
        if (!make_list(d->size, l)) return false;
        for (std::uint32_t k = 0; k < d->size; ++k) l.list()->items[k] = d->keys[k];
        out = *l.list();
        return true;
      }
      case vt::view: {
        const dict_object* d = static_cast<const dict_object*>(v.u.p);
        value l;
        if (!make_list(d->size, l)) return false;
        for (std::uint32_t k = 0; k < d->size; ++k) {
          if (v.x == 0) {
            value pair;
            if (!make_list(2, pair, vt::tuple)) return false;
            pair.list()->items[0] = d->keys[k];
            pair.list()->items[1] = d->values[k];
            l.list()->items[k] = pair;
          } else {
            l.list()->items[k] = v.x == 1 ? d->keys[k] : d->values[k];
          }
        }
        out = *l.list();
        return true;
      }
      case vt::string: {
        const std::string_view s = v.str();
        value l;
        if (!make_list(py::length(s), l)) return false;
        std::uint32_t k = 0;
        for (std::size_t i = 0; i < s.size();) {
          std::size_t len = 0;
          (void)py::decode_at(s, i, len);
          l.list()->items[k++] = value::string(s.substr(i, len));
          i += len;
        }
        out = *l.list();
        return true;
      }
      case vt::range: {
        const auto* r = static_cast<const range_object*>(v.u.p);
        const std::int64_t n = r->length();
        value l;
        if (!make_list(static_cast<std::size_t>(n), l)) return false;
        for (std::int64_t k = 0; k < n; ++k) l.list()->items[k] = value::integer(r->at(k));
        out = *l.list();
        return true;
      }
      case vt::generator: {  // what is left; a generator is iterated once
        auto* g = static_cast<generator_object*>(v.u.p);
        out.items = g->items.items + g->pos;
        out.size = g->items.size - g->pos;
        g->pos = g->items.size;
        return true;
      }
      case vt::cycler: return type_error("'Cycler' object is not iterable");
      default: return type_error(std::string("'") + type_name(v) + "' object is not iterable");
    }
  }

  // ---- attributes and items -----------------------------------------------------------------------

  bool get_attr(const value& obj, const value& name, value& out);
  bool get_item(const value& obj, const value& key, value& out);
  bool eval_slice(const value& obj, const node* s, frame* f, value& out);
  bool method_of(const value& obj, std::string_view name, value& out, bool& found);

  // ---- calls --------------------------------------------------------------------------------------

  bool call_value(const value& callee, const std::vector<value>& args,
                  const std::vector<std::pair<std::string_view, value>>& kwargs, value& out);
  bool call_macro(const macro_object* m, const std::vector<value>& args,
                  const std::vector<std::pair<std::string_view, value>>& kwargs, value& out);
  bool call_function(global_fn fn, const std::vector<value>& args,
                     const std::vector<std::pair<std::string_view, value>>& kwargs, value& out);
  bool call_method(const method_object* m, const std::vector<value>& args,
                   const std::vector<std::pair<std::string_view, value>>& kwargs, value& out);

  // ---- operators ----------------------------------------------------------------------------------

  bool unary(op o, const value& v, value& out);
  bool binary(op o, const value& a, const value& b, value& out);
  bool compare_op(op o, const value& a, const value& b, bool& out);
  bool contains(const value& container, const value& item, bool& out);

  // ---- filters and tests (jinja/builtins.hpp) -------------------------------------------------------

  bool apply_filter(const node* n, const value& input, frame* f, value& out);
  bool apply_filter_chain(const node* chain, const value& input, frame* f, value& out);
  bool apply_test(const node* n, const value& input, frame* f, bool& out);
  bool filter_by_name(std::string_view name, const value& input, const std::vector<value>& args,
                      const std::vector<std::pair<std::string_view, value>>& kwargs, value& out);
  bool filter_text(std::string_view name, const value& in, const detail::filter_call& call, value& out);
  bool filter_sequence(std::string_view name, const value& in, const detail::filter_call& call, value& out);
  bool filter_number(std::string_view name, const value& in, const detail::filter_call& call, value& out);
  bool test_by_name(std::string_view name, const value& v, const std::vector<value>& args, bool& out);

  // ---- text ---------------------------------------------------------------------------------------

  // how tojson writes: where, and json.dumps's indent (null: none), separators and sort_keys
  struct json_style {
    text_buffer* out;
    const std::string* indent;
    std::string_view item_sep, key_sep;
    bool sort_keys;
  };
  bool to_json(const value& v, const json_style& st, std::uint32_t level);
  bool percent_format(std::string_view fmt, const value& argv, value& out);
  bool str_format(std::string_view fmt, const std::vector<value>& args,
                  const std::vector<std::pair<std::string_view, value>>& kwargs, value& out);
};

}  // namespace jinja
GGUF_END_NAMESPACE

#include "gguf/jinja/builtins.hpp"

#endif  // GGUF_JINJA_RENDER_HPP
