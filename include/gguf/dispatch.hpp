#ifndef GGUF_DISPATCH_HPP
#define GGUF_DISPATCH_HPP

#include <cstdint>
#include <string_view>

#include "gguf/detail/isa.hpp"
#include "gguf/format/ggml_types.hpp"

GGUF_BEGIN_NAMESPACE

/**
 * Runtime CPU dispatch: the kernels of every instruction set gguf was built for, chosen at run time from
 * what the CPU and the OS support (cpuid + xgetbv). Only available when linking the `gguf::dispatch`
 * CMake target, a small static library with one translation unit per instruction set; linking it
 * defines GGUF_RUNTIME_DISPATCH=1, which routes `gguf::dequantize` through `dispatch::kernel`.
 * Without it, `gguf::dequantize` uses the best kernels the caller's own compiler flags allow.
 */
namespace dispatch {

enum class isa : std::uint8_t {
  scalar,    ///< the reference kernels
  sse2,      ///< x86-64 baseline
  avx2,      ///< AVX2 + FMA + F16C + BMI2 (Haswell, Zen and later)
  avx512bw,  ///< AVX-512 F/BW/DQ/VL (Skylake-X, Ice Lake, Zen 4 and later)
  neon64,    ///< ARM64 baseline
};
inline constexpr isa all_isas[] = {isa::scalar, isa::sse2, isa::avx2, isa::avx512bw, isa::neon64};

constexpr std::string_view name(isa i) noexcept {
  switch (i) {
    case isa::scalar: return "scalar";
    case isa::sse2: return "sse2";
    case isa::avx2: return "avx2";
    case isa::avx512bw: return "avx512bw";
    case isa::neon64: return "neon64";
  }
  return "unknown";
}

/** Built into this program and runnable on this CPU and OS. */
bool supported(isa i) noexcept;

/** The best supported instruction set. */
isa best() noexcept;

/**
 * The instruction set `dequantize` uses: `best()`, unless the environment variable GGUF_FORCE_ISA names
 * a supported one ("scalar", "sse2", "avx2", "avx512bw", "neon64") or `set_active` chose another.
 */
isa active() noexcept;

/** Use `i` from now on (tests, benchmarks). Returns false, changing nothing, if `i` is unsupported. */
bool set_active(isa i) noexcept;

/** The kernel of `type` for instruction set `i`, or nullptr if `i` is unsupported. */
dequant_fn kernel(ggml_type type, isa i) noexcept;

/** The kernel of `type` for the active instruction set. */
dequant_fn kernel(ggml_type type) noexcept;

}  // namespace dispatch
GGUF_END_NAMESPACE

#endif  // GGUF_DISPATCH_HPP
