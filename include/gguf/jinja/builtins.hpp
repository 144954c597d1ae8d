#ifndef GGUF_JINJA_BUILTINS_HPP
#define GGUF_JINJA_BUILTINS_HPP

// The renderer's attribute and item access, calls, operators, filters, tests and methods: what Python,
// Jinja2 3.1 (jinja2/filters.py, tests.py, runtime.py) and its immutable sandbox do, as the comments say
// where it matters. Included by render.hpp after the renderer's declaration.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gguf/detail/endian.hpp"
#include "gguf/jinja/render.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

namespace detail {

struct method_name {
  std::string_view name;
  meth m;
};

inline constexpr method_name str_methods[] = {
    {"capitalize", meth::s_capitalize},
    {"casefold", meth::s_casefold},
    {"center", meth::s_center},
    {"count", meth::s_count},
    {"endswith", meth::s_endswith},
    {"find", meth::s_find},
    {"format", meth::s_format},
    {"index", meth::s_index},
    {"isalnum", meth::s_isalnum},
    {"isalpha", meth::s_isalpha},
    {"isascii", meth::s_isascii},
    {"isdecimal", meth::s_isdecimal},
    {"isdigit", meth::s_isdigit},
    {"islower", meth::s_islower},
    {"isnumeric", meth::s_isnumeric},
    {"isprintable", meth::s_isprintable},
    {"isspace", meth::s_isspace},
    {"istitle", meth::s_istitle},
    {"isupper", meth::s_isupper},
    {"join", meth::s_join},
    {"ljust", meth::s_ljust},
    {"lower", meth::s_lower},
    {"lstrip", meth::s_lstrip},
    {"partition", meth::s_partition},
    {"removeprefix", meth::s_removeprefix},
    {"removesuffix", meth::s_removesuffix},
    {"replace", meth::s_replace},
    {"rfind", meth::s_rfind},
    {"rindex", meth::s_rindex},
    {"rjust", meth::s_rjust},
    {"rpartition", meth::s_rpartition},
    {"rsplit", meth::s_rsplit},
    {"rstrip", meth::s_rstrip},
    {"split", meth::s_split},
    {"splitlines", meth::s_splitlines},
    {"startswith", meth::s_startswith},
    {"strip", meth::s_strip},
    {"swapcase", meth::s_swapcase},
    {"title", meth::s_title},
    {"upper", meth::s_upper},
    {"zfill", meth::s_zfill},
    {"isidentifier", meth::s_isidentifier},
    {"expandtabs", meth::s_expandtabs},
};

// A keyword or positional argument of a builtin: the k-th positional, else the named one.
struct arg_reader {
  const std::vector<value>& args;
  const std::vector<std::pair<std::string_view, value>>& kwargs;
  const value* get(std::size_t k, std::string_view name) const noexcept {
    if (k < args.size()) return &args[k];
    for (const auto& [n, v] : kwargs)
      if (n == name) return &v;
    return nullptr;
  }
};

}  // namespace detail

// ---- attributes and items -----------------------------------------------------------------------

inline bool renderer::method_of(const value& obj, std::string_view name, value& out, bool& found) {
  found = false;
  const auto bound = [&](meth m) {
    auto* mo = make<method_object>();
    if (!mo) return out_of_memory();
    mo->self = obj;
    mo->which = static_cast<std::uint8_t>(m);
    out = value::object(vt::method, mo);
    found = true;
    return true;
  };
  const auto unsafe = [&] {
    found = true;
    out = undefined_msg("access to attribute '" + std::string(name) + "' of '" + type_name(obj) + "' object is unsafe.",
                        true);
    return true;
  };
  switch (obj.type) {
    case vt::string:
      for (const auto& m : detail::str_methods)
        if (m.name == name) return bound(m.m);
      return true;
    case vt::dict:
      if (name == "get") return bound(meth::d_get);
      if (name == "items") return bound(meth::d_items);
      if (name == "keys") return bound(meth::d_keys);
      if (name == "values") return bound(meth::d_values);
      if (name == "copy") return bound(meth::d_copy);
      if (name == "clear" || name == "pop" || name == "popitem" || name == "setdefault" || name == "update") {
        return unsafe();
      }
      return true;
    case vt::list:
    case vt::tuple:
      if (name == "count") return bound(meth::l_count);
      if (name == "index") return bound(meth::l_index);
      if (obj.type == vt::list) {
        if (name == "copy") return bound(meth::l_copy);
        if (name == "append" || name == "extend" || name == "insert" || name == "pop" || name == "remove" ||
            name == "reverse" || name == "sort" || name == "clear") {
          return unsafe();
        }
      }
      return true;
    case vt::cycler:
      if (name == "next") return bound(meth::cycler_next);
      if (name == "reset") return bound(meth::cycler_reset);
      return true;
    default: return true;
  }
}

