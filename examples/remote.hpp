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

/** The HTTP options from the environment: HF_TOKEN, GGUF_HTTP_TIMEOUT (seconds). */
inline gguf::net::http_options options() {
  gguf::net::http_options o;
  o.bearer_token = gguf::net::token_from_environment();
  if (const char* t = std::getenv("GGUF_HTTP_TIMEOUT"); t && *t) {  // NOLINT(concurrency-mt-unsafe)
    char* end = nullptr;
    const double s = std::strtod(t, &end);
    if (*end == '\0' && s > 0 && s < 86400) {
      const auto ms = std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000));
      o.stall_timeout = ms;
      o.connect_timeout = ms;
    }
  }
  return o;
}

/** A model's headers from a URL; on failure prints the `error:` line. */
inline std::optional<gguf::model_header> open_model(const std::string& url) {
  auto m = gguf::net::read_model_header(url, options());
  if (!m) {
    cli::fail("%s: %s", url.c_str(), gguf::to_string(m.error()).c_str());
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
    cli::fail("%s: %s", url.c_str(), gguf::to_string(f.error()).c_str());
    return std::nullopt;
  }
  auto file = std::make_unique<gguf::net::http_file>(std::move(*f));
  gguf::read_header_options ro;
  ro.first_read = o.first_read;
  ro.max_step = o.read_ahead;
  auto h = gguf::read_header([&file](std::uint64_t at, std::span<std::byte> out) { return file->read(at, out); },
                             file->size(), ro);
  if (!h) {
    cli::fail("%s: %s", url.c_str(), gguf::to_string(h.error()).c_str());
    return std::nullopt;
  }
  return file_header{std::move(file), std::move(*h)};
}

/**
 * The tensors of a model read from URLs, with their data fetched on demand, one range request a tensor:
 * `with_data(t)` is `t` with `data` pointing into a buffer this object keeps until the next call.
 */
class tensor_fetcher {
 public:
  explicit tensor_fetcher(const gguf::model_header& m, std::string url) : model_(m), url_(std::move(url)) {}
  /** `t` (a tensor of the model) with its bytes; on failure prints the `error:` line. */
  std::optional<gguf::tensor_info> with_data(const gguf::tensor_info& t) {
    const std::size_t k = model_.shard_of(t);
    if (k >= model_.n_shards()) return std::nullopt;
    if (files_.size() < model_.n_shards()) files_.resize(model_.n_shards());
    if (!files_[k]) {
      const auto parts = gguf::net::detail::split_url(url_);
      auto f = gguf::net::http_file::open(parts.dir + model_.shard_name(k) + parts.tail, options());
      if (!f) {
        cli::fail("%s: %s", url_.c_str(), gguf::to_string(f.error()).c_str());
        return std::nullopt;
      }
      files_[k] = std::make_unique<gguf::net::http_file>(std::move(*f));
    }
    buffer_.resize(static_cast<std::size_t>(t.n_bytes));
    const std::uint64_t at = model_.shard(k).data_offset() + t.offset;
    if (auto r = files_[k]->read_range(at, buffer_); !r) {
      cli::fail("%s: %s", url_.c_str(), gguf::to_string(r.error()).c_str());
      return std::nullopt;
    }
    gguf::tensor_info out = t;
    out.data = buffer_;
    return out;
  }

 private:
  const gguf::model_header& model_;
  std::string url_;
  std::vector<std::unique_ptr<gguf::net::http_file>> files_;
  std::vector<std::byte> buffer_;
};

#else

/** Without libcurl: the `error:` line for a URL. */
inline int unsupported(const std::string& url) {
  return cli::fail("%s: this build of gguf cannot read URLs (libcurl was not found when it was built)", url.c_str());
}

#endif

}  // namespace remote

#endif  // GGUF_EXAMPLES_REMOTE_HPP
