// gguf-bench: dequantization. dequant/<type>/<n> dequantizes n weights of each type, single thread,
// with the kernels of the instruction set runtime dispatch picks for this CPU (GGUF_FORCE_ISA
// overrides); isa/<isa>/dequant/<type>/65536 runs every other supported instruction set.
// memset/<n> and memcpy/<n> write the same 4n output bytes: the ceiling in the same run.
// The input is real ggml-quantized blocks (the committed fixture quants-s1.gguf) tiled to n weights.
#include <benchmark/benchmark.h>
#include <gguf/dispatch.hpp>
#include <gguf/gguf.hpp>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t l2_weights = 65536;          // 256 KiB of output: stays in L2
constexpr std::int64_t memory_weights = 16777216;   // 64 MiB of output: goes to memory

// Types measured out of cache as well: the ones models are shipped in.
constexpr gguf::ggml_type hot[] = {gguf::ggml_type::f16,  gguf::ggml_type::bf16, gguf::ggml_type::q4_0,
                                   gguf::ggml_type::q8_0, gguf::ggml_type::q4_K, gguf::ggml_type::q5_K,
                                   gguf::ggml_type::q6_K, gguf::ggml_type::mxfp4};

// Output buffers on a cache-line boundary, touched once before timing (no page faults in the loop).
struct aligned_floats {
  explicit aligned_floats(std::size_t n)
      : data(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64)), &std::free) {
    std::memset(data.get(), 0, n * 4);
  }
  std::unique_ptr<float, decltype(&std::free)> data;
};

// n weights of `type`: the fixture's blocks of that type, repeated.
std::vector<std::byte> input(gguf::ggml_type type, std::int64_t n) {
  static const auto fixture = gguf::open(GGUF_BENCH_QUANTS_FILE);
  const gguf::type_traits& t = gguf::traits(type);
  std::vector<std::byte> out(static_cast<std::size_t>(n) / t.block_size * t.type_size);
  const gguf::tensor_info* src = fixture ? fixture->find_tensor("t." + std::string(t.name)) : nullptr;
  for (std::size_t i = 0; src && i < out.size(); i += src->data.size()) {
    std::memcpy(out.data() + i, src->data.data(), std::min(src->data.size(), out.size() - i));
  }
  return out;
}

void set_counters(benchmark::State& state, std::int64_t n) {
  state.counters["weights/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] =
      benchmark::Counter(static_cast<double>(4 * n), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

void dequant(benchmark::State& state, gguf::ggml_type type, gguf::dispatch::isa isa) {
  const std::int64_t n = state.range(0);
  const std::vector<std::byte> in = input(type, n);
  aligned_floats out(static_cast<std::size_t>(n));
  const gguf::dequant_fn kernel = gguf::dispatch::kernel(type, isa);
  const std::size_t blocks = static_cast<std::size_t>(n) / gguf::traits(type).block_size;
  if (!kernel || in.empty()) {
    state.SkipWithError("no kernel or no input");
    return;
  }
  for (auto _ : state) {
    kernel(in.data(), out.data.get(), blocks);
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  state.SetLabel(std::string(gguf::dispatch::name(isa)));
  set_counters(state, n);
}

void memset_ceiling(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  aligned_floats out(static_cast<std::size_t>(n));
  for (auto _ : state) {
    std::memset(out.data.get(), 0, static_cast<std::size_t>(n) * 4);
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
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
  benchmark::AddCustomContext("gguf_isa", std::string(gguf::dispatch::name(active)));
  for (std::int64_t n : {l2_weights, memory_weights}) {
    benchmark::RegisterBenchmark("memset", memset_ceiling)->Arg(n);
    benchmark::RegisterBenchmark("memcpy", memcpy_ceiling)->Arg(n);
  }
  for (const gguf::type_traits& t : gguf::ggml_types) {
    auto* b = benchmark::RegisterBenchmark(("dequant/" + std::string(t.name)).c_str(), dequant, t.type, active);
    b->Arg(l2_weights);
    for (gguf::ggml_type h : hot) {
      if (h == t.type) b->Arg(memory_weights);
    }
  }
  for (gguf::dispatch::isa i : gguf::dispatch::all_isas) {
    if (i == active || !gguf::dispatch::supported(i)) continue;
    for (const gguf::type_traits& t : gguf::ggml_types) {
      const std::string name = "isa/" + std::string(gguf::dispatch::name(i)) + "/dequant/" + std::string(t.name);
      benchmark::RegisterBenchmark(name.c_str(), dequant, t.type, i)->Arg(l2_weights);
    }
  }
  return 0;
}();

}  // namespace