inline bool renderer::get_attr(const value& obj, const value& name, value& out) {
  if (obj.type == vt::undefined) return undefined_error(obj);
  const std::string_view n = name.str();
  if (n.size() >= 2 && n[0] == '_' && n[1] == '_') {  // Python's internals: the sandbox refuses them
    out = undefined_msg("access to attribute '" + std::string(n) + "' of '" + type_name(obj) + "' object is unsafe.",
                        true);
    return true;
  }
  bool found = false;
  if (!method_of(obj, n, out, found)) return false;
  if (found) return true;
  switch (obj.type) {
    case vt::dict:
    case vt::ns:
      if (const value* v = find_key(obj.dict(), name)) {
        out = *v;
        return true;
      }
      break;
    case vt::tuple:  // groupby's (grouper, list) pairs are named tuples
      if (obj.x == 1 && (n == "grouper" || n == "list")) {
        out = obj.list()->items[n == "grouper" ? 0 : 1];
        return true;
      }
      break;
    case vt::loop: {
      const auto* l = static_cast<const loop_object*>(obj.u.p);
      const std::int64_t i = l->index0, len = l->items.size;
      if (n == "index") return out = value::integer(i + 1), true;
      if (n == "index0") return out = value::integer(i), true;
      if (n == "revindex") return out = value::integer(len - i), true;
      if (n == "revindex0") return out = value::integer(len - i - 1), true;
      if (n == "first") return out = value::boolean(i == 0), true;
      if (n == "last") return out = value::boolean(i == len - 1), true;
      if (n == "length") return out = value::integer(len), true;
      if (n == "depth") return out = value::integer(l->depth0 + 1), true;
      if (n == "depth0") return out = value::integer(l->depth0), true;
      if (n == "previtem") {
        out = i > 0 ? l->items.items[i - 1] : undefined_msg("there is no previous item");
        return true;
      }
      if (n == "nextitem") {
        out = i + 1 < len ? l->items.items[i + 1] : undefined_msg("there is no next item");
        return true;
      }
      if (n == "cycle" || n == "changed") {
        auto* mo = make<method_object>();
        if (!mo) return out_of_memory();
        mo->self = obj;
        mo->which = static_cast<std::uint8_t>(n == "cycle" ? meth::loop_cycle : meth::loop_changed);
        out = value::object(vt::method, mo);
        return true;
      }
      break;
    }
    case vt::macro: {
      const auto* m = static_cast<const macro_object*>(obj.u.p);
      if (n == "name") {
        out = m->def->kind == nk::macro ? value::string(m->def->text) : value::string("caller");
        return true;
      }
      if (n == "arguments") {
        if (!make_list(m->def->names.size(), out, vt::tuple)) return false;
        for (std::size_t k = 0; k < m->def->names.size(); ++k) out.list()->items[k] = value::string(m->def->names[k]);
        return true;
      }
      if (n == "catch_kwargs") return out = value::boolean((m->def->extra & 2) != 0), true;
      if (n == "catch_varargs") return out = value::boolean((m->def->extra & 1) != 0), true;
      if (n == "caller") return out = value::boolean((m->def->extra & 4) != 0), true;
      break;
    }
    case vt::cycler: {
      const auto* c = static_cast<const cycler_object*>(obj.u.p);
      if (n == "current" && c->items.size) return out = c->items.items[c->pos], true;
      if (n == "items") {
        if (!make_list(c->items.size, out, vt::tuple)) return false;
        for (std::uint32_t k = 0; k < c->items.size; ++k) out.list()->items[k] = c->items.items[k];
        return true;
      }
      break;
    }
    default: break;
  }
  out = missing(obj, name);
  return true;
}

inline bool renderer::get_item(const value& obj, const value& key, value& out) {
  if (obj.type == vt::undefined) return undefined_error(obj);
  switch (obj.type) {
    case vt::dict: {
      if (const value* v = find_key(obj.dict(), key)) {
        out = *v;
        return true;
      }
      break;  // a str key then tries the attributes (d['items'] is the method)
    }
    case vt::list:
    case vt::tuple:
    case vt::string:
    case vt::range: {
      if (!key.is_int()) break;
      std::int64_t i = key.as_int();
      if (obj.type == vt::string) {
        const std::string_view s = obj.str();
        const auto n = static_cast<std::int64_t>(py::length(s));
        if (i < 0) i += n;
        if (i < 0 || i >= n) break;
        const std::size_t at = py::offset_of(s, static_cast<std::size_t>(i));
        std::size_t len = 0;
        (void)py::decode_at(s, at, len);
        out = value::string(s.substr(at, len));
        return true;
      }
      if (obj.type == vt::range) {
        const auto* r = static_cast<const range_object*>(obj.u.p);
        const std::int64_t n = r->length();
        if (i < 0) i += n;
        if (i < 0 || i >= n) break;
        out = value::integer(r->at(i));
        return true;
      }
      const list_object* l = obj.list();
      if (i < 0) i += l->size;
      if (i < 0 || i >= static_cast<std::int64_t>(l->size)) break;
      out = l->items[i];
      return true;
    }
    default: break;
  }
  if (key.type == vt::string) return get_attr(obj, key, out);  // the sandbox's getitem falls back to getattr
  out = missing(obj, key);
  return true;
}

