// pygguf._core.Tokenizer: the tokenizer of a model's vocabulary (gguf::tokenizer), with the GIL released
// while it encodes or decodes long inputs and a batch encoder on several threads.
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core.hpp"

namespace pygguf {

namespace {

using gguf::token_id;

// Inputs at least this long (bytes to encode, ids to decode) are worked on with the GIL released. Below
// it the work takes less than taking the GIL back can (up to the interpreter's switch interval when
// another thread runs Python code).
constexpr std::size_t release_bytes = 4096;
constexpr std::size_t release_ids = 1024;
// encode_batch's default thread count: one thread per this many bytes of text, at most one per core.
constexpr std::size_t bytes_per_thread = 16384;

// Raises pygguf.GGUFError (code "out_of_range") for an id that names no token.
[[noreturn]] void raise_bad_id(const std::string& id, std::size_t n_vocab) {
  const std::string message = "token id " + id + " is outside the vocabulary (ids 0 to " +
                              std::to_string(static_cast<long long>(n_vocab) - 1) + ")";
  const py::object cls = py::module_::import("pygguf._errors").attr("GGUFError");
  const py::object err = cls(message, "out_of_range", py::none(), py::none());
  PyErr_SetObject(cls.ptr(), err.ptr());
  throw py::error_already_set();
}

// A Python int as a token id: TypeError for anything else, GGUFError for one outside the vocabulary
// (`checked`), or -1 for it (not `checked`).
token_id to_id(py::handle o, std::size_t n_vocab, bool checked) {
  if (!PyIndex_Check(o.ptr()) || PyFloat_Check(o.ptr())) {
    throw py::type_error(std::string("a token id is an int, not ") + Py_TYPE(o.ptr())->tp_name);
  }
  const py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow == 0 && v >= 0 && static_cast<unsigned long long>(v) < n_vocab) return static_cast<token_id>(v);
  if (checked) raise_bad_id(py::str(i).cast<std::string>(), n_vocab);
  return -1;
}

// The bytes of a text argument: a str as UTF-8 (with surrogateescape, so that the strs pygguf gives for
// partial UTF-8 come back as their bytes), bytes as they are, and any other bytes-like object copied (it
// could change while the GIL is released). The view stays valid while this object lives.
class text_arg {
 public:
  explicit text_arg(py::handle o) {
    PyObject* p = o.ptr();
    if (PyUnicode_Check(p)) {
#if PY_VERSION_HEX < 0x030C0000
      if (PyUnicode_READY(p) != 0) throw py::error_already_set();
#endif
      if (PyUnicode_IS_ASCII(p)) {  // its characters are its UTF-8: no copy
        Py_ssize_t n = 0;
        const char* s = PyUnicode_AsUTF8AndSize(p, &n);
        if (!s) throw py::error_already_set();
        owner_ = py::reinterpret_borrow<py::object>(o);
        view_ = {s, static_cast<std::size_t>(n)};
      } else {
        owner_ = encode_utf8(o);
        view_ = {PyBytes_AS_STRING(owner_.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(owner_.ptr()))};
      }
    } else if (PyBytes_Check(p)) {
      owner_ = py::reinterpret_borrow<py::object>(o);
      view_ = {PyBytes_AS_STRING(p), static_cast<std::size_t>(PyBytes_GET_SIZE(p))};
    } else if (PyObject_CheckBuffer(p)) {
      Py_buffer b;
      if (PyObject_GetBuffer(p, &b, PyBUF_SIMPLE) != 0) throw py::error_already_set();
      copy_.assign(static_cast<const char*>(b.buf), static_cast<std::size_t>(b.len));
      PyBuffer_Release(&b);
      copied_ = true;
    } else {
      throw py::type_error(std::string("a text is a str or bytes, not ") + Py_TYPE(p)->tp_name);
    }
  }
  std::string_view view() const noexcept { return copied_ ? std::string_view(copy_) : view_; }

