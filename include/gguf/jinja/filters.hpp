#ifndef GGUF_JINJA_FILTERS_HPP
#define GGUF_JINJA_FILTERS_HPP

// Jinja2 3.1's filters and tests (jinja2/filters.py, tests.py), transformers' tojson, and the methods of
// Python's str, dict and list a template may call. Included by builtins.hpp.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/jinja/builtins.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

namespace detail {

// Python's float(str): surrounding whitespace, underscores between digits, inf and nan
inline bool parse_py_float(std::string_view s, double& out) {
  s = py::strip(s, py::side::both);
  std::string t;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        return false;
      }
      continue;
    }
    t += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  }
  std::string_view v = t;
  bool neg = false;
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) {
    neg = v[0] == '-';
    v.remove_prefix(1);
  }
  if (v == "inf" || v == "infinity") {
    out = neg ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (v == "nan") {
    out = std::nan("");
    return true;
  }
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '.')) return false;
  double d = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), d);
  if (r.ptr != v.data() + v.size()) return false;
  if (r.ec == std::errc::result_out_of_range) d = v.find("e-") != std::string_view::npos ? 0.0 : HUGE_VAL;
  out = neg ? -d : d;
  return true;
}

// Python's int(str, base)
inline bool parse_py_int(std::string_view s, int base, std::int64_t& out) {
  s = py::strip(s, py::side::both);
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.size() >= 2 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    const int pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (pb && (base == pb || base == 0)) {
      base = pb;
      s.remove_prefix(2);
      if (!s.empty() && s[0] == '_') s.remove_prefix(1);
    }
  }
  if (base == 0) base = 10;
  std::string t;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || s[i + 1] == '_') return false;
      continue;
    }
    t += s[i];
  }
  if (t.empty()) return false;
  std::int64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (r.ec != std::errc() || r.ptr != t.data() + t.size()) return false;
  out = neg ? -v : v;
  return true;
}

// The arguments of one filter call, read as Jinja2's filters read theirs.
struct filter_call {
  renderer& r;
  arg_reader a;

  const value* arg(std::size_t k, std::string_view kw) const { return a.get(k, kw); }
  bool flag(std::size_t k, std::string_view kw) const {
    const value* v = a.get(k, kw);
    return v && truthy(*v);
  }
  // str(v) appended to s (an Undefined of the sandbox fails)
  bool text(const value& v, std::string& s) const;
  // argument k as an int, `dflt` when absent
  bool int_arg(std::size_t k, std::string_view kw, std::int64_t dflt, std::int64_t& v) const;
};

// Which of the filter functions has a filter.
enum class filter_group : std::uint8_t { none, text, sequence, number, unsupported };
inline filter_group filter_group_of(std::string_view name) noexcept {
  static constexpr std::pair<std::string_view, filter_group> table[] = {{"tojson", filter_group::text},
                                                                        {"trim", filter_group::text},
                                                                        {"string", filter_group::text},
                                                                        {"upper", filter_group::text},
                                                                        {"lower", filter_group::text},
                                                                        {"capitalize", filter_group::text},
                                                                        {"title", filter_group::text},
                                                                        {"replace", filter_group::text},
                                                                        {"indent", filter_group::text},
                                                                        {"center", filter_group::text},
                                                                        {"truncate", filter_group::text},
                                                                        {"wordcount", filter_group::text},
                                                                        {"format", filter_group::text},
                                                                        {"escape", filter_group::text},
                                                                        {"e", filter_group::text},
                                                                        {"forceescape", filter_group::text},
                                                                        {"safe", filter_group::text},
                                                                        {"striptags", filter_group::text},
                                                                        {"pprint", filter_group::text},
                                                                        {"filesizeformat", filter_group::text},
                                                                        {"xmlattr", filter_group::text},
                                                                        {"length", filter_group::sequence},
                                                                        {"count", filter_group::sequence},
                                                                        {"default", filter_group::sequence},
                                                                        {"d", filter_group::sequence},
                                                                        {"join", filter_group::sequence},
                                                                        {"first", filter_group::sequence},
                                                                        {"last", filter_group::sequence},
                                                                        {"list", filter_group::sequence},
                                                                        {"items", filter_group::sequence},
                                                                        {"reverse", filter_group::sequence},
                                                                        {"map", filter_group::sequence},
                                                                        {"select", filter_group::sequence},
                                                                        {"reject", filter_group::sequence},
                                                                        {"selectattr", filter_group::sequence},
                                                                        {"rejectattr", filter_group::sequence},
                                                                        {"dictsort", filter_group::sequence},
                                                                        {"sort", filter_group::sequence},
                                                                        {"unique", filter_group::sequence},
                                                                        {"min", filter_group::sequence},
                                                                        {"max", filter_group::sequence},
                                                                        {"sum", filter_group::sequence},
                                                                        {"batch", filter_group::sequence},
                                                                        {"slice", filter_group::sequence},
                                                                        {"attr", filter_group::sequence},
                                                                        {"groupby", filter_group::sequence},
                                                                        {"int", filter_group::number},
                                                                        {"float", filter_group::number},
                                                                        {"abs", filter_group::number},
                                                                        {"round", filter_group::number},
                                                                        {"random", filter_group::unsupported},
                                                                        {"urlize", filter_group::unsupported},
                                                                        {"wordwrap", filter_group::unsupported},
                                                                        {"urlencode", filter_group::unsupported}};
  for (const auto& [n, g] : table)
    if (n == name) return g;
  return filter_group::none;
}

}  // namespace detail

/// Filter and test helpers that need the renderer.
struct builtins {
  renderer& r;  ///< the render they work for

  /// Python's str(v), as a value.
  bool str_of(const value& v, value& out) {
    if (v.type == vt::string) {
      out = v;
      return true;
    }
    if (v.type == vt::undefined && v.x == 1) return r.undefined_error(v);
    std::string s;
    return r.str_to(s, v) && r.make_string(s, out);
  }

  /// Python's len(v) (0 for Undefined, as Jinja2's `length` gives).
  bool length(const value& v, std::int64_t& n) {
    switch (v.type) {
      case vt::string: n = static_cast<std::int64_t>(py::length(v.str())); return true;
      case vt::list:
      case vt::tuple: n = v.list()->size; return true;
      case vt::dict: n = v.dict()->size; return true;
      case vt::view: n = static_cast<const dict_object*>(v.u.p)->size; return true;
      case vt::range: n = static_cast<const range_object*>(v.u.p)->length(); return true;
      case vt::undefined:
        if (v.x == 1) return r.undefined_error(v);
        n = 0;
        return true;
      default: return r.type_error(std::string("object of type '") + type_name(v) + "' has no len()");
    }
  }

  /// A generator over `items` (what map, select and friends return).
  bool generator(const list_object& items, value& out) {
    auto* g = r.make<generator_object>();
    if (!g) return r.out_of_memory();
    g->items = items;
    out = value::object(vt::generator, g);
    return true;
  }

  /// A new list of `items`.
  bool list_of(const list_object& items, value& out) {
    if (!r.make_list(items.size, out)) return false;
    std::copy(items.items, items.items + items.size, out.list()->items);
    return true;
  }

  /// Jinja2's make_attrgetter: "a.b.0" walked with the sandbox's getitem (a digit part is an index).
  bool attr_path(const value& item, const value& attribute, value& out, const value* dflt = nullptr) {
    out = item;
    if (attribute.type == vt::none) return true;
    if (attribute.type != vt::string) return r.get_item(out, attribute, out);
    std::string_view path = attribute.str();
    while (true) {
      const std::size_t dot = path.find('.');
      const std::string_view part = path.substr(0, dot);
      value key;
      if (!part.empty() && py::is_all(part, py::predicate::digit) && py::is_ascii(part)) {
        std::int64_t i = 0;
        std::from_chars(part.data(), part.data() + part.size(), i);
        key = value::integer(i);
      } else {
        key = value::string(part);
      }
      if (!r.get_item(out, key, out)) return false;
      if (dflt && out.type == vt::undefined) out = *dflt;
      if (dot == std::string_view::npos) return true;
      path.remove_prefix(dot + 1);
    }
  }

  /// A sort key: lower-cased strings unless case_sensitive.
  bool key_of(const value& v, bool case_sensitive, value& out) {
    if (!case_sensitive && v.type == vt::string) return r.make_string(py::lower(v.str()), out);
    out = v;
    return true;
  }

  /// Python's sorted() of (key, value) pairs by key: stable; a TypeError for keys without an order.
  bool sort(std::vector<std::pair<value, value>>& keyed, bool reverse) {
    bool ok = true;
    std::string err;
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
      const value& x = reverse ? b.first : a.first;
      const value& y = reverse ? a.first : b.first;
      const order o = compare(x, y);
      if ((o == order::none || o == order::too_deep) && ok) {
        ok = false;
        err = o == order::too_deep ? std::string()
                                   : std::string("'<' not supported between instances of '") + type_name(x) +
                                         "' and '" + type_name(y) + "'";
      }
      return o == order::less;
    });
    if (!ok) return err.empty() ? r.too_deep_value() : r.type_error(err);
    return true;
  }
};

// ---- methods ------------------------------------------------------------------------------------

