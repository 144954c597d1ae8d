// gguf-bench: dequantization. dequant/<type>/<n> dequantizes n weights of each type, single thread,
// with the kernels of the instruction set runtime dispatch picks for this CPU (GGUF_FORCE_ISA
// overrides); isa/<isa>/dequant/<type>/65536 runs every other supported instruction set.
// The ceilings of the same run write the same 4n output bytes: memset/<n>, memcpy/<n>, and fill_nt/<n>, a
// loop of non-temporal (streaming) stores: out of cache the real ceiling, since glibc's memset uses
// ordinary stores below ~190 MB here and so reads every line it writes.
// The input is what models hold, with no pattern a branch predictor could learn: blocks that ggml itself
// quantized from random Gaussian weights (bench/data/gaussian-blocks.gguf, written by bench/make_blocks.py
// through the shared oracle), 65536 weights per type, so the 64 Ki runs see no block twice and the 16 Mi
// runs draw blocks at random from them; plain types (f32, f16, bf16, f64, i8-i64) are Gaussian weights
// converted as ggml converts them. (Tiling a small fixture, as 0.1.0 did, let the branchy scalar kernels
// run ~5x faster than on real data.)
// dequant_f16/<type>/<n> and dequant_bf16/<type>/<n>: the same, writing f16 or bf16 (2 bytes a weight).
// dequant_new/<type>/4194304: into a new buffer each time (see dequant_new).
// traffic/<type>/<n>: the ceiling of one type, its bytes moved and nothing else computed: a loop that reads
// dequant/<type>/<n>'s input where it lies and writes the same 4n output bytes, the loads spread evenly
// among the stores, in the widest vectors the CPU has. No kernel of that type can run faster; one that
// runs near it is bound by the memory traffic, not by its own instructions.
// The anchor of the same run: ggml/<type>/<n>, ggml's own dequantizer (its type traits' to_float) on the
// same input and output as dequant/<type>/<n>, for every type it has one for. ggml is no dependency: it is
// loaded at run time from $GGUF_BENCH_GGML (a libggml-base.so, e.g. one bench/build_ggml_native.sh built
// with -O3 -march=native), else from the shared oracle's prebuilt library; without either, or on a system
// without dlopen, there are no ggml/ benchmarks.
#include <benchmark/benchmark.h>
#include <gguf/dispatch.hpp>
#include <gguf/gguf.hpp>
#include <gguf/parallel.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ggml_library.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif
#if !defined(_WIN32) && __has_include(<dlfcn.h>)
#include <dlfcn.h>
#define GGUF_BENCH_DLOPEN 1
#endif

