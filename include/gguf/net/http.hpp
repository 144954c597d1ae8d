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
 * requests, a shard set from its first shard's URL, single tensors by their ranges (a big one streamed in
 * parts, `read_stream`). Optional: the CMake target `gguf::http` (defined when CMake finds libcurl) links
 * libcurl; the core headers never include this one.
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
  /// A response that receives less than `min_speed` bytes a second for this long fails: a server that
  /// stalls, never answers, or drips a few bytes at a time (libcurl's CURLOPT_LOW_SPEED_TIME, in whole
  /// seconds, at least 1).
  std::chrono::milliseconds stall_timeout{30000};
  /// The low-speed limit over `stall_timeout`, in bytes a second (CURLOPT_LOW_SPEED_LIMIT; 0 counts as 1:
  /// silence always fails).
  std::size_t min_speed = 1024;
  /// Each call that reads (`open`, `read`, `read_range`, `read_stream`) fails when it has not finished
  /// after this long, its retries and their waits included, however the server sends; 0: none. A response
  /// kept open between calls is not timed while the caller is away.
  std::chrono::milliseconds deadline{std::chrono::minutes(10)};
  unsigned retries = 2;                        ///< more attempts of a request that failed transiently
  std::chrono::milliseconds retry_delay{250};  ///< before the first retry; doubled for each next one
  /// The longest `Retry-After` honoured (a 429 or 503 asking for a longer wait fails at once; a shorter
  /// one replaces `retry_delay` when longer than it).
  std::chrono::milliseconds max_retry_after{30000};
  long max_redirects = 10;  ///< redirects followed (model hubs redirect to a CDN)
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
  switch (status) {
    case 200: return "the server does not support range requests (it answered one with the whole file)";
    case 404: return "not found (HTTP 404)";
    case 410: return "not found (HTTP 410: gone)";
    case 401:
    case 403: return "the server refuses access (HTTP 401/403: a token in HF_TOKEN?)";
    case 408: return "the server timed out waiting for the request (HTTP 408)";
    case 416: return "the server cannot serve the range (HTTP 416: an empty file?)";
    case 429: return "the server has had too many requests (HTTP 429)";
    case 500: return "the server failed (HTTP 500)";
    case 502: return "the server's gateway failed (HTTP 502)";
    case 503: return "the server is unavailable (HTTP 503)";
    case 504: return "the server's gateway timed out (HTTP 504)";
    default: break;
  }
  if (status >= 500) return "the server failed (HTTP 5xx)";
  return "the server answered with an unexpected HTTP status";
}

/// Why a 429 or 503 whose Retry-After asks for more than `max_retry_after` is not sent again.
constexpr const char* retry_after_message(long status) noexcept {
  return status == 429 ? "the server has had too many requests (HTTP 429) and asks for a longer wait than allowed"
                       : "the server is unavailable (HTTP 503) and asks for a longer wait than allowed";
}

/// The most bytes of response headers taken for one request (its redirects included): libcurl keeps
/// them all (and some versions take 300 KB, some no end of them); real servers send a few KB.
inline constexpr std::size_t max_header_bytes = std::size_t{256} << 10;

/// The status of a status line (`HTTP/1.1 206 Partial Content`, `HTTP/2 404`), or 0.
inline long parse_status(std::string_view line) noexcept {
  const std::size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return 0;
  long v = 0;
  const auto [p, ec] = std::from_chars(line.data() + sp + 1, line.data() + line.size(), v);
  return ec == std::errc() && p == line.data() + sp + 4 ? v : 0;
}

/// The seconds of a Retry-After in its delta-seconds form (an HTTP date is not honoured), or -1.
inline std::int64_t parse_retry_after(std::string_view v) noexcept {
  std::uint64_t s = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
  if (p == v.data() || p != v.data() + v.size()) return -1;
  return ec == std::errc::result_out_of_range || s > 86400 * 366 ? 86400 * 366 : static_cast<std::int64_t>(s);
}

}  // namespace detail
/// @endcond