inline bool renderer::call_method(const method_object* m, const std::vector<value>& args,
                                  const std::vector<std::pair<std::string_view, value>>& kwargs, value& out) {
  builtins b{*this};
  const detail::arg_reader a{args, kwargs};
  const value& self = m->self;
  const auto want = [&](std::size_t most, const char* name) {
    if (args.size() + kwargs.size() > most) {
      return type_error(std::string(name) + "() takes at most " + std::to_string(most) + " argument(s) (" +
                        std::to_string(args.size() + kwargs.size()) + " given)");
    }
    return true;
  };
  const auto str_arg = [&](std::size_t k, const char* kw, const char* fn, std::string_view& s, bool optional) {
    const value* v = a.get(k, kw);
    if (!v || (optional && v->type == vt::none))
      return optional ? true : type_error(std::string(fn) + "() missing a required argument");
    if (v->type != vt::string) {
      return type_error(std::string(fn) + "() argument must be str, not " + type_name(*v));
    }
    s = v->str();
    return true;
  };
  const auto int_arg = [&](std::size_t k, const char* kw, std::int64_t& i, bool& given) {
    const value* v = a.get(k, kw);
    given = v && v->type != vt::none;
    if (!given) return true;
    if (!v->is_int())
      return type_error(std::string("'") + type_name(*v) + "' object cannot be interpreted as an integer");
    i = v->as_int();
    return true;
  };
  // start/end (code points, slice-clamped) of str.find/count/startswith as byte offsets
  const auto bounds = [&](std::string_view s, std::size_t k, std::size_t& b0, std::size_t& e0) {
    std::int64_t st = 0, en = 0;
    bool gs = false, ge = false;
    if (!int_arg(k, "start", st, gs) || !int_arg(k + 1, "end", en, ge)) return false;
    const auto n = static_cast<std::int64_t>(py::length(s));
    const auto clamp = [&](std::int64_t v) { return v < 0 ? std::max<std::int64_t>(0, v + n) : std::min(v, n); };
    const std::int64_t bs = gs ? clamp(st) : 0, es = ge ? clamp(en) : n;
    b0 = py::offset_of(s, static_cast<std::size_t>(bs));
    e0 = es <= bs ? b0 : py::offset_of(s, static_cast<std::size_t>(es));
    return true;
  };
  const auto strv = [&](const std::string& str) { return make_string(str, out); };
  switch (static_cast<meth>(m->which)) {
    // ---- str
    case meth::s_capitalize: return want(0, "capitalize") && strv(py::capitalize(self.str()));
    case meth::s_casefold:
    case meth::s_lower: return want(0, "lower") && strv(py::lower(self.str()));
    case meth::s_upper: return want(0, "upper") && strv(py::upper(self.str()));
    case meth::s_title: return want(0, "title") && strv(py::title(self.str()));
    case meth::s_swapcase: return want(0, "swapcase") && strv(py::swapcase(self.str()));
    case meth::s_strip:
    case meth::s_lstrip:
    case meth::s_rstrip: {
      std::string_view chars;
      if (!want(1, "strip") || !str_arg(0, "chars", "strip", chars, true)) return false;
      const value* c = a.get(0, "chars");
      const py::side side = static_cast<meth>(m->which) == meth::s_strip    ? py::side::both
                            : static_cast<meth>(m->which) == meth::s_lstrip ? py::side::left
                                                                            : py::side::right;
      const bool given = c && c->type != vt::none;
      out = value::string(py::strip(self.str(), side, given ? &chars : nullptr));
      return true;
    }
    case meth::s_split:
    case meth::s_rsplit: {
      std::string_view sep;
      std::int64_t maxsplit = -1;
      bool given = false;
      if (!want(2, "split") || !str_arg(0, "sep", "split", sep, true) || !int_arg(1, "maxsplit", maxsplit, given)) {
        return false;
      }
      const value* s = a.get(0, "sep");
      const bool has_sep = s && s->type != vt::none;
      if (has_sep && sep.empty()) return fail(error_info::kind::value, "empty separator");
      std::vector<value> parts;
      const auto add = [&](std::string_view p) { parts.push_back(value::string(p)); };
      if (static_cast<meth>(m->which) == meth::s_split) {
        py::split(self.str(), has_sep ? &sep : nullptr, maxsplit, add);
      } else {
        py::rsplit(self.str(), has_sep ? &sep : nullptr, maxsplit, add);
        std::reverse(parts.begin(), parts.end());
      }
      if (!make_list(parts.size(), out)) return false;
      std::copy(parts.begin(), parts.end(), out.list()->items);
      return true;
    }
    case meth::s_splitlines: {
      const value* k = a.get(0, "keepends");
      std::vector<value> parts;
      py::splitlines(self.str(), k && truthy(*k), [&](std::string_view p) { parts.push_back(value::string(p)); });
      if (!make_list(parts.size(), out)) return false;
      std::copy(parts.begin(), parts.end(), out.list()->items);
      return true;
    }
    case meth::s_startswith:
    case meth::s_endswith: {
      const bool starts = static_cast<meth>(m->which) == meth::s_startswith;
      const value* p = a.get(0, "prefix");
      if (!p)
        return type_error(std::string(starts ? "startswith" : "endswith") + "() takes at least 1 argument (0 given)");
      std::size_t b0 = 0, e0 = 0;
      if (!bounds(self.str(), 1, b0, e0)) return false;
      const std::string_view s = self.str().substr(b0, e0 - b0);
      const auto test = [&](const value& x, bool& hit) {
        if (x.type != vt::string) {
          return type_error(std::string(starts ? "startswith" : "endswith") +
                            " first arg must be str or a tuple of str, not " + type_name(x));
        }
        const std::string_view t = x.str();
        hit = t.size() <= s.size() && (starts ? s.substr(0, t.size()) == t : s.substr(s.size() - t.size()) == t);
        return true;
      };
      bool hit = false;
      if (p->type == vt::tuple) {
        const list_object* l = p->list();
        for (std::uint32_t k = 0; k < l->size && !hit; ++k)
          if (!test(l->items[k], hit)) return false;
      } else if (!test(*p, hit)) {
        return false;
      }
      out = value::boolean(hit);
      return true;
    }
    case meth::s_find:
    case meth::s_rfind:
    case meth::s_index:
    case meth::s_rindex:
    case meth::s_count: {
      std::string_view sub;
      if (!str_arg(0, "sub", "find", sub, false)) return false;
      std::size_t b0 = 0, e0 = 0;
      if (!bounds(self.str(), 1, b0, e0)) return false;
      const std::string_view s = self.str().substr(b0, e0 - b0);
      const meth w = static_cast<meth>(m->which);
      if (w == meth::s_count) {
        out = value::integer(static_cast<std::int64_t>(py::count(s, sub)));
        return true;
      }
      const std::size_t at = (w == meth::s_find || w == meth::s_index) ? s.find(sub) : s.rfind(sub);
      if (at == std::string_view::npos) {
        if (w == meth::s_index || w == meth::s_rindex) return fail(error_info::kind::value, "substring not found");
        out = value::integer(-1);
        return true;
      }
      out = value::integer(static_cast<std::int64_t>(py::length(self.str().substr(0, b0 + at))));
      return true;
    }
    case meth::s_replace: {
      std::string_view from, to;
      std::int64_t count = -1;
      bool given = false;
      if (!str_arg(0, "old", "replace", from, false) || !str_arg(1, "new", "replace", to, false) ||
          !int_arg(2, "count", count, given)) {
        return false;
      }
      if (!fits(py::replaced_size(self.str(), from, to, count))) return false;
      return strv(py::replace(self.str(), from, to, count));
    }
    case meth::s_join: {
      const value* it = a.get(0, "iterable");
      if (!it) return type_error("join() takes exactly one argument (0 given)");
      list_object items;
      if (!iterate(*it, items)) return false;
      std::string s;
      for (std::uint32_t k = 0; k < items.size; ++k) {
        if (items.items[k].type != vt::string) {
          return type_error("sequence item " + std::to_string(k) + ": expected str instance, " +
                            type_name(items.items[k]) + " found");
        }
        if (!fits(s.size() + self.len + items.items[k].len)) return false;
        if (k) s += self.str();
        s += items.items[k].str();
      }
      return strv(s);
    }
    case meth::s_center:
    case meth::s_ljust:
    case meth::s_rjust: {
      std::int64_t width = 0;
      bool given = false;
      if (!int_arg(0, "width", width, given)) return false;
      if (!given) return type_error("a width is required");
      std::string_view fill = " ";
      const value* f = a.get(1, "fillchar");
      if (f) {
        if (f->type != vt::string || py::length(f->str()) != 1) {
          return type_error("The fill character must be exactly one character long");
        }
        fill = f->str();
      }
      const std::string_view s = self.str();
      const auto n = static_cast<std::int64_t>(py::length(s));
      if (width <= n) {
        out = self;
        return true;
      }
      if (!fits(static_cast<std::uint64_t>(width - n) * fill.size() + s.size())) return false;
      const std::int64_t pad = width - n;
      std::int64_t left = 0;
      const meth w = static_cast<meth>(m->which);
      if (w == meth::s_rjust) {
        left = pad;
      } else if (w == meth::s_center) {
        left = pad / 2 + (pad & width & 1);  // CPython's pad()
      }
      std::string r;
      for (std::int64_t k = 0; k < left; ++k) r += fill;
      r += s;
      for (std::int64_t k = 0; k < pad - left; ++k) r += fill;
      return strv(r);
    }
    case meth::s_zfill: {
      std::int64_t width = 0;
      bool given = false;
      if (!int_arg(0, "width", width, given)) return false;
      const std::string_view s = self.str();
      const auto n = static_cast<std::int64_t>(py::length(s));
      if (width <= n) {
        out = self;
        return true;
      }
      if (!fits(static_cast<std::uint64_t>(width - n) + s.size())) return false;
      std::string r;
      std::string_view rest = s;
      if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
        r += rest[0];
        rest.remove_prefix(1);
      }
      r.append(static_cast<std::size_t>(width - n), '0');
      r += rest;
      return strv(r);
    }
    case meth::s_partition:
    case meth::s_rpartition: {
      std::string_view sep;
      if (!str_arg(0, "sep", "partition", sep, false)) return false;
      if (sep.empty()) return fail(error_info::kind::value, "empty separator");
      const std::string_view s = self.str();
      const bool rev = static_cast<meth>(m->which) == meth::s_rpartition;
      const std::size_t at = rev ? s.rfind(sep) : s.find(sep);
      if (!make_list(3, out, vt::tuple)) return false;
      value* it = out.list()->items;
      if (at == std::string_view::npos) {
        it[0] = value::string(rev ? std::string_view() : s);
        it[1] = value::string("");
        it[2] = value::string(rev ? s : std::string_view());
      } else {
        it[0] = value::string(s.substr(0, at));
        it[1] = value::string(sep);
        it[2] = value::string(s.substr(at + sep.size()));
      }
      return true;
    }
    case meth::s_removeprefix:
    case meth::s_removesuffix: {
      std::string_view x;
      if (!str_arg(0, "prefix", "removeprefix", x, false)) return false;
      std::string_view s = self.str();
      if (static_cast<meth>(m->which) == meth::s_removeprefix) {
        if (s.substr(0, x.size()) == x) s.remove_prefix(x.size());
      } else if (x.size() <= s.size() && s.substr(s.size() - x.size()) == x && !x.empty()) {
        s.remove_suffix(x.size());
      }
      out = value::string(s);
      return true;
    }
    case meth::s_expandtabs: {
      std::int64_t tab = 8;
      bool given = false;
      if (!int_arg(0, "tabsize", tab, given)) return false;
      std::string r;
      std::int64_t col = 0;
      const std::string_view s = self.str();
      for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 0;
        const char32_t c = py::decode_at(s, i, len);
        if (c == '\t') {
          if (tab > 0) {
            const std::int64_t n = tab - col % tab;
            if (!fits(r.size() + static_cast<std::uint64_t>(n))) return false;
            r.append(static_cast<std::size_t>(n), ' ');
            col += n;
          }
        } else {
          r.append(s.substr(i, len));
          col = (c == '\n' || c == '\r') ? 0 : col + 1;
        }
        i += len;
      }
      return strv(r);
    }
    case meth::s_format: return str_format(self.str(), args, kwargs, out);
    case meth::s_isalnum: out = value::boolean(py::is_all(self.str(), py::predicate::alnum)); return true;
    case meth::s_isalpha: out = value::boolean(py::is_all(self.str(), py::predicate::alpha)); return true;
    case meth::s_isascii: out = value::boolean(py::is_ascii(self.str())); return true;
    case meth::s_isdecimal: out = value::boolean(py::is_all(self.str(), py::predicate::decimal)); return true;
    case meth::s_isdigit: out = value::boolean(py::is_all(self.str(), py::predicate::digit)); return true;
    case meth::s_isnumeric: out = value::boolean(py::is_all(self.str(), py::predicate::numeric)); return true;
    case meth::s_isprintable: out = value::boolean(py::is_all(self.str(), py::predicate::printable)); return true;
    case meth::s_isspace: out = value::boolean(py::is_all(self.str(), py::predicate::space)); return true;
    case meth::s_islower: out = value::boolean(py::is_case(self.str(), false)); return true;
    case meth::s_isupper: out = value::boolean(py::is_case(self.str(), true)); return true;
    case meth::s_istitle: out = value::boolean(py::is_title(self.str())); return true;
    case meth::s_isidentifier: {
      const std::string_view s = self.str();
      bool ok = !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0]));
      for (const char c : s)
        ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80);
      out = value::boolean(ok);
      return true;
    }
    // ---- dict
    case meth::d_get: {
      const value* k = a.get(0, "key");
      if (!k) return type_error("get expected at least 1 argument, got 0");
      if (!hashable(*k)) return false;
      const value* d = a.get(1, "default");
      if (const value* v = find_key(self.dict(), *k)) {
        out = *v;
        return true;
      }
      out = d ? *d : value::none();
      return true;
    }
    case meth::d_items:
    case meth::d_keys:
    case meth::d_values: {
      const meth w = static_cast<meth>(m->which);
      out = value::object(vt::view, self.u.p, w == meth::d_items ? 0 : w == meth::d_keys ? 1 : 2);
      return true;
    }
    case meth::d_copy: {
      const dict_object* d = self.dict();
      if (!make_dict(d->size, out)) return false;
      for (std::uint32_t k = 0; k < d->size; ++k)
        if (!dict_set(out.dict(), d->keys[k], d->values[k])) return false;
      return true;
    }
    // ---- list, tuple
    case meth::l_count: {
      const value* x = a.get(0, "value");
      if (!x) return type_error("count() takes exactly one argument (0 given)");
      std::int64_t n = 0;
      const list_object* l = self.list();
      if (!charge(l->size)) return false;
      for (std::uint32_t k = 0; k < l->size; ++k) {
        bool eq = false;
        if (!same_as(l->items[k], *x, eq)) return false;
        n += eq;
      }
      out = value::integer(n);
      return true;
    }
    case meth::l_index: {
      const value* x = a.get(0, "value");
      if (!x) return type_error("index expected at least 1 argument, got 0");
      const list_object* l = self.list();
      if (!charge(l->size)) return false;
      for (std::uint32_t k = 0; k < l->size; ++k) {
        bool eq = false;
        if (!same_as(l->items[k], *x, eq)) return false;
        if (eq) {
          out = value::integer(k);
          return true;
        }
      }
      std::string msg;
      if (!repr_to(msg, *x)) return false;
      return fail(error_info::kind::value, msg + (self.type == vt::list ? " is not in list" : " is not in tuple"));
    }
    case meth::l_copy: return b.list_of(*self.list(), out);
    // ---- loop, cycler
    case meth::loop_cycle: {
      const auto* l = static_cast<const loop_object*>(self.u.p);
      if (args.empty()) return type_error("no items for cycling given");
      out = args[l->index0 % args.size()];
      return true;
    }
    case meth::loop_changed: {
      auto* l = static_cast<loop_object*>(self.u.p);
      value now;
      if (!make_list(args.size(), now, vt::tuple)) return false;
      std::copy(args.begin(), args.end(), now.list()->items);
      bool unchanged = false;
      if (l->changed_called && !same_as(now, l->last_changed, unchanged)) return false;
      const bool changed = !unchanged;
      l->changed_called = true;
      l->last_changed = now;
      out = value::boolean(changed);
      return true;
    }
    case meth::cycler_next: {
      auto* c = static_cast<cycler_object*>(self.u.p);
      if (c->items.size == 0) return fail(error_info::kind::runtime, "empty cycler");
      out = c->items.items[c->pos];
      c->pos = (c->pos + 1) % c->items.size;
      return true;
    }
    case meth::cycler_reset:
      static_cast<cycler_object*>(self.u.p)->pos = 0;
      out = value::none();
      return true;
    case meth::unsafe: return fail(error_info::kind::security, "an unsafe method");
  }
  return type_error("not callable");
}