 private:
  py::object owner_;
  std::string_view view_;
  std::string copy_;
  bool copied_ = false;
};

// Token ids as a new list of ints.
py::list to_list(const std::vector<token_id>& ids) {
  PyObject* l = PyList_New(static_cast<Py_ssize_t>(ids.size()));
  if (!l) throw py::error_already_set();
  py::list out = py::reinterpret_steal<py::list>(l);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    PyObject* v = PyLong_FromLong(ids[i]);
    if (!v) throw py::error_already_set();
    PyList_SET_ITEM(l, static_cast<Py_ssize_t>(i), v);
  }
  return out;
}

// Token ids as an int32 array that owns them (no copy).
py::array to_numpy(std::vector<token_id>&& ids) {
  auto* v = new std::vector<token_id>(std::move(ids));
  const py::capsule owner(v, [](void* p) { delete static_cast<std::vector<token_id>*>(p); });
  return py::array_t<std::int32_t>({static_cast<py::ssize_t>(v->size())}, {py::ssize_t{sizeof(token_id)}}, v->data(),
                                   owner);
}

py::object to_python(std::vector<token_id>&& ids, bool as_numpy) {
  if (as_numpy) return to_numpy(std::move(ids));
  return to_list(ids);
}

// The token ids of a decode argument: a 1-D numpy array of integers or any iterable of ints. Values
// outside int32 are raised here; the others are checked by decode.
std::vector<token_id> to_ids(py::handle o, std::size_t n_vocab) {
  std::vector<token_id> out;
  if (py::isinstance<py::array>(o)) {
    const auto a = py::reinterpret_borrow<py::array>(o);
    if (a.ndim() != 1) throw py::value_error("token ids must be a 1-D array");
    const char kind = a.dtype().kind();
    if (kind != 'i' && kind != 'u' && kind != 'b') {
      throw py::type_error("token ids must be integers, not an array of " + py::str(a.dtype()).cast<std::string>());
    }
    if (kind == 'u' && a.dtype().itemsize() == 8) {
      // values past INT64_MAX would wrap around when cast to int64 below
      const auto u = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(o);
      if (!u) throw py::error_already_set();
      const std::uint64_t* p = u.data();
      for (py::ssize_t i = 0; i < u.size(); ++i) {
        if (p[i] > static_cast<std::uint64_t>(INT32_MAX)) raise_bad_id(std::to_string(p[i]), n_vocab);
      }
    }
    const auto c = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(o);
    if (!c) throw py::error_already_set();
    out.reserve(static_cast<std::size_t>(c.size()));
    const std::int64_t* p = c.data();
    for (py::ssize_t i = 0; i < c.size(); ++i) {
      if (p[i] < INT32_MIN || p[i] > INT32_MAX) raise_bad_id(std::to_string(p[i]), n_vocab);
      out.push_back(static_cast<token_id>(p[i]));
    }
    return out;
  }
  if (PyUnicode_Check(o.ptr()) || PyBytes_Check(o.ptr()) || PyLong_Check(o.ptr())) {
    throw py::type_error(std::string("token ids are a list of ints, not ") + Py_TYPE(o.ptr())->tp_name);
  }
  const py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(o.ptr(), "token ids are a list of ints"));
  if (!seq) throw py::error_already_set();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  out.reserve(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = items[i];
    if (PyLong_CheckExact(item)) {  // the common case, without PyNumber_Index's new reference
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
      if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
      if (overflow != 0 || v < INT32_MIN || v > INT32_MAX) {
        raise_bad_id(py::str(item).cast<std::string>(), n_vocab);
      }
      out.push_back(static_cast<token_id>(v));
    } else {
      const token_id id = to_id(item, n_vocab, false);
      if (id < 0) raise_bad_id(py::str(item).cast<std::string>(), n_vocab);
      out.push_back(id);
    }
  }
  return out;
}