/**
 * One file on an HTTP(S) server, read by range requests: `open` sends the first, the reads send the rest.
 * A byte source for `read_header` (`read(offset, buffer)`). Not copyable; moving it is cheap.
 *
 * Every response's status is checked before its body (a 404, 429 or 503 with an empty body says so); a
 * response that fails transiently (a dropped connection, a stall, HTTP 408, 429 or 5xx) is sent again for
 * what is still missing, `retries` times, after `retry_delay` doubled each time or the server's
 * `Retry-After`; each call ends by its `deadline` whatever the server does.
 */
class http_file {
 public:
  /**
   * Opens a file: one range request for its first `first_read` bytes (following redirects), which says
   * its size.
   * @return the file; `io_error` for a server that cannot be reached or does not answer in time, answers
   *         with an error (404 with ENOENT, as a missing file; 429 or 5xx after the retries), ignores range
   *         requests (200 to a Range), ends a response early, or sends headers too long; each about the URL
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
   *         stalls or drips, ends early, the call passes its deadline, or the file changed since `open`:
   *         another ETag or size)
   */
  result<std::size_t> read(std::uint64_t offset, std::span<std::byte> out) {
    s_->arm();
    return s_->read_on(offset, out, s_->size, s_->resumed);
  }

  /**
   * The bytes `[offset, offset + out.size())` in one request of their own (a tensor's data), with retries.
   * For more than a few megabytes, `read_stream` in parts: the deadline is per call.
   * @return `out.size()`; `out_of_bounds` for a range past the end of the file; or the error of `read`
   */
  result<std::size_t> read_range(std::uint64_t offset, std::span<std::byte> out) {
    return read_stream(offset, out, offset + out.size());
  }

  /**
   * The bytes `[offset, offset + out.size())` as one part of the range `[offset, end)` read in order (a
   * big tensor streamed through a small buffer): a call at the offset where the last one stopped goes on
   * with the same response, else one request for `[offset, end)` is sent. The response is paused while it
   * runs `read_ahead` bytes ahead of the reader, so any range costs one request and bounded memory. Each
   * call has its own retries and deadline.
   * @return `out.size()`; `out_of_bounds` when `[offset, offset + out.size())` is not inside `[offset,
   *         end)` and the file; or the error of `read`
   */
  result<std::size_t> read_stream(std::uint64_t offset, std::span<std::byte> out, std::uint64_t end) {
    if (end > s_->size || offset > end || out.size() > end - offset) {
      return error{errc::out_of_bounds, "a range past the end of the file"}.about_file(s_->url);
    }
    s_->arm();
    unsigned retried = 0;
    return s_->read_on(offset, out, end, retried);
  }

