// gguf-bench: parse. Opens (maps) and fully parses and validates the file named by the environment
// variable GGUF_BENCH_PARSE_FILE (default: the reduced deepseek-llm vocabulary in tests/data), every
// string of every array walked and bounds-checked, then unmaps it: the whole cost of `gguf::open`.
#include <benchmark/benchmark.h>
#include <gguf/gguf.hpp>

#include <cstdlib>
#include <string>

namespace {

std::string parse_file() {
  const char* env = std::getenv("GGUF_BENCH_PARSE_FILE");
  return env && *env ? env : GGUF_BENCH_DEFAULT_FILE;
}

void parse(benchmark::State& state) {
  const std::string path = parse_file();
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto g = gguf::open(path.c_str());
    if (!g) {
      state.SkipWithError(("cannot parse " + path + ": " + gguf::to_string(g.error())).c_str());
      return;
    }
    bytes = g->bytes().size();
    benchmark::DoNotOptimize(g->metadata().size());
  }
  state.SetLabel(path.substr(path.find_last_of('/') + 1));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(parse)->Unit(benchmark::kMicrosecond);

// The parse alone, on bytes already mapped and paged in: the reader's own speed.
void parse_mapped(benchmark::State& state) {
  const std::string path = parse_file();
  auto m = gguf::mapped_file::open(path.c_str());
  if (!m) {
    state.SkipWithError(("cannot map " + path).c_str());
    return;
  }
  for (auto _ : state) {
    auto f = gguf::parse(m->bytes());
    if (!f) {
      state.SkipWithError(gguf::to_string(f.error()).c_str());
      return;
    }
    benchmark::DoNotOptimize(f->metadata().size());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * m->size()));
}
BENCHMARK(parse_mapped)->Unit(benchmark::kMicrosecond);

}  // namespace
