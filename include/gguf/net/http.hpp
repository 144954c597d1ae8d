#ifndef GGUF_NET_HTTP_HPP
#define GGUF_NET_HTTP_HPP

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#if defined(_WIN32)
#include <winsock2.h>
#else
#include <sys/socket.h>
#endif

#include "gguf/read_header.hpp"
#include "gguf/result.hpp"
#include "gguf/shard_set.hpp"
#include "gguf/version.hpp"

/**
 * @file
 * Reading GGUF files where they lie, over HTTP(S) range requests (libcurl): a header in one or two
 * requests, a shard set from its first shard's URL, single tensors by their ranges. Optional: the CMake
 * target `gguf::http` (defined when CMake finds libcurl) links libcurl; the core headers never include
 * this one.
 *
 * A file is read with a first request for its first `first_read` bytes (which also says its size, its
 * ETag and whether the server honours ranges), then, for a header longer than that, one request for the
 * rest of the file that is read only as far as the header goes and closed there: the response is paused
 * whenever it runs `read_ahead` bytes ahead of the reader, so a 40 GB file costs its header and at most
 * `read_ahead` bytes more (and what the connection's buffers hold).
 */

GGUF_BEGIN_NAMESPACE
namespace net {

/** How the HTTP reader talks to servers. */
struct http_options {
  std::chrono::milliseconds connect_timeout{15000};  ///< to connect (each attempt)
  /// A request that receives nothing for this long fails (a server that stalls, or never answers).
  std::chrono::milliseconds stall_timeout{30000};
  unsigned retries = 2;                        ///< more attempts of a request that failed transiently
  std::chrono::milliseconds retry_delay{250};  ///< before the first retry; doubled for each next one
  long max_redirects = 10;                     ///< redirects followed (model hubs redirect to a CDN)
  /// Sent as `Authorization: Bearer ...` to the URL's own host (never to a host it redirects to); empty:
  /// none. `token_from_environment()` reads `HF_TOKEN`.
  std::string bearer_token;
  std::size_t first_read = std::size_t{2} << 20;  ///< the first request's size
  /// How far a response may run ahead of the reader before it is paused (and how far past what the
  /// parser asks for a header is read).
  std::size_t read_ahead = std::size_t{512} << 10;
  /// The connections' receive buffer (SO_RCVBUF; 0: the system's, which grows to megabytes): with
  /// `read_ahead`, what a response that is stopped can have cost. Raise it to fetch big tensors from far.
  int receive_buffer = 256 << 10;
};

/** The token of `HF_TOKEN` (else `HUGGING_FACE_HUB_TOKEN`), or empty. */
inline std::string token_from_environment() {
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (const char* v = std::getenv(name); v && *v) return v;  // NOLINT(concurrency-mt-unsafe)
  }
  return {};
}

/** Whether `s` is an http:// or https:// URL. */
constexpr bool is_url(std::string_view s) noexcept {
  const auto starts = [s](std::string_view p) {
    return s.size() >= p.size() && std::equal(p.begin(), p.end(), s.begin(), [](char a, char b) {
             return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
           });
  };
  return starts("http://") || starts("https://");
}

/// @cond INTERNAL
namespace detail {

/// libcurl's global state, set up once for the process.
inline bool curl_ready() noexcept {
  static const bool ok = [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return false;
    std::atexit(curl_global_cleanup);  // nothing of libcurl's left for a leak checker at exit
    return true;
  }();
  return ok;
}

/// The file name of a URL (its last path segment) and what surrounds it: the URL is `dir + name + tail`.
struct url_parts {
  std::string dir, name, tail;
};
inline url_parts split_url(std::string_view url) {
  const std::size_t end = std::min(url.find('?'), url.find('#'));
  const std::string_view path = url.substr(0, end);
  const std::size_t slash = path.rfind('/');
  const std::size_t at = slash == std::string_view::npos ? 0 : slash + 1;
  return {std::string(url.substr(0, at)), std::string(path.substr(at)),
          end == std::string_view::npos ? std::string() : std::string(url.substr(end))};
}

/// `bytes FIRST-LAST/TOTAL` (a Content-Range of one range of a known size) into its three numbers.
inline bool parse_content_range(std::string_view v, std::uint64_t& first, std::uint64_t& last,
                                std::uint64_t& total) noexcept {
  if (v.substr(0, 6) != "bytes ") return false;
  const char* p = v.data() + 6;
  const char* end = v.data() + v.size();
  const auto number = [&](std::uint64_t& out, char next) {
    const auto [q, ec] = std::from_chars(p, end, out);
    if (ec != std::errc() || q == p || (next != '\0' ? q == end || *q != next : q != end)) return false;
    p = next != '\0' ? q + 1 : q;
    return true;
  };
  return number(first, '-') && number(last, '/') && number(total, '\0');
}

/// Whether a request that failed with HTTP status `status` may succeed when sent again.
constexpr bool transient_status(long status) noexcept { return status == 408 || status == 429 || status >= 500; }

/// Whether a request that libcurl failed with `c` may succeed when sent again.
inline bool transient_code(CURLcode c) noexcept {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_COULDNT_RESOLVE_HOST: return true;
    default: return false;
  }
}