 private:
  using clock = std::chrono::steady_clock;

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
    unsigned resumed = 0;                                   // read's retries, for the whole file
    clock::time_point deadline = clock::time_point::max();  // the current call's
    bool expired = false;                                   // the current call passed its deadline
    // The response being received.
    bool active = false, paused = false, done = false;
    CURLcode code = CURLE_OK;
    const char* failure = nullptr;             // why a callback stopped the response (a literal)
    long status = 0;                           // the status the response was checked with
    long r_status = 0;                         // the status line of the response whose headers are arriving
    bool r_location = false;                   // it has a Location (libcurl follows a 3xx that has one)
    std::int64_t r_retry_after = -1;           // its Retry-After, in seconds
    std::string r_etag, r_range;               // its ETag and Content-Range
    std::uint64_t r_bytes = 0;                 // bytes of headers and body received for the request
    std::size_t r_header_bytes = 0;            // bytes of headers received for the request
    bool checked = false;                      // the final response's status and range were checked
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
#if LIBCURL_VERSION_NUM >= 0x073600
      curl_easy_setopt(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);  // a proxy's CONNECT answer is not the file's
#endif
      curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opt.connect_timeout.count()));
      // Less than min_speed bytes a second for stall_timeout: the response fails (silence or a drip).
      curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT,
                       static_cast<long>(std::clamp<std::size_t>(opt.min_speed, 1, std::size_t{1} << 30)));
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
      s->r_bytes += line.size();
      s->r_header_bytes += line.size();
      if (s->r_header_bytes > detail::max_header_bytes) {
        s->failure = "the server sent more than 256 KiB of response headers";
        return 0;
      }
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
        s->r_status = detail::parse_status(line);
        s->r_etag.clear();
        s->r_range.clear();
        s->r_location = false;
        s->r_retry_after = -1;
      } else if (line == "\r\n" || line == "\n") {
        return s->end_of_headers() ? line.size() : 0;
      } else if (const auto e = value("etag"); !e.empty()) {
        s->r_etag = e;
      } else if (const auto r = value("content-range"); !r.empty()) {
        s->r_range = r;
      } else if (!value("location").empty()) {
        s->r_location = true;
      } else if (const auto a = value("retry-after"); !a.empty()) {
        s->r_retry_after = detail::parse_retry_after(a);
      }
      return line.size();
    }

    // The end of a response's headers: the status is checked before any body (an error's body may be
    // empty), unless another response follows (1xx, or a redirect libcurl follows).
    bool end_of_headers() {
      if (r_status >= 100 && r_status < 200) return true;
      if (r_status >= 300 && r_status < 400 && r_location) return true;
      if (checked) return true;
      checked = check_response();
      return checked;
    }

    // Is the response the range asked for, of the same file?
    bool check_response() {
      status = r_status;
      if (status == 0) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
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
      if (!s->checked) {                     // headers without their end (not HTTP): checked all the same
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
      s->r_bytes += bytes;
      return bytes;
    }

    // A call begins: its deadline.
    void arm() {
      expired = false;
      deadline = opt.deadline.count() > 0 ? clock::now() + opt.deadline : clock::time_point::max();
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
      status = r_status = 0;
      r_location = false;
      r_retry_after = -1;
      r_bytes = r_header_bytes = 0;
      const std::string range = std::to_string(from) + "-" + std::to_string(to - 1);
      curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());
      curl_multi_add_handle(multi, easy);
      active = true;
    }
    void stop() {
      curl_multi_remove_handle(multi, easy);
      active = false;
    }

    // Drives the response until `pending` holds `need` bytes, it ends, or the call's deadline passes.
    void pump(std::size_t need) {
      limit = std::max({need, opt.read_ahead, std::size_t{1}});
      while (active && !done && pending.size() < need) {
        if (clock::now() >= deadline) {
          done = expired = true;
          code = CURLE_OPERATION_TIMEDOUT;
          failure = "the server did not send the bytes asked for before the deadline";
          return;
        }
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
        if (!done && !paused && pending.size() < need) {
          auto wait = std::chrono::milliseconds(100);
          if (deadline != clock::time_point::max()) {
            wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()),
                              std::chrono::milliseconds(0), wait);
          }
          curl_multi_poll(multi, nullptr, 0, static_cast<int>(wait.count()), nullptr);
        }
      }
    }

    // What failed in the response that ended: an error about the URL.
    error response_error() const {
      const char* why = failure;
      if (!why) {
        switch (code) {
          case CURLE_OPERATION_TIMEDOUT:
            why = r_bytes == 0 ? "the server did not answer in time"
                               : "the server sent too slowly (less than the minimum speed for the stall timeout)";
            break;
          case CURLE_PARTIAL_FILE: why = "the server ended the response early"; break;
          case CURLE_OUT_OF_MEMORY:  // what libcurl says of a header line over its limit (CURL_MAX_HTTP_HEADER)
#if LIBCURL_VERSION_NUM >= 0x080600
          case CURLE_TOO_LARGE:
#endif
            why = checked ? curl_easy_strerror(code)
                          : "the server sent a response header line longer than libcurl accepts (100 KB)";
            break;
          default: why = curl_easy_strerror(code);  // a static string
        }
      }
      error e{errc::io_error, why};
      if (status == 404 || status == 410) e = e.os(ENOENT);
      return e.about_file(url);
    }

    // Whether the response that failed may succeed when sent again.
    bool retryable() const noexcept {
      if (expired) return false;
      return failure ? detail::transient_status(status) : detail::transient_code(code);
    }

    // After a response that failed: whether to send it again, as the options, the server's Retry-After
    // and the call's deadline allow; waits before saying yes. `e` becomes the error to report otherwise.
    bool retry(unsigned& retried, std::chrono::milliseconds& delay, error& e) {
      e = response_error();
      const bool again = retried < opt.retries && retryable();
      stop();
      if (!again) return false;
      std::chrono::milliseconds wait = delay;
      if (r_retry_after >= 0 && (status == 429 || status == 503)) {
        const auto asked = std::chrono::milliseconds(r_retry_after * 1000);
        if (asked > opt.max_retry_after) {
          e = error{errc::io_error, detail::retry_after_message(status)}.about_file(url);
          return false;
        }
        wait = std::max(wait, asked);
      }
      if (deadline != clock::time_point::max() && clock::now() + wait >= deadline) return false;
      std::this_thread::sleep_for(wait);
      ++retried;
      delay *= 2;
      return true;
    }

    error first_request() {
      arm();
      const std::size_t want = std::max<std::size_t>(opt.first_read, 1);
      std::chrono::milliseconds delay = opt.retry_delay;
      unsigned retried = 0;
      for (;;) {
        start(0, want);
        pump(want);
        if (checked && !failure && (pending.size() >= want || (done && code == CURLE_OK && pending.size() >= size))) {
          const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>({pending.size(), want, size}));
          head.assign(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(n));
          stop();
          return {};
        }
        if (done && code == CURLE_OK && !failure) {
          stop();
          return error{errc::io_error, "the server's response has fewer bytes than its Content-Range says"}.about_file(
              url);
        }
        error e;
        if (!retry(retried, delay, e)) return e;
      }
    }

    // out <- the file's bytes at `offset` (up to `end`): from the first response, then from a response
    // for [at, end) kept open across calls (started again for a read elsewhere); a response that fails
    // is sent again from where it stood while `retried` allows.
    result<std::size_t> read_on(std::uint64_t offset, std::span<std::byte> out, std::uint64_t end, unsigned& retried) {
      if (offset >= end || out.empty()) return std::size_t{0};
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), end - offset));
      std::size_t done_bytes = 0;
      if (offset < head.size()) {  // from the first response
        done_bytes = std::min(n, head.size() - static_cast<std::size_t>(offset));
        std::memcpy(out.data(), head.data() + offset, done_bytes);
      }
      std::chrono::milliseconds delay = opt.retry_delay;
      while (done_bytes < n) {
        const std::uint64_t at = offset + done_bytes;
        if (!active || want_to != end || at < pos || at > pos + pending.size()) start(at, end);
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
          error e;
          if (!retry(retried, delay, e)) return e;
          continue;
        }
        std::memcpy(out.data() + done_bytes, pending.data(), got);
        pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(got));
        pos += got;
        done_bytes += got;
      }
      return done_bytes;
    }
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
 * @return as `read_model_header`: an error of a shard's server is about the shard's file name (in a
 *         set) or the URL (one file)
 */