inline bool renderer::eval_slice(const value& obj, const node* s, frame* f, value& out) {
  if (obj.type == vt::undefined) return undefined_error(obj);
  std::int64_t part[3] = {0, 0, 1};
  bool given[3] = {false, false, false};
  const node* nodes[3] = {s->a, s->b, s->c};
  for (int k = 0; k < 3; ++k) {
    if (!nodes[k]) continue;
    value v;
    if (!eval(nodes[k], f, v)) return false;
    if (v.type == vt::none) continue;
    if (!v.is_int()) return type_error("slice indices must be integers or None or have an __index__ method");
    part[k] = v.as_int();
    given[k] = true;
  }
  const std::int64_t step = given[2] ? part[2] : 1;
  if (step == 0) return fail(error_info::kind::value, "slice step cannot be zero");
  std::int64_t n = 0;
  switch (obj.type) {
    case vt::list:
    case vt::tuple: n = obj.list()->size; break;
    case vt::string: n = static_cast<std::int64_t>(py::length(obj.str())); break;
    case vt::range: n = static_cast<const range_object*>(obj.u.p)->length(); break;
    default: out = missing(obj, value::none()); return true;  // unhashable slice: Undefined
  }
  // slice.indices(n)
  const auto clamp = [&](std::int64_t v, bool is_given, bool is_start) {
    if (!is_given) return step > 0 ? (is_start ? 0 : n) : (is_start ? n - 1 : -1);
    if (v < 0) {
      v += n;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= n) {
      v = step < 0 ? n - 1 : n;
    }
    return v;
  };
  const std::int64_t start = clamp(part[0], given[0], true), stop = clamp(part[1], given[1], false);
  std::int64_t count = 0;
  if (step > 0 && start < stop) count = (stop - start - 1) / step + 1;
  if (step < 0 && start > stop) count = (start - stop - 1) / (-step) + 1;
  if (obj.type == vt::range) {
    const auto* r = static_cast<const range_object*>(obj.u.p);
    auto* nr = make<range_object>();
    if (!nr) return out_of_memory();
    nr->start = r->at(start);
    nr->step = r->step * step;
    nr->stop = nr->start + count * nr->step;
    out = value::object(vt::range, nr);
    return true;
  }
  if (obj.type == vt::string) {
    const std::string_view text = obj.str();
    if (step == 1) {
      const std::size_t b = py::offset_of(text, static_cast<std::size_t>(start));
      const std::size_t e = count ? py::offset_of(text, static_cast<std::size_t>(start + count)) : b;
      out = value::string(text.substr(b, e - b));
      return true;
    }
    // code points by index, then picked
    std::vector<std::string_view> cps;
    for (std::size_t i = 0; i < text.size();) {
      std::size_t len = 0;
      (void)py::decode_at(text, i, len);
      cps.push_back(text.substr(i, len));
      i += len;
    }
    std::string r;
    for (std::int64_t k = 0, i = start; k < count; ++k, i += step) r += cps[static_cast<std::size_t>(i)];
    return make_string(r, out);
  }
  const list_object* l = obj.list();
  if (!make_list(static_cast<std::size_t>(count), out, obj.type)) return false;
  for (std::int64_t k = 0, i = start; k < count; ++k, i += step) out.list()->items[k] = l->items[i];
  return true;
}

// ---- calls --------------------------------------------------------------------------------------

inline bool renderer::call_value(const value& callee, const std::vector<value>& args,
                                 const std::vector<std::pair<std::string_view, value>>& kwargs, value& out) {
  switch (callee.type) {
    case vt::macro: return call_macro(static_cast<const macro_object*>(callee.u.p), args, kwargs, out);
    case vt::function: return call_function(static_cast<global_fn>(callee.x), args, kwargs, out);
    case vt::method: return call_method(static_cast<const method_object*>(callee.u.p), args, kwargs, out);
    case vt::undefined: return undefined_error(callee);
    case vt::loop: {
      auto* l = static_cast<loop_object*>(callee.u.p);
      if (!l->def->flag)
        return type_error("Tried to call non recursive loop. Maybe you forgot the 'recursive' modifier.");
      if (args.size() != 1 || !kwargs.empty()) return type_error("loop() takes exactly one argument");
      if (depth_ >= limits_.max_depth) return fail(error_info::kind::limit, "loops nested deeper than the depth limit");
      list_object items;
      if (!iterate(args[0], items)) return false;
      capture_buffer text(captures_);
      ++depth_;
      const flow r = run_loop(l->def, l->scope, items, l->depth0 + 1, &*text);
      --depth_;
      if (r == flow::fail) return false;
      return make_string(*text, out);
    }
    case vt::joiner: {
      auto* j = static_cast<cycler_object*>(callee.u.p);
      out = j->used ? value::string(j->sep) : value::string("");
      j->used = true;
      return true;
    }
    default: return type_error(std::string("'") + type_name(callee) + "' object is not callable");
  }
}

