// Where gguf-bench finds ggml for its anchors: $GGUF_BENCH_GGML (a libggml-base.so, e.g. one
// bench/build_ggml_native.sh built with -O3 -march=native), else the shared oracle's prebuilt library
// ($GGUF_ORACLE_HOME, or ~/.cache/gguf-oracle). ggml is never linked: it is opened at run time.
#ifndef GGUF_BENCH_GGML_LIBRARY_HPP
#define GGUF_BENCH_GGML_LIBRARY_HPP

#include <cstdlib>
#include <string>

namespace bench {

/// The path of the ggml library to load, and whether the user named it (only then is a failure worth a word).
struct ggml_library_path {
  std::string path;     ///< empty: nowhere to look
  bool chosen = false;  ///< from $GGUF_BENCH_GGML
};

inline ggml_library_path ggml_library() {
  const char* chosen = std::getenv("GGUF_BENCH_GGML");
  if (chosen && *chosen) return {chosen, true};
  const char* oracle = std::getenv("GGUF_ORACLE_HOME");
  const char* home = std::getenv("HOME");
  std::string path;
  if (oracle && *oracle) {
    path = oracle;
  } else if (home && *home) {
    path = std::string(home) + "/.cache/gguf-oracle";
  } else {
    return {};
  }
  return {path + "/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so", false};
}

}  // namespace bench

#endif  // GGUF_BENCH_GGML_LIBRARY_HPP
