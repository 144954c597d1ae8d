// pygguf._core.ChatTemplate: a compiled chat template (gguf::chat_template), rendered from Python objects
// made straight into the template's values (no JSON in between), with the GIL released once a render
// turns out long.
#include <gguf/chat_template.hpp>
#include <gguf/jinja/engine.hpp>  // detail::render_session: header-only, like the rest of pygguf
#include <gguf/json.hpp>

#include <algorithm>
#include <array>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core.hpp"

namespace pygguf {

namespace {

// How deep a context's dicts and lists may nest: the library refuses deeper ones (a "limit" error), and
// a recursive conversion this deep stays far from the end of the stack.
constexpr unsigned max_depth = 512;

// pygguf.TemplateError, defined in Python (pygguf/_errors.py); looked up once and never released.
PyObject* template_error_class() {
  static PyObject* cls = py::object(py::module_::import("pygguf._errors").attr("TemplateError")).release().ptr();
  return cls;
}

[[noreturn]] void raise_template_error(const char* kind, std::string_view message, std::uint32_t line) {
  const py::object err = py::reinterpret_borrow<py::object>(template_error_class())(
      py::str(kind), decode_utf8(message, "backslashreplace"),
      line ? py::object(py::int_(line)) : py::object(py::none()));
  PyErr_SetObject(template_error_class(), err.ptr());
  throw py::error_already_set();
}

[[noreturn]] void raise_template_error(const gguf::template_error& e) {
  raise_template_error(e.name(), e.message, e.line);
}

// A value that cannot go into a template: the exception to raise (nullptr: a TemplateError "limit"), its
// message, and the path to it (innermost segment first, added to as the conversion unwinds).
struct bad_value {
  PyObject* type;
  std::string message;
  std::vector<std::string> path;
};

// A str's UTF-8 (CPython keeps it in the object: no encoding after the first time; an ASCII str's
// characters are its UTF-8). A str with lone surrogates has none: the library renders UTF-8 only.
std::string_view utf8_of(PyObject* s) {
  if (PyUnicode_IS_COMPACT_ASCII(s)) {
    return {static_cast<const char*>(PyUnicode_DATA(s)), static_cast<std::size_t>(PyUnicode_GET_LENGTH(s))};
  }
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (!p) {
    PyErr_Clear();
    throw bad_value{PyExc_ValueError, " is a str with lone surrogates: a template's text is UTF-8", {}};
  }
  return {p, static_cast<std::size_t>(n)};
}

// A stack of pointers whose first N live in the object: a small context's conversion allocates none.
template <std::size_t N>
class small_stack {
 public:
  small_stack() = default;
  small_stack(const small_stack&) = delete;
  small_stack& operator=(const small_stack&) = delete;
  small_stack(small_stack&&) = delete;
  small_stack& operator=(small_stack&&) = delete;
  void push(PyObject* p) {
    if (size_ < N) {
      inline_[size_] = p;
    } else {
      more_.push_back(p);
    }
    ++size_;
  }
  void pop() noexcept {
    if (size_ > N) more_.pop_back();
    --size_;
  }
  bool contains(PyObject* p) const noexcept {
    const std::size_t k = std::min(size_, N);
    for (std::size_t i = 0; i < k; ++i) {  // a few: a plain loop (std::find's unrolling costs more)
      if (inline_[i] == p) return true;
    }
    return size_ > N && std::find(more_.begin(), more_.end(), p) != more_.end();
  }
  template <class F>
  void for_each(F f) const {
    for (std::size_t k = 0; k < std::min(size_, N); ++k) f(inline_[k]);
    for (PyObject* p : more_) f(p);
  }

