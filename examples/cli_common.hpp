// What the command-line tools share: the `error:` line for a refused file, and a binary stdout.
#ifndef GGUF_EXAMPLES_CLI_COMMON_HPP
#define GGUF_EXAMPLES_CLI_COMMON_HPP

#include <gguf/gguf.hpp>

#include <cstdio>
#include <string>

#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#endif

/** Bytes out as written: Windows' text mode would turn every LF of JSON or float data into CR LF. */
inline void binary_stdout() {
#if defined(_WIN32)
  _setmode(_fileno(stdout), _O_BINARY);
#endif
}

/** The failing field and its offset, then what probably happened to the file (gguf::explain). */
inline void print_open_error(const char* path, const gguf::error& e) {
  std::string line = gguf::to_string(e);
  if (e.code != gguf::errc::io_error) {
    // The refused file is no longer mapped; map it again to look at the damage.
    if (auto m = gguf::mapped_file::open(path)) line = gguf::explain(m->bytes(), e);
  }
  std::fprintf(stderr, "error: %s: %s\n", path, line.c_str());
}

#endif  // GGUF_EXAMPLES_CLI_COMMON_HPP
