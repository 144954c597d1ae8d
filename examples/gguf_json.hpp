// The JSON form of a parsed GGUF file printed by `gguf-dump --json`: byte for byte what ggml's own
// parse prints through the reference oracle (`ggml_oracle.py inspect`, i.e. Python's json.dumps with
// ensure_ascii=False), so the two can be compared with `cmp`.
#ifndef GGUF_EXAMPLES_GGUF_JSON_HPP
#define GGUF_EXAMPLES_GGUF_JSON_HPP

#include <gguf/detail/utf8.hpp>
#include <gguf/gguf.hpp>
#include <gguf/text/python_float.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace gguf_json {

/**
 * Append `x` as Python's `repr(float)` writes it: the shortest digits that round-trip, in positional
 * notation for decimal exponents -4..15 and scientific otherwise ("1e-05", "1.5e+16"), always with a
 * ".0" when positional and integral. Non-finite values are the strings "nan", "inf", "-inf".
 */
inline void append_float(std::string& out, double x) {
  if (!std::isfinite(x)) {  // the oracle's JSON carries them as strings
    out += '"';
    gguf::text::append_python_float(out, x);
    out += '"';
    return;
  }
  gguf::text::append_python_float(out, x);
}

/**
 * Append bytes as a JSON string. Like ggml's C API, the text ends at the first NUL (unless `end_at_nul`
 * is false: then a NUL is escaped as json.dumps escapes it); invalid UTF-8 becomes U+FFFD, one per
 * maximal ill-formed subpart (Unicode's recommended practice, which Python's decoder follows); `"`, `\`
 * and control characters are escaped as json.dumps escapes them.
 */
inline void append_string(std::string& out, std::string_view s, bool end_at_nul = true) {
  if (const std::size_t nul = s.find('\0'); end_at_nul && nul != std::string_view::npos) s = s.substr(0, nul);
  static constexpr char replacement[] = "\xEF\xBF\xBD";
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
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
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const gguf::detail::utf8_step step = gguf::detail::utf8_next(p + i, n - i);
    if (step.valid) {
      out.append(s.data() + i, step.length);
    } else {
      out += replacement;
    }
    i += step.length;
  }
  out += '"';
}

/** Append one metadata value ({"type":..., "value": [...]} for arrays). */
inline void append_value(std::string& out, const gguf::value_view& v) {
  char buf[32];
  auto integer = [&](auto x) {
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
  };
  switch (v.type()) {
    case gguf::value_type::uint8: integer(*v.get<std::uint8_t>()); break;
    case gguf::value_type::int8: integer(*v.get<std::int8_t>()); break;
    case gguf::value_type::uint16: integer(*v.get<std::uint16_t>()); break;
    case gguf::value_type::int16: integer(*v.get<std::int16_t>()); break;
    case gguf::value_type::uint32: integer(*v.get<std::uint32_t>()); break;
    case gguf::value_type::int32: integer(*v.get<std::int32_t>()); break;
    case gguf::value_type::uint64: integer(*v.get<std::uint64_t>()); break;
    case gguf::value_type::int64: integer(*v.get<std::int64_t>()); break;
    case gguf::value_type::float32: append_float(out, static_cast<double>(*v.get<float>())); break;
    case gguf::value_type::float64: append_float(out, *v.get<double>()); break;
    case gguf::value_type::boolean: out += *v.get<bool>() ? "true" : "false"; break;
    case gguf::value_type::string: append_string(out, *v.get<std::string_view>()); break;
    case gguf::value_type::array: {
      const gguf::array_view a = *v.get<gguf::array_view>();
      out += "{\"type\": \"";
      out += gguf::to_string(a.item_type());
      out += "\", \"value\": [";
      bool first = true;
      if (a.item_type() == gguf::value_type::string) {  // the common case, without per-item decoding
        for (std::string_view s : *a.as<std::string_view>()) {
          if (!first) out += ", ";
          first = false;
          append_string(out, s);
        }
      } else {
        for (const gguf::value_view item : a) {
          if (!first) out += ", ";
          first = false;
          append_value(out, item);
        }
      }
      out += "]}";
      break;
    }
  }
}