 private:
  std::array<PyObject*, N> inline_;  // the first size_ are set (not cleared: 2 KiB a render)
  std::vector<PyObject*> more_;
  std::size_t size_ = 0;
};

// A strong reference for a scope (Py_XDECREF inline: pybind11's is a call).
struct reference {
  explicit reference(PyObject* o) noexcept : p(o) { Py_XINCREF(o); }
  reference(const reference&) = delete;
  reference& operator=(const reference&) = delete;
  reference(reference&&) = delete;
  reference& operator=(reference&&) = delete;
  ~reference() { Py_XDECREF(p); }
  PyObject* p;
};

// The strs a render's values point into, each held (a reference) until the render is over: the GIL may
// be released while it renders, and another thread may then drop a str from a list or dict it converted.
// A str is immutable and its UTF-8 lives as long as it does, so holding it costs less than a copy.
class pinned_strs {
 public:
  pinned_strs() = default;
  pinned_strs(const pinned_strs&) = delete;
  pinned_strs& operator=(const pinned_strs&) = delete;
  pinned_strs(pinned_strs&&) = delete;
  pinned_strs& operator=(pinned_strs&&) = delete;
  ~pinned_strs() {  // with the GIL (the render has taken it back)
    held_.for_each([](PyObject* s) { Py_DECREF(s); });
  }
  void hold(PyObject* s) {
    held_.push(s);  // first: a push that throws leaves no reference behind
    Py_INCREF(s);
  }

 private:
  small_stack<256> held_;  // a conversation with tools has a hundred or two
};

// Python objects as the template's values, made directly on the render's renderer (no gguf::json in
// between): dict (its order kept; str keys), list and tuple (a list), str, int (beyond 64 bits as its
// digits), float, bool, None, and the subclasses of each. A short str's value points into the str
// itself, which `pins` holds until the render is over; a long one (4 KiB on) is copied into the render's
// arena, where the render's limits count it. Containers on the
// path being converted are remembered, so that a list or dict that contains itself is refused, not
// followed; the render's memory limit holds for what is made here.
class converter {
 public:
  converter(gguf::jinja::renderer& r, pinned_strs& pins) : r_(r), pins_(pins) {}

  gguf::jinja::value convert(PyObject* o, unsigned depth) {
    using gguf::jinja::value;
    value v;
    if (leaf(o, v)) return v;
    if (PyDict_Check(o)) return dict(o, depth);
    if (PyList_Check(o) || PyTuple_Check(o)) return list(o, depth);
    if (PyFloat_Check(o)) return value::floating(PyFloat_AS_DOUBLE(o));
    if (PyUnicode_Check(o)) return string(o);
    // int's subclasses (IntEnum) and the integers of other kinds (numpy's) as their value
    if (!PyBool_Check(o) && PyIndex_Check(o)) {
      const py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
      if (!i) throw py::error_already_set();
      return integer(i.ptr());
    }
    throw bad_value{PyExc_TypeError,
                    std::string(" is of type ") + Py_TYPE(o)->tp_name +
                        ": a template takes dict, list, tuple, str, int, float, bool and None",
                    {}};
  }

 private:
  gguf::jinja::renderer& r_;
  pinned_strs& pins_;
  small_stack<16> open_;  // the containers being converted

  // strings below this size point into their str; from it on, they are copied (and counted)
  static constexpr std::size_t copied_from = 4096;

  // The common leaves, exactly typed (no Python code runs): false for anything else. Inlined where
  // containers convert their items (most of them are leaves).
  bool leaf(PyObject* o, gguf::jinja::value& v) {
    using gguf::jinja::value;
    if (PyUnicode_CheckExact(o)) {
      v = string(o);
    } else if (o == Py_None) {
      v = value::none();
    } else if (o == Py_True || o == Py_False) {
      v = value::boolean(o == Py_True);
    } else if (PyLong_CheckExact(o)) {
      v = integer(o);
    } else if (PyFloat_CheckExact(o)) {
      v = value::floating(PyFloat_AS_DOUBLE(o));
    } else {
      return false;
    }
    return true;
  }

  // the renderer failed to make a value: past the render's memory limit (its error says so)
  [[noreturn]] static void limit() {
    throw bad_value{nullptr, "the context needs more memory than the render's limit", {}};
  }

  gguf::jinja::value string(std::string_view s) {
    gguf::jinja::value v;
    if (!r_.make_string(s, v)) limit();
    return v;
  }
  gguf::jinja::value string(PyObject* str) {
    if (PyUnicode_IS_COMPACT_ASCII(str) && PyUnicode_GET_LENGTH(str) < Py_ssize_t{copied_from}) {
      pins_.hold(str);  // the common case, inline
      return gguf::jinja::value::string(
          {static_cast<const char*>(PyUnicode_DATA(str)), static_cast<std::size_t>(PyUnicode_GET_LENGTH(str))});
    }
    return string_not_ascii(str);
  }
  GGUF_COLD gguf::jinja::value string_not_ascii(PyObject* str) {  // or long: apart, so that the above inlines
    const std::string_view s = utf8_of(str);
    if (s.size() >= copied_from) return string(s);
    pins_.hold(str);
    return gguf::jinja::value::string(s);
  }

