// gguf-tokenize-memory: the heap a tokenization holds at its peak, and its time, for gguf::tokenizer::encode
// and llama.cpp's llama_tokenize (the oracle's libllama, opened at run time) on the same bytes in the
// same process. The heap is counted by this program's operator new, which libllama's C++ code calls
// too; "beyond the vocabulary" is the peak during the call less what was held before it (the built
// tokenizer, the loaded vocabulary, the text), per byte of text; the ids a call returns count (llama.cpp:
// the int32 buffer its caller provides, one slot per byte).
//
// Texts: bench/tokenize_corpus.hpp's mixed text at each size, through every vocabulary of the directory;
// and the hostile cases of issue 47, written here from gpt-2's vocabulary: 196 nested user-defined tokens
// ("≈" x 5 .. 200) over a text of "≈", and one user-defined token of 1 MiB of "≈" over 100 KB and over
// each size of "≈" (a text that is the token's prefix).
//
// With --kinds, also each kind of text of bench/tokenize_scripts.hpp at each size through every vocabulary
// (the time of the largest over the smallest shows whether the time grows with the text alone). --repeat N
// takes the least time of N calls (the first also makes the pair filter; the later ones append the ids to a
// vector kept from call to call, as llama_tokenize's caller provides one); the memory is the first call's.
//
//   gguf-tokenize-memory [--sizes MB,MB,...] [--repeat N] [--no-llama] [--kinds] [VOCAB_DIR]
#include <gguf/open.hpp>
#include <gguf/save.hpp>
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "llama_library.hpp"
#include "tokenize_corpus.hpp"
#include "tokenize_scripts.hpp"

// ---- a counting heap: live bytes and their peak ----------------------------------------------------

namespace {
std::atomic<long long> live{0}, peak{0};
constexpr std::size_t header = 16;  // keeps malloc's alignment (max_align_t)

void note(long long delta) {
  const long long now = live.fetch_add(delta) + delta;
  long long p = peak.load();
  while (now > p && !peak.compare_exchange_weak(p, now)) {}
}
}  // namespace

void* operator new(std::size_t n) {
  auto* p = static_cast<unsigned char*>(std::malloc(n + header));
  if (!p) throw std::bad_alloc();
  std::memcpy(p, &n, sizeof n);
  note(static_cast<long long>(n));
  return p + header;
}
void operator delete(void* q) noexcept {
  if (!q) return;
  unsigned char* p = static_cast<unsigned char*>(q) - header;
  std::size_t n = 0;
  std::memcpy(&n, p, sizeof n);
  note(-static_cast<long long>(n));
  std::free(p);
}
void operator delete(void* q, std::size_t) noexcept { operator delete(q); }
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete[](void* q) noexcept { operator delete(q); }
void operator delete[](void* q, std::size_t) noexcept { operator delete(q); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* q, const std::nothrow_t&) noexcept { operator delete(q); }

