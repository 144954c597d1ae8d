// The baseline half of gguf::dispatch: CPU detection and the choice of kernel table. Compiled with the
// project's baseline flags, so it runs on any CPU of the target; the tables of the wider instruction
// sets come from their own translation units (isa_table.cpp.in).
// Its own kernel namespace, so that no inline function is shared with a user's header-only build.
#define GGUF_ISA_NS isa_dispatch_base
#include <gguf/dispatch.hpp>
#include <gguf/kernels/simd.hpp>  // the baseline kernels: sse2 on x86-64, neon64 on ARM64

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <string_view>

#if defined(GGUF_DISPATCH_X86)
#if defined(_MSC_VER)
#include <intrin.h>
#else
#include <cpuid.h>
#endif
#endif

GGUF_BEGIN_NAMESPACE
namespace dispatch {
namespace detail {
#if defined(GGUF_DISPATCH_AVX2)
const kernel_table* table_avx2() noexcept;
#endif
#if defined(GGUF_DISPATCH_AVX512BW)
const kernel_table* table_avx512bw() noexcept;
#endif
#if defined(GGUF_DISPATCH_AVX512BF16)
const kernel_table* table_avx512bf16() noexcept;  // its bf16 outputs only

// The avx512bw table with the bf16 outputs of the translation unit compiled for AVX512-BF16.
const kernel_table* table_avx512bw_bf16() noexcept {
  static const kernel_table merged = [] {
    kernel_table t = *table_avx512bw();
    const kernel_table& bf16 = *table_avx512bf16();
    std::copy(std::begin(bf16.bf16_out), std::end(bf16.bf16_out), std::begin(t.bf16_out));
    return t;
  }();
  return &merged;
}
#endif

template <bool Scalar>
const kernel_table* baseline_table() noexcept {
  static constexpr kernel_table table = Scalar ? kernels::scalar_kernel_table() : kernels::best_kernel_table();
  return &table;
}

#if defined(GGUF_DISPATCH_X86)
struct cpu_features {
  bool avx2 = false, avx512bw = false, avx512bf16 = false;
};

// cpuid says what the CPU has; xgetbv says which register state the OS saves on a context switch.
// Both are needed: a CPU with AVX-512 under an OS that does not save ZMM state must not use it.
inline cpu_features detect() noexcept {
  auto cpuid = [](unsigned leaf, unsigned sub, unsigned r[4]) {
#if defined(_MSC_VER)
    int regs[4];
    __cpuidex(regs, static_cast<int>(leaf), static_cast<int>(sub));
    for (int i = 0; i < 4; ++i) r[i] = static_cast<unsigned>(regs[i]);
#else
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
#endif
  };
  cpu_features f;
  unsigned r[4];
  cpuid(0, 0, r);
  const unsigned max_leaf = r[0];
  if (max_leaf < 7) return f;
  cpuid(1, 0, r);
  const unsigned ecx1 = r[2];
  const bool osxsave = ecx1 & (1u << 27), avx = ecx1 & (1u << 28), fma = ecx1 & (1u << 12), f16c = ecx1 & (1u << 29);
  if (!osxsave || !avx) return f;
#if defined(_MSC_VER)
  const unsigned long long xcr0 = _xgetbv(0);
#else
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const unsigned long long xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
#endif
  cpuid(7, 0, r);
  const unsigned ebx7 = r[1], max_sub7 = r[0];
  const bool avx2 = ebx7 & (1u << 5), bmi1 = ebx7 & (1u << 3), bmi2 = ebx7 & (1u << 8);
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  f.avx2 = avx2 && fma && f16c && bmi1 && bmi2 && ymm_state;
  const bool avx512 = (ebx7 & (1u << 16)) && (ebx7 & (1u << 17)) && (ebx7 & (1u << 30)) && (ebx7 & (1u << 31));
  f.avx512bw = f.avx2 && avx512 && (xcr0 & 0xE6) == 0xE6;
  if (max_sub7 >= 1) {
    cpuid(7, 1, r);
    f.avx512bf16 = f.avx512bw && (r[0] & (1u << 5));
  }
  return f;
}
#endif

#if defined(GGUF_DISPATCH_X86)
const cpu_features& cpu() noexcept {
  static const cpu_features features = detect();
  return features;
}
#endif

const kernel_table* base_table(isa i) noexcept {
  switch (i) {
    case isa::scalar: return baseline_table<true>();
#if defined(GGUF_DISPATCH_X86)
    case isa::sse2: return baseline_table<false>();
#if defined(GGUF_DISPATCH_AVX2)
    case isa::avx2: return cpu().avx2 ? table_avx2() : nullptr;
#endif
#if defined(GGUF_DISPATCH_AVX512BW)
    case isa::avx512bw: return cpu().avx512bw ? table_avx512bw() : nullptr;
#endif
#endif
#if defined(GGUF_DISPATCH_NEON64)
    case isa::neon64: return baseline_table<false>();
#endif
    default: return nullptr;
  }
}

const kernel_table* table(isa i) noexcept {
#if defined(GGUF_DISPATCH_AVX512BF16)
  if (i == isa::avx512bw && cpu().avx512bf16) return table_avx512bw_bf16();
#endif
  return base_table(i);
}

isa choose() noexcept {
  if (const char* forced = std::getenv("GGUF_FORCE_ISA")) {
    for (isa i : all_isas) {
      if (to_string(i) == std::string_view(forced) && table(i)) return i;
    }
  }
  return best();
}

std::atomic<isa>& current() noexcept {
  static std::atomic<isa> a{choose()};
  return a;
}
}  // namespace detail

bool supported(isa i) noexcept { return detail::table(i) != nullptr; }

isa best() noexcept {
  for (isa i : {isa::avx512bw, isa::avx2, isa::sse2, isa::neon64}) {
    if (supported(i)) return i;
  }
  return isa::scalar;
}

isa active() noexcept { return detail::current().load(std::memory_order_relaxed); }

bool set_active(isa i) noexcept {
  if (!supported(i)) return false;
  detail::current().store(i, std::memory_order_relaxed);
  return true;
}

template <dequant_output Out>
dequant_fn_to<Out> kernel_to(ggml_type type, isa i) noexcept {
  const detail::kernel_table* t = detail::table(i);
  return t ? t->get<Out>(type) : nullptr;
}

template <dequant_output Out>
dequant_fn_to<Out> kernel_to(ggml_type type) noexcept {
  return detail::table(active())->get<Out>(type);
}

template dequant_fn_to<float> kernel_to<float>(ggml_type, isa) noexcept;
template dequant_fn_to<f16> kernel_to<f16>(ggml_type, isa) noexcept;
template dequant_fn_to<bf16> kernel_to<bf16>(ggml_type, isa) noexcept;
template dequant_fn_to<float> kernel_to<float>(ggml_type) noexcept;
template dequant_fn_to<f16> kernel_to<f16>(ggml_type) noexcept;
template dequant_fn_to<bf16> kernel_to<bf16>(ggml_type) noexcept;

dequant_fn kernel(ggml_type type, isa i) noexcept { return kernel_to<float>(type, i); }

dequant_fn kernel(ggml_type type) noexcept { return kernel_to<float>(type); }

quant_fn quantizer(ggml_type type, isa i) noexcept {
  const detail::kernel_table* t = detail::table(i);
  const auto id = static_cast<std::uint32_t>(type);
  return t && id < ggml_type_count ? t->quantize[id] : nullptr;
}

quant_fn quantizer(ggml_type type) noexcept { return quantizer(type, active()); }

}  // namespace dispatch
GGUF_END_NAMESPACE