  gguf::jinja::value integer(PyObject* o) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow == 0) return gguf::jinja::value::integer(static_cast<std::int64_t>(v));
    PyObject* s = PyObject_Str(o);
    if (!s) {  // more digits than sys.get_int_max_str_digits(): Python's ValueError, with the path
      const py::error_already_set e;
      throw bad_value{PyExc_ValueError, ": " + py::str(e.value()).cast<std::string>(), {}};
    }
    const py::object digits = py::reinterpret_steal<py::object>(s);
    gguf::jinja::value big = string(utf8_of(s));
    big.type = gguf::jinja::vt::big_integer;
    return big;
  }

  // Enters container `o`: refused when it is one of its own ancestors, or nested too deep.
  void enter(PyObject* o, unsigned depth) {
    if (depth >= max_depth) {
      throw bad_value{PyExc_ValueError, " is nested deeper than " + std::to_string(max_depth) + " levels", {}};
    }
    if (open_.contains(o)) {
      throw bad_value{PyExc_ValueError, " contains itself: a template's variables cannot be recursive", {}};
    }
    open_.push(o);
  }

  gguf::jinja::value list(PyObject* o, unsigned depth) {
    enter(o, depth);
    const bool is_list = PyList_Check(o);
    const auto size = [&] { return is_list ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o); };
    const Py_ssize_t n = size();
    gguf::jinja::value out;
    if (!r_.make_list(static_cast<std::size_t>(n), out)) limit();
    gguf::jinja::value* items = out.list()->items;
    for (Py_ssize_t i = 0; i < n; ++i) {
      // converting an item can run Python code (an __index__) that changes the list
      if (i >= size()) throw bad_value{PyExc_RuntimeError, " changed size while it was converted", {}};
      const py::object item =
          py::reinterpret_borrow<py::object>(is_list ? PyList_GET_ITEM(o, i) : PyTuple_GET_ITEM(o, i));
      try {
        if (!leaf(item.ptr(), items[i])) items[i] = convert(item.ptr(), depth + 1);
      } catch (bad_value& e) {
        e.path.push_back("[" + std::to_string(i) + "]");
        throw;
      }
    }
    open_.pop();
    return out;
  }

  gguf::jinja::value dict(PyObject* o, unsigned depth) {
    enter(o, depth);
    // a subclass (an OrderedDict) in its own order, from its items()
    py::object items;
    const bool exact = PyDict_CheckExact(o);
    if (!exact) {
      const py::object view = py::reinterpret_steal<py::object>(PyMapping_Items(o));
      if (!view) throw py::error_already_set();
      items = py::reinterpret_steal<py::object>(PySequence_List(view.ptr()));
      if (!items) throw py::error_already_set();
    }
    const auto n = static_cast<std::size_t>(items ? PyList_GET_SIZE(items.ptr()) : PyDict_GET_SIZE(o));
    gguf::jinja::value out;
    if (!r_.make_dict(n, out)) limit();
    gguf::jinja::dict_object* d = out.dict();
    const auto add = [&](PyObject* key, PyObject* value) {
      if (!PyUnicode_Check(key)) {
        throw bad_value{PyExc_TypeError,
                        " has a key of type " + std::string(Py_TYPE(key)->tp_name) + " (" +
                            py::repr(key).cast<std::string>() + "): a template's dict keys are str",
                        {}};
      }
      try {
        // the key held from here on (a long one is copied, and held for an error's path): converting a
        // value that is not a leaf can run Python code (an __index__) that changes the dict
        const gguf::jinja::value name = string(key);
        if (name.len >= copied_from) pins_.hold(key);
        gguf::jinja::value x;
        if (!leaf(value, x)) {
          const reference held(value);
          x = convert(value, depth + 1);
        }
        // a dict's str keys are distinct; a subclass's items() need not be
        if (!(exact && PyUnicode_CheckExact(key) ? r_.dict_append(d, name, x) : r_.dict_set(d, name, x))) limit();
      } catch (bad_value& e) {
        e.path.push_back("[" + py::repr(key).cast<std::string>() + "]");
        throw;
      }
    };
    if (items) {
      for (const py::handle item : items) add(PyTuple_GET_ITEM(item.ptr(), 0), PyTuple_GET_ITEM(item.ptr(), 1));
    } else {
      Py_ssize_t pos = 0;
      PyObject *k = nullptr, *v = nullptr;
      while (PyDict_Next(o, &pos, &k, &v)) add(k, v);
    }
    open_.pop();
    return out;
  }
};