inline bool renderer::call_macro(const macro_object* m, const std::vector<value>& args,
                                 const std::vector<std::pair<std::string_view, value>>& kwargs, value& out) {
  const node* def = m->def;
  const std::string_view name = def->kind == nk::macro ? def->text : std::string_view("caller");
  if (depth_ >= limits_.max_depth) {
    return fail(error_info::kind::limit, "macro calls nested deeper than the depth limit (maximum recursion depth)");
  }
  if (!step()) return false;
  auto* scope = make<frame>();
  if (!scope) return out_of_memory();
  scope->parent = m->closure;
  const std::size_t n_params = def->names.size();
  // which parameters have a value: in the frame for the usual few
  std::array<char, 32> bound_few{};
  std::vector<char> bound_many(n_params > bound_few.size() ? n_params : 0, 0);
  char* const bound = n_params > bound_few.size() ? bound_many.data() : bound_few.data();
  for (std::size_t k = 0; k < std::min(args.size(), n_params); ++k) {
    if (!bind(scope, def->name_syms[k], args[k])) return false;
    bound[k] = 1;
  }
  if (args.size() > n_params) {
    if (!(def->extra & 1)) {
      return type_error("macro '" + std::string(name) + "' takes not more than " + std::to_string(n_params) +
                        " argument(s)");
    }
  }
  value varargs, kw, caller = m->caller;
  if (def->extra & 1) {
    const std::size_t extra = args.size() > n_params ? args.size() - n_params : 0;
    if (!make_list(extra, varargs, vt::tuple)) return false;
    for (std::size_t k = 0; k < extra; ++k) varargs.list()->items[k] = args[n_params + k];
  }
  if ((def->extra & 2) && !make_dict(0, kw)) return false;
  // a keyword's parameter: by name among a few, else by symbol through an index of this call's making
  std::unordered_map<std::uint32_t, std::size_t> by_symbol;
  if (n_params > 16 && kwargs.size() > 4) {
    if (!charge(n_params)) return false;
    for (std::size_t k = 0; k < n_params; ++k) by_symbol.emplace(def->name_syms[k], k);
  }
  for (const auto& [key, v] : kwargs) {
    bool matched = false;
    std::size_t first = 0, last = n_params;
    if (!by_symbol.empty()) {
      const std::int64_t sym = p_.symbols.find(key);
      const auto it = sym < 0 ? by_symbol.end() : by_symbol.find(static_cast<std::uint32_t>(sym));
      first = it == by_symbol.end() ? n_params : it->second;
      last = it == by_symbol.end() ? n_params : first + 1;
    }
    for (std::size_t k = first; k < last; ++k) {
      if (def->names[k] == key) {
        if (bound[k]) {
          return type_error("macro '" + std::string(name) + "' got multiple values for argument '" + std::string(key) +
                            "'");
        }
        if (!bind(scope, def->name_syms[k], v)) return false;
        bound[k] = 1;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (key == "caller" && (def->extra & 4)) {
      caller = v;
      continue;
    }
    if (def->extra & 2) {
      value ks;
      if (!make_string(key, ks) || !dict_set(kw.dict(), ks, v)) return false;
      continue;
    }
    return type_error("macro '" + std::string(name) + "' takes no keyword argument '" + std::string(key) + "'");
  }
  // defaults belong to the last parameters; they are evaluated in the macro's scope, in order
  const std::size_t n_defaults = def->items.size();
  for (std::size_t k = 0; k < n_params; ++k) {
    if (bound[k]) continue;
    value v;
    if (k + n_defaults >= n_params) {
      if (!eval(def->items[k + n_defaults - n_params], scope, v)) return false;
    } else {
      v = undefined_msg("parameter '" + std::string(def->names[k]) + "' was not provided");
    }
    if (!bind(scope, def->name_syms[k], v)) return false;
  }
  if ((def->extra & 1) && !bind(scope, p_.sym_varargs, varargs)) return false;
  if ((def->extra & 2) && !bind(scope, p_.sym_kwargs, kw)) return false;
  if (def->extra & 4) {
    if (caller.type == vt::undefined) caller = undefined_msg("No caller defined");
    if (!bind(scope, p_.sym_caller, caller)) return false;
  }
  capture_buffer text(captures_);
  ++depth_;
  const std::uint32_t saved_line = line_;
  const bool ok = capture(def->body, scope, *text);
  --depth_;
  line_ = saved_line;
  if (!ok) return false;
  return make_string(*text, out);
}

namespace detail {
/// The current local time (strftime_now's clock when the caller fixes none).
inline std::tm local_time() noexcept {
  std::tm now{};
  const std::time_t clock = std::time(nullptr);
#if defined(_WIN32)
  localtime_s(&now, &clock);
#else
  localtime_r(&clock, &now);
#endif
  return now;
}

inline bool strftime_format(std::string_view fmt, const std::tm& t, std::string& out) {
  // C's strftime, as Python's datetime.strftime passes it on (the C locale), after Python's own codes:
  // %z and %Z are empty for the naive datetime strftime_now formats, %f its microseconds (the clock is
  // whole seconds)
  std::string f;
  f.reserve(fmt.size());
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      f += fmt[i];
    } else if (i + 1 == fmt.size()) {
      f += "%%";  // a lone % at the end prints as itself (glibc's)
    } else if (fmt[i + 1] == 'z' || fmt[i + 1] == 'Z') {
      ++i;
    } else if (fmt[i + 1] == 'f') {
      f += "000000";
      ++i;
#ifdef _WIN32
    } else if (std::string_view("aAbBcCdDeFgGhHIjmMnprRStTuUVwWxXyY%").find(fmt[i + 1]) == std::string_view::npos) {
      f += "%%";  // glibc prints a conversion it does not know as it is; Microsoft's C runtime aborts
#endif
    } else {
      f.append(fmt.substr(i, 2));
      ++i;
    }
  }
  std::vector<char> buf(256 + fmt.size() * 8);
  while (true) {
    const std::size_t n = std::strftime(buf.data(), buf.size(), f.c_str(), &t);
    if (n > 0 || f.empty()) {
      out.assign(buf.data(), n);
      return true;
    }
    if (buf.size() > (1u << 20)) {
      out.clear();
      return true;
    }
    buf.resize(buf.size() * 4);
  }
}
}  // namespace detail

