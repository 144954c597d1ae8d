#ifndef GGUF_PLATFORM_PATHS_HPP
#define GGUF_PLATFORM_PATHS_HPP

#include "gguf/version.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gguf/result.hpp"

/**
 * @file
 * Paths as the bytes the format and the messages use: UTF-8 everywhere, whatever the OS's own encoding.
 */

GGUF_BEGIN_NAMESPACE
namespace detail {

/// A path as UTF-8 bytes: on POSIX the bytes themselves (no conversion, nothing to throw), on Windows its
/// UTF-16 converted.
inline std::string path_utf8(const std::filesystem::path& p) {
#if defined(_WIN32)
  const std::u8string u = p.u8string();
  return {reinterpret_cast<const char*>(u.data()), u.size()};
#else
  return p.native();
#endif
}
/// A path from UTF-8 bytes (on POSIX, the bytes as they are).
inline std::filesystem::path utf8_path(std::string_view s) {
#if defined(_WIN32)
  return std::u8string(reinterpret_cast<const char8_t*>(s.data()), s.size());
#else
  return std::string(s);
#endif
}

/// The names in `dir` ("" for the current directory), as UTF-8; `io_error` when it cannot be read.
inline result<std::vector<std::string>> directory_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir.empty() ? std::filesystem::path(".") : dir, ec);
  for (std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
    names.push_back(path_utf8(it->path().filename()));
  }
  if (ec) return error{errc::io_error, "cannot read the directory"}.os(ec.value()).about_file(path_utf8(dir));
  return names;
}

}  // namespace detail
GGUF_END_NAMESPACE

#endif  // GGUF_PLATFORM_PATHS_HPP