inline result<model_header> read_model_header(std::string_view url, const http_options& opt = {},
                                              const parse_options& parse = {}) {
  const detail::url_parts parts = detail::split_url(url);
  // The set names the shard an error is about (a file name); the URL would name it twice.
  const auto unnamed = [](error e) { return e.about(""); };
  struct remote {
    std::shared_ptr<http_file> file;
    result<std::size_t> operator()(std::uint64_t offset, std::span<std::byte> out) const {
      auto r = file->read(offset, out);
      if (!r) return error(r.error()).about("");
      return r;
    }
  };
  read_header_options ro;
  ro.first_read = opt.first_read;
  ro.max_step = opt.read_ahead;
  ro.parse = parse;
  auto m = ::gguf::read_model_header(
      parts.name,
      [&](std::string_view name) -> result<sized_source<remote>> {
        auto f = http_file::open(parts.dir + std::string(name) + parts.tail, opt);
        if (!f) return unnamed(f.error());
        auto shared = std::make_shared<http_file>(std::move(*f));
        const std::uint64_t size = shared->size();
        return sized_source<remote>{remote{std::move(shared)}, size};
      },
      ro);
  if (!m && m.error().code == errc::io_error && m.error().subject().empty()) {
    return error(m.error()).about_file(url);  // one file's
  }
  return m;
}

}  // namespace net
GGUF_END_NAMESPACE

#endif  // GGUF_NET_HTTP_HPP
