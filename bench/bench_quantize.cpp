// gguf-bench: quantization. quantize/<type>/<n> quantizes n floats (rows of 4096, a whole number of
// blocks for every type) with gguf::quantize, single thread; the types that need importance weights get
// them. quantize_imatrix/<type>/<n>: the types that use importance weights without needing them, with
// weights (ggml takes another path then: quantize_row_q4_K_ref without, quantize_q4_K_impl with).
// The input is Gaussian weights, each row of 4096 at its own scale (10^-2.5 .. 10^0.5), no block twice;
// the weights are 0.5 .. 3.5, one per column.
// The anchor of the same run: ggml_quantize/<type>/<n> and ggml_quantize_imatrix/<type>/<n>, ggml's
// ggml_quantize_chunk on the same input, from the library bench/ggml_library.hpp finds. Each anchor first
// checks that ggml writes exactly gguf's bytes (else it reports an error instead of a time); a library
// named by $GGUF_BENCH_GGML (ggml built with -O3 -march=native, where GCC fuses products into FMAs and
// so rounds some k-quant and IQ searches differently) is timed anyway, with a label saying so.
// Counters as dequant/: items = weights, bytes = 4 per weight (the floats read).
#include <benchmark/benchmark.h>
#include <gguf/dispatch.hpp>
#include <gguf/gguf.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ggml_library.hpp"

#if !defined(_WIN32) && __has_include(<dlfcn.h>)
#include <dlfcn.h>
#define GGUF_BENCH_DLOPEN 1
#endif

namespace {

constexpr std::int64_t l2_weights = 65536;
constexpr std::size_t n_per_row = 4096;

// Types measured on 1 Mi weights too: the ones models are quantized to most.
constexpr gguf::ggml_type hot[] = {gguf::ggml_type::f16, gguf::ggml_type::bf16, gguf::ggml_type::q8_0,
                                   gguf::ggml_type::q4_K};

/// n Gaussian weights in rows of 4096, each row at its own scale (made once per size).
const std::vector<float>& weights(std::int64_t n) {
  static std::map<std::int64_t, std::vector<float>> made;  // a map: references stay valid as it grows
  std::vector<float>& w = made[n];
  if (!w.empty()) return w;
  std::mt19937_64 rng(42);  // NOLINT(cert-msc32-c,cert-msc51-cpp): the same input in every run
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_real_distribution<float> decade(-2.5f, 0.5f);
  w.resize(static_cast<std::size_t>(n));
  float scale = 1.0f;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (i % n_per_row == 0) scale = std::pow(10.0f, decade(rng));
    w[i] = gauss(rng) * scale;
  }
  return w;
}

/// One importance weight per column.
const std::vector<float>& importance() {
  static const std::vector<float> w = [] {
    std::mt19937_64 rng(7);  // NOLINT(cert-msc32-c,cert-msc51-cpp): the same weights in every run
    std::uniform_real_distribution<float> u(0.5f, 3.5f);
    std::vector<float> v(n_per_row);
    for (float& x : v) x = u(rng);
    return v;
  }();
  return w;
}

void set_counters(benchmark::State& state, std::int64_t n) {
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * 4);
}

std::size_t output_size(gguf::ggml_type type, std::int64_t n) {
  const auto size = gguf::quantized_size(type, static_cast<std::size_t>(n) / n_per_row, n_per_row);
  return size ? *size : 0;
}

