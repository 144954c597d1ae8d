// The `error:` line the command-line tools print for a file gguf::open refused: the failing field and
// its offset, then what probably happened to the file (gguf::explain), on one line.
#ifndef GGUF_EXAMPLES_CLI_ERROR_HPP
#define GGUF_EXAMPLES_CLI_ERROR_HPP

#include <gguf/gguf.hpp>

#include <cstdio>
#include <string>

inline void print_open_error(const char* path, const gguf::error& e) {
  std::string line = gguf::to_string(e);
  if (e.code != gguf::errc::io_error) {
    // The refused file is no longer mapped; map it again to look at the damage.
    if (auto m = gguf::mapped_file::open(path)) line = gguf::explain(m->bytes(), e);
  }
  std::fprintf(stderr, "error: %s: %s\n", path, line.c_str());
}

#endif  // GGUF_EXAMPLES_CLI_ERROR_HPP