// Releases the GIL when a render turns out long (the renderer's on_long_render: a few microseconds into
// it), and takes it back at the end of the scope. Releasing and taking it back costs as much as a small
// render's fifth, and holding it for a few microseconds keeps no other thread waiting.
class gil_released_when_long {
 public:
  explicit gil_released_when_long(gguf::jinja::renderer& r) noexcept {
    r.on_long_render([](void* self) { static_cast<gil_released_when_long*>(self)->state_ = PyEval_SaveThread(); },
                     this);
  }
  gil_released_when_long(const gil_released_when_long&) = delete;
  gil_released_when_long& operator=(const gil_released_when_long&) = delete;
  gil_released_when_long(gil_released_when_long&&) = delete;
  gil_released_when_long& operator=(gil_released_when_long&&) = delete;
  ~gil_released_when_long() {
    if (state_) PyEval_RestoreThread(state_);
  }

 private:
  PyThreadState* state_ = nullptr;
};

// datetime.datetime, looked up when the module is bound (never released).
PyObject* datetime_class = nullptr;

// A render's clock: a datetime.datetime or an ISO string (datetime.fromisoformat's) as C's struct tm.
std::tm clock_of(PyObject* now) {
  const py::handle cls(datetime_class);
  py::object when;
  if (PyUnicode_Check(now)) {
    when = cls.attr("fromisoformat")(py::handle(now));  // ValueError: Invalid isoformat string
  } else if (PyObject_IsInstance(now, datetime_class) == 1) {
    when = py::reinterpret_borrow<py::object>(now);
  } else {
    throw py::type_error(std::string("now must be a datetime.datetime or an ISO date and time string, not ") +
                         Py_TYPE(now)->tp_name);
  }
  const py::tuple v = when.attr("timetuple")();
  const auto at = [&](std::size_t i) { return v[i].cast<int>(); };
  std::tm tm{};
  tm.tm_year = at(0) - 1900;
  tm.tm_mon = at(1) - 1;
  tm.tm_mday = at(2);
  tm.tm_hour = at(3);
  tm.tm_min = at(4);
  tm.tm_sec = at(5);
  tm.tm_wday = (at(6) + 1) % 7;  // Python's Monday is 0, C's Sunday
  tm.tm_yday = at(7) - 1;        // Python's first day is 1
  tm.tm_isdst = at(8);
  return tm;
}

// render()'s keywords, in the order of its `given`.
constexpr std::string_view named[] = {"tools", "documents", "add_generation_prompt", "now", "messages"};