// ---- filters ------------------------------------------------------------------------------------

inline bool renderer::apply_filter(const node* n, const value& input, frame* f, value& out) {
  call_args a(arg_lists_);
  if (!eval_args(n, f, a->args, a->kwargs)) return false;
  line_ = n->line;
  return filter_by_name(n->text, input, a->args, a->kwargs, out);
}

inline bool renderer::apply_filter_chain(const node* chain, const value& input, frame* f, value& out) {
  value v = input;
  if (chain->a && !apply_filter_chain(chain->a, input, f, v)) return false;
  return apply_filter(chain, v, f, out);
}

inline bool detail::filter_call::text(const value& v, std::string& s) const {
  if (v.type == vt::undefined && v.x == 1) return r.undefined_error(v);
  return r.str_to(s, v);
}

inline bool detail::filter_call::int_arg(std::size_t k, std::string_view kw, std::int64_t dflt, std::int64_t& v) const {
  const value* x = a.get(k, kw);
  if (!x) {
    v = dflt;
    return true;
  }
  if (!x->is_int())
    return r.type_error(std::string("'") + type_name(*x) + "' object cannot be interpreted as an integer");
  v = x->as_int();
  return true;
}

inline bool renderer::filter_by_name(std::string_view name, const value& in, const std::vector<value>& args,
                                     const std::vector<std::pair<std::string_view, value>>& kwargs, value& out) {
  if (!step()) return false;
  const detail::filter_call call{*this, detail::arg_reader{args, kwargs}};
  switch (detail::filter_group_of(name)) {
    case detail::filter_group::text: return filter_text(name, in, call, out);
    case detail::filter_group::sequence: return filter_sequence(name, in, call, out);
    case detail::filter_group::number: return filter_number(name, in, call, out);
    case detail::filter_group::unsupported:
      return fail(error_info::kind::unsupported, "the filter '" + std::string(name) + "' is not supported");
    case detail::filter_group::none: break;
  }
  return fail(error_info::kind::runtime, "No filter named '" + std::string(name) + "' found.");
}

