// gguf-bench: tokenize. For each vocabulary file in GGUF_BENCH_VOCAB_DIR (default: ../shared/data/vocab
// beside the checkout, else the reduced copies in tests/data/vocab, labelled as such):
//   tokenize/<vocab>            gguf::tokenizer::encode of bench/tokenize_corpus.hpp's 1 MiB text
//   tokenize/<vocab>/llama.cpp  llama.cpp's llama_tokenize of the same text in the same run (the anchor;
//                               libllama opened at run time from the shared oracle, never linked)
//   tokenizer_build/<vocab>     gguf::tokenizer::from of the file already parsed, on one thread
//   tokenizer_build/<vocab>/threads:2  the same with two threads (build_options::threads)
// Bytes per second are the text's bytes.
#include <benchmark/benchmark.h>
#include <gguf/open.hpp>
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "llama_library.hpp"
#include "tokenize_corpus.hpp"

namespace {

const std::string& corpus() {
  static const std::string c = bench::tokenize_corpus();
  return c;
}

struct vocab_dir {
  std::filesystem::path path;
  bool reduced = false;
};

vocab_dir vocabularies() {
  if (const char* env = std::getenv("GGUF_BENCH_VOCAB_DIR"); env && *env) return {env, false};
  const std::filesystem::path shared =
      std::filesystem::path(GGUF_BENCH_SOURCE_DIR) / ".." / "shared" / "data" / "vocab";
  std::error_code ec;
  if (std::filesystem::is_directory(shared, ec)) return {shared, false};
  return {std::filesystem::path(GGUF_BENCH_SOURCE_DIR) / "tests" / "data" / "vocab", true};
}

#ifdef GGUF_BENCH_LLAMA
void tokenize_llama(benchmark::State& state, const std::string& path) {
  const bench::llama_api& L = bench::llama();
  if (!L.ok) {
    state.SkipWithError("llama.cpp's libllama not found (the shared oracle's; see GGUF_ORACLE_HOME)");
    return;
  }
  bench::llama_model_params p = L.default_params();
  p.n_gpu_layers = 0;
  p.vocab_only = true;
  void* model = L.load(path.c_str(), p);
  if (!model) {
    state.SkipWithError("llama.cpp cannot load the vocabulary");
    return;
  }
  const void* vocab = L.get_vocab(model);
  const std::string& text = corpus();
  std::vector<std::int32_t> ids(text.size() + 16);
  std::int32_t n = 0;
  for (auto _ : state) {
    n = L.tokenize(vocab, text.data(), static_cast<std::int32_t>(text.size()), ids.data(),
                   static_cast<std::int32_t>(ids.size()), true, false);
    benchmark::DoNotOptimize(n);
  }
  state.counters["tokens"] = static_cast<double>(n);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  L.free_model(model);
}
#endif

void tokenize_ours(benchmark::State& state, const std::string& path, const std::string& label) {
  auto f = gguf::open(path);
  if (!f) {
    state.SkipWithError(("cannot open " + path).c_str());
    return;
  }
  auto tok = gguf::tokenizer::from(*f);
  if (!tok) {
    state.SkipWithError(gguf::to_string(tok.error()).c_str());
    return;
  }
  const std::string& text = corpus();
  std::vector<gguf::token_id> ids;
  for (auto _ : state) {
    ids.clear();
    if (!tok->encode(text, ids)) {
      state.SkipWithError("encode failed");
      return;
    }
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["tokens"] = static_cast<double>(ids.size());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.SetLabel(label);
}

void tokenizer_build(benchmark::State& state, const std::string& path, const std::string& label, unsigned threads) {
  auto f = gguf::open(path);
  if (!f) {
    state.SkipWithError(("cannot open " + path).c_str());
    return;
  }
  std::size_t n = 0;
  for (auto _ : state) {
    auto tok = gguf::tokenizer::from(*f, {threads});
    if (!tok) {
      state.SkipWithError(gguf::to_string(tok.error()).c_str());
      return;
    }
    n = tok->n_vocab();
    benchmark::DoNotOptimize(n);
  }
  state.counters["n_vocab"] = static_cast<double>(n);
  state.SetLabel(label);
}

const bool registered = [] {
  const vocab_dir d = vocabularies();
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(d.path, ec)) {
    if (e.path().extension() == ".gguf") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    std::string stem = p.stem().string();
    if (stem.rfind("ggml-vocab-", 0) == 0) stem = stem.substr(11);
    const std::string path = p.string();
    const std::string label = d.reduced ? "reduced test copy (set GGUF_BENCH_VOCAB_DIR)" : "";
    benchmark::RegisterBenchmark(("tokenize/" + stem).c_str(), tokenize_ours, path, label)
        ->Unit(benchmark::kMillisecond);
#ifdef GGUF_BENCH_LLAMA
    benchmark::RegisterBenchmark(("tokenize/" + stem + "/llama.cpp").c_str(), tokenize_llama, path)
        ->Unit(benchmark::kMillisecond);
#endif
    benchmark::RegisterBenchmark(("tokenizer_build/" + stem).c_str(), tokenizer_build, path, label, 1u)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("tokenizer_build/" + stem + "/threads:2").c_str(), tokenizer_build, path, label, 2u)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