/** The metadata array: `[{"key", "type", "value"}, ...]` in file order. */
inline void append_metadata(std::string& out, const gguf::metadata_table& m) {
  out += '[';
  bool first = true;
  for (const gguf::metadata_entry& e : m) {
    if (!first) out += ", ";
    first = false;
    out += "{\"key\": ";
    append_string(out, e.key);
    out += ", \"type\": \"";
    out += gguf::to_string(e.value.type());
    out += "\", \"value\": ";
    append_value(out, e.value);
    out += '}';
  }
  out += ']';
}

/** One tensor: `{"name", "type", "shape", "offset", "size"`, without the closing brace. */
inline void append_tensor(std::string& out, const gguf::tensor_info& t) {
  out += "{\"name\": ";
  append_string(out, t.name);
  out += ", \"type\": \"";
  out += gguf::to_string(t.type);
  out += "\", \"shape\": [";
  // ggml pads shapes to 4 dims with 1s and does not expose n_dims: trailing 1s are not printed.
  std::size_t dims = gguf::max_dims;
  while (dims > 1 && t.ne[dims - 1] == 1) --dims;
  for (std::size_t d = 0; d < dims; ++d) {
    if (d) out += ", ";
    out += std::to_string(t.ne[d]);
  }
  out += "], \"offset\": " + std::to_string(t.offset);
  out += ", \"size\": " + std::to_string(t.n_bytes);
}

/** `{"version", "alignment", "data_offset", "metadata"` of a file, then `, "tensors": [`. */
inline void append_head(std::string& out, const gguf::file& f) {
  out += "{\"version\": " + std::to_string(f.version());
  out += ", \"alignment\": " + std::to_string(f.alignment());
  out += ", \"data_offset\": " + std::to_string(f.data_offset());
  out += ", \"metadata\": ";
  append_metadata(out, f.metadata());
  out += ", \"tensors\": [";
}

/** The whole document of one file, without a trailing newline. */
inline std::string to_json(const gguf::file& f) {
  std::string out;
  out.reserve(f.bytes().size() / 2 + 256);
  append_head(out, f);
  bool first = true;
  for (const gguf::tensor_info& t : f.tensors()) {
    if (!first) out += ", ";
    first = false;
    append_tensor(out, t);
    out += '}';
  }
  out += "]}";
  return out;
}

/**
 * A whole model, one file or shards, mapped (`gguf::model`) or read as headers (`gguf::model_header`,
 * from URLs) (`gguf-dump --model --json`): the schema of one file for the first
 * shard's header and metadata, every tensor of every shard with `"shard"` (its shard's number, from 0;
 * `"offset"` is relative to that shard's data section), and `"shards"`: `[{"file", "data_offset",
 * "tensors", "size"}, ...]`.
 */
template <class Model>
requires requires(const Model& m) { m.shard_of(m.tensors()[0]); }
std::string to_json(const Model& m) {
  std::string out;
  append_head(out, m.shard(0).info());  // the model's metadata is the first shard's
  bool first = true;
  for (const gguf::tensor_info& t : m.tensors()) {
    if (!first) out += ", ";
    first = false;
    append_tensor(out, t);
    out += ", \"shard\": " + std::to_string(m.shard_of(t)) + "}";
  }
  out += "], \"shards\": [";
  for (std::size_t k = 0; k < m.n_shards(); ++k) {
    if (k) out += ", ";
    out += "{\"file\": ";
    if constexpr (requires { m.shard_path(k); }) {
      append_string(out, m.shard_path(k).filename().string());
    } else {
      append_string(out, m.shard_name(k));
    }
    out += ", \"data_offset\": " + std::to_string(m.shard(k).data_offset());
    out += ", \"tensors\": " + std::to_string(m.shard(k).tensors().size());
    if constexpr (requires { m.shard_path(k); }) {
      out += ", \"size\": " + std::to_string(m.shard(k).bytes().size()) + "}";
    } else {
      out += ", \"size\": " + std::to_string(m.file_size(k)) + "}";
    }
  }
  out += "]}";
  return out;
}

}  // namespace gguf_json

#endif  // GGUF_EXAMPLES_GGUF_JSON_HPP
