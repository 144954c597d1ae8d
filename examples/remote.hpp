// The tools' http(s):// URLs: models read where they lie (gguf/net/http.hpp), when gguf was built with
// libcurl (GGUF_TOOLS_HTTP); without it a URL gets one `error:` line saying so.
#ifndef GGUF_EXAMPLES_REMOTE_HPP
#define GGUF_EXAMPLES_REMOTE_HPP

#include <gguf/gguf.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <utility>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"

#if GGUF_TOOLS_HTTP
#include <gguf/net/http.hpp>
#endif

namespace remote {

/** Whether a tool's argument is an http:// or https:// URL rather than a path. */
constexpr bool is_url(std::string_view s) noexcept {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (std::string_view p : {std::string_view("http://"), std::string_view("https://")}) {
    if (s.size() < p.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < p.size() && same; ++i) same = lower(s[i]) == p[i];
    if (same) return true;
  }
  return false;
}

#if GGUF_TOOLS_HTTP

/// A positive number of seconds (or bytes) from the environment variable `name`, below `max`; else none.
inline std::optional<double> positive_from_environment(const char* name, double max) {
  const char* t = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
  if (!t || !*t) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t, &end);
  if (*end != '\0' || !(v > 0 && v < max)) return std::nullopt;
  return v;
}

/**
 * The HTTP options from the environment: HF_TOKEN; GGUF_HTTP_TIMEOUT (seconds: to connect, and the
 * stall timeout), GGUF_HTTP_MIN_SPEED (bytes a second over the stall timeout), GGUF_HTTP_DEADLINE
 * (seconds a read may take in all).
 */
inline gguf::net::http_options options() {
  gguf::net::http_options o;
  o.bearer_token = gguf::net::token_from_environment();
  const auto ms = [](double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000)); };
  if (const auto s = positive_from_environment("GGUF_HTTP_TIMEOUT", 86400)) {
    o.stall_timeout = ms(*s);
    o.connect_timeout = ms(*s);
  }
  if (const auto b = positive_from_environment("GGUF_HTTP_MIN_SPEED", 1e9)) o.min_speed = static_cast<std::size_t>(*b);
  if (const auto s = positive_from_environment("GGUF_HTTP_DEADLINE", 86400.0 * 7)) o.deadline = ms(*s);
  return o;
}

/**
 * An error of the file at `url` as the rest of its `error:` line, which starts with the URL: without a
 * subject that names the URL again (the URL, or its file name).
 */
inline std::string describe(const std::string& url, gguf::error e) {
  gguf::error as_url;
  as_url.about_file(url);
  const std::string_view subject = e.subject();
  if (subject == as_url.subject() || subject == gguf::net::detail::split_url(url).name) e.about("");
  return gguf::to_string(e);
}

/** A model's headers from a URL; on failure prints the `error:` line. */
inline std::optional<gguf::model_header> open_model(const std::string& url) {
  auto m = gguf::net::read_model_header(url, options());
  if (!m) {
    cli::fail("%s: %s", url.c_str(), describe(url, m.error()).c_str());
    return std::nullopt;
  }
  return std::move(*m);
}

/** One file's header from a URL, and the file to read its tensors by range; on failure prints the `error:` line. */
struct file_header {
  std::unique_ptr<gguf::net::http_file> file;  ///< where the bytes are
  gguf::header_buffer header;                  ///< its header
};
inline std::optional<file_header> open(const std::string& url) {
  const gguf::net::http_options o = options();
  auto f = gguf::net::http_file::open(url, o);
  if (!f) {
    cli::fail("%s: %s", url.c_str(), describe(url, f.error()).c_str());
    return std::nullopt;
  }
  auto file = std::make_unique<gguf::net::http_file>(std::move(*f));
  gguf::read_header_options ro;
  ro.first_read = o.first_read;
  ro.max_step = o.read_ahead;
  auto h = gguf::read_header([&file](std::uint64_t at, std::span<std::byte> out) { return file->read(at, out); },
                             file->size(), ro);
  if (!h) {
    cli::fail("%s: %s", url.c_str(), describe(url, h.error()).c_str());
    return std::nullopt;
  }
  return file_header{std::move(file), std::move(*h)};
}

