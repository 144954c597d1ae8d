#ifndef GGUF_KERNELS_SIMD_OPS_HPP
#define GGUF_KERNELS_SIMD_OPS_HPP

// The operations the kernels need that xsimd does not offer, or not in every version gguf supports
// (8.1, Debian's, lacks widening loads, byte shuffles, permutes and half conversion): the one home of
// intrinsics, the headers of ops/, one a job. Each op is a template on the xsimd architecture A with a
// branch per instruction set that has a better instruction (chosen at compile time by arch.hpp's
// predicates) and a portable fallback, through memory or plain xsimd, that gives the same bits. The
// kernel families' SIMD code (kernels/<family>/*_simd.hpp) and what they share (simd/) call these and
// never an intrinsic; tests/docs/check_intrinsics.py holds every other header to that.
//
//   ops/intrinsics.hpp           xsimd, arch.hpp, and the intrinsic headers (immintrin.h, arm_neon.h)
//   ops/convert.hpp              conversions and constants: to_float, lane_map, half scales
//   ops/load.hpp                 widening loads, 16 bytes at a time, bit and nibble lanes
//   ops/lookup.hpp               permutes, repeats, nibble indices, nibble_table
//   ops/bytes.hpp                byte-parallel assembly in swar_arch batches
//   ops/store.hpp                put, put_pair (subnormals), streaming stores, the bf16 quantizer's pair
//   ops/reduce.hpp               the quantizers' reductions and narrowings
//   ops/unroll.hpp               unroll<N>
//   ops/avx512_word_lookups.hpp  AVX-512 only: tables rounded to half words, looked up by vpermw
//   ops/avx512_grid_lookups.hpp  AVX-512 only: the grid types' block lookups (iq_grid/code_rows_simd.hpp)

// In the order of their jobs (the order the ops were defined in when they were one header).
#include "gguf/kernels/simd/ops/intrinsics.hpp"
#include "gguf/kernels/simd/ops/convert.hpp"
#include "gguf/kernels/simd/ops/load.hpp"
#include "gguf/kernels/simd/ops/lookup.hpp"
#include "gguf/kernels/simd/ops/bytes.hpp"
#include "gguf/kernels/simd/ops/store.hpp"
#include "gguf/kernels/simd/ops/avx512_word_lookups.hpp"
#include "gguf/kernels/simd/ops/reduce.hpp"
#include "gguf/kernels/simd/ops/unroll.hpp"
#include "gguf/kernels/simd/ops/avx512_grid_lookups.hpp"

#endif  // GGUF_KERNELS_SIMD_OPS_HPP