inline bool renderer::call_function(global_fn fn, const std::vector<value>& args,
                                    const std::vector<std::pair<std::string_view, value>>& kwargs, value& out) {
  switch (fn) {
    case global_fn::range: {
      if (!kwargs.empty()) return type_error("range() takes no keyword arguments");
      if (args.empty() || args.size() > 3) {
        return type_error(args.empty() ? "range expected at least 1 argument, got 0"
                                       : "range expected at most 3 arguments, got " + std::to_string(args.size()));
      }
      for (const value& a : args) {
        if (a.type == vt::undefined) return undefined_error(a);
        if (!a.is_int()) {
          return type_error(std::string("'") + type_name(a) + "' object cannot be interpreted as an integer");
        }
      }
      auto* r = make<range_object>();
      if (!r) return out_of_memory();
      if (args.size() == 1) {
        r->stop = args[0].as_int();
      } else {
        r->start = args[0].as_int();
        r->stop = args[1].as_int();
        if (args.size() == 3) r->step = args[2].as_int();
      }
      if (r->step == 0) return fail(error_info::kind::value, "range() arg 3 must not be zero");
      if (r->length() > 100000) {
        return fail(error_info::kind::overflow,
                    "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
      }
      out = value::object(vt::range, r);
      return true;
    }
    case global_fn::dict:
    case global_fn::namespace_: {
      if (!make_dict(kwargs.size(), out, fn == global_fn::dict ? vt::dict : vt::ns)) return false;
      if (args.size() > 1) return type_error("dict expected at most 1 argument, got " + std::to_string(args.size()));
      if (args.size() == 1) {
        if (args[0].type == vt::dict) {
          const dict_object* d = args[0].dict();
          for (std::uint32_t k = 0; k < d->size; ++k)
            if (!dict_set(out.dict(), d->keys[k], d->values[k])) return false;
        } else {
          list_object pairs;
          if (!iterate(args[0], pairs)) return false;
          for (std::uint32_t k = 0; k < pairs.size; ++k) {
            list_object kv;
            if (!iterate(pairs.items[k], kv)) return false;
            if (kv.size != 2) {
              return fail(error_info::kind::value, "dictionary update sequence element #" + std::to_string(k) +
                                                       " has length " + std::to_string(kv.size) + "; 2 is required");
            }
            if (!hashable(kv.items[0]) || !dict_set(out.dict(), kv.items[0], kv.items[1])) return false;
          }
        }
      }
      for (const auto& [k, v] : kwargs) {
        value key;
        if (!make_string(k, key) || !dict_set(out.dict(), key, v)) return false;
      }
      return true;
    }
    case global_fn::cycler:
    case global_fn::joiner: {
      auto* c = make<cycler_object>();
      if (!c) return out_of_memory();
      if (fn == global_fn::cycler) {
        value l;
        if (!make_list(args.size(), l)) return false;
        for (std::size_t k = 0; k < args.size(); ++k) l.list()->items[k] = args[k];
        c->items = *l.list();
        out = value::object(vt::cycler, c);
      } else {
        const value* sep = detail::arg_reader{args, kwargs}.get(0, "sep");
        value s;
        if (sep) {
          std::string text;
          if (!str_to(text, *sep) || !make_string(text, s)) return false;
          c->sep = s.str();
        } else {
          c->sep = ", ";
        }
        out = value::object(vt::joiner, c);
      }
      return true;
    }
    case global_fn::lipsum: return fail(error_info::kind::unsupported, "lipsum() is random text: not supported");
    case global_fn::raise_exception: {
      const value* m = detail::arg_reader{args, kwargs}.get(0, "message");
      if (!m) return type_error("raise_exception() missing 1 required positional argument: 'message'");
      std::string msg;
      if (!str_to(msg, *m)) return false;
      return fail(error_info::kind::raised, std::move(msg));
    }
    case global_fn::strftime_now: {
      const value* f = detail::arg_reader{args, kwargs}.get(0, "format");
      if (!f) return type_error("strftime_now() missing 1 required positional argument: 'format'");
      if (f->type != vt::string)
        return type_error("strftime() argument 1 must be str, not " + std::string(type_name(*f)));
      if (!now_set_) {
        now_ = detail::local_time();
        now_set_ = true;
      }
      std::string text;
      if (!detail::strftime_format(f->str(), now_, text)) return false;
      return make_string(text, out);
    }
    case global_fn::none: break;
  }
  return type_error("not callable");
}

// ---- operators ----------------------------------------------------------------------------------

inline bool renderer::unary(op o, const value& v, value& out) {
  if (v.type == vt::undefined) return undefined_error(v);
  if (v.type == vt::floating) {
    out = value::floating(o == op::neg ? -v.u.f : v.u.f);
    return true;
  }
  if (v.is_int()) {
    const std::int64_t i = v.as_int();
    if (o == op::neg && i == INT64_MIN) return fail(error_info::kind::overflow, "integer overflow");
    out = value::integer(o == op::neg ? -i : i);
    return true;
  }
  return type_error(std::string("bad operand type for unary ") + (o == op::neg ? "-" : "+") + ": '" + type_name(v) +
                    "'");
}

namespace detail {
// Python's float divmod (CPython's float_divmod): the floor quotient and the modulo of x by y (y != 0)
inline void float_divmod(double x, double y, double& floordiv, double& mod) {
  mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0.0) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, y);
  }
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, x / y);
  }
}
inline const char* op_symbol(op o) noexcept {
  switch (o) {
    case op::add: return "+";
    case op::sub: return "-";
    case op::mul: return "*";
    case op::div: return "/";
    case op::floordiv: return "//";
    case op::mod: return "%";
    case op::pow: return "** or pow()";
    default: return "?";
  }
}
}  // namespace detail