namespace {

constexpr std::int64_t l2_weights = 65536;         // 256 KiB of output: stays in L2
constexpr std::int64_t memory_weights = 16777216;  // 64 MiB of output: goes to memory
constexpr std::int64_t python_weights = 4194304;   // 16 MiB of output: pygguf's benchmark tensor

// Types measured out of cache as well: the ones models are shipped in.
constexpr gguf::ggml_type hot[] = {gguf::ggml_type::f16,  gguf::ggml_type::bf16, gguf::ggml_type::q4_0,
                                   gguf::ggml_type::q8_0, gguf::ggml_type::q4_K, gguf::ggml_type::q5_K,
                                   gguf::ggml_type::q6_K, gguf::ggml_type::mxfp4};

// Where an input lies relative to its output matters: a load whose address equals, modulo 4 KiB, that
// of a store still in flight waits for it (4K aliasing). Measured here, a copy of 64 Ki floats whose
// output began 48-128 bytes past its input (modulo 4 KiB) ran at 0.6-0.8x the speed of one half a page
// away. So every output starts on a page boundary and every input half a page past one: the same
// placement in every run. (The rows still move between runs on the VM the README was measured on: an
// f32 copy in L2 between 7 and 14 G weights/s, within one process too; huge pages did not steady it.)
constexpr std::size_t page = 4096;

// Memory for a buffer of `bytes` on a page boundary.
void* allocate(std::size_t bytes) { return std::aligned_alloc(page, (bytes + page - 1) / page * page); }

// Output buffers on a page boundary, touched once before timing (no page faults in the loop).
struct aligned_floats {
  explicit aligned_floats(std::size_t n) : data(static_cast<float*>(allocate(n * 4)), &std::free) {
    std::memset(data.get(), 0, n * 4);
  }
  std::unique_ptr<float, decltype(&std::free)> data;
};

// An input's bytes half a page past a page boundary (see above).
struct placed_bytes {
  explicit placed_bytes(const std::vector<std::byte>& bytes)
      : base(static_cast<std::byte*>(allocate(bytes.size() + page / 2)), &std::free), size(bytes.size()) {
    if (size != 0) std::memcpy(data(), bytes.data(), size);
  }
  std::byte* data() const noexcept { return base.get() + page / 2; }
  std::span<const std::byte> span() const noexcept { return {data(), size}; }
  bool empty() const noexcept { return size == 0; }
  std::unique_ptr<std::byte, decltype(&std::free)> base;
  std::size_t size;
};

// f32 -> f16 bits, rounded to nearest even (ggml_fp32_to_fp16 on finite values in range, all these are).
std::uint16_t to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t ax = x & 0x7fffffff;
  if (ax >= 0x477ff000) return sign | 0x7c00;  // rounds past 65504: infinity
  if (ax < 0x38800000) {                       // a subnormal half: exact scaling, then one rounding
    return static_cast<std::uint16_t>(
        sign | static_cast<std::uint16_t>(std::nearbyint(std::bit_cast<float>(ax) * 16777216.0f)));
  }
  std::uint32_t m = ax - 0x38000000;  // rebias the exponent from 127 to 15
  m += 0x0fff + ((m >> 13) & 1);
  return static_cast<std::uint16_t>(sign | (m >> 13));
}

// f32 -> bf16 bits, rounded to nearest even (ggml_fp32_to_bf16 on non-NaN values).
std::uint16_t to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  return static_cast<std::uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// n weights of `type`, as a model holds them (see the top of this file).
std::vector<std::byte> input(gguf::ggml_type type, std::int64_t n) {
  static const auto pool = gguf::open(GGUF_BENCH_BLOCKS_FILE);
  const gguf::type_traits& t = gguf::traits(type);
  std::vector<std::byte> out(static_cast<std::size_t>(n) / t.block_size * t.type_size);
  std::mt19937_64 rng(static_cast<std::uint64_t>(type) + 1);
  const gguf::tensor_info* src = pool ? pool->find_tensor("t." + std::string(t.name)) : nullptr;
  if (src) {
    const std::size_t blocks = src->data.size() / t.type_size;
    for (std::size_t b = 0; b < out.size() / t.type_size; ++b) {
      const std::size_t from = out.size() <= src->data.size() ? b : static_cast<std::size_t>(rng() % blocks);
      std::memcpy(out.data() + b * t.type_size, src->data.data() + from * t.type_size, t.type_size);
    }
    return out;
  }
  if (t.quantized) return {};  // no pool file: the benchmark reports it
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_real_distribution<float> decade(-2.5f, 0.5f);
  std::byte* p = out.data();
  float scale = 1.0f;
  for (std::int64_t i = 0; i < n; ++i, p += t.type_size) {
    if (i % 4096 == 0) scale = std::pow(10.0f, decade(rng));  // rows of 4096 with their own scale
    const float v = gauss(rng) * scale;
    const auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
    switch (type) {
      case gguf::ggml_type::f32: put(v); break;
      case gguf::ggml_type::f16: put(to_half(v)); break;
      case gguf::ggml_type::bf16: put(to_bf16(v)); break;
      case gguf::ggml_type::f64: put(static_cast<double>(v)); break;
      case gguf::ggml_type::i8: put(static_cast<std::int8_t>(std::clamp(std::lround(v * 30.0f), -127L, 127L))); break;
      case gguf::ggml_type::i16:
        put(static_cast<std::int16_t>(std::clamp(std::lround(v * 3e3f), -32767L, 32767L)));
        break;
      case gguf::ggml_type::i32: put(static_cast<std::int32_t>(std::lround(v * 1e6f))); break;
      case gguf::ggml_type::i64: put(static_cast<std::int64_t>(std::lround(v * 1e6f))); break;
      default: return {};
    }
  }
  return out;
}