/// Why a response with HTTP status `status` (not 206) is not the range asked for.
inline const char* status_message(long status) noexcept {
  if (status == 200) return "the server does not support range requests (it answered one with the whole file)";
  if (status == 404 || status == 410) return "not found (HTTP 404)";
  if (status == 401 || status == 403) return "the server refuses access (HTTP 401/403: a token in HF_TOKEN?)";
  if (status == 416) return "the server cannot serve the range (HTTP 416: an empty file?)";
  if (status == 429) return "the server has had too many requests (HTTP 429)";
  if (status >= 500) return "the server failed (HTTP 5xx)";
  return "the server answered with an unexpected HTTP status";
}

}  // namespace detail
/// @endcond

/**
 * One file on an HTTP(S) server, read by range requests: `open` sends the first, the reads send the rest.
 * A byte source for `read_header` (`read(offset, buffer)`). Not copyable; moving it is cheap.
 */
class http_file {
 public:
  /**
   * Opens a file: one range request for its first `first_read` bytes (following redirects), which says
   * its size.
   * @return the file; `io_error` for a server that cannot be reached or does not answer in time, answers
   *         with an error (404 with ENOENT, as a missing file), ignores range requests (200 to a Range), or
   *         ends a response early; each about the URL
   */
  static result<http_file> open(std::string url, const http_options& opt = {}) {
    if (!detail::curl_ready()) return error{errc::io_error, "libcurl cannot be initialised"}.about_file(url);
    http_file f;
    f.s_ = std::make_unique<state>(std::move(url), opt);
    if (!f.s_->easy || !f.s_->multi) return error{errc::io_error, "libcurl cannot make a handle"}.about_file(f.s_->url);
    if (error e = f.s_->first_request(); e) return e;
    return f;
  }

  /** The file's size, from the first response's Content-Range. */
  std::uint64_t size() const noexcept { return s_->size; }
  /** The URL it was opened by. */
  const std::string& url() const noexcept { return s_->url; }
  /** The HTTP requests sent so far (retries and the ones a redirect made count as one). */
  std::size_t requests() const noexcept { return s_->requests; }
  /** The bytes of response bodies received so far. */
  std::uint64_t bytes_received() const noexcept { return s_->received; }

  /**
   * The file's bytes at `offset` into `out`: from the first response, or a response for the rest of the
   * file kept open for the next reads (a read elsewhere starts another).
   * @return the bytes written: all of `out` but at the end of the file; or `io_error` (the server fails,
   *         stalls, ends early, or the file changed since `open`: another ETag or size)
   */
  result<std::size_t> read(std::uint64_t offset, std::span<std::byte> out) { return s_->read(offset, out); }

  /**
   * The bytes `[offset, offset + out.size())` in one request of their own (a tensor's data), with retries.
   * @return `out.size()`, or the error of `read`
   */
  result<std::size_t> read_range(std::uint64_t offset, std::span<std::byte> out) { return s_->read_range(offset, out); }

 private:
  struct state {
    std::string url;
    http_options opt;
    CURL* easy = nullptr;
    CURLM* multi = nullptr;
    curl_slist* headers = nullptr;
    std::vector<std::byte> head;  // the first response: the file's bytes from 0
    std::uint64_t size = 0;
    bool known = false;  // size and etag are the first good response's
    std::string etag;    // the first response's, if any
    std::size_t requests = 0;
    std::uint64_t received = 0;
    // The response being received.
    bool active = false, paused = false, done = false;
    CURLcode code = CURLE_OK;
    const char* failure = nullptr;  // why the write callback stopped the response (a literal)
    long status = 0;
    std::string r_etag, r_range;               // this response's ETag and Content-Range
    bool checked = false;                      // its headers were checked (at its first body bytes)
    std::uint64_t want_from = 0, want_to = 0;  // the range asked for, [from, to)
    std::uint64_t pos = 0;                     // the file offset of pending[0]
    std::vector<std::byte> pending;            // received, not yet read
    std::size_t limit = 1;                     // pending's size at which the response is paused