/// A compiled template, its source and the variables every render gets unless given (a model's
/// bos_token and eos_token). Immutable: renders from many threads share it.
class chat_template_object {
 public:
  chat_template_object(const py::str& source, const py::object& defaults, const py::object& name)
      : source_(source), name_(name), text_(utf8_source(source)), t_(compile(text_)) {
    for (int i = 0; i < 5; ++i) named_symbols_[i] = gguf::detail::variable_symbol(t_.compiled(), named[i]);
    if (defaults.is_none()) return;
    if (!PyDict_Check(defaults.ptr())) {
      throw py::type_error(std::string("defaults must be a dict, not ") + Py_TYPE(defaults.ptr())->tp_name);
    }
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(defaults)) {
      if (!PyUnicode_Check(k.ptr())) throw py::type_error("a default variable's name is a str");
      defaults_py_[k] = v;
      defaults_.emplace_back(py::str(k).cast<std::string>(), py::reinterpret_borrow<py::object>(v));
      default_symbols_.push_back(gguf::detail::variable_symbol(t_.compiled(), defaults_.back().first));
    }
    // each default converts now, so that a bad one fails here rather than at every render
    gguf::template_error err;
    gguf::detail::render_session session(t_.compiled(), options_, err);
    pinned_strs pins;
    converter c(session.renderer(), pins);
    for (const auto& [k, v] : defaults_) convert(c, k, v.ptr());
  }

  /// A model's template `tokenizer.chat_template[.NAME]`: its source and the model's variables.
  static py::tuple model_template(const source_ptr& s, const std::string& name) {
    std::string key(gguf::chat_template::default_key);
    if (!name.empty()) key += "." + name;
    const gguf::metadata_entry* e = s->metadata().find(key);
    if (!e) throw py::key_error(key);
    const auto text = e->value.get<std::string_view>();
    if (!text) raise(gguf::error(gguf::errc::type_mismatch, "a chat template is a string").about(key));
    py::dict defaults;
    const gguf::json variables = gguf::chat_template::model_variables(s->metadata());
    for (const auto& [k, v] : variables.members()) {
      // a token's text need not be UTF-8; a render's variables must be
      defaults[decode_utf8(k, "replace")] = decode_utf8(v.as_string(), "replace");
    }
    return py::make_tuple(decode_utf8(*text), defaults);
  }

  static py::list names(const source_ptr& s) {
    py::list out;
    for (const std::string& n : gguf::chat_template::names(s->metadata())) out.append(decode_utf8(n));
    return out;
  }

  /**
   * render(messages, *, tools=None, documents=None, add_generation_prompt=False, now=None, **variables)
   * from METH_FASTCALL's arguments: the positional `args[0, n)`, then the keywords' values, named by
   * `kwnames`. No dict is made for the variables: they are converted as they come.
   */
  py::str render(PyObject* const* args, Py_ssize_t n, PyObject* kwnames) const {
    PyObject* given[5] = {Py_None, Py_None, Py_False, Py_None, n >= 1 ? args[0] : nullptr};
    if (n > 1) throw py::type_error("render() takes 1 positional argument (messages), not " + std::to_string(n));
    const Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    // which keyword is which: one of `named`, or a variable (-1); a call's keyword names are interned
    // strs, so the pointers of the interned names mostly decide at once (not those of a `**variables`
    // made from JSON: compared as text)
    static PyObject* const interned[5] = {PyUnicode_InternFromString("tools"), PyUnicode_InternFromString("documents"),
                                          PyUnicode_InternFromString("add_generation_prompt"),
                                          PyUnicode_InternFromString("now"), PyUnicode_InternFromString("messages")};
    const auto which = [&](PyObject* k) {
      for (int i = 0; i < 5; ++i)
        if (k == interned[i]) return i;
      if (!PyUnicode_IS_COMPACT_ASCII(k)) return -1;
      const std::string_view name(static_cast<const char*>(PyUnicode_DATA(k)),
                                  static_cast<std::size_t>(PyUnicode_GET_LENGTH(k)));
      for (int i = 0; i < 5; ++i)
        if (name == named[i]) return i;
      return -1;
    };
    std::array<std::int8_t, 16> kinds;  // the first keywords' `which`, for the second pass
    for (Py_ssize_t i = 0; i < nk; ++i) {
      const int w = which(PyTuple_GET_ITEM(kwnames, i));
      if (i < 16) kinds[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(w);
      if (w == 4 && given[4]) throw py::type_error("render() got multiple values for argument 'messages'");
      if (w >= 0) given[w] = args[n + i];
    }
    if (!given[4]) throw py::type_error("render() missing 1 required positional argument: 'messages'");

    gguf::render_options options = options_;
    if (given[3] != Py_None) options.now = clock_of(given[3]);  // else the library reads the local time
    gguf::template_error err;
    pinned_strs pins;  // released after the render, with the GIL
    // the render's buffers, kept by the thread from one render to the next (up to 1 MiB of room)
    thread_local gguf::jinja::render_workspace workspace;
    const struct trimmed {  // once the session below is over: a huge render's room is not kept
      gguf::jinja::render_workspace& w;
      ~trimmed() { w.trim(std::size_t{1} << 20); }
    } trim{workspace};
    gguf::detail::render_session session(t_.compiled(), options, err, &workspace);
    gguf::jinja::renderer& r = session.renderer();
    converter c(r, pins);
    // a variable the template never names is left out (the renderer would ignore it): a template that
    // ignores tools costs no conversion of their schemas
    const auto add = [&](std::int64_t symbol, std::string_view name, PyObject* v) {
      if (symbol >= 0) r.bind_symbol(symbol, convert(c, name, v));
    };
    // the defaults first: a variable given replaces one
    for (std::size_t k = 0; k < defaults_.size(); ++k)
      add(default_symbols_[k], defaults_[k].first, defaults_[k].second.ptr());
    add(named_symbols_[4], "messages", given[4]);
    for (int i = 0; i < 3; ++i) add(named_symbols_[i], named[i], given[i]);
    for (Py_ssize_t i = 0; i < nk; ++i) {  // the other keywords, in their order
      PyObject* k = PyTuple_GET_ITEM(kwnames, i);
      if ((i < 16 ? kinds[static_cast<std::size_t>(i)] : which(k)) >= 0) continue;
      const std::string_view name = utf8_view(k);
      add(r.symbol(name), name, args[n + i]);
    }
    // the text in a buffer of the thread's, kept from one render to the next (up to 1 MiB): no
    // allocation per render (cleared only now: a conversion's __index__ may have rendered on it)
    thread_local std::string out;
    out.clear();
    bool ok;
    {
      gil_released_when_long unlocked(r);
      ok = session.run(out);
    }
    py::str text = ok ? decode_utf8(out) : py::str();
    if (out.capacity() > (std::size_t{1} << 20)) std::string().swap(out);  // a huge render's room is not kept
    if (!ok) raise_template_error(err);
    return text;
  }

  const py::str& source() const noexcept { return source_; }
  py::dict defaults() const { return py::dict(defaults_py_); }  // a copy: the template is immutable
  const py::object& name() const noexcept { return name_; }

 private:
  py::str source_;
  py::object name_;
  std::string text_;  // the source's UTF-8
  gguf::chat_template t_;
  std::vector<std::pair<std::string, py::object>> defaults_;  // converted at each render (a model's: two strs)
  py::dict defaults_py_;
  gguf::render_options options_;  // the limits, and transformers' defaults (every one is given anyway)
  // The symbols of tools, documents, add_generation_prompt, (now,) messages and of each default: -1
  // for a name the template never uses (Jinja2 looks up no variable by a computed name), whose value is
  // then never converted.
  std::int64_t named_symbols_[5] = {-1, -1, -1, -1, -1};
  std::vector<std::int64_t> default_symbols_;

  static std::string utf8_source(const py::str& source) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(source.ptr(), &n);
    if (!p) {  // lone surrogates: no template Jinja2 compiles has them
      PyErr_Clear();
      throw py::value_error("a template's source is a str with lone surrogates: not UTF-8");
    }
    return {p, static_cast<std::size_t>(n)};
  }

  static gguf::chat_template compile(std::string_view text) {
    gguf::template_result<gguf::chat_template> t = [&] {
      py::gil_scoped_release unlocked;
      return gguf::chat_template::compile(text);
    }();
    if (!t) raise_template_error(t.error());
    return std::move(*t);
  }

  // A str's UTF-8 for a moment (a variable's name).
  static std::string_view utf8_view(PyObject* s) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(s, &n);
    if (!p) throw py::error_already_set();
    return {p, static_cast<std::size_t>(n)};
  }

  // A variable's value; the exception for one that cannot be converted names where it failed.
  static gguf::jinja::value convert(converter& c, std::string_view name, PyObject* v) {
    try {
      return c.convert(v, 0);
    } catch (bad_value& e) {
      if (!e.type) raise_template_error("limit", e.message, 0);
      // the path, its middle left out when deep: "x[0][0]...[0][0] is nested deeper than 512 levels"
      std::string where(name);
      const std::size_t n = e.path.size();
      for (std::size_t k = 0; k < n; ++k) {
        if (n > 16 && k == 8) where += "...";
        if (n <= 16 || k < 8 || k >= n - 4) where += e.path[n - 1 - k];
      }
      where += e.message;
      PyErr_SetString(e.type, where.c_str());
      throw py::error_already_set();
    }
  }
};