const char* type_name(gguf::text::vocab_type t) noexcept {
  using vt = gguf::text::vocab_type;
  switch (t) {
    case vt::none: return "none";
    case vt::spm: return "spm";
    case vt::bpe: return "bpe";
    case vt::wpm: return "wpm";
    case vt::ugm: return "ugm";
    case vt::rwkv: return "rwkv";
    case vt::plamo2: return "plamo2";
  }
  return "none";
}

// `e` with its subject's bytes that are not UTF-8 written as \xNN: the subject may quote a token's text
// ("a token appears twice"), and raise() decodes it as UTF-8 for GGUFError's message and key.
gguf::error printable(gguf::error e) {
  const std::string_view subject = e.subject();
  const auto text = decode_utf8(subject, "backslashreplace").cast<std::string>();
  if (text != subject) e.about(text);
  return e;
}

// A special token id as an int, or None.
py::object id_or_none(token_id id) { return id < 0 ? py::object(py::none()) : py::object(py::int_(id)); }

/// A model's tokenizer, as Python sees it.
class tokenizer {
 public:
  explicit tokenizer(gguf::tokenizer t) : t_(std::move(t)) {}

  static tokenizer from_source(const source_ptr& s) {
    gguf::result<gguf::tokenizer> t = [&] {
      py::gil_scoped_release unlocked;
      return gguf::tokenizer::from(*s, {std::max(1u, std::thread::hardware_concurrency())});
    }();
    if (!t) raise(printable(t.error()));
    return tokenizer(std::move(*t));
  }

  py::object encode(py::handle text, bool add_special, bool parse_special, bool as_numpy) const {
    const text_arg arg(text);
    const std::string_view s = arg.view();
    std::vector<token_id> ids;
    gguf::result<void> r = [&] {
      if (s.size() >= release_bytes) {
        py::gil_scoped_release unlocked;
        return t_.encode(s, ids, {add_special, parse_special});
      }
      return t_.encode(s, ids, {add_special, parse_special});
    }();
    if (!r) raise(printable(r.error()));
    return to_python(std::move(ids), as_numpy);
  }