    state(std::string u, http_options o)
        : url(std::move(u)), opt(std::move(o)), easy(curl_easy_init()), multi(curl_multi_init()) {
      if (!easy || !multi) return;
      curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
      curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(easy, CURLOPT_MAXREDIRS, opt.max_redirects);
#if LIBCURL_VERSION_NUM >= 0x075500
      curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
      curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
      curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opt.connect_timeout.count()));
      // Nothing received for stall_timeout: the request fails.
      curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
      curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME,
                       std::max(1L, static_cast<long>((opt.stall_timeout.count() + 999) / 1000)));
      const std::string agent = "gguf/" + std::to_string(GGUF_VERSION_MAJOR) + "." +
                                std::to_string(GGUF_VERSION_MINOR) + "." + std::to_string(GGUF_VERSION_PATCH);
      curl_easy_setopt(easy, CURLOPT_USERAGENT, agent.c_str());  // libcurl keeps a copy
      curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &state::on_header);
      curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
      curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &state::on_body);
      curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
      if (opt.receive_buffer > 0) {
        curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, &state::on_socket);
        curl_easy_setopt(easy, CURLOPT_SOCKOPTDATA, this);
      }
      if (!opt.bearer_token.empty()) {
        headers = curl_slist_append(headers, ("Authorization: Bearer " + opt.bearer_token).c_str());
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
      }
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;
    state(state&&) = delete;
    state& operator=(state&&) = delete;
    ~state() {
      if (active) curl_multi_remove_handle(multi, easy);
      if (multi) curl_multi_cleanup(multi);
      if (easy) curl_easy_cleanup(easy);
      curl_slist_free_all(headers);
    }

    static int on_socket(void* self, curl_socket_t fd, curlsocktype purpose) noexcept {
      if (purpose == CURLSOCKTYPE_IPCXN) {
        const int size = static_cast<state*>(self)->opt.receive_buffer;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, reinterpret_cast<const char*>(&size), sizeof size);
      }
      return CURL_SOCKOPT_OK;
    }

    static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self) noexcept {
      auto* s = static_cast<state*>(self);
      const std::string_view line(data, size * n);
      const auto value = [&](std::string_view name) -> std::string_view {
        if (line.size() <= name.size() || line[name.size()] != ':') return {};
        for (std::size_t i = 0; i < name.size(); ++i) {
          char c = line[i];
          if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
          if (c != name[i]) return {};
        }
        std::string_view v = line.substr(name.size() + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
        return v;
      };
      if (line.substr(0, 5) == "HTTP/") {  // each response of a redirect chain starts over
        s->r_etag.clear();
        s->r_range.clear();
      } else if (const auto e = value("etag"); !e.empty()) {
        s->r_etag = e;
      } else if (const auto r = value("content-range"); !r.empty()) {
        s->r_range = r;
      }
      return size * n;
    }

    // The first body bytes of a response: is it the range asked for, of the same file?
    bool check_response() {
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
      if (status != 206) {
        failure = detail::status_message(status);
        return false;
      }
      // Content-Range: bytes FIRST-LAST/TOTAL
      std::uint64_t first = 0, last = 0, total = 0;
      if (!detail::parse_content_range(r_range, first, last, total) || last < first || last >= total) {
        failure = "the server's Content-Range is not one range of a known size";
        return false;
      }
      if (first != want_from) {
        failure = "the server sent another range than the one asked for";
        return false;
      }
      if (known && (total != size || (!etag.empty() && !r_etag.empty() && r_etag != etag))) {
        failure = total != size ? "the file changed between two requests (another size)"
                                : "the file changed between two requests (another ETag)";
        return false;
      }
      if (!known) {
        size = total;
        etag = r_etag;
        known = true;
      }
      return true;
    }

    static std::size_t on_body(char* data, std::size_t size1, std::size_t n, void* self) noexcept {
      auto* s = static_cast<state*>(self);
      const std::size_t bytes = size1 * n;
      if (!s->checked) {
        if (!s->check_response()) return 0;  // stops the transfer: CURLE_WRITE_ERROR
        s->checked = true;
      }
      // Paused while the reader has enough ahead of it: libcurl hands the same bytes again on resuming.
      if (s->pending.size() >= s->limit) {
        s->paused = true;
        return CURL_WRITEFUNC_PAUSE;
      }
#if GGUF_EXCEPTIONS
      try {
        s->pending.insert(s->pending.end(), reinterpret_cast<const std::byte*>(data),
                          reinterpret_cast<const std::byte*>(data) + bytes);
      } catch (...) {  // nothing may leave a C callback
        s->failure = "out of memory";
        return 0;
      }
#else
      s->pending.insert(s->pending.end(), reinterpret_cast<const std::byte*>(data),
                        reinterpret_cast<const std::byte*>(data) + bytes);
#endif
      s->received += bytes;
      return bytes;
    }

    // Starts a request for [from, to).
    void start(std::uint64_t from, std::uint64_t to) {
      if (active) stop();
      ++requests;
      want_from = from;
      want_to = to;
      pos = from;
      pending.clear();
      checked = paused = done = false;
      code = CURLE_OK;
      failure = nullptr;
      status = 0;
      const std::string range = std::to_string(from) + "-" + std::to_string(to - 1);
      curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());
      curl_multi_add_handle(multi, easy);
      active = true;
    }
    void stop() {
      curl_multi_remove_handle(multi, easy);
      active = false;
    }

    // Drives the response until `pending` holds `need` bytes or it ends.
    void pump(std::size_t need) {
      limit = std::max({need, opt.read_ahead, std::size_t{1}});
      while (active && !done && pending.size() < need) {
        if (paused) {
          paused = false;
          curl_easy_pause(easy, CURLPAUSE_CONT);
        }
        int running = 0;
        curl_multi_perform(multi, &running);
        int left = 0;
        while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
          if (m->msg == CURLMSG_DONE) {
            done = true;
            code = m->data.result;
          }
        }
        if (!done && !paused && pending.size() < need) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
      }
    }

    // What failed in the response that ended: an error about the URL.
    error response_error() const {
      const char* why = failure;
      if (!why) {
        why = code == CURLE_OPERATION_TIMEDOUT ? "the server did not answer in time"
              : code == CURLE_PARTIAL_FILE     ? "the server ended the response early"
                                               : curl_easy_strerror(code);  // a static string
      }
      error e{errc::io_error, why};
      if (status == 404 || status == 410) e = e.os(ENOENT);
      return e.about_file(url);
    }

    // Whether the response that failed may succeed when sent again.
    bool retryable() const noexcept {
      return failure ? detail::transient_status(status) : detail::transient_code(code);
    }

    // A whole range [from, to) into out, a response at a time; one that fails transiently is sent again
    // for what is still missing, as the options allow.
    error fetch(std::uint64_t from, std::uint64_t to, std::byte* out) {
      std::chrono::milliseconds delay = opt.retry_delay;
      unsigned attempt = 0;
      std::uint64_t at = from;
      start(at, to);
      while (at < to) {
        pump(static_cast<std::size_t>(std::min<std::uint64_t>(to - at, std::uint64_t{4} * opt.read_ahead + 1)));
        const std::size_t got = static_cast<std::size_t>(std::min<std::uint64_t>(pending.size(), to - at));
        if (got > 0) {
          std::memcpy(out + (at - from), pending.data(), got);
          pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(got));
          pos += got;
          at += got;
          continue;
        }
        if (done && code == CURLE_OK && !failure) {  // a clean end, short of the range
          stop();
          return error{errc::io_error, "the server's response has fewer bytes than its Content-Range says"}.about_file(
              url);
        }
        error e = response_error();
        const bool retry = attempt++ < opt.retries && retryable();
        stop();
        if (!retry) return e;
        std::this_thread::sleep_for(delay);
        delay *= 2;
        start(at, to);
      }
      stop();
      return {};
    }

    error first_request() {
      head.resize(std::max<std::size_t>(opt.first_read, 1));
      std::chrono::milliseconds delay = opt.retry_delay;
      for (unsigned attempt = 0;; ++attempt) {
        start(0, head.size());
        pump(head.size());
        if (checked && (pending.size() >= head.size() || (done && code == CURLE_OK && pending.size() >= size))) {
          head.assign(pending.begin(), pending.end());
          if (head.size() > size) head.resize(static_cast<std::size_t>(size));
          stop();
          return {};
        }
        if (done && code == CURLE_OK && !failure) {
          stop();
          return error{errc::io_error, "the server's response has fewer bytes than its Content-Range says"}.about_file(
              url);
        }
        const bool retry = attempt < opt.retries && retryable();
        error e = response_error();
        stop();
        if (!retry) return e;
        std::this_thread::sleep_for(delay);
        delay *= 2;
      }
    }

    result<std::size_t> read(std::uint64_t offset, std::span<std::byte> out) {
      if (offset >= size || out.empty()) return std::size_t{0};
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size - offset));
      std::size_t done_bytes = 0;
      if (offset < head.size()) {  // from the first response
        done_bytes = std::min(n, head.size() - static_cast<std::size_t>(offset));
        std::memcpy(out.data(), head.data() + offset, done_bytes);
      }
      while (done_bytes < n) {
        const std::uint64_t at = offset + done_bytes;
        if (!active || at < pos || at > pos + pending.size()) {
          start(at, size);  // the rest of the file, read as far as it is wanted
        }
        // Drop what was passed over, then wait for what is wanted (at most read_ahead at a time).
        const auto skip = static_cast<std::size_t>(at - pos);
        pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(skip));
        pos = at;
        const std::size_t want = std::min(n - done_bytes, std::max<std::size_t>(opt.read_ahead, 1));
        pump(want);
        const std::size_t got = std::min(want, pending.size());
        if (got == 0) {
          if (done && code == CURLE_OK && !failure) {
            stop();
            return error{errc::io_error, "the server's response has fewer bytes than its Content-Range says"}
                .about_file(url);
          }
          error e = response_error();
          stop();
          // A response that failed is sent again from where it stood, `retries` times in all for the file.
          if (retryable() && resumed++ < opt.retries) continue;
          return e;
        }
        std::memcpy(out.data() + done_bytes, pending.data(), got);
        pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(got));
        pos += got;
        done_bytes += got;
      }
      return done_bytes;
    }

    result<std::size_t> read_range(std::uint64_t offset, std::span<std::byte> out) {
      if (offset > size || out.size() > size - offset) {
        return error{errc::out_of_bounds, "a range past the end of the file"}.about_file(url);
      }
      if (out.empty()) return std::size_t{0};
      if (offset + out.size() <= head.size()) {
        std::memcpy(out.data(), head.data() + offset, out.size());
        return out.size();
      }
      if (error e = fetch(offset, offset + out.size(), out.data()); e.code != errc::success) return e;
      return out.size();
    }

    unsigned resumed = 0;
  };

  http_file() = default;
  std::unique_ptr<state> s_;
};