// The template `self` holds. A pybind11 instance made by __new__ without __init__ holds no object: refused
// (its memory is not one).
const chat_template_object& self_of(PyObject* self) {
  static py::detail::type_info* const info = py::detail::get_type_info(typeid(chat_template_object));
  if (!PyObject_TypeCheck(self, info->type)) {
    throw py::type_error(std::string("a ChatTemplate method called on a ") + Py_TYPE(self)->tp_name);
  }
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (inst->simple_layout) {  // one C++ base (always, unless a Python class derives from two)
    if (!inst->simple_holder_constructed)
      throw py::type_error("the ChatTemplate was not initialized (no __init__ call)");
    return *static_cast<const chat_template_object*>(inst->simple_value_holder[0]);
  }
  const auto v_h = inst->get_value_and_holder(info);
  if (!v_h.holder_constructed()) throw py::type_error("the ChatTemplate was not initialized (no __init__ call)");
  return *v_h.value_ptr<chat_template_object>();
}

// ChatTemplate.render as a METH_FASTCALL method: pybind11's dispatch and a Python wrapper's **kwargs
// cost a fifth of a small template's render.
PyObject* render_method(PyObject* self, PyObject* const* args, Py_ssize_t n, PyObject* kwnames) {
  try {
    return self_of(self).render(args, PyVectorcall_NARGS(n), kwnames).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyMethodDef render_def = {
    "render", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&render_method)),
    METH_FASTCALL | METH_KEYWORDS,
    "render($self, messages, *, tools=None, documents=None, add_generation_prompt=False, now=None, "
    "**variables)\n--\n\n"
    R"(Renders the template as ``tokenizer.apply_chat_template(messages, tools=..., documents=...,
add_generation_prompt=..., tokenize=False, **variables)`` does: the text, byte for byte.