// filters on text: strings in, strings out
inline bool renderer::filter_text(std::string_view name, const value& in, const detail::filter_call& call, value& out) {
  [[maybe_unused]] const std::vector<value>& args = call.a.args;
  [[maybe_unused]] const auto& kwargs = call.a.kwargs;
  builtins b{*this};

  if (name == "tojson") {
    const value* ea = call.arg(0, "ensure_ascii");
    const value* ind = call.arg(1, "indent");
    const value* sep = call.arg(2, "separators");
    const bool sort_keys = call.flag(3, "sort_keys");
    std::string indent_text;
    const std::string* indent = nullptr;
    if (ind && ind->type != vt::none) {
      if (ind->type == vt::string) {
        indent_text = std::string(ind->str());
      } else if (ind->is_int()) {
        if (!fits(static_cast<std::uint64_t>(std::max<std::int64_t>(0, ind->as_int())))) return false;
        indent_text.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, ind->as_int())), ' ');
      } else {
        return type_error("indent must be an int or a str");
      }
      indent = &indent_text;
    }
    std::string item_sep = indent ? "," : ", ", key_sep = ": ";
    if (sep && sep->type != vt::none) {
      list_object s;
      if (!iterate(*sep, s)) return false;
      if (s.size != 2 || s.items[0].type != vt::string || s.items[1].type != vt::string) {
        return fail(error_info::kind::value, "separators must be a pair of strings");
      }
      item_sep = std::string(s.items[0].str());
      key_sep = std::string(s.items[1].str());
    }
    const bool saved = ensure_ascii_;
    ensure_ascii_ = ea && truthy(*ea);
    json_.clear();
    json_newlines_ = item_sep + '\n';
    const bool ok = to_json(in, json_style{&json_, indent, item_sep, key_sep, sort_keys}, 0);
    ensure_ascii_ = saved;
    return ok && make_string(json_.view(), out);
  }
  if (name == "trim") {
    value s;
    if (!b.str_of(in, s)) return false;
    const value* c = call.arg(0, "chars");
    if (c && c->type != vt::none) {
      if (c->type != vt::string) return type_error("strip arg must be None or str");
      const std::string_view chars = c->str();
      out = value::string(py::strip(s.str(), py::side::both, &chars));
    } else {
      out = value::string(py::strip(s.str(), py::side::both));
    }
    out.x = s.x;
    return true;
  }
  if (name == "string") {
    if (in.type == vt::string) return out = in, true;
    return b.str_of(in, out);
  }
  if (name == "upper" || name == "lower" || name == "capitalize") {
    std::string s;
    if (!call.text(in, s)) return false;
    return make_string(name == "upper" ? py::upper(s) : name == "lower" ? py::lower(s) : py::capitalize(s), out);
  }
  if (name == "title") {  // each piece after a run of "-", whitespace, "(", "{", "[", "<": first upper, rest lower
    std::string s, r;
    if (!call.text(in, s)) return false;
    const auto sep = [](char32_t c) {
      return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py::is_space(c);
    };
    bool start = true;
    for (std::size_t i = 0; i < s.size();) {
      std::size_t len = 0;
      const char32_t c = py::decode_at(s, i, len);
      const std::string_view ch = std::string_view(s).substr(i, len);
      if (sep(c)) {
        r += ch;
        start = true;
      } else if (start) {
        r += py::upper(ch);
        start = false;
      } else {
        // the rest of the piece lowered as one string (final sigma looks at its neighbours)
        std::size_t j = i;
        while (j < s.size()) {
          std::size_t l2 = 0;
          if (sep(py::decode_at(s, j, l2))) break;
          j += l2;
        }
        r += py::lower(std::string_view(s).substr(i, j - i));
        i = j;
        continue;
      }
      i += len;
    }
    return make_string(r, out);
  }
  if (name == "replace") {
    std::string s, from, to;
    const value* o = call.arg(0, "old");
    const value* n = call.arg(1, "new");
    if (!o || !n) return type_error("replace() missing required arguments");
    if (!call.text(in, s) || !call.text(*o, from) || !call.text(*n, to)) return false;
    std::int64_t count = -1;
    const value* c = call.arg(2, "count");
    if (c && c->type != vt::none) {
      if (!c->is_int())
        return type_error("'" + std::string(type_name(*c)) + "' object cannot be interpreted as an integer");
      count = c->as_int();
    }
    if (!fits(py::replaced_size(s, from, to, count))) return false;
    return make_string(py::replace(s, from, to, count), out);
  }
  if (name == "indent") {
    const value* w = call.arg(0, "width");
    std::string indention = "    ";
    if (w) {
      if (w->type == vt::string) {
        indention = std::string(w->str());
      } else if (w->is_int()) {
        if (!fits(static_cast<std::uint64_t>(std::max<std::int64_t>(0, w->as_int())))) return false;
        indention.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, w->as_int())), ' ');
      } else {
        return type_error("indent's width must be an int or a str");
      }
    }
    const bool first = call.flag(1, "first"), blank = call.flag(2, "blank");
    std::string s;
    if (!call.text(in, s)) return false;
    s += '\n';  // Jinja2's quirk for splitlines
    std::vector<std::string_view> lines;
    py::splitlines(s, false, [&](std::string_view l) { lines.push_back(l); });
    if (!fits(s.size() + (lines.size() + 1) * static_cast<std::uint64_t>(indention.size()))) return false;
    std::string r;
    if (blank) {
      for (std::size_t k = 0; k < lines.size(); ++k) {
        if (k) r += "\n" + indention;
        r += lines[k];
      }
    } else if (!lines.empty()) {
      r = std::string(lines[0]);
      if (lines.size() > 1) {
        r += '\n';
        for (std::size_t k = 1; k < lines.size(); ++k) {
          if (k > 1) r += '\n';
          if (!lines[k].empty()) r += indention;
          r += lines[k];
        }
      }
    }
    if (first) r = indention + r;
    return make_string(r, out);
  }
  if (name == "center") {
    std::int64_t width = 80;
    if (!call.int_arg(0, "width", 80, width)) return false;
    std::string s;
    if (!call.text(in, s)) return false;
    const auto n = static_cast<std::int64_t>(py::length(s));
    if (width <= n) return make_string(s, out);
    if (!fits(static_cast<std::uint64_t>(width - n) + s.size())) return false;
    const std::int64_t pad = width - n, left = pad / 2 + (pad & width & 1);
    std::string r(static_cast<std::size_t>(left), ' ');
    r += s;
    r.append(static_cast<std::size_t>(pad - left), ' ');
    return make_string(r, out);
  }
  if (name == "truncate") {
    std::int64_t length = 255, leeway = 5;
    if (!call.int_arg(0, "length", 255, length)) return false;
    const bool killwords = call.flag(1, "killwords");
    std::string end = "...";
    if (const value* e = call.arg(2, "end")) {
      end.clear();
      if (!call.text(*e, end)) return false;
    }
    if (const value* l = call.arg(3, "leeway"); l && l->type != vt::none) {
      if (!call.int_arg(3, "leeway", 5, leeway)) return false;
    }
    std::string s;
    if (!call.text(in, s)) return false;
    const auto n = static_cast<std::int64_t>(py::length(s));
    const auto end_n = static_cast<std::int64_t>(py::length(end));
    if (length < end_n) return fail(error_info::kind::runtime, "expected length >= " + std::to_string(end_n));
    if (n <= length + leeway) return make_string(s, out);
    const std::string_view head =
        std::string_view(s).substr(0, py::offset_of(s, static_cast<std::size_t>(length - end_n)));
    if (killwords) return make_string(std::string(head) + end, out);
    const std::size_t sp = head.rfind(' ');
    return make_string(std::string(sp == std::string_view::npos ? head : head.substr(0, sp)) + end, out);
  }
  if (name == "wordcount") {
    std::string s;
    if (!call.text(in, s)) return false;
    std::int64_t n = 0;
    bool in_word = false;
    for (std::size_t i = 0; i < s.size();) {
      std::size_t len = 0;
      const char32_t c = py::decode_at(s, i, len);
      const bool w = c == '_' || (py::flags(c) & tables::alnum) != 0;
      if (w && !in_word) ++n;
      in_word = w;
      i += len;
    }
    out = value::integer(n);
    return true;
  }
  if (name == "format") {
    std::string s;
    if (!call.text(in, s)) return false;
    if (!args.empty() && !kwargs.empty()) {
      return fail(error_info::kind::runtime, "can't handle positional and keyword arguments at the same time");
    }
    value fmt_args;
    if (!kwargs.empty()) {
      if (!make_dict(kwargs.size(), fmt_args)) return false;
      for (const auto& [k, v] : kwargs) {
        value key;
        if (!make_string(k, key) || !dict_set(fmt_args.dict(), key, v)) return false;
      }
    } else {
      if (!make_list(args.size(), fmt_args, vt::tuple)) return false;
      std::copy(args.begin(), args.end(), fmt_args.list()->items);
    }
    value fmt;
    return make_string(s, fmt) && percent_format(fmt.str(), fmt_args, out);
  }
  if (name == "escape" || name == "e" || name == "forceescape") {
    if (in.type == vt::string && in.x == 1 && name != "forceescape") return out = in, true;
    std::string s;
    if (!call.text(in, s)) return false;
    if (!make_string(escape_html(s), out)) return false;
    out.x = 1;
    return true;
  }
  if (name == "safe") {
    if (!b.str_of(in, out)) return false;
    out.x = 1;
    return true;
  }
  if (name == "striptags") {
    std::string s, r;
    if (!call.text(in, s)) return false;
    for (std::size_t i = 0; i < s.size();) {  // comments, then tags, out
      if (s.compare(i, 4, "<!--") == 0) {
        const std::size_t e = s.find("-->", i + 4);
        i = e == std::string::npos ? s.size() : e + 3;
      } else if (s[i] == '<' && s.find('>', i) != std::string::npos) {
        i = s.find('>', i) + 1;
      } else {
        r += s[i++];
      }
    }
    std::string joined;  // " ".join(split()), then entities unescaped
    py::split(r, nullptr, -1, [&](std::string_view w) {
      if (!joined.empty()) joined += ' ';
      joined += w;
    });
    static constexpr std::pair<std::string_view, std::string_view> entities[] = {
        {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&#34;", "\""}, {"&#39;", "'"}, {"&quot;", "\""}};
    for (const auto& [e, c] : entities) joined = py::replace(joined, e, c, -1);
    return make_string(joined, out);
  }
  if (name == "pprint") {
    std::string s;
    return repr_to(s, in) && make_string(s, out);
  }
  if (name == "filesizeformat") {
    double bytes = 0;
    if (in.is_number()) {
      bytes = in.as_double();
    } else if (in.type == vt::string && detail::parse_py_float(in.str(), bytes)) {
    } else {
      return fail(error_info::kind::value, "could not convert to float");
    }
    const bool binary_units = call.flag(0, "binary");
    const double base = binary_units ? 1024 : 1000;
    static constexpr const char* dec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static constexpr const char* bin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    std::string s;
    if (bytes == 1) {
      s = "1 Byte";
    } else if (bytes < base) {
      s = std::to_string(static_cast<std::int64_t>(bytes)) + " Bytes";
    } else {
      char buf[64];
      double unit = base;
      int k = 0;
      for (; k < 8; ++k) {
        unit = std::pow(base, k + 2);
        if (bytes < unit) break;
      }
      if (k == 8) k = 7;
      std::snprintf(buf, sizeof buf, "%.1f %s", base * bytes / unit, binary_units ? bin[k] : dec[k]);
      s = buf;
    }
    return make_string(s, out);
  }
  if (name == "xmlattr") {
    if (in.type != vt::dict) return type_error("xmlattr needs a mapping");
    const dict_object* d = in.dict();
    std::string s;
    for (std::uint32_t k = 0; k < d->size; ++k) {
      const value& v = d->values[k];
      if (v.type == vt::none || v.type == vt::undefined) continue;
      std::string key, val;
      if (!str_to(key, d->keys[k]) || !str_to(val, v)) return false;
      for (const char c : key) {
        if (c == ' ' || c == '/' || c == '>' || c == '=' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
          std::string msg = "Invalid character in attribute name: ";
          py::append_repr(msg, key);
          return fail(error_info::kind::value, msg);
        }
      }
      if (!s.empty()) s += ' ';
      s += escape_html(key) + "=\"" + escape_html(val) + "\"";
    }
    if (!s.empty() && (call.arg(0, "autospace") == nullptr || call.flag(0, "autospace"))) s = " " + s;
    return make_string(s, out);
  }
  return fail(error_info::kind::runtime, "No filter named '" + std::string(name) + "' found.");
}

// filters on sequences and mappings
inline bool renderer::filter_sequence(std::string_view name, const value& in, const detail::filter_call& call,
                                      value& out) {
  [[maybe_unused]] const std::vector<value>& args = call.a.args;
  [[maybe_unused]] const auto& kwargs = call.a.kwargs;
  builtins b{*this};

  if (name == "length" || name == "count") {
    std::int64_t n = 0;
    if (!b.length(in, n)) return false;
    out = value::integer(n);
    return true;
  }
  if (name == "default" || name == "d") {
    const value* dv = call.arg(0, "default_value");
    if (in.type == vt::undefined || (call.flag(1, "boolean") && !truthy(in))) {
      out = dv ? *dv : value::string("");
      return true;
    }
    out = in;
    return true;
  }
  if (name == "join") {
    const value* d = call.arg(0, "d");
    const value* attribute = call.arg(1, "attribute");
    std::string sep, s;
    if (d && !call.text(*d, sep)) return false;
    list_object items;
    if (!iterate(in, items)) return false;
    for (std::uint32_t k = 0; k < items.size; ++k) {
      value item = items.items[k];
      if (attribute && !b.attr_path(item, *attribute, item)) return false;
      if (k && !fits(s.size() + sep.size())) return false;
      if (k) s += sep;
      if (!call.text(item, s) || !fits(s.size())) return false;
    }
    return make_string(s, out);
  }
  if (name == "first") {
    if (in.type == vt::generator) {
      auto* g = static_cast<generator_object*>(in.u.p);
      if (g->pos < g->items.size) return out = g->items.items[g->pos++], true;
      out = undefined_msg("No first item, sequence was empty.");
      return true;
    }
    list_object items;
    if (in.type == vt::string) {
      const std::string_view s = in.str();
      if (s.empty()) return out = undefined_msg("No first item, sequence was empty."), true;
      std::size_t len = 0;
      (void)py::decode_at(s, 0, len);
      out = value::string(s.substr(0, len));
      return true;
    }
    if (!iterate(in, items)) return false;
    out = items.size ? items.items[0] : undefined_msg("No first item, sequence was empty.");
    return true;
  }
  if (name == "last") {
    if (in.type == vt::generator) return type_error("'generator' object is not reversible");
    if (in.type == vt::string) {
      const std::string_view s = in.str();
      if (s.empty()) return out = undefined_msg("No last item, sequence was empty."), true;
      std::size_t k = s.size() - 1;
      while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
      out = value::string(s.substr(k));
      return true;
    }
    list_object items;
    if (!iterate(in, items)) return false;
    out = items.size ? items.items[items.size - 1] : undefined_msg("No last item, sequence was empty.");
    return true;
  }
  if (name == "list") {
    list_object items;
    if (!iterate(in, items)) return false;
    return b.list_of(items, out);
  }
  if (name == "items") {
    if (in.type == vt::undefined) {
      if (in.x == 1) return undefined_error(in);
      return b.generator(list_object{}, out);
    }
    if (in.type != vt::dict) return type_error("Can only get item pairs from a mapping.");
    const value view = value::object(vt::view, in.u.p, 0);
    list_object items;
    if (!iterate(view, items)) return false;
    return b.generator(items, out);
  }
  if (name == "reverse") {
    if (in.type == vt::string) {
      std::vector<std::string_view> cps;
      const std::string_view s = in.str();
      for (std::size_t i = 0; i < s.size();) {
        std::size_t len = 0;
        (void)py::decode_at(s, i, len);
        cps.push_back(s.substr(i, len));
        i += len;
      }
      std::string r;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) r += *it;  // NOLINT(modernize-loop-convert): backwards
      return make_string(r, out);
    }
    if (in.type == vt::generator) {  // not reversible: the list of it, reversed
      list_object items;
      if (!iterate(in, items) || !b.list_of(items, out)) return false;
      std::reverse(out.list()->items, out.list()->items + out.list()->size);
      return true;
    }
    list_object items;
    if (!iterate(in, items)) return false;
    value l;
    if (!b.list_of(items, l)) return false;
    std::reverse(l.list()->items, l.list()->items + l.list()->size);
    return b.generator(*l.list(), out);  // reversed(): an iterator
  }
  if (name == "map") {
    if (!truthy(in) && in.type != vt::generator) return b.generator(list_object{}, out);
    list_object items;
    if (!iterate(in, items)) return false;
    value result;
    if (!make_list(items.size, result)) return false;
    const value* attribute = args.empty() ? call.arg(99, "attribute") : nullptr;
    if (attribute) {
      const value* dflt = call.arg(99, "default");
      for (const auto& [k, v] : kwargs) {
        if (k != "attribute" && k != "default")
          return fail(error_info::kind::runtime, "Unexpected keyword argument '" + std::string(k) + "'");
      }
      for (std::uint32_t k = 0; k < items.size; ++k)
        if (!b.attr_path(items.items[k], *attribute, result.list()->items[k], dflt)) return false;
    } else {
      if (args.empty()) return fail(error_info::kind::runtime, "map requires a filter argument");
      if (args[0].type != vt::string) return fail(error_info::kind::runtime, "map's filter name must be a string");
      const std::vector<value> rest(args.begin() + 1, args.end());
      for (std::uint32_t k = 0; k < items.size; ++k)
        if (!filter_by_name(args[0].str(), items.items[k], rest, kwargs, result.list()->items[k])) return false;
    }
    return b.generator(*result.list(), out);
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    const bool attr = name == "selectattr" || name == "rejectattr";
    const bool keep_true = name == "select" || name == "selectattr";
    if (!truthy(in) && in.type != vt::generator) return b.generator(list_object{}, out);
    list_object items;
    if (!iterate(in, items)) return false;
    if (attr && args.empty()) return fail(error_info::kind::runtime, "Missing parameter for attribute name");
    const std::size_t off = attr ? 1 : 0;
    value result;
    if (!make_list(items.size, result)) return false;
    std::uint32_t n = 0;
    for (std::uint32_t k = 0; k < items.size; ++k) {
      if (!step()) return false;
      value v = items.items[k];
      if (attr && !b.attr_path(v, args[0], v)) return false;
      bool t = false;
      if (args.size() > off) {
        if (args[off].type != vt::string) return fail(error_info::kind::runtime, "the test name must be a string");
        const std::vector<value> rest(args.begin() + static_cast<std::ptrdiff_t>(off + 1), args.end());
        if (!test_by_name(args[off].str(), v, rest, t)) return false;
      } else {
        t = truthy(v);
      }
      if (t == keep_true) result.list()->items[n++] = items.items[k];
    }
    result.list()->size = n;
    return b.generator(*result.list(), out);
  }
  if (name == "dictsort") {
    if (in.type != vt::dict) return type_error(std::string("'") + type_name(in) + "' object has no attribute 'items'");
    const bool cs = call.flag(0, "case_sensitive");
    const value* by = call.arg(1, "by");
    int pos = 0;
    if (by) {
      if (by->type == vt::string && by->str() == "value") {
        pos = 1;
      } else if (!(by->type == vt::string && by->str() == "key")) {
        return fail(error_info::kind::runtime, R"(You can only sort by either "key" or "value")");
      }
    }
    const dict_object* d = in.dict();
    std::vector<std::pair<value, value>> keyed;
    for (std::uint32_t k = 0; k < d->size; ++k) {
      value pair, key;
      if (!make_list(2, pair, vt::tuple)) return false;
      pair.list()->items[0] = d->keys[k];
      pair.list()->items[1] = d->values[k];
      if (!b.key_of(pos ? d->values[k] : d->keys[k], cs, key)) return false;
      keyed.emplace_back(key, pair);
    }
    if (!b.sort(keyed, call.flag(2, "reverse"))) return false;
    if (!make_list(keyed.size(), out)) return false;
    for (std::size_t k = 0; k < keyed.size(); ++k) out.list()->items[k] = keyed[k].second;
    return true;
  }
  if (name == "sort") {
    list_object items;
    if (!iterate(in, items)) return false;
    const bool reverse = call.flag(0, "reverse"), cs = call.flag(1, "case_sensitive");
    const value* attribute = call.arg(2, "attribute");
    std::vector<std::pair<value, value>> keyed;
    for (std::uint32_t k = 0; k < items.size; ++k) {
      value key;
      if (attribute && attribute->type == vt::string && attribute->str().find(',') != std::string_view::npos) {
        std::vector<value> parts;
        py::split(attribute->str(), nullptr, -1, [&](std::string_view) {});
        std::string_view rest = attribute->str();
        while (true) {
          const std::size_t c = rest.find(',');
          value part, v;
          if (!b.attr_path(items.items[k], value::string(rest.substr(0, c)), v) || !b.key_of(v, cs, part)) return false;
          parts.push_back(part);
          if (c == std::string_view::npos) break;
          rest.remove_prefix(c + 1);
        }
        if (!make_list(parts.size(), key)) return false;
        std::copy(parts.begin(), parts.end(), key.list()->items);
      } else {
        value v = items.items[k];
        if (attribute && !b.attr_path(v, *attribute, v)) return false;
        if (!b.key_of(v, cs, key)) return false;
      }
      keyed.emplace_back(key, items.items[k]);
    }
    if (!b.sort(keyed, reverse)) return false;
    if (!make_list(keyed.size(), out)) return false;
    for (std::size_t k = 0; k < keyed.size(); ++k) out.list()->items[k] = keyed[k].second;
    return true;
  }
  if (name == "unique") {
    list_object items;
    if (!iterate(in, items)) return false;
    const bool cs = call.flag(0, "case_sensitive");
    const value* attribute = call.arg(1, "attribute");
    value seen;  // the keys so far, as a dict's (hashed) keys
    if (!make_dict(0, seen)) return false;
    std::vector<value> kept;
    for (std::uint32_t k = 0; k < items.size; ++k) {
      value v = items.items[k], key;
      if (attribute && !b.attr_path(v, *attribute, v)) return false;
      if (!hashable(v) || !b.key_of(v, cs, key)) return false;
      if (!find_key(seen.dict(), key)) {
        if (!dict_append(seen.dict(), key, value::none())) return false;
        kept.push_back(items.items[k]);
      }
    }
    value l;
    if (!make_list(kept.size(), l)) return false;
    std::copy(kept.begin(), kept.end(), l.list()->items);
    return b.generator(*l.list(), out);
  }
  if (name == "min" || name == "max") {
    list_object items;
    if (!iterate(in, items)) return false;
    if (items.size == 0) return out = undefined_msg("No aggregated item, sequence was empty."), true;
    const bool cs = call.flag(0, "case_sensitive");
    const value* attribute = call.arg(1, "attribute");
    std::size_t best = 0;
    value best_key;
    for (std::uint32_t k = 0; k < items.size; ++k) {
      value v = items.items[k], key;
      if (attribute && !b.attr_path(v, *attribute, v)) return false;
      if (!b.key_of(v, cs, key)) return false;
      if (k == 0) {
        best_key = key;
        continue;
      }
      const order o = compare(key, best_key);
      if (o == order::too_deep) return too_deep_value();
      if (o == order::none) {
        return type_error(std::string("'<' not supported between instances of '") + type_name(key) + "' and '" +
                          type_name(best_key) + "'");
      }
      if ((name == "min" && o == order::less) || (name == "max" && o == order::greater)) {
        best = k;
        best_key = key;
      }
    }
    out = items.items[best];
    return true;
  }
  if (name == "sum") {
    list_object items;
    if (!iterate(in, items)) return false;
    const value* attribute = call.arg(0, "attribute");
    const value* start = call.arg(1, "start");
    value total = start ? *start : value::integer(0);
    if (total.type == vt::string) return type_error("sum() can't sum strings [use ''.join(seq) instead]");
    for (std::uint32_t k = 0; k < items.size; ++k) {
      value v = items.items[k];
      if (attribute && attribute->type != vt::none && !b.attr_path(v, *attribute, v)) return false;
      if (!binary(op::add, total, v, total)) return false;
    }
    out = total;
    return true;
  }
  if (name == "batch" || name == "slice") {
    std::int64_t n = 0;
    if (!call.int_arg(0, name == "batch" ? "linecount" : "slices", 0, n)) return false;
    const value* fill = call.arg(1, "fill_with");
    list_object items;
    if (!iterate(in, items)) return false;
    std::vector<value> groups;
    const auto group = [&](std::uint64_t from, std::uint64_t to, std::uint64_t padded_to) {
      value g;
      if (!charge(padded_to - from) || !make_list(padded_to - from, g)) return false;
      for (std::uint64_t k = from; k < padded_to; ++k) g.list()->items[k - from] = k < to ? items.items[k] : *fill;
      groups.push_back(g);
      return true;
    };
    if (n <= 0)
      return fail(error_info::kind::value,
                  name == "batch" ? "the batch size must be positive" : "range() arg 3 must not be zero");
    // batch(10**9, fill) pads to 10**9 items, slice(10**9) makes 10**9 lists: refused before they are made
    const std::uint64_t most = limits_.max_memory / sizeof(value);
    const bool padded = fill && fill->type != vt::none;
    if (static_cast<std::uint64_t>(n) > most && (name == "slice" || (padded && items.size))) return out_of_memory();
    if (name == "batch") {
      const auto size = static_cast<std::uint64_t>(n);
      for (std::uint64_t k = 0; k < items.size; k += size) {
        const std::uint64_t to = std::min<std::uint64_t>(items.size, k + size);
        if (!group(k, to, padded && to - k < size ? k + size : to)) return false;
      }
    } else {
      const std::int64_t len = items.size, per = len / n, extra = len % n;
      std::int64_t offset = 0;
      for (std::int64_t s = 0; s < n; ++s) {
        const std::int64_t start = offset + s * per;
        if (s < extra) ++offset;
        const std::int64_t end = offset + (s + 1) * per;
        if (!group(static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(end),
                   static_cast<std::uint64_t>(end + (padded && s >= extra ? 1 : 0)))) {
          return false;
        }
      }
    }
    value l;
    if (!make_list(groups.size(), l)) return false;
    std::copy(groups.begin(), groups.end(), l.list()->items);
    return b.generator(*l.list(), out);
  }
  if (name == "attr") {
    const value* n = call.arg(0, "name");
    if (!n || n->type != vt::string) return type_error("attr's name must be a string");
    if (in.type == vt::undefined) return undefined_error(in);
    bool found = false;
    if (!method_of(in, n->str(), out, found)) return false;
    if (found) return true;
    if (in.type == vt::ns || in.type == vt::loop || in.type == vt::macro || in.type == vt::cycler) {
      return get_attr(in, *n, out);
    }
    out = missing(in, *n);
    return true;
  }
  if (name == "groupby") {
    const value* attribute = call.arg(0, "attribute");
    if (!attribute) return type_error("groupby needs an attribute");
    const value* dflt = call.arg(1, "default");
    const bool cs = call.flag(2, "case_sensitive");
    list_object items;
    if (!iterate(in, items)) return false;
    std::vector<std::pair<value, value>> keyed;
    for (std::uint32_t k = 0; k < items.size; ++k) {
      value v, key;
      if (!b.attr_path(items.items[k], *attribute, v, dflt && dflt->type != vt::none ? dflt : nullptr)) return false;
      if (!b.key_of(v, cs, key)) return false;
      keyed.emplace_back(key, items.items[k]);
    }
    if (!b.sort(keyed, false)) return false;
    std::vector<value> groups;
    for (std::size_t k = 0; k < keyed.size();) {
      std::size_t e = k;
      for (bool eq = true; e < keyed.size() && eq;) {
        if (!same_as(keyed[e].first, keyed[k].first, eq)) return false;
        if (eq) ++e;
      }
      value members, g, grouper;
      if (!make_list(e - k, members)) return false;
      for (std::size_t j = k; j < e; ++j) members.list()->items[j - k] = keyed[j].second;
      if (!b.attr_path(keyed[k].second, *attribute, grouper, dflt && dflt->type != vt::none ? dflt : nullptr))
        return false;
      if (!make_list(2, g, vt::tuple)) return false;
      g.x = 1;  // Jinja2's _GroupTuple: .grouper and .list, printed as a plain tuple
      g.list()->items[0] = cs ? keyed[k].first : grouper;
      g.list()->items[1] = members;
      groups.push_back(g);
      k = e;
    }
    if (!make_list(groups.size(), out)) return false;
    std::copy(groups.begin(), groups.end(), out.list()->items);
    return true;
  }
  return fail(error_info::kind::runtime, "No filter named '" + std::string(name) + "' found.");
}

