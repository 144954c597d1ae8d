// gguf-bench: tokenize. For each vocabulary file in GGUF_BENCH_VOCAB_DIR (default: ../shared/data/vocab
// beside the checkout, else the reduced copies in tests/data/vocab, labelled as such):
//   tokenize/<vocab>            gguf::tokenizer::encode of bench/tokenize_corpus.hpp's 1 MiB text
//   tokenize/<vocab>/llama.cpp  llama.cpp's llama_tokenize of the same text in the same run (the anchor;
//                               libllama opened at run time from the shared oracle, never linked)
//   tokenize/<vocab>/<category> the same for 256 KiB of one kind of text (bench/tokenize_scripts.hpp:
//                               latin, cyrillic, greek, arabic, hebrew, indic, thai, cjk, hangul, emoji,
//                               combining, code, numbers, whitespace, mix), and .../<category>/llama.cpp
//   tokenize/pre-<name>/...     the same for gpt-2's vocabulary with tokenizer.ggml.pre = <name> (llama-bpe,
//                               qwen2, deepseek-v3, gpt-4o, ...: the pre-tokenizer families; written to
//                               the temporary directory when the benchmarks are registered)
//   tokenizer_build/<vocab>     gguf::tokenizer::from of the file already parsed, on one thread
//   tokenizer_build/<vocab>/threads:2  the same with two threads (build_options::threads)
// Bytes per second are the text's bytes.
#include <benchmark/benchmark.h>
#include <gguf/open.hpp>
#include <gguf/save.hpp>
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "llama_library.hpp"
#include "tokenize_corpus.hpp"
#include "tokenize_scripts.hpp"

namespace {

const std::string& corpus() {
  static const std::string c = bench::tokenize_corpus();
  return c;
}

// The text of a category, made once: 256 KiB (long enough that a call's fixed costs do not count).
const std::string& category_text(const std::string& name) {
  static std::map<std::string, std::string> texts;
  auto it = texts.find(name);
  if (it == texts.end()) it = texts.emplace(name, bench::script_text(name, std::size_t{256} << 10)).first;
  return it->second;
}

const std::string& text_of(const std::string& category) {
  return category.empty() ? corpus() : category_text(category);
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
void tokenize_llama(benchmark::State& state, const std::string& path, const std::string& category) {
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
  const std::string& text = text_of(category);
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

void tokenize_ours(benchmark::State& state, const std::string& path, const std::string& category,
                   const std::string& label) {
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
  const std::string& text = text_of(category);
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

// A directory of this process's, removed at exit.
struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(std::filesystem::path p) : path(std::move(p)) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// gpt-2's vocabulary with tokenizer.ggml.pre = `pre`, written to `out`.
bool with_pre(const std::filesystem::path& gpt2, const std::filesystem::path& out, const std::string& pre) {
  const auto f = gguf::open(gpt2.string());
  if (!f) return false;
  gguf::writer w = gguf::writer::from_metadata(f->info());
  if (!w.replace("tokenizer.ggml.pre", gguf::value(pre))) return false;
  return gguf::save(w, out.string()).has_value();
}

void register_tokenize(const std::string& stem, const std::string& path, const std::string& label) {
  benchmark::RegisterBenchmark(("tokenize/" + stem).c_str(), tokenize_ours, path, std::string(), label)
      ->Unit(benchmark::kMillisecond);
#ifdef GGUF_BENCH_LLAMA
  benchmark::RegisterBenchmark(("tokenize/" + stem + "/llama.cpp").c_str(), tokenize_llama, path, std::string())
      ->Unit(benchmark::kMillisecond);
#endif
  for (const std::string_view c : bench::script_category_names()) {
    const std::string name = "tokenize/" + stem + "/" + std::string(c);
    benchmark::RegisterBenchmark(name.c_str(), tokenize_ours, path, std::string(c), label)
        ->Unit(benchmark::kMillisecond);
#ifdef GGUF_BENCH_LLAMA
    benchmark::RegisterBenchmark((name + "/llama.cpp").c_str(), tokenize_llama, path, std::string(c))
        ->Unit(benchmark::kMillisecond);
#endif
  }
}

// The pre-tokenizer families beyond the shared vocabularies' own (each a distinct set of regexes or a
// distinct splitter in llama.cpp).
constexpr const char* pre_families[] = {"llama-bpe",   "qwen2",   "deepseek-v3", "gpt-4o", "tekken",
                                        "chatglm-bpe", "kimi-k2", "command-r",   "bloom",  "smaug-bpe"};

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
    register_tokenize(stem, path, label);
    benchmark::RegisterBenchmark(("tokenizer_build/" + stem).c_str(), tokenizer_build, path, label, 1u)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("tokenizer_build/" + stem + "/threads:2").c_str(), tokenizer_build, path, label, 2u)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  const auto gpt2 =
      std::find_if(files.begin(), files.end(), [](const auto& p) { return p.stem().string().ends_with("gpt-2"); });
  if (gpt2 != files.end()) {
    static const temp_dir tmp(std::filesystem::temp_directory_path(ec) /
                              ("gguf-bench-pre-" + std::to_string(std::random_device{}())));
    for (const char* pre : pre_families) {
      const std::filesystem::path out = tmp.path / (std::string(pre) + ".gguf");
      if (with_pre(*gpt2, out, pre))
        register_tokenize(std::string("pre-") + pre, out.string(), d.reduced ? "reduced" : "");
    }
  }
  return true;
}();

}  // namespace