  py::list encode_batch(py::handle texts, bool add_special, bool parse_special, const py::object& threads,
                        bool as_numpy) const {
    if (PyUnicode_Check(texts.ptr()) || PyBytes_Check(texts.ptr())) {
      throw py::type_error("encode_batch takes a list of texts (encode takes one)");
    }
    long long asked = 0;
    if (!threads.is_none()) {
      if (!PyIndex_Check(threads.ptr()) || PyFloat_Check(threads.ptr())) throw py::type_error("threads is an int");
      const auto i = py::reinterpret_steal<py::object>(PyNumber_Index(threads.ptr()));
      if (!i) throw py::error_already_set();
      int overflow = 0;
      asked = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
      if (PyErr_Occurred()) throw py::error_already_set();
      if (overflow > 0) asked = LLONG_MAX;
      if (asked < 1) throw py::value_error("threads must be at least 1");
    }
    const py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(texts.ptr(), "texts must be iterable"));
    if (!seq) throw py::error_already_set();
    const auto n = static_cast<std::size_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
    PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
    std::vector<text_arg> args;
    args.reserve(n);
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      args.emplace_back(items[i]);
      total += args.back().view().size();
    }

    std::size_t n_threads;
    if (asked > 0) {
      n_threads = static_cast<std::size_t>(std::min<long long>(asked, 1024));
    } else {
      n_threads = std::max<std::size_t>(1, std::thread::hardware_concurrency());
      n_threads = std::min(n_threads, std::max<std::size_t>(1, total / bytes_per_thread));
    }
    n_threads = std::max<std::size_t>(1, std::min(n_threads, n));

    std::vector<std::vector<token_id>> out(n);
    const gguf::encode_options opt{add_special, parse_special};
    // the first text that cannot be encoded (an SPM vocabulary without a byte token): its error is raised
    std::atomic<std::size_t> failed_at{n};
    gguf::error first_error;
    std::mutex error_lock;
    const auto encode_one = [&](std::size_t i) {
      if (auto r = t_.encode(args[i].view(), out[i], opt); !r) {
        const std::lock_guard<std::mutex> g(error_lock);
        if (i < failed_at.load(std::memory_order_relaxed)) {
          first_error = r.error();
          failed_at.store(i, std::memory_order_relaxed);
        }
      }
    };
    if (n_threads == 1) {
      const auto run = [&] {
        for (std::size_t i = 0; i < n && failed_at.load(std::memory_order_relaxed) == n; ++i) encode_one(i);
      };
      if (total >= release_bytes) {
        py::gil_scoped_release unlocked;
        run();
      } else {
        run();
      }
    } else {
      // the texts are handed out in chunks from a shared counter: uneven lengths balance themselves
      const std::size_t chunk = std::clamp<std::size_t>(n / (n_threads * 8), 1, 64);
      std::atomic<std::size_t> next{0};
      std::exception_ptr failure;
      std::mutex failure_lock;
      const auto work = [&]() noexcept {
        try {
          for (;;) {
            const std::size_t first = next.fetch_add(chunk, std::memory_order_relaxed);
            if (first >= n) break;
            const std::size_t last = std::min(n, first + chunk);
            for (std::size_t i = first; i < last; ++i) encode_one(i);
          }
        } catch (...) {
          const std::lock_guard<std::mutex> g(failure_lock);
          if (!failure) failure = std::current_exception();
          next.store(n, std::memory_order_relaxed);
        }
      };
      {
        py::gil_scoped_release unlocked;
        std::vector<std::thread> pool;
        pool.reserve(n_threads - 1);
        for (std::size_t k = 1; k < n_threads; ++k) {
          try {
            pool.emplace_back(work);
          } catch (const std::system_error&) {
            break;  // no more threads: the ones there are (and this one) do the work
          }
        }
        work();
        for (std::thread& th : pool) th.join();
      }
      if (failure) std::rethrow_exception(failure);
    }
    if (failed_at.load() < n) raise(printable(first_error));

    py::list result(n);
    for (std::size_t i = 0; i < n; ++i) {
      result[i] = to_python(std::move(out[i]), as_numpy);
      std::vector<token_id>().swap(out[i]);
    }
    return result;
  }

  std::string decode_raw(py::handle ids, bool remove_special, bool unparse_special) const {
    const std::vector<token_id> v = to_ids(ids, t_.n_vocab());
    gguf::result<std::string> r = [&] {
      if (v.size() >= release_ids) {
        py::gil_scoped_release unlocked;
        return t_.decode(v, {remove_special, unparse_special});
      }
      return t_.decode(v, {remove_special, unparse_special});
    }();
    if (!r) {
      if (r.error().code == gguf::errc::out_of_range) {
        for (const token_id id : v) {
          if (id < 0 || static_cast<std::size_t>(id) >= t_.n_vocab()) raise_bad_id(std::to_string(id), t_.n_vocab());
        }
      }
      raise(r.error());
    }
    return std::move(*r);
  }

  py::bytes decode_bytes(py::handle ids, bool remove_special, bool unparse_special) const {
    const std::string s = decode_raw(ids, remove_special, unparse_special);
    return {s.data(), s.size()};
  }

  py::str decode(py::handle ids, bool remove_special, bool unparse_special, const std::string& errors) const {
    const std::string s = decode_raw(ids, remove_special, unparse_special);
    return decode_utf8(s, errors.c_str());
  }

  py::bytes token_to_piece(py::handle id, bool special) const {
    const std::string s = take(t_.token_to_piece(to_id(id, t_.n_vocab(), true), special));
    return {s.data(), s.size()};
  }

  py::object find(py::handle text) const {
    const text_arg arg(text);
    return id_or_none(t_.find(arg.view()));
  }

  py::str token_text(py::handle id) const {
    return decode_utf8(t_.token_text(to_id(id, t_.n_vocab(), true)), "surrogateescape");
  }

  py::bytes token_bytes(py::handle id) const {
    const std::string_view s = t_.token_text(to_id(id, t_.n_vocab(), true));
    return {s.data(), s.size()};
  }

  std::uint32_t token_attr(py::handle id) const { return t_.vocabulary().attr(to_id(id, t_.n_vocab(), true)); }
  float token_score(py::handle id) const { return t_.vocabulary().score(to_id(id, t_.n_vocab(), true)); }

  bool is_eog(py::handle id) const {
    const token_id i = to_id(id, t_.n_vocab(), false);
    return i >= 0 && t_.is_eog(i);
  }

  const gguf::tokenizer& get() const noexcept { return t_; }

 private:
  gguf::tokenizer t_;
};

}  // namespace