// filters on numbers
inline bool renderer::filter_number(std::string_view name, const value& in, const detail::filter_call& call,
                                    value& out) {
  [[maybe_unused]] const std::vector<value>& args = call.a.args;
  [[maybe_unused]] const auto& kwargs = call.a.kwargs;

  if (name == "int") {
    const value* dv = call.arg(0, "default");
    std::int64_t base = 10;
    if (!call.int_arg(1, "base", 10, base)) return false;
    const value dflt = dv ? *dv : value::integer(0);
    if (in.type == vt::string) {
      std::int64_t i = 0;
      if (detail::parse_py_int(in.str(), static_cast<int>(base), i)) return out = value::integer(i), true;
      double d = 0;
      if (detail::parse_py_float(in.str(), d) && std::isfinite(d) && std::fabs(d) < 9.2e18) {
        return out = value::integer(static_cast<std::int64_t>(d)), true;
      }
      out = dflt;
      return true;
    }
    if (in.is_int()) return out = value::integer(in.as_int()), true;
    if (in.type == vt::floating) {
      if (!std::isfinite(in.u.f) || std::fabs(in.u.f) >= 9.2e18) {
        out = dflt;
        return true;
      }
      return out = value::integer(static_cast<std::int64_t>(in.u.f)), true;
    }
    out = dflt;
    return true;
  }
  if (name == "float") {
    const value* dv = call.arg(0, "default");
    const value dflt = dv ? *dv : value::floating(0.0);
    if (in.type == vt::string) {
      double d = 0;
      out = detail::parse_py_float(in.str(), d) ? value::floating(d) : dflt;
      return true;
    }
    if (in.is_number()) return out = value::floating(in.as_double()), true;
    out = dflt;
    return true;
  }
  if (name == "abs") {
    if (in.type == vt::floating) return out = value::floating(std::fabs(in.u.f)), true;
    if (in.is_int()) {
      if (in.as_int() == INT64_MIN) return fail(error_info::kind::overflow, "integer overflow");
      return out = value::integer(in.as_int() < 0 ? -in.as_int() : in.as_int()), true;
    }
    if (in.type == vt::undefined) return undefined_error(in);
    return type_error(std::string("bad operand type for abs(): '") + type_name(in) + "'");
  }
  if (name == "round") {
    std::int64_t precision = 0;
    if (!call.int_arg(0, "precision", 0, precision)) return false;
    const value* mv = call.arg(1, "method");
    std::string_view method = mv && mv->type == vt::string ? mv->str() : "common";
    if (method != "common" && method != "ceil" && method != "floor") {
      return fail(error_info::kind::runtime, "method must be common, ceil or floor");
    }
    if (in.type == vt::undefined) return undefined_error(in);
    if (!in.is_number()) return type_error(std::string("type ") + type_name(in) + " doesn't define __round__ method");
    if (method == "common") {
      if (in.is_int()) {  // round(int, n): unchanged for n >= 0
        if (precision >= 0) return out = value::integer(in.as_int()), true;
        double p = std::pow(10.0, static_cast<double>(-precision));
        const double q = std::nearbyint(static_cast<double>(in.as_int()) / p) * p;
        return out = value::integer(static_cast<std::int64_t>(q)), true;
      }
      const double x = in.u.f;
      if (!std::isfinite(x)) return out = in, true;
      if (precision > 300 || precision < -300) return out = in, true;
      char buf[512];
      double r = 0;
      if (precision >= 0) {  // printf rounds the exact binary value half-even, as CPython's round
        std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(precision), x);
        std::from_chars(buf, buf + std::strlen(buf), r);
        if (buf[0] == '-' && r == 0) r = -0.0;
      } else {
        const double p = std::pow(10.0, static_cast<double>(-precision));
        r = std::nearbyint(x / p) * p;
      }
      out = value::floating(r);
      return true;
    }
    const double p = std::pow(10.0, static_cast<double>(precision));
    const double x = in.as_double() * p;
    out = value::floating((method == "ceil" ? std::ceil(x) : std::floor(x)) / p);
    return true;
  }
  return fail(error_info::kind::runtime, "No filter named '" + std::string(name) + "' found.");
}