// weights/s, and bytes/s of output (4 per weight for floats, 2 for f16/bf16).
void set_counters(benchmark::State& state, std::int64_t n, std::int64_t out_bytes = 4) {
  state.counters["weights/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] = benchmark::Counter(
      static_cast<double>(out_bytes * n), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

// Through the public gguf::dequantize (in runtime-dispatch mode here), as a user calls it, writing Out:
// dequant/<type>/<n> floats, dequant_f16/ and dequant_bf16/ halves (into the same 64-byte aligned buffer).
template <class Out = float>
void dequant(benchmark::State& state, gguf::ggml_type type, gguf::dispatch::isa isa) {
  const std::int64_t n = state.range(0);
  const placed_bytes in(input(type, n));
  aligned_floats out(static_cast<std::size_t>(n));
  const gguf::dispatch::isa previous = gguf::dispatch::active();
  if (in.empty() || !gguf::dispatch::set_active(isa)) {
    state.SkipWithError("no input, or instruction set not supported");
    return;
  }
  const std::span<Out> dst(reinterpret_cast<Out*>(out.data.get()), static_cast<std::size_t>(n));
  for (auto _ : state) {
    if (!gguf::dequantize(type, in.span(), dst)) state.SkipWithError("dequantize failed");
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  gguf::dispatch::set_active(previous);
  state.SetLabel(std::string(gguf::dispatch::to_string(isa)));
  set_counters(state, n, static_cast<std::int64_t>(sizeof(Out)));
}

// dequant_new/<type>/<n>: the same into a new buffer each time (allocated, never touched before: its
// pages fault in as the kernel writes them), as a caller that wants a fresh array has it; the anchor of
// pygguf's numpy() (bench/python_bench.py).
void dequant_new(benchmark::State& state, gguf::ggml_type type) {
  const std::int64_t n = state.range(0);
  const placed_bytes in(input(type, n));
  if (in.empty()) {
    state.SkipWithError("no input");
    return;
  }
  for (auto _ : state) {
    const std::unique_ptr<float[]> out(new float[static_cast<std::size_t>(n)]);
    if (!gguf::dequantize(type, in.span(), std::span<float>(out.get(), static_cast<std::size_t>(n)))) {
      state.SkipWithError("dequantize failed");
    }
    benchmark::DoNotOptimize(out.get());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

using ggml_to_float = void (*)(const void* x, float* y, std::int64_t k);

struct ggml_anchor {
  std::string label;  // "ggml <ggml_version()> (<ggml_commit()>)"
  std::vector<std::pair<gguf::ggml_type, ggml_to_float>> to_float;
};

#ifdef GGUF_BENCH_DLOPEN
// The leading fields of ggml.h's struct ggml_type_traits: the same since ggml_get_type_traits appeared
// (October 2024) to ggml 0.25.1 (the oracle's). What a library reports is checked against gguf's table first.
struct ggml_type_traits {
  const char* type_name;
  std::int64_t blck_size;
  std::int64_t blck_size_interleave;
  std::size_t type_size;
  bool is_quantized;
  ggml_to_float to_float;
};

// True if p lies in the library mapped at `base`. An older ggml's table ends before gguf's last ids, and
// what lies past it is no entry: neither it nor the name it would point to is read unless it is in there.
// (A Debug build of such a ggml asserts on those ids instead: build_ggml_native.sh builds Release.)
bool in_library(const void* p, const void* base) {
  Dl_info info;
  return p && dladdr(p, &info) && info.dli_fbase == base;
}

// ggml's to_float for every type whose block size, byte size and name equal gguf's (ggml has none for
// f32, q8_1, q8_K, f64 and the integers). The library is never closed: its functions run until exit.
ggml_anchor load_ggml() {
  const bench::ggml_library_path where = bench::ggml_library();
  if (where.path.empty()) return {};
  const std::string& path = where.path;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* get = lib ? dlsym(lib, "ggml_get_type_traits") : nullptr;
  Dl_info info;
  if (!get || !dladdr(get, &info)) {
    if (where.chosen) {  // only a library asked for by name is worth a word: the oracle's is optional
      const std::string why = lib ? path + ": no ggml_get_type_traits" : dlerror();
      std::fprintf(stderr, "gguf-bench: no ggml/ benchmarks: %s\n", why.c_str());
    }
    return {};
  }
  const auto traits = reinterpret_cast<const ggml_type_traits* (*)(int)>(get);
  ggml_anchor a;
  for (const gguf::type_traits& t : gguf::ggml_types) {
    const ggml_type_traits* g = traits(static_cast<int>(t.type));
    if (!in_library(g, info.dli_fbase)) continue;
    if (g->blck_size != static_cast<std::int64_t>(t.block_size) || g->type_size != t.type_size) continue;
    if (!in_library(g->type_name, info.dli_fbase) || t.name != g->type_name || !g->to_float) continue;
    a.to_float.emplace_back(t.type, g->to_float);
  }
  const auto text = [lib](const char* fn) {  // ggml_version(), ggml_commit(): older libraries have neither
    void* f = dlsym(lib, fn);
    return std::string(f ? reinterpret_cast<const char* (*)()>(f)() : "?");
  };
  a.label = "ggml " + text("ggml_version") + " (" + text("ggml_commit") + ")";
  benchmark::AddCustomContext("ggml_library", path);
  benchmark::AddCustomContext("ggml_version", a.label);
  return a;
}
#else
ggml_anchor load_ggml() { return {}; }  // no dlopen (Windows): no anchor
#endif

// ggml's dequantizer on the input and output of dequant/<type>/<n>, all n weights in one call.
void ggml_dequant(benchmark::State& state, gguf::ggml_type type, ggml_to_float to_float, const std::string& label) {
  const std::int64_t n = state.range(0);
  const placed_bytes in(input(type, n));
  aligned_floats out(static_cast<std::size_t>(n));
  if (in.empty()) {
    state.SkipWithError("no input");
    return;
  }
  for (auto _ : state) {
    to_float(in.data(), out.data.get(), n);
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  state.SetLabel(label);
  set_counters(state, n);
}

// dequantize_parallel on a whole tensor of n weights (rows of 4096), with state.range(1) threads.
void dequant_parallel(benchmark::State& state, gguf::ggml_type type) {
  const std::int64_t n = state.range(0);
  const placed_bytes in(input(type, n));
  aligned_floats out(static_cast<std::size_t>(n));
  gguf::tensor_info t;
  t.type = type;
  t.n_dims = 2;
  t.ne = {4096, static_cast<std::uint64_t>(n) / 4096, 1, 1};
  t.n_elements = static_cast<std::uint64_t>(n);
  t.n_bytes = in.size;
  t.data = in.span();
  const auto threads = static_cast<unsigned>(state.range(1));
  for (auto _ : state) {
    if (!gguf::dequantize_parallel(t, std::span<float>(out.data.get(), static_cast<std::size_t>(n)), threads)) {
      state.SkipWithError("dequantize_parallel failed");
    }
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

// memset writes a non-zero byte: filling with zeros takes a fast path of the CPU/hypervisor here
// (66 GB/s against 43 GB/s for any other byte, 64 MiB, measured with rep stosb) that no kernel writing
// data can take. memset_zero shows it.
void memset_ceiling(benchmark::State& state, int byte) {
  const std::int64_t n = state.range(0);
  aligned_floats out(static_cast<std::size_t>(n));
  for (auto _ : state) {
    std::memset(out.data.get(), byte, static_cast<std::size_t>(n) * 4);
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

// The same bytes as memset, written with non-temporal stores (they bypass the caches instead of reading
// each line in first): what a kernel that streams its output can reach out of cache.
void fill_nt_ceiling(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  aligned_floats out(static_cast<std::size_t>(n));
  for (auto _ : state) {
#if defined(__SSE2__) || defined(_M_X64)
    const __m128i v = _mm_set1_epi8(0x3F);
    auto* p = reinterpret_cast<__m128i*>(out.data.get());
    for (std::int64_t i = 0; i < n / 4; ++i) _mm_stream_si128(p + i, v);
    _mm_sfence();
#else
    std::memset(out.data.get(), 0x3F, static_cast<std::size_t>(n) * 4);
#endif
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

// The loop of traffic/<type>/<n> for one vector type V: in_vectors loads from `in`, out_vectors stores
// to `out`, a load whenever the loads fall behind in proportion (an error term, as a line is drawn).
// Each store writes the running xor of the loads, so no load can be dropped.
template <class V>
[[gnu::always_inline]] inline void move_bytes(const std::byte* in, std::size_t in_vectors, std::byte* out,
                                              std::size_t out_vectors) noexcept {
  V acc{};
  std::size_t loaded = 0, error = 0;
  for (std::size_t o = 0; o < out_vectors; ++o) {
    for (error += in_vectors; error >= out_vectors; error -= out_vectors) {
      V v;
      std::memcpy(&v, in + sizeof(V) * loaded++, sizeof(V));
      acc ^= v;
    }
    std::memcpy(out + sizeof(V) * o, &acc, sizeof(V));
  }
}

using move_fn = void (*)(const std::byte*, std::size_t, std::byte*, std::size_t);

#if defined(__GNUC__)
using vector16 = long long __attribute__((vector_size(16)));  // SSE2, NEON
void move_bytes16(const std::byte* in, std::size_t n_in, std::byte* out, std::size_t n_out) {
  move_bytes<vector16>(in, n_in, out, n_out);
}
#if defined(__x86_64__) || defined(__i386__)
using vector32 = long long __attribute__((vector_size(32)));
using vector64 = long long __attribute__((vector_size(64)));
[[gnu::target("avx2")]] void move_bytes32(const std::byte* in, std::size_t n_in, std::byte* out, std::size_t n_out) {
  move_bytes<vector32>(in, n_in, out, n_out);
}
[[gnu::target("avx512f")]] void move_bytes64(const std::byte* in, std::size_t n_in, std::byte* out, std::size_t n_out) {
  move_bytes<vector64>(in, n_in, out, n_out);
}
#endif
#else
struct vector16 {  // elsewhere two words (the compiler's vectors, if it makes them)
  std::uint64_t w[2];
  vector16& operator^=(const vector16& o) noexcept {
    w[0] ^= o.w[0];
    w[1] ^= o.w[1];
    return *this;
  }
};
void move_bytes16(const std::byte* in, std::size_t n_in, std::byte* out, std::size_t n_out) {
  move_bytes<vector16>(in, n_in, out, n_out);
}
#endif

// The widest of those this CPU runs, and its width in bytes.
std::pair<move_fn, std::size_t> widest_move() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  if (gguf::dispatch::supported(gguf::dispatch::isa::avx512bw)) return {move_bytes64, 64};
  if (gguf::dispatch::supported(gguf::dispatch::isa::avx2)) return {move_bytes32, 32};
#endif
  return {move_bytes16, 16};
}

void traffic_ceiling(benchmark::State& state, gguf::ggml_type type) {
  const std::int64_t n = state.range(0);
  const placed_bytes in(input(type, n));
  aligned_floats out(static_cast<std::size_t>(n));
  const auto [move, width] = widest_move();
  if (in.empty() || in.size % width != 0 || static_cast<std::size_t>(n) * 4 % width != 0) {
    state.SkipWithError("no input, or not whole vectors");
    return;
  }
  auto* dst = reinterpret_cast<std::byte*>(out.data.get());
  for (auto _ : state) {
    move(in.data(), in.size / width, dst, static_cast<std::size_t>(n) * 4 / width);
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::to_string(8 * width) + "-bit");
  set_counters(state, n);
}

void memcpy_ceiling(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  aligned_floats in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  std::memset(in.data.get(), 1, static_cast<std::size_t>(n) * 4);
  for (auto _ : state) {
    std::memcpy(out.data.get(), in.data.get(), static_cast<std::size_t>(n) * 4);
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

const int registered = [] {
  const gguf::dispatch::isa active = gguf::dispatch::active();
  benchmark::AddCustomContext("gguf_isa", std::string(gguf::dispatch::to_string(active)));
  for (std::int64_t n : {l2_weights, memory_weights}) {
    benchmark::RegisterBenchmark("memset", memset_ceiling, 0x3F)->Arg(n);
    benchmark::RegisterBenchmark("memset_zero", memset_ceiling, 0)->Arg(n);
    benchmark::RegisterBenchmark("memcpy", memcpy_ceiling)->Arg(n);
    benchmark::RegisterBenchmark("fill_nt", fill_nt_ceiling)->Arg(n);
  }
  const auto sizes = [](benchmark::internal::Benchmark* b, gguf::ggml_type type) {
    b->Arg(l2_weights);
    if (std::find(std::begin(hot), std::end(hot), type) != std::end(hot)) b->Arg(memory_weights);
  };
  const ggml_anchor ggml = load_ggml();
  for (const gguf::type_traits& t : gguf::ggml_types) {
    sizes(benchmark::RegisterBenchmark(("dequant/" + std::string(t.name)).c_str(), dequant<>, t.type, active), t.type);
    sizes(benchmark::RegisterBenchmark(("dequant_f16/" + std::string(t.name)).c_str(), dequant<gguf::f16>, t.type,
                                       active),
          t.type);
    sizes(benchmark::RegisterBenchmark(("dequant_bf16/" + std::string(t.name)).c_str(), dequant<gguf::bf16>, t.type,
                                       active),
          t.type);
    sizes(benchmark::RegisterBenchmark(("traffic/" + std::string(t.name)).c_str(), traffic_ceiling, t.type), t.type);
    // Right after gguf's own: the two see the machine in the same state (its speed drifts over a run).
    for (const auto& [type, to_float] : ggml.to_float) {
      if (type != t.type) continue;
      const std::string name = "ggml/" + std::string(t.name);
      sizes(benchmark::RegisterBenchmark(name.c_str(), ggml_dequant, type, to_float, ggml.label), type);
    }
  }
  for (const gguf::type_traits& t : gguf::ggml_types) {
    benchmark::RegisterBenchmark(("dequant_new/" + std::string(t.name)).c_str(), dequant_new, t.type)
        ->Arg(python_weights);
  }
  for (gguf::ggml_type h : {gguf::ggml_type::q4_K, gguf::ggml_type::q8_0}) {
    const std::string name = "dequant_parallel/" + std::string(gguf::to_string(h));
    benchmark::RegisterBenchmark(name.c_str(), dequant_parallel, h)->Args({memory_weights, 2})->UseRealTime();
  }
  for (gguf::dispatch::isa i : gguf::dispatch::all_isas) {
    if (i == active || !gguf::dispatch::supported(i)) continue;
    for (const gguf::type_traits& t : gguf::ggml_types) {
      const std::string name = "isa/" + std::string(gguf::dispatch::to_string(i)) + "/dequant/" + std::string(t.name);
      benchmark::RegisterBenchmark(name.c_str(), dequant<>, t.type, i)->Arg(l2_weights);
    }
  }
  return 0;
}();

}  // namespace