/**
 * Reads a model's headers from the URL of one file or of any shard of a split model (the other shards'
 * URLs are its own with their file names), each with `http_file` and `read_header`: for a typical file
 * one request, two for a header longer than `first_read`.
 * @param url   an http:// or https:// URL of the model or of any of its shards
 * @param opt   the HTTP options
 * @param parse the parser's limits
 * @return as `read_model_header`
 */
inline result<model_header> read_model_header(std::string_view url, const http_options& opt = {},
                                              const parse_options& parse = {}) {
  const detail::url_parts parts = detail::split_url(url);
  struct remote {
    std::shared_ptr<http_file> file;
    result<std::size_t> operator()(std::uint64_t offset, std::span<std::byte> out) const {
      return file->read(offset, out);
    }
  };
  read_header_options ro;
  ro.first_read = opt.first_read;
  ro.max_step = opt.read_ahead;
  ro.parse = parse;
  return ::gguf::read_model_header(
      parts.name,
      [&](std::string_view name) -> result<sized_source<remote>> {
        auto f = http_file::open(parts.dir + std::string(name) + parts.tail, opt);
        if (!f) return f.error();
        auto shared = std::make_shared<http_file>(std::move(*f));
        const std::uint64_t size = shared->size();
        return sized_source<remote>{remote{std::move(shared)}, size};
      },
      ro);
}

}  // namespace net
GGUF_END_NAMESPACE

#endif  // GGUF_NET_HTTP_HPP