// ---- tests --------------------------------------------------------------------------------------

inline bool renderer::apply_test(const node* n, const value& input, frame* f, bool& out) {
  call_args a(arg_lists_);
  if (!eval_args(n, f, a->args, a->kwargs)) return false;
  for (const auto& kv : a->kwargs) a->args.push_back(kv.second);
  line_ = n->line;
  return test_by_name(n->text, input, a->args, out);
}

inline bool renderer::test_by_name(std::string_view name, const value& v, const std::vector<value>& args, bool& out) {
  const auto need = [&](std::size_t n) {
    if (args.size() < n) return type_error("the test '" + std::string(name) + "' takes an argument");
    return true;
  };
  const auto cmp = [&](op o) {
    if (!need(1)) return false;
    return compare_op(o, v, args[0], out);
  };
  if (name == "defined") return out = v.type != vt::undefined, true;
  if (name == "undefined") return out = v.type == vt::undefined, true;
  if (name == "none") return out = v.type == vt::none, true;
  if (name == "string") return out = v.type == vt::string, true;
  if (name == "mapping") return out = v.type == vt::dict, true;
  if (name == "boolean") return out = v.type == vt::boolean, true;
  if (name == "true") return out = v.type == vt::boolean && v.u.b, true;
  if (name == "false") return out = v.type == vt::boolean && !v.u.b, true;
  if (name == "integer") return out = v.type == vt::integer || v.type == vt::big_integer, true;
  if (name == "float") return out = v.type == vt::floating, true;
  if (name == "number") return out = v.is_number() || v.type == vt::big_integer, true;
  if (name == "sequence") {  // len() and __getitem__
    out = v.type == vt::string || v.type == vt::list || v.type == vt::tuple || v.type == vt::dict ||
          v.type == vt::range || v.type == vt::undefined;
    return true;
  }
  if (name == "iterable") {
    out = v.type == vt::string || v.type == vt::list || v.type == vt::tuple || v.type == vt::dict ||
          v.type == vt::range || v.type == vt::view || v.type == vt::generator || v.type == vt::undefined;
    return true;
  }
  if (name == "callable") {
    out = v.type == vt::macro || v.type == vt::function || v.type == vt::method || v.type == vt::loop ||
          v.type == vt::joiner;
    return true;
  }
  if (name == "escaped") return out = v.type == vt::string && v.x == 1, true;
  if (name == "lower" || name == "upper") {
    std::string s;
    if (v.type == vt::undefined && v.x == 1) return undefined_error(v);
    if (!str_to(s, v)) return false;
    out = py::is_case(s, name == "upper");
    return true;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    value m;
    const value divisor = name == "divisibleby" ? (need(1) ? args[0] : value::integer(1)) : value::integer(2);
    if (name == "divisibleby" && args.empty()) return false;
    if (!binary(op::mod, v, divisor, m)) return false;
    const value target = value::integer(name == "odd" ? 1 : 0);
    out = equal(m, target) == same::yes;  // numbers
    return true;
  }
  if (name == "sameas") {
    if (!need(1)) return false;
    const value& o = args[0];
    if (v.type != o.type) return out = false, true;
    switch (v.type) {
      case vt::none:
      case vt::undefined: out = v.type == vt::none; return true;
      case vt::boolean: out = v.u.b == o.u.b; return true;
      case vt::integer: out = v.u.i == o.u.i && v.u.i >= -5 && v.u.i <= 256; return true;  // CPython's small ints
      case vt::string: out = v.u.s == o.u.s && v.len == o.len; return true;
      default: out = v.u.p == o.u.p; return true;
    }
  }
  if (name == "in") {
    if (!need(1)) return false;
    return contains(args[0], v, out);
  }
  if (name == "==" || name == "eq" || name == "equalto") return cmp(op::eq);
  if (name == "!=" || name == "ne") return cmp(op::ne);
  if (name == "<" || name == "lt" || name == "lessthan") return cmp(op::lt);
  if (name == "<=" || name == "le") return cmp(op::le);
  if (name == ">" || name == "gt" || name == "greaterthan") return cmp(op::gt);
  if (name == ">=" || name == "ge") return cmp(op::ge);
  if (name == "filter") return out = v.type == vt::string && is_filter_name(v.str()), true;
  if (name == "test") return out = v.type == vt::string && is_test_name(v.str()), true;
  return fail(error_info::kind::runtime, "No test named '" + std::string(name) + "' found.");
}