void quantize(benchmark::State& state, gguf::ggml_type type, bool weighted) {
  const std::int64_t n = state.range(0);
  const std::vector<float>& x = weights(n);
  std::vector<std::byte> out(output_size(type, n));
  const std::span<const float> w = weighted ? std::span<const float>(importance()) : std::span<const float>{};
  // once outside the timing: the IQ types build their grid maps on first use (as ggml_quantize_init)
  if (!gguf::quantize(type, x, n_per_row, out, w)) {
    state.SkipWithError("gguf::quantize failed");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(gguf::quantize(type, x, n_per_row, out, w));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

#ifdef GGUF_BENCH_DLOPEN
using ggml_quantize_chunk_fn = std::size_t (*)(int type, const float* src, void* dst, std::int64_t start,
                                               std::int64_t nrows, std::int64_t n_per_row, const float* imatrix);

struct ggml_quantizer {
  ggml_quantize_chunk_fn chunk = nullptr;
  void (*init)(int type) = nullptr;
  /// The oracle's library must write gguf's bytes; one the user built (-march=native: GCC contracts a*b+c
  /// into FMAs there) may round differently and is timed anyway, labelled.
  bool exact = true;
};

// ggml_quantize_chunk (and ggml_quantize_init, which builds the IQ grids) from the anchor library.
ggml_quantizer load_ggml_quantizer() {
  const bench::ggml_library_path where = bench::ggml_library();
  if (where.path.empty()) return {};
  void* lib = dlopen(where.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ggml_quantizer q;
  q.exact = !where.chosen;
  if (lib) {
    q.chunk = reinterpret_cast<ggml_quantize_chunk_fn>(dlsym(lib, "ggml_quantize_chunk"));
    q.init = reinterpret_cast<void (*)(int)>(dlsym(lib, "ggml_quantize_init"));
  }
  if (!q.chunk && where.chosen)
    std::fprintf(stderr, "gguf-bench: no ggml_quantize/ benchmarks: %s\n", where.path.c_str());
  return q;
}

void ggml_quantize(benchmark::State& state, gguf::ggml_type type, bool weighted, ggml_quantizer q) {
  const std::int64_t n = state.range(0);
  const std::vector<float>& x = weights(n);
  std::vector<std::byte> out(output_size(type, n)), ours(out.size());
  const float* w = weighted ? importance().data() : nullptr;
  const auto id = static_cast<int>(type);
  const auto rows = n / static_cast<std::int64_t>(n_per_row);
  if (q.init) q.init(id);
  // the anchor must do the same work: the same bytes as gguf's
  const std::span<const float> ws = weighted ? std::span<const float>(importance()) : std::span<const float>{};
  if (!gguf::quantize(type, x, n_per_row, ours, ws) ||
      q.chunk(id, x.data(), out.data(), 0, rows, static_cast<std::int64_t>(n_per_row), w) != out.size()) {
    state.SkipWithError("ggml's output size differs from gguf's");
    return;
  }
  if (out != ours) {
    if (q.exact) {
      state.SkipWithError("ggml's bytes differ from gguf's");
      return;
    }
    state.SetLabel("bytes differ from gguf's (this ggml build rounds differently)");
  }
  for (auto _ : state) {
    q.chunk(id, x.data(), out.data(), 0, rows, static_cast<std::int64_t>(n_per_row), w);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}
#endif

const int registered = [] {
#ifdef GGUF_BENCH_DLOPEN
  const ggml_quantizer ggml = load_ggml_quantizer();
#endif
  for (const gguf::type_traits& t : gguf::ggml_types) {
    if (!gguf::dispatch::quantizer(t.type)) continue;
    const bool needs = gguf::kernels::requires_importance(t.type);
    const bool uses = gguf::kernels::uses_importance(t.type);
    bool is_hot = false;
    for (gguf::ggml_type h : hot) is_hot = is_hot || h == t.type;
    const auto add = [&](const std::string& kind, bool weighted) {
      auto* b = benchmark::RegisterBenchmark((kind + std::string(t.name)).c_str(), quantize, t.type, weighted);
      b->Arg(l2_weights);
      if (is_hot && !weighted) b->Arg(std::int64_t{1} << 20);
#ifdef GGUF_BENCH_DLOPEN
      if (ggml.chunk) {  // right after gguf's own: the two see the machine in the same state
        auto* a = benchmark::RegisterBenchmark(("ggml_" + kind + std::string(t.name)).c_str(), ggml_quantize, t.type,
                                               weighted, ggml);
        a->Arg(l2_weights);
        if (is_hot && !weighted) a->Arg(std::int64_t{1} << 20);
      }
#endif
    };
    add("quantize/", needs);  // with weights only when the type cannot do without
    if (uses && !needs) add("quantize_imatrix/", true);
  }
  return 0;
}();

}  // namespace