void bind_tokenizer(py::module_& m) {
  py::class_<tokenizer>(m, "Tokenizer", "A model's tokenizer (see pygguf.Tokenizer).")
      .def_static("from_source", &tokenizer::from_source, py::arg("source"))
      .def("encode", &tokenizer::encode, py::arg("text"), py::arg("add_special"), py::arg("parse_special"),
           py::arg("as_numpy"))
      .def("encode_batch", &tokenizer::encode_batch, py::arg("texts"), py::arg("add_special"), py::arg("parse_special"),
           py::arg("threads"), py::arg("as_numpy"))
      .def("decode", &tokenizer::decode, py::arg("ids"), py::arg("remove_special"), py::arg("unparse_special"),
           py::arg("errors"))
      .def("decode_bytes", &tokenizer::decode_bytes, py::arg("ids"), py::arg("remove_special"),
           py::arg("unparse_special"))
      .def("token_to_piece", &tokenizer::token_to_piece, py::arg("id"), py::arg("special"))
      .def("find", &tokenizer::find, py::arg("text"))
      .def("token_text", &tokenizer::token_text, py::arg("id"))
      .def("token_bytes", &tokenizer::token_bytes, py::arg("id"))
      .def("token_attr", &tokenizer::token_attr, py::arg("id"))
      .def("token_score", &tokenizer::token_score, py::arg("id"))
      .def("is_eog", &tokenizer::is_eog, py::arg("id"))
      .def_property_readonly("n_vocab", [](const tokenizer& t) { return t.get().n_vocab(); })
      .def_property_readonly("vocab_type", [](const tokenizer& t) { return type_name(t.get().type()); })
      .def_property_readonly(
          "model", [](const tokenizer& t) { return decode_utf8(t.get().vocabulary().model, "surrogateescape"); })
      .def_property_readonly(
          "pre", [](const tokenizer& t) { return decode_utf8(t.get().vocabulary().pre_name, "surrogateescape"); })
      .def_property_readonly("add_bos", [](const tokenizer& t) { return t.get().vocabulary().add_bos; })
      .def_property_readonly("add_eos", [](const tokenizer& t) { return t.get().vocabulary().add_eos; })
      .def_property_readonly("bos", [](const tokenizer& t) { return id_or_none(t.get().bos()); })
      .def_property_readonly("eos", [](const tokenizer& t) { return id_or_none(t.get().eos()); })
      .def_property_readonly("eot", [](const tokenizer& t) { return id_or_none(t.get().eot()); })
      .def_property_readonly("eom", [](const tokenizer& t) { return id_or_none(t.get().vocabulary().eom); })
      .def_property_readonly("sep", [](const tokenizer& t) { return id_or_none(t.get().sep()); })
      .def_property_readonly("unk", [](const tokenizer& t) { return id_or_none(t.get().unk()); })
      .def_property_readonly("pad", [](const tokenizer& t) { return id_or_none(t.get().pad()); })
      .def_property_readonly("mask", [](const tokenizer& t) { return id_or_none(t.get().vocabulary().mask); })
      .def_property_readonly("newline", [](const tokenizer& t) { return id_or_none(t.get().newline()); })
      .def_property_readonly("eog_ids", [](const tokenizer& t) { return to_list(t.get().vocabulary().eog); });
}

}  // namespace pygguf
