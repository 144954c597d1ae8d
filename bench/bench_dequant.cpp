// gguf-bench: dequantization. dequant/<type>/<n> dequantizes n weights of each type, single thread,
// with the kernels of the instruction set runtime dispatch picks for this CPU (GGUF_FORCE_ISA
// overrides); isa/<isa>/dequant/<type>/65536 runs every other supported instruction set.
// memset/<n> and memcpy/<n> write the same 4n output bytes: the ceiling in the same run.
// The input is real ggml-quantized blocks (the committed fixture quants-s1.gguf) tiled to n weights.
#include <benchmark/benchmark.h>
#include <gguf/dispatch.hpp>
#include <gguf/gguf.hpp>
#include <gguf/parallel.hpp>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t l2_weights = 65536;         // 256 KiB of output: stays in L2
constexpr std::int64_t memory_weights = 16777216;  // 64 MiB of output: goes to memory

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
  state.counters["weights/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] = benchmark::Counter(
      static_cast<double>(4 * n), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

// Through the public gguf::dequantize (in runtime-dispatch mode here), as a user calls it.
void dequant(benchmark::State& state, gguf::ggml_type type, gguf::dispatch::isa isa) {
  const std::int64_t n = state.range(0);
  const std::vector<std::byte> in = input(type, n);
  aligned_floats out(static_cast<std::size_t>(n));
  const gguf::dispatch::isa previous = gguf::dispatch::active();
  if (in.empty() || !gguf::dispatch::set_active(isa)) {
    state.SkipWithError("no input, or instruction set not supported");
    return;
  }
  const std::span<float> dst(out.data.get(), static_cast<std::size_t>(n));
  for (auto _ : state) {
    if (!gguf::dequantize(type, in, dst)) state.SkipWithError("dequantize failed");
    benchmark::DoNotOptimize(out.data.get());
    benchmark::ClobberMemory();
  }
  gguf::dispatch::set_active(previous);
  state.SetLabel(std::string(gguf::dispatch::to_string(isa)));
  set_counters(state, n);
}

// dequantize_parallel on a whole tensor of n weights (rows of 4096), with state.range(1) threads.
void dequant_parallel(benchmark::State& state, gguf::ggml_type type) {
  const std::int64_t n = state.range(0);
  const std::vector<std::byte> in = input(type, n);
  aligned_floats out(static_cast<std::size_t>(n));
  gguf::tensor_info t;
  t.type = type;
  t.n_dims = 2;
  t.ne = {4096, static_cast<std::uint64_t>(n) / 4096, 1, 1};
  t.n_elements = static_cast<std::uint64_t>(n);
  t.n_bytes = in.size();
  t.data = in;
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
  }
  for (const gguf::type_traits& t : gguf::ggml_types) {
    auto* b = benchmark::RegisterBenchmark(("dequant/" + std::string(t.name)).c_str(), dequant, t.type, active);
    b->Arg(l2_weights);
    for (gguf::ggml_type h : hot) {
      if (h == t.type) b->Arg(memory_weights);
    }
  }
  for (gguf::ggml_type h : {gguf::ggml_type::q4_K, gguf::ggml_type::q8_0}) {
    const std::string name = "dequant_parallel/" + std::string(gguf::to_string(h));
    benchmark::RegisterBenchmark(name.c_str(), dequant_parallel, h)->Args({memory_weights, 2})->UseRealTime();
  }
  for (gguf::dispatch::isa i : gguf::dispatch::all_isas) {
    if (i == active || !gguf::dispatch::supported(i)) continue;
    for (const gguf::type_traits& t : gguf::ggml_types) {
      const std::string name = "isa/" + std::string(gguf::dispatch::to_string(i)) + "/dequant/" + std::string(t.name);
      benchmark::RegisterBenchmark(name.c_str(), dequant, t.type, i)->Arg(l2_weights);
    }
  }
  return 0;
}();

}  // namespace