inline bool renderer::binary(op o, const value& a, const value& b, value& out) {
  if (a.type == vt::undefined) return undefined_error(a);
  if (b.type == vt::undefined) return undefined_error(b);
  const auto unsupported = [&] {
    if (o == op::add && a.type == vt::string) {
      return type_error(std::string("can only concatenate str (not \"") + type_name(b) + "\") to str");
    }
    if (o == op::add && (a.type == vt::list || a.type == vt::tuple)) {
      return type_error(std::string("can only concatenate ") + type_name(a) + " (not \"" + type_name(b) + "\") to " +
                        type_name(a));
    }
    return type_error(std::string("unsupported operand type(s) for ") + detail::op_symbol(o) + ": '" + type_name(a) +
                      "' and '" + type_name(b) + "'");
  };
  const auto overflow = [&] { return fail(error_info::kind::overflow, "integer overflow (beyond 64 bits)"); };
  if (a.is_number() && b.is_number()) {
    const bool floats = a.type == vt::floating || b.type == vt::floating;
    if (!floats) {
      const std::int64_t x = a.as_int(), y = b.as_int();
      std::int64_t r = 0;
      switch (o) {
        case op::add:
          if (__builtin_add_overflow(x, y, &r)) return overflow();
          out = value::integer(r);
          return true;
        case op::sub:
          if (__builtin_sub_overflow(x, y, &r)) return overflow();
          out = value::integer(r);
          return true;
        case op::mul:
          if (__builtin_mul_overflow(x, y, &r)) return overflow();
          out = value::integer(r);
          return true;
        case op::div:
          if (y == 0) return fail(error_info::kind::zero_division, "division by zero");
          out = value::floating(static_cast<double>(x) / static_cast<double>(y));
          return true;
        case op::floordiv:
        case op::mod: {
          if (y == 0) return fail(error_info::kind::zero_division, "integer division or modulo by zero");
          if (x == INT64_MIN && y == -1) return overflow();
          std::int64_t q = x / y, m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) {
            m += y;
            --q;
          }
          out = value::integer(o == op::floordiv ? q : m);
          return true;
        }
        case op::pow: {
          if (y < 0) {
            if (x == 0) return fail(error_info::kind::zero_division, "0.0 cannot be raised to a negative power");
            out = value::floating(std::pow(static_cast<double>(x), static_cast<double>(y)));
            return true;
          }
          std::int64_t result = 1, base = x, e = y;
          while (e > 0) {
            if (e & 1) {
              if (__builtin_mul_overflow(result, base, &result)) return overflow();
            }
            e >>= 1;
            if (e > 0 && __builtin_mul_overflow(base, base, &base)) return overflow();
          }
          out = value::integer(result);
          return true;
        }
        default: break;
      }
    } else {
      const double x = a.as_double(), y = b.as_double();
      switch (o) {
        case op::add: out = value::floating(x + y); return true;
        case op::sub: out = value::floating(x - y); return true;
        case op::mul: out = value::floating(x * y); return true;
        case op::div:
          if (y == 0) return fail(error_info::kind::zero_division, "float division by zero");
          out = value::floating(x / y);
          return true;
        case op::floordiv:
        case op::mod: {
          if (y == 0) {
            return fail(error_info::kind::zero_division,
                        o == op::mod ? "float modulo" : "float floor division by zero");
          }
          double q = 0, m = 0;
          detail::float_divmod(x, y, q, m);
          out = value::floating(o == op::floordiv ? q : m);
          return true;
        }
        case op::pow:
          if (x == 0 && y < 0) return fail(error_info::kind::zero_division, "0.0 cannot be raised to a negative power");
          if (x < 0 && y != std::floor(y)) {
            return fail(error_info::kind::unsupported, "a negative number to a fractional power is complex");
          }
          out = value::floating(std::pow(x, y));
          return true;
        default: break;
      }
    }
    return unsupported();
  }
  switch (o) {
    case op::add:
      if (a.type == vt::string && b.type == vt::string) {
        // Markup + str escapes the str (markupsafe's __add__ and __radd__): the sum is Markup
        const bool ma = a.x == 1, mb = b.x == 1;
        if (!ma && !mb) return make_concat(a.str(), b.str(), out);
        std::string s;
        s.reserve(a.len + b.len);
        if (mb && !ma)
          s.append(escape_html(a.str()));
        else
          s.append(a.str());
        if (ma && !mb)
          s.append(escape_html(b.str()));
        else
          s.append(b.str());
        if (!make_string(s, out)) return false;
        out.x = ma || mb ? 1 : 0;
        return true;
      }
      if ((a.type == vt::list || a.type == vt::tuple) && a.type == b.type) {
        const list_object *x = a.list(), *y = b.list();
        if (!make_list(std::size_t{x->size} + y->size, out, a.type)) return false;
        std::copy(x->items, x->items + x->size, out.list()->items);
        std::copy(y->items, y->items + y->size, out.list()->items + x->size);
        return true;
      }
      return unsupported();
    case op::mul: {
      const value* seq = a.is_int() ? &b : &a;
      const value* count = a.is_int() ? &a : &b;
      if (!count->is_int() || !(seq->type == vt::string || seq->type == vt::list || seq->type == vt::tuple)) {
        if (seq->type == vt::string && count->type == vt::floating) {
          return type_error("can't multiply sequence by non-int of type 'float'");
        }
        return unsupported();
      }
      const std::int64_t times = std::max<std::int64_t>(0, count->as_int());
      if (seq->type == vt::string) {
        if (seq->len && static_cast<std::uint64_t>(times) > limits_.max_output / seq->len) {
          return fail(error_info::kind::limit, "a string larger than the output limit");
        }
        std::string s;
        s.reserve(seq->len * static_cast<std::size_t>(times));
        for (std::int64_t k = 0; k < times; ++k) s.append(seq->str());
        return make_string(s, out);
      }
      const list_object* l = seq->list();
      if (l->size && static_cast<std::uint64_t>(times) > (limits_.max_memory / sizeof(value)) / l->size) {
        return out_of_memory();
      }
      if (!make_list(static_cast<std::size_t>(times) * l->size, out, seq->type)) return false;
      for (std::int64_t k = 0; k < times; ++k) std::copy(l->items, l->items + l->size, out.list()->items + k * l->size);
      return true;
    }
    case op::mod:
      if (a.type == vt::string) return percent_format(a.str(), b, out);
      return unsupported();
    default: return unsupported();
  }
}

