// Files for the tests: reading and writing whole files, and a fresh scratch directory per test.
#ifndef GGUF_TESTS_TEST_FILES_HPP
#define GGUF_TESTS_TEST_FILES_HPP

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace test {

/** The bytes of the file at `p` (empty when it cannot be read). */
inline std::vector<std::byte> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::vector<char> c{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::byte> out(c.size());
  if (!c.empty()) std::memcpy(out.data(), c.data(), c.size());
  return out;
}

/** Writes `content` to `p`, replacing it. */
inline void write_file(const std::filesystem::path& p, const std::vector<std::byte>& content) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
}

/** Copies `from` over `to` (not `std::filesystem::copy_file`: mingw's overwrite_existing fails on an existing target).
 */
inline void copy_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  write_file(to, read_file(from));
}

/** `name` in the tests' scratch directory `suite` (created). */
inline std::filesystem::path scratch(const std::string& suite, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / suite;
  std::filesystem::create_directories(dir);
  return dir / name;
}

/** An empty directory `name` in the tests' scratch directory `suite` (emptied if it was there). */
inline std::filesystem::path fresh_dir(const std::string& suite, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / suite / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace test

#endif  // GGUF_TESTS_TEST_FILES_HPP