namespace {

struct measured {
  double seconds = 0;
  double bytes_per_byte = 0;  // peak heap beyond what was held before, per byte of text
  std::vector<std::int32_t> ids;
  bool ok = false;
};

template <class F>
measured measure(std::size_t text_bytes, F&& call) {
  measured m;
  const long long before = live.load();
  peak.store(before);
  const auto t0 = std::chrono::steady_clock::now();
  m.ok = call(m.ids);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.bytes_per_byte =
      static_cast<double>(peak.load() - before) / static_cast<double>(std::max<std::size_t>(1, text_bytes));
  return m;
}

measured ours(const gguf::tokenizer& tok, const std::string& text) {
  return measure(text.size(), [&](std::vector<std::int32_t>& ids) {
    auto r = tok.encode(text, {true, false});
    if (!r) return false;
    ids = std::move(*r);
    return true;
  });
}

// `ours` again, the ids appended to `keep` (emptied first, its room kept from the call before): the
// time of the tokenizer alone, as llama_tokenize's is with its caller's buffer, without the kernel zeroing
// the fresh pages of a new result (glibc maps a vector above 32 MB anew each time; a smaller one reuses
// the heap, which would favour the smaller texts).
double ours_again(const gguf::tokenizer& tok, const std::string& text, std::vector<std::int32_t>& keep) {
  keep.clear();
  const auto t0 = std::chrono::steady_clock::now();
  if (!tok.encode(text, keep, {true, false})) return 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

measured theirs(const std::string& path, const std::string& text) {
  const bench::llama_api& L = bench::llama();
  if (!L.ok) return {};
  bench::llama_model_params p = L.default_params();
  p.n_gpu_layers = 0;
  p.vocab_only = true;
  void* model = L.load(path.c_str(), p);
  if (!model) return {};
  const void* vocab = L.get_vocab(model);
  measured m = measure(text.size(), [&](std::vector<std::int32_t>& ids) {
    ids.resize(text.size() + 16);  // the caller's buffer llama_tokenize fills: one slot per byte, and BOS/EOS
    const std::int32_t n = L.tokenize(vocab, text.data(), static_cast<std::int32_t>(text.size()), ids.data(),
                                      static_cast<std::int32_t>(ids.size()), true, false);
    if (n < 0) return false;
    ids.resize(static_cast<std::size_t>(n));
    return true;
  });
  L.free_model(model);
  return m;
}

// How many times this library's call runs per row: the time is the least (the first call also makes the
// pair filter; a busy machine slows single calls), the memory the first call's.
int repeats = 1;

void row(const std::string& vocab, const char* what, const std::string& path, const std::string& text, bool llama) {
  const auto f = gguf::open(path);
  if (!f) return;
  const auto tok = gguf::tokenizer::from(*f);
  if (!tok) return;
  measured a = ours(*tok, text);
  std::vector<std::int32_t> keep;
  for (int k = 1; k < repeats; ++k) a.seconds = std::min(a.seconds, ours_again(*tok, text, keep));
  std::printf("| %s | %s | %.1f | %.4f | %.1f |", vocab.c_str(), what, static_cast<double>(text.size()) / 1e6,
              a.seconds, a.bytes_per_byte);
  if (llama) {
    const measured b = theirs(path, text);
    if (b.ok) {
      std::printf(" %.4f | %.1f | %.1f× | %s |", b.seconds, b.bytes_per_byte, b.seconds / std::max(a.seconds, 1e-9),
                  a.ids == b.ids ? "yes" : "NO");
    } else {
      std::printf(" – | – | – | – |");
    }
  }
  std::printf("\n");
  std::fflush(stdout);
}

// gpt-2's vocabulary with `extra` appended as user-defined tokens, written to `out`.
bool with_tokens(const std::string& gpt2, const std::filesystem::path& out, const std::vector<std::string>& extra) {
  const auto f = gguf::open(gpt2);
  if (!f) return false;
  gguf::writer w = gguf::writer::from_metadata(f->info());
  const auto tokens = f->metadata().get<gguf::array_view>("tokenizer.ggml.tokens");
  const auto types = f->metadata().get<gguf::array_view>("tokenizer.ggml.token_type");
  if (!tokens || !types) return false;
  const auto token_texts = tokens->as<std::string_view>();
  const auto token_types = types->as<std::int32_t>();
  if (!token_texts || !token_types) return false;
  std::vector<std::string_view> t(token_texts->begin(), token_texts->end());
  for (const std::string& s : extra) t.push_back(s);
  std::vector<std::int32_t> ty(token_types->begin(), token_types->end());
  ty.insert(ty.end(), extra.size(), 4);
  if (!w.replace("tokenizer.ggml.tokens", gguf::value::strings(std::span<const std::string_view>(t)))) return false;
  if (!w.replace("tokenizer.ggml.token_type", gguf::value::array(std::span<const std::int32_t>(ty)))) return false;
  return gguf::save(w, out.string()).has_value();
}

std::string repeat(std::string_view s, std::size_t bytes) {
  std::string out;
  out.reserve(bytes + s.size());
  while (out.size() + s.size() <= bytes) out += s;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes{1, 10};
  bool llama = true, kinds = false;
  std::filesystem::path dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: gguf-tokenize-memory [--sizes MB,MB,...] [--repeat N] [--no-llama] [--kinds] [VOCAB_DIR]\n");
      return 0;
    }
    if (a == "--version") {
      std::printf("gguf-tokenize-memory %d.%d.%d\n", GGUF_VERSION_MAJOR, GGUF_VERSION_MINOR, GGUF_VERSION_PATCH);
      return 0;
    }
    if (a == "--no-llama") {
      llama = false;
    } else if (a == "--kinds") {
      kinds = true;
    } else if (a == "--repeat" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (std::string s = argv[++i]; !s.empty();) {
        const std::size_t comma = s.find(',');
        sizes.push_back(std::atof(s.substr(0, comma).c_str()));
        s = comma == std::string::npos ? "" : s.substr(comma + 1);
      }
    } else if (!a.empty() && a[0] != '-') {
      dir = a;
    } else {
      std::fprintf(stderr, "error: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (dir.empty()) {
    const char* env = std::getenv("GGUF_BENCH_VOCAB_DIR");
    dir = env && *env ? std::filesystem::path(env)
                      : std::filesystem::path(GGUF_BENCH_SOURCE_DIR) / ".." / "shared" / "data" / "vocab";
  }
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".gguf") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "error: no vocabularies in %s (give a folder of .gguf files)\n", dir.string().c_str());
    return 1;
  }
  llama = llama && bench::llama().ok;
  std::printf("| vocabulary | text | MB | gguf s | gguf B/byte |%s\n",
              llama ? " llama.cpp s | llama.cpp B/byte | × time | same ids |" : "");
  std::printf("|---|---|---:|---:|---:|%s\n", llama ? "---:|---:|---:|---|" : "");
  for (const double mb : sizes) {
    const std::string text = bench::tokenize_corpus(static_cast<std::size_t>(mb * 1e6));
    for (const auto& p : files) {
      std::string stem = p.stem().string();
      if (stem.rfind("ggml-vocab-", 0) == 0) stem = stem.substr(11);
      row(stem, "mixed", p.string(), text, llama);
    }
  }
  if (kinds) {
    for (const std::string_view kind : bench::script_category_names()) {
      for (const double mb : sizes) {
        const std::string text = bench::script_text(kind, static_cast<std::size_t>(mb * 1e6));
        for (const auto& p : files) {
          std::string stem = p.stem().string();
          if (stem.rfind("ggml-vocab-", 0) == 0) stem = stem.substr(11);
          row(stem, std::string(kind).c_str(), p.string(), text, llama);
        }
      }
    }
  }
  const auto gpt2 =
      std::find_if(files.begin(), files.end(), [](const auto& p) { return p.stem() == "ggml-vocab-gpt-2"; });
  if (gpt2 == files.end()) return 0;
  const std::filesystem::path tmp = std::filesystem::temp_directory_path() / "gguf-tokenize-memory";
  std::filesystem::create_directories(tmp, ec);
  const std::string approx = "\xE2\x89\x88";  // ≈, no token of gpt-2's
  std::vector<std::string> nested;
  for (std::size_t k = 5; k <= 200; ++k) nested.push_back(repeat(approx, 3 * k));
  const auto nested_path = tmp / "nested.gguf", huge_path = tmp / "huge.gguf";
  if (!with_tokens(gpt2->string(), nested_path, nested) ||
      !with_tokens(gpt2->string(), huge_path, {repeat(approx, std::size_t{1} << 20)})) {
    std::fprintf(stderr, "error: cannot write the hostile vocabularies in %s\n", tmp.string().c_str());
    return 1;
  }
  for (const double mb : sizes) {
    row("gpt-2 + 196 nested", "\xE2\x89\x88 run", nested_path.string(),
        repeat(approx, static_cast<std::size_t>(mb * 1e6)), llama);
  }
  row("gpt-2 + 1 MiB token", "\xE2\x89\x88 run", huge_path.string(), repeat(approx, 100'000), llama);
  for (const double mb : sizes) {
    row("gpt-2 + 1 MiB token", "\xE2\x89\x88 run", huge_path.string(),
        repeat(approx, static_cast<std::size_t>(mb * 1e6)), llama);
  }
  std::filesystem::remove_all(tmp, ec);
  return 0;
}