// ---- % and str.format -----------------------------------------------------------------------------

namespace detail {
struct format_spec {
  char fill = ' ';
  std::string fill_text = " ";
  char align = 0;  // < > ^ =
  char sign = '-';
  bool alt = false, zero = false, grouping = false;
  std::int64_t width = -1, precision = -1;
  char type = 0;
};

// a number in a printf conversion (d, i, f, e, g, x, o, ...): its text without padding
inline bool format_number(const value& v, char conv, std::int64_t precision, bool alt, std::string& out,
                          std::string& err) {
  char buf[64];
  const int p = precision < 0 ? -1 : static_cast<int>(std::min<std::int64_t>(precision, 1 << 24));
  switch (conv) {
    case 'd':
    case 'i':
    case 'u':
      if (v.type == vt::floating) {
        if (!std::isfinite(v.u.f)) {
          err = "cannot convert float infinity to integer";
          return false;
        }
        append_int(out, static_cast<std::int64_t>(v.u.f));
      } else {
        append_int(out, v.as_int());
      }
      return true;
    case 'x':
    case 'X':
    case 'o': {
      if (v.type == vt::floating) {
        err = std::string("%") + conv + " format: an integer is required, not float";
        return false;
      }
      const std::int64_t i = v.as_int();
      const std::uint64_t u = i < 0 ? static_cast<std::uint64_t>(-(i + 1)) + 1 : static_cast<std::uint64_t>(i);
      if (i < 0) out += '-';
      if (alt) out += conv == 'o' ? "0o" : conv == 'x' ? "0x" : "0X";
      std::snprintf(buf, sizeof buf,
                    conv == 'o'   ? "%llo"
                    : conv == 'x' ? "%llx"
                                  : "%llX",
                    static_cast<unsigned long long>(u));
      out += buf;
      return true;
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': break;
    default:
      err = std::string("Unknown format code '") + conv + "' for object of type '" + type_name(v) + "'";
      return false;
  }
  const double d = v.as_double();
  if (std::isnan(d) || std::isinf(d)) {
    std::string t = std::isnan(d) ? "nan" : (d < 0 ? "-inf" : "inf");
    if (conv == 'E' || conv == 'F' || conv == 'G')
      for (char& c : t) c = static_cast<char>(std::toupper(c));
    out += t;
    return true;
  }
  char f[8] = {'%'};
  std::size_t k = 1;
  if (alt) f[k++] = '#';
  f[k++] = '.';
  f[k++] = '*';
  f[k++] = conv;
  f[k] = 0;
  const int n = std::snprintf(nullptr, 0, f, p < 0 ? 6 : p, d);  // %.400f of 1e308 is 710 characters
  if (n <= 0) return true;
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(n) + 1);
  std::snprintf(out.data() + at, static_cast<std::size_t>(n) + 1, f, p < 0 ? 6 : p, d);
  out.resize(at + static_cast<std::size_t>(n));
  return true;
}
}  // namespace detail

inline bool renderer::percent_format(std::string_view fmt, const value& argv, value& out) {
  // Python's printf-style formatting: a tuple gives the arguments in order, a dict by %(name)s, else one value
  std::vector<value> args;
  const dict_object* mapping = nullptr;
  if (argv.type == vt::tuple) {
    const list_object* l = argv.list();
    args.assign(l->items, l->items + l->size);
  } else if (argv.type == vt::dict) {
    mapping = argv.dict();
    args.push_back(argv);
  } else {
    args.push_back(argv);
  }
  std::size_t next = 0;
  bool used_mapping = false;
  std::string r;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      r += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) return fail(error_info::kind::value, "incomplete format");
    const value* arg = nullptr;
    if (fmt[i] == '(') {
      const std::size_t close = fmt.find(')', i);
      if (close == std::string_view::npos) return fail(error_info::kind::value, "incomplete format key");
      if (!mapping) return type_error("format requires a mapping");
      const std::string_view key = fmt.substr(i + 1, close - i - 1);
      for (std::uint32_t k = 0; k < mapping->size; ++k)
        if (mapping->keys[k].type == vt::string && mapping->keys[k].str() == key) arg = &mapping->values[k];
      if (!arg) {
        std::string msg;
        py::append_repr(msg, key);
        return fail(error_info::kind::key, msg);
      }
      used_mapping = true;
      i = close + 1;
    }
    bool left = false, plus = false, space = false, alt = false, zero = false;
    for (; i < fmt.size(); ++i) {
      const char c = fmt[i];
      if (c == '-') {
        left = true;
      } else if (c == '+') {
        plus = true;
      } else if (c == ' ') {
        space = true;
      } else if (c == '#') {
        alt = true;
      } else if (c == '0') {
        zero = true;
      } else {
        break;
      }
    }
    const auto number = [&](std::int64_t& n) {
      if (i < fmt.size() && fmt[i] == '*') {
        ++i;
        if (next >= args.size() || !args[next].is_int()) return type_error("* wants int");
        n = args[next++].as_int();
        return true;
      }
      n = -1;
      // digits beyond 10**15 saturate (the output limit refuses such a width anyway)
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9')
        n = std::min<std::int64_t>(std::max<std::int64_t>(n, 0) * 10 + (fmt[i++] - '0'), std::int64_t{1} << 50);
      return true;
    };
    std::int64_t width = -1, precision = -1;
    if (!number(width)) return false;
    if (width < -1) {
      left = true;
      width = -width;
    }
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      if (!number(precision)) return false;
      if (precision < 0) precision = 0;
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) return fail(error_info::kind::value, "incomplete format");
    const char conv = fmt[i];
    if (conv == '%') {
      r += '%';
      continue;
    }
    if (!arg) {
      if (next >= args.size()) return type_error("not enough arguments for format string");
      arg = &args[next++];
    }
    std::string body;
    bool numeric = false;
    switch (conv) {
      case 's':
      case 'r':
      case 'a':
        if (!(conv == 's' ? str_to(body, *arg) : repr_to(body, *arg))) return false;
        if (precision >= 0)
          body =
              std::string(std::string_view(body).substr(0, py::offset_of(body, static_cast<std::size_t>(precision))));
        break;
      case 'c':
        if (arg->is_int()) {
          if (arg->as_int() < 0 || arg->as_int() > 0x10FFFF)
            return fail(error_info::kind::overflow, "%c arg not in range(0x110000)");
          py::append(body, static_cast<char32_t>(arg->as_int()));
        } else if (arg->type == vt::string && py::length(arg->str()) == 1) {
          body = std::string(arg->str());
        } else {
          return type_error("%c requires int or char");
        }
        break;
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o':
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': {
        if (arg->type == vt::undefined) return undefined_error(*arg);
        if (!arg->is_number()) {
          return type_error(std::string("%") + conv + " format: a real number is required, not " + type_name(*arg));
        }
        std::string err;
        if (!detail::format_number(*arg, conv, precision, alt, body, err)) return type_error(err);
        numeric = true;
        if (body[0] != '-') {
          if (plus) {
            body.insert(0, 1, '+');
          } else if (space) {
            body.insert(0, 1, ' ');
          }
        }
        break;
      }
      default: return fail(error_info::kind::value, std::string("unsupported format character '") + conv + "'");
    }
    const auto n = static_cast<std::int64_t>(py::length(body));
    if (width > n) {
      if (!fits(r.size() + body.size() + static_cast<std::uint64_t>(width - n))) return false;
      const std::size_t pad = static_cast<std::size_t>(width - n);
      if (left) {
        body.append(pad, ' ');
      } else if (zero && numeric) {
        const std::size_t at = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
        body.insert(at, pad, '0');
      } else {
        body.insert(0, pad, ' ');
      }
    }
    r += body;
    if (r.size() > limits_.max_output) return fail(error_info::kind::limit, "a string larger than the output limit");
  }
  if (!mapping && next < args.size()) return type_error("not all arguments converted during string formatting");
  (void)used_mapping;
  return make_string(r, out);
}