Args:
    messages: the conversation: a list of dicts (``{"role": ..., "content": ...}``, with
        ``tool_calls``, ``reasoning_content``, content parts... as the template expects).
    tools: the tools' JSON schemas, or ``None`` (passed as ``None`` when not given, as transformers
        does: ``tools is none`` holds).
    documents: the documents of retrieval-augmented templates, or ``None``.
    add_generation_prompt: end with the header of the assistant's turn.
    now: the clock of ``strftime_now``: a ``datetime.datetime`` or an ISO string
        (``"2026-01-15T10:30:00"``, as ``datetime.fromisoformat`` reads it); the current local time
        when ``None``.
    variables: any other variable: ``bos_token``, ``eos_token``, ``enable_thinking``,
        ``reasoning_effort``, ``builtin_tools``, ... A model's template has the model's ``bos_token``
        and ``eos_token`` (``defaults``); a variable given here wins.
Returns:
    The text.

The variables are Python objects, converted to the library's JSON values directly (no JSON text in
between): dicts (their order kept; str keys), lists and tuples (as lists), strs, ints of any size,
floats, bools and None, and their subclasses, nested up to 512 deep. The GIL is released once a render has
run a few microseconds (a shorter one keeps it: releasing would cost more than it).

Raises:
    TemplateError: where Jinja2 raises (``kind`` its exception's name; ``"TemplateError"`` with the
        message verbatim for the template's ``raise_exception``), or a render limit (``"limit"``:
        output, memory, steps, depth, time).
    TypeError: a variable holds another type (the message says where: ``messages[2]['content'] is of
        type set``), or a dict a key that is not a str.
    ValueError: a list or dict that contains itself or nests deeper than 512; a str with lone
        surrogates; ``now`` is a string that is not an ISO date and time.)"};

}  // namespace

void bind_chat_template(py::module_& m) {
  datetime_class = py::object(py::module_::import("datetime").attr("datetime")).release().ptr();
  py::class_<chat_template_object> cls(m, "ChatTemplate", "A compiled chat template (see pygguf.ChatTemplate).");
  cls.def(py::init<const py::str&, const py::object&, const py::object&>(), py::arg("source"),
          py::arg("defaults") = py::none(), py::arg("name") = py::none())
      .def_static("model_template", &chat_template_object::model_template, py::arg("source"), py::arg("name"))
      .def_static("names", &chat_template_object::names, py::arg("source"))
      .def_property_readonly("source", [](const py::handle& self) { return self_of(self.ptr()).source(); })
      .def_property_readonly("defaults", [](const py::handle& self) { return self_of(self.ptr()).defaults(); })
      .def_property_readonly("name", [](const py::handle& self) { return self_of(self.ptr()).name(); });
  PyObject* render = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &render_def);
  if (!render) throw py::error_already_set();
  cls.attr("render") = py::reinterpret_steal<py::object>(render);
}

}  // namespace pygguf