inline bool renderer::contains(const value& c, const value& item, bool& out) {
  out = false;
  switch (c.type) {
    case vt::undefined:
      if (c.x == 1) return undefined_error(c);
      return true;
    case vt::string:
      if (item.type == vt::undefined) return undefined_error(item);
      if (item.type != vt::string) {
        return type_error(std::string("'in <string>' requires string as left operand, not ") + type_name(item));
      }
      out = c.str().find(item.str()) != std::string_view::npos;
      return true;
    case vt::list:
    case vt::tuple: {
      const list_object* l = c.list();
      if (!charge(l->size)) return false;
      for (std::uint32_t k = 0; k < l->size && !out; ++k)
        if (!same_as(l->items[k], item, out)) return false;
      return true;
    }
    case vt::dict:
      if (!hashable(item)) return false;
      out = find_key(c.dict(), item) != nullptr;
      return true;
    case vt::view: {
      const dict_object* d = static_cast<const dict_object*>(c.u.p);
      if (c.x == 1) {  // keys
        if (!hashable(item)) return false;
        out = find_key(d, item) != nullptr;
        return true;
      }
      if (c.x == 0) {  // items: a (key, value) tuple
        if (item.type != vt::tuple || item.list()->size != 2 || !hashable(item.list()->items[0])) return true;
        const value* v = find_key(d, item.list()->items[0]);
        return !v || same_as(*v, item.list()->items[1], out);
      }
      if (!charge(d->size)) return false;
      for (std::uint32_t k = 0; k < d->size && !out; ++k)
        if (!same_as(d->values[k], item, out)) return false;
      return true;
    }
    case vt::range: {
      if (!item.is_int()) return true;
      const auto* r = static_cast<const range_object*>(c.u.p);
      const std::int64_t i = item.as_int(), n = r->length();
      if (n == 0) return true;
      const std::int64_t last = r->at(n - 1);
      const bool within = r->step > 0 ? i >= r->start && i <= last : i <= r->start && i >= last;
      out = within && (i - r->start) % r->step == 0;
      return true;
    }
    default: return type_error(std::string("argument of type '") + type_name(c) + "' is not iterable");
  }
}

inline bool renderer::compare_op(op o, const value& a, const value& b, bool& out) {
  switch (o) {
    case op::eq: return same_as(a, b, out);
    case op::ne:
      if (!same_as(a, b, out)) return false;
      out = !out;
      return true;
    case op::in: return contains(b, a, out);
    case op::notin:
      if (!contains(b, a, out)) return false;
      out = !out;
      return true;
    default: break;
  }
  if (a.type == vt::undefined) return undefined_error(a);
  if (b.type == vt::undefined) return undefined_error(b);
  const order r = compare(a, b);
  if (r == order::too_deep) return too_deep_value();
  if (r == order::none) {
    const char* sym = o == op::lt ? "<" : o == op::le ? "<=" : o == op::gt ? ">" : ">=";
    return type_error(std::string("'") + sym + "' not supported between instances of '" + type_name(a) + "' and '" +
                      type_name(b) + "'");
  }
  if (r == order::unordered) {
    out = false;
    return true;
  }
  switch (o) {
    case op::lt: out = r == order::less; break;
    case op::le: out = r != order::greater; break;
    case op::gt: out = r == order::greater; break;
    default: out = r != order::less; break;
  }
  return true;
}

// ---- JSON, as transformers' tojson (json.dumps) writes it -----------------------------------------

namespace detail {

// The bytes of a JSON string that need an escape, each word's first one found at once: a flag in the
// high bit of each byte below 0x20, a quote or a backslash (and, for ensure_ascii, of 0x80 and above).
// A flag can be wrong only above a true one (a borrow), so the lowest is exact.
inline std::uint64_t json_escapes(std::uint64_t x, std::uint64_t ascii_mask) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  const auto zero_byte = [](std::uint64_t y) { return (y - ones) & ~y & highs; };
  const std::uint64_t below_space = (x - 0x20 * ones) & ~x & highs;
  return below_space | zero_byte(x ^ (0x22 * ones)) | zero_byte(x ^ (0x5C * ones)) | (x & ascii_mask);
}

/// Appends `s` as json.dumps writes a str: quoted, escaped, and with `ensure_ascii` \uXXXX for every
/// code point beyond ASCII. Runs that need no escape are found 8 bytes at a time and appended at once.
inline void append_json_string(text_buffer& out, std::string_view s, bool ensure_ascii) {
  static constexpr char hex[] = "0123456789abcdef";
  const std::uint64_t ascii_mask = ensure_ascii ? 0x8080808080808080u : 0;
  const auto word = [&](std::size_t at) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data() + at);  // NOLINT(*-reinterpret-cast)
    return gguf::detail::load_le<std::uint64_t>(p);
  };
  const auto first = [](std::uint64_t flags) { return static_cast<std::size_t>(std::countr_zero(flags)) / 8; };
  // a byte json.dumps escapes: 1 always, 2 with ensure_ascii
  static constexpr auto escapes = [] {
    std::array<std::uint8_t, 256> t{};
    for (std::size_t b = 0; b < 256; ++b) t[b] = b < 0x20 || b == '"' || b == '\\' ? 1 : b >= 0x80 ? 2 : 0;
    return t;
  }();
  const std::uint8_t escaped = ensure_ascii ? 3 : 1;
  const auto needs_escape = [&](unsigned char b) { return (escapes[b] & escaped) != 0; };
  const std::size_t n = s.size();
  if (n <= 16) {  // a key or a short value, most often with nothing to escape: written at once
    bool plain = true;
    if (n >= 8) {  // two words cover it (a flag can be wrong only above a true one)
      plain = (json_escapes(word(0), ascii_mask) | json_escapes(word(n - 8), ascii_mask)) == 0;
    } else {
      for (std::size_t k = 0; k < n && plain; ++k) plain = !needs_escape(static_cast<unsigned char>(s[k]));
    }
    if (plain) {
      char* to = out.room(n + 2);
      to[0] = '"';
      text_buffer::copy_short(to + 1, s.data(), n);
      to[n + 1] = '"';
      out.advance(n + 2);
      return;
    }
  }
  out += '"';
  std::size_t i = 0;
  while (i < n) {
    // the end of the run from i that needs no escape
    std::size_t run = i;
    if (n >= 8) {
      bool found = false;
      while (!found && run + 8 <= n) {
        const std::uint64_t flags = json_escapes(word(run), ascii_mask);
        found = flags != 0;
        run += found ? first(flags) : 8;
      }
      if (!found && run < n) {
        // the last word, read from n - 8 and shifted so that `run` is its first byte (a byte before it may
        // be one just escaped, whose borrow would flag the next); the zeros shifted in are past the end
        const std::uint64_t flags = json_escapes(word(n - 8) >> (8 * (run - (n - 8))), ascii_mask);
        run = std::min(run + (flags ? first(flags) : 8), n);
      }
    } else {
      while (run < n && !needs_escape(static_cast<unsigned char>(s[run]))) ++run;
    }
    if (run > i) out += s.substr(i, run - i);
    if (run == n) break;
    i = run;
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {  // 0x80 on, with ensure_ascii
          std::size_t len = 0;
          char32_t cp = py::decode_at(s, i, len);
          const auto u = [&](std::uint32_t x) {
            out += "\\u";
            for (int k = 12; k >= 0; k -= 4) out += hex[(x >> k) & 15];
          };
          if (cp >= 0x10000) {
            cp -= 0x10000;
            u(0xD800 + (cp >> 10));
            u(0xDC00 + (cp & 0x3FF));
          } else {
            u(cp);
          }
          i += len - 1;
        }
    }
    ++i;
  }
  out += '"';
}

}  // namespace detail