/**
 * The tensor data of a model read from URLs, a part at a time: `read(t, offset, n)` is the bytes `[offset,
 * offset + n)` of tensor `t`'s data, from one request for the tensor that successive parts go on with
 * (http_file::read_stream), so a tensor of any size costs one request and bounded memory. A few shards'
 * files are kept open.
 */
class tensor_reader {
 public:
  /// Reads the tensors of `m`, whose headers were read from `url` (any shard's).
  tensor_reader(const gguf::model_header& m, std::string url) : model_(m), url_(std::move(url)) {}

  /// The URL of the file holding `t` (a tensor of the model): what its errors are about.
  std::string url_of(const gguf::tensor_info& t) const {
    const std::size_t k = model_.shard_of(t);
    return k < model_.n_shards() ? url_of_shard(k) : url_;
  }

  /// Bytes `[offset, offset + n)` of `t`'s data, valid until the next call; on failure the error (about
  /// `url_of(t)`), which the caller prints.
  gguf::result<std::span<const std::byte>> read(const gguf::tensor_info& t, std::uint64_t offset, std::size_t n) {
    const std::size_t k = model_.shard_of(t);
    if (k >= model_.n_shards()) return gguf::error{gguf::errc::not_found, "a tensor of another model"}.about(t.name);
    if (offset > t.n_bytes || n > t.n_bytes - offset) {
      return gguf::error{gguf::errc::out_of_range, "bytes outside the tensor"}.about(t.name);
    }
    gguf::net::http_file* f = file(k);
    if (!f) return last_error_;
    buffer_.resize(n);
    const std::uint64_t start = model_.shard(k).data_offset() + t.offset;
    if (auto r = f->read_stream(start + offset, buffer_, start + t.n_bytes); !r) return r.error();
    return std::span<const std::byte>(buffer_);
  }

 private:
  // Shard k's file, opened by a small first request (its header was read already), or null (last_error_).
  gguf::net::http_file* file(std::size_t k) {
    for (auto& [shard, f] : files_) {
      if (shard == k) return f.get();
    }
    gguf::net::http_options o = options();
    o.first_read = std::size_t{64} << 10;
    auto f = gguf::net::http_file::open(url_of_shard(k), o);
    if (!f) {
      last_error_ = f.error();
      return nullptr;
    }
    if (model_.file_size(k) != gguf::unknown_size && f->size() != model_.file_size(k)) {
      last_error_ =
          gguf::error{gguf::errc::io_error, "the file changed between two requests (another size)"}.about_file(
              f->url());
      return nullptr;
    }
    if (files_.size() == max_open) files_.erase(files_.begin());  // the one opened first
    files_.emplace_back(k, std::make_unique<gguf::net::http_file>(std::move(*f)));
    return files_.back().second.get();
  }
  std::string url_of_shard(std::size_t k) const {
    const auto parts = gguf::net::detail::split_url(url_);
    return parts.dir + model_.shard_name(k) + parts.tail;
  }

  static constexpr std::size_t max_open = 4;  // files kept open: a set of many shards holds few
  const gguf::model_header& model_;
  std::string url_;
  std::vector<std::pair<std::size_t, std::unique_ptr<gguf::net::http_file>>> files_;
  std::vector<std::byte> buffer_;
  gguf::error last_error_;
};

#else

/** Without libcurl: the `error:` line for a URL. */
inline int unsupported(const std::string& url) {
  return cli::fail("%s: this build of gguf cannot read URLs (libcurl was not found when it was built)", url.c_str());
}

#endif

}  // namespace remote

#endif  // GGUF_EXAMPLES_REMOTE_HPP