inline bool renderer::str_format(std::string_view fmt, const std::vector<value>& args,
                                 const std::vector<std::pair<std::string_view, value>>& kwargs, value& out) {
  std::string r;
  std::size_t auto_index = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        r += '}';
        ++i;
        continue;
      }
      return fail(error_info::kind::value, "Single '}' encountered in format string");
    }
    if (c != '{') {
      r += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      r += '{';
      ++i;
      continue;
    }
    const std::size_t close = fmt.find('}', i);
    if (close == std::string_view::npos)
      return fail(error_info::kind::value, "Single '{' encountered in format string");
    std::string_view field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string_view spec, conversion;
    if (const std::size_t colon = field.find(':'); colon != std::string_view::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const std::size_t bang = field.find('!'); bang != std::string_view::npos) {
      conversion = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    // the argument: a number, a name, or the next one; then .attr and [key] parts
    std::size_t end = 0;
    while (end < field.size() && field[end] != '.' && field[end] != '[') ++end;
    const std::string_view head = field.substr(0, end);
    value v;
    if (head.empty()) {
      if (auto_index >= args.size())
        return fail(error_info::kind::index,
                    "Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      v = args[auto_index++];
    } else if (std::isdigit(static_cast<unsigned char>(head[0]))) {
      std::size_t k = 0;
      std::from_chars(head.data(), head.data() + head.size(), k);
      if (k >= args.size())
        return fail(error_info::kind::index,
                    "Replacement index " + std::to_string(k) + " out of range for positional args tuple");
      v = args[k];
    } else {
      bool found = false;
      for (const auto& [n, x] : kwargs) {
        if (n == head) {
          v = x;
          found = true;
        }
      }
      if (!found) {
        std::string msg;
        py::append_repr(msg, head);
        return fail(error_info::kind::key, msg);
      }
    }
    for (std::string_view rest = field.substr(end); !rest.empty();) {
      if (rest[0] == '.') {
        std::size_t e = 1;
        while (e < rest.size() && rest[e] != '.' && rest[e] != '[') ++e;
        if (!get_attr(v, value::string(rest.substr(1, e - 1)), v)) return false;
        rest.remove_prefix(e);
      } else {
        const std::size_t e = rest.find(']');
        if (e == std::string_view::npos) return fail(error_info::kind::value, "Missing ']' in format string");
        const std::string_view key = rest.substr(1, e - 1);
        value k = value::string(key);
        if (!key.empty() && py::is_all(key, py::predicate::decimal) && py::is_ascii(key)) {
          std::int64_t n = 0;
          std::from_chars(key.data(), key.data() + key.size(), n);
          k = value::integer(n);
        }
        if (!get_item(v, k, v)) return false;
        rest.remove_prefix(e + 1);
      }
    }
    std::string text;
    if (conversion == "r" || conversion == "a") {
      if (!repr_to(text, v)) return false;
      value s;
      if (!make_string(text, s)) return false;
      v = s;
    } else if (conversion == "s") {
      if (!str_to(text, v)) return false;
      value s;
      if (!make_string(text, s)) return false;
      v = s;
    }
    // the format spec: [[fill]align][sign][#][0][width][,][.precision][type]
    detail::format_spec fs;
    std::size_t k = 0;
    const auto is_align = [](char x) { return x == '<' || x == '>' || x == '^' || x == '='; };
    std::size_t first_len = 0;
    if (!spec.empty()) (void)py::decode_at(spec, 0, first_len);
    if (spec.size() > first_len && is_align(spec[first_len])) {
      fs.fill_text = std::string(spec.substr(0, first_len));
      fs.align = spec[first_len];
      k = first_len + 1;
    } else if (!spec.empty() && is_align(spec[0])) {
      fs.align = spec[0];
      k = 1;
    }
    if (k < spec.size() && (spec[k] == '+' || spec[k] == '-' || spec[k] == ' ')) fs.sign = spec[k++];
    if (k < spec.size() && spec[k] == '#') fs.alt = true, ++k;
    if (k < spec.size() && spec[k] == '0') fs.zero = true, ++k;
    while (k < spec.size() && std::isdigit(static_cast<unsigned char>(spec[k])))
      fs.width =
          std::min<std::int64_t>(std::max<std::int64_t>(fs.width, 0) * 10 + (spec[k++] - '0'), std::int64_t{1} << 50);
    if (k < spec.size() && (spec[k] == ',' || spec[k] == '_')) fs.grouping = true, ++k;
    if (k < spec.size() && spec[k] == '.') {
      ++k;
      fs.precision = 0;
      while (k < spec.size() && std::isdigit(static_cast<unsigned char>(spec[k])))
        fs.precision = std::min<std::int64_t>(fs.precision * 10 + (spec[k++] - '0'), std::int64_t{1} << 50);
    }
    if (k < spec.size()) fs.type = spec[k++];
    if (k != spec.size()) return fail(error_info::kind::value, "Invalid format specifier");
    std::string body;
    bool numeric = false;
    if (v.is_number() && fs.type != 's') {
      numeric = true;
      char t = fs.type;
      if (t == 0) {
        if (v.type == vt::floating) {
          if (fs.precision < 0) {
            append_float(body, v.u.f);
          } else {
            t = 'g';
          }
        } else {
          append_int(body, v.as_int());
        }
      }
      if (t == 'n') t = v.type == vt::floating ? 'g' : 'd';
      if (t == 'c') {
        if (v.type == vt::floating) {
          return fail(error_info::kind::value, "Unknown format code 'c' for object of type 'float'");
        }
        if (v.as_int() < 0 || v.as_int() > 0x10FFFF)
          return fail(error_info::kind::overflow, "%c arg not in range(0x110000)");
        py::append(body, static_cast<char32_t>(v.as_int()));
        numeric = false;
      } else if (t == 'b') {
        const std::int64_t n = v.as_int();
        std::uint64_t u = n < 0 ? static_cast<std::uint64_t>(-(n + 1)) + 1 : static_cast<std::uint64_t>(n);
        std::string bits;
        do {
          bits.insert(bits.begin(), static_cast<char>('0' + (u & 1)));
          u >>= 1;
        } while (u);
        body = (n < 0 ? "-" : "") + std::string(fs.alt ? "0b" : "") + bits;
      } else if (t == '%') {
        const int p = static_cast<int>(std::min<std::int64_t>(fs.precision < 0 ? 6 : fs.precision, 1 << 24));
        const double x = v.as_double() * 100;
        const int len = std::snprintf(nullptr, 0, "%.*f", p, x);
        if (len < 0 || !fits(static_cast<std::uint64_t>(len) + 1)) return false;
        body.resize(static_cast<std::size_t>(len) + 1);
        std::snprintf(body.data(), body.size(), "%.*f", p, x);
        body.back() = '%';
      } else if (t != 0) {
        std::string err;
        if (!detail::format_number(v, t, fs.precision, fs.alt, body, err)) return fail(error_info::kind::value, err);
        if (fs.type == 0 && v.type == vt::floating && fs.precision >= 0) {
          // the default float presentation with a precision: 'g' but at least one digit after the point
          if (body.find_first_of(".einEIN") == std::string::npos) body += ".0";
        }
      }
      if (fs.grouping) {
        const std::size_t start = (body[0] == '-') ? 1 : 0;
        std::size_t digits_end = start;
        while (digits_end < body.size() && std::isdigit(static_cast<unsigned char>(body[digits_end]))) ++digits_end;
        for (std::ptrdiff_t p = static_cast<std::ptrdiff_t>(digits_end) - 3; p > static_cast<std::ptrdiff_t>(start);
             p -= 3) {
          body.insert(static_cast<std::size_t>(p), 1, spec.find('_') != std::string_view::npos ? '_' : ',');
        }
      }
      if (body[0] != '-' && fs.sign != '-') body.insert(0, 1, fs.sign);
    } else {
      if (fs.type != 0 && fs.type != 's') {
        return fail(error_info::kind::value,
                    std::string("Unknown format code '") + fs.type + "' for object of type '" + type_name(v) + "'");
      }
      if (!str_to(body, v)) return false;
      if (fs.precision >= 0)
        body =
            std::string(std::string_view(body).substr(0, py::offset_of(body, static_cast<std::size_t>(fs.precision))));
    }
    const auto n = static_cast<std::int64_t>(py::length(body));
    if (fs.width > n) {
      if (!fits(r.size() + body.size() +
                static_cast<std::uint64_t>(fs.width - n) * std::max<std::size_t>(1, fs.fill_text.size())))
        return false;
      const auto pad = static_cast<std::size_t>(fs.width - n);
      char align = fs.align ? fs.align : (numeric ? '>' : '<');
      std::string fill = fs.fill_text;
      if (fs.zero && !fs.align) {
        align = numeric ? '=' : '<';
        fill = "0";
      }
      const auto rep = [&](std::size_t times) {
        std::string s;
        for (std::size_t t = 0; t < times; ++t) s += fill;
        return s;
      };
      if (align == '<') {
        body += rep(pad);
      } else if (align == '>') {
        body.insert(0, rep(pad));
      } else if (align == '^') {
        body.insert(0, rep(pad / 2));
        body += rep(pad - pad / 2);
      } else {  // '=': after the sign
        const std::size_t at = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
        body.insert(at, rep(pad));
      }
    }
    r += body;
    if (r.size() > limits_.max_output) return fail(error_info::kind::limit, "a string larger than the output limit");
  }
  return make_string(r, out);
}

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_FILTERS_HPP