inline bool renderer::to_json(const value& v, const json_style& st, std::uint32_t level) {
  text_buffer& out = *st.out;
  const std::string* indent = st.indent;
  const std::string_view item_sep = st.item_sep, key_sep = st.key_sep;
  const bool sort_keys = st.sort_keys;
  if (level > max_value_depth) return too_deep_value();
  // what this level's newlines may add, checked before they are written
  if (!fits(out.size() + (indent ? (std::uint64_t{level} + 1) * (indent->size() + 1) : 0))) return false;
  // the item separator when `sep`, a newline and l indents: one append (json_newlines_ keeps them)
  const auto newline = [&](std::uint32_t l, bool sep) {
    const std::size_t s = item_sep.size(), n = s + 1 + std::size_t{l} * indent->size();
    while (json_newlines_.size() < n) json_newlines_ += *indent;
    out += sep ? std::string_view(json_newlines_).substr(0, n) : std::string_view(json_newlines_).substr(s, n - s);
  };
  const auto string = [&](std::string_view s) { detail::append_json_string(out, s, ensure_ascii_); };
  switch (v.type) {
    case vt::none: out += "null"; return true;
    case vt::boolean: out += v.u.b ? "true" : "false"; return true;
    case vt::integer: append_int(out, v.u.i); return true;
    case vt::big_integer: out += v.str(); return true;
    case vt::floating:
      if (std::isnan(v.u.f)) {
        out += "NaN";
      } else if (std::isinf(v.u.f)) {
        out += v.u.f < 0 ? "-Infinity" : "Infinity";
      } else {
        std::string digits;  // short: no allocation
        append_float(digits, v.u.f);
        out += digits;
      }
      return true;
    case vt::string: string(v.str()); return true;
    case vt::list:
    case vt::tuple: {
      const list_object* l = v.list();
      if (l->size == 0) {
        out += "[]";
        return true;
      }
      out += '[';
      for (std::uint32_t k = 0; k < l->size; ++k) {
        if (indent) {
          newline(level + 1, k != 0);
        } else if (k) {
          out += item_sep;
        }
        if (!to_json(l->items[k], st, level + 1)) return false;
      }
      if (indent) newline(level, false);
      out += ']';
      return true;
    }
    case vt::dict: {
      const dict_object* d = v.dict();
      if (d->size == 0) {
        out += "{}";
        return true;
      }
      // the members in insertion order, or sorted (only then is an order of indices made)
      std::vector<std::uint32_t> keys;
      if (sort_keys) {
        keys.resize(d->size);
        for (std::uint32_t k = 0; k < d->size; ++k) keys[k] = k;
        for (std::uint32_t k = 1; k < d->size; ++k) {
          const order o = compare(d->keys[0], d->keys[k]);
          if (o == order::too_deep) return too_deep_value();
          if (o == order::none) {
            return type_error(std::string("'<' not supported between instances of '") + type_name(d->keys[k]) +
                              "' and '" + type_name(d->keys[0]) + "'");
          }
        }
        std::stable_sort(keys.begin(), keys.end(), [&](std::uint32_t x, std::uint32_t y) {
          return compare(d->keys[x], d->keys[y]) == order::less;
        });
      }
      out += '{';
      for (std::uint32_t i = 0; i < d->size; ++i) {
        const std::uint32_t k = sort_keys ? keys[i] : i;
        const value& key = d->keys[k];
        if (indent) {
          newline(level + 1, i != 0);
        } else if (i) {
          out += item_sep;
        }
        switch (key.type) {
          case vt::string: string(key.str()); break;
          case vt::none: out += "\"null\""; break;
          case vt::boolean: out += key.u.b ? "\"true\"" : "\"false\""; break;
          case vt::integer:
          case vt::big_integer:
          case vt::floating: {
            text_buffer k2;
            if (!to_json(key, json_style{&k2, nullptr, ", ", ": ", false}, level)) return false;
            string(k2.view());
            break;
          }
          default: return type_error(std::string("keys must be str, int, float, bool or None, not ") + type_name(key));
        }
        out += key_sep;
        if (!to_json(d->values[k], st, level + 1)) return false;
      }
      if (indent) newline(level, false);
      out += '}';
      return true;
    }
    case vt::undefined:
      if (v.x == 1) return undefined_error(v);
      return type_error("Object of type Undefined is not JSON serializable");
    default: return type_error(std::string("Object of type ") + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace jinja
GGUF_END_NAMESPACE

#include "gguf/jinja/filters.hpp"

#endif  // GGUF_JINJA_BUILTINS_HPP
