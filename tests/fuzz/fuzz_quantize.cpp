// gguf-fuzz-quantize: gguf::quantize on arbitrary floats, every bit pattern included (NaN, infinities,
// subnormals, huge magnitudes), into every type it writes, with and without importance weights (which
// may be negative, zero or NaN too). Whatever the input:
//  - no crash, no undefined behaviour (the libFuzzer build runs under ASan and UBSan), no endless search;
//  - exactly quantized_size bytes written, none past them (a canary after the output);
//  - the same bytes on a second run (no uninitialised state);
//  - a type that requires importance weights refuses without them, writing nothing;
//  - the IQ grid types may refuse rows ggml aborts on (out_of_range), never writing past the output, and
//    refuse the same input again; no other type refuses anything;
//  - the quantizer gguf::quantize runs (a SIMD twin where there is one) writes the scalar quantizer's bytes,
//    row by row, for every row without a NaN weight or importance weight. (Where a NaN from the input
//    meets another NaN in one operation, which of the two comes out is the compiler's choice of operand
//    order, which C++ leaves open: LLVM swaps the operands of an addition freely, and ggml's own bytes
//    then depend on how it was compiled. NaNs that arithmetic makes are all the same default NaN.)
//  - the blocks read back through the dequantizer without a fault.
// A violation traps: a finding.
//
// Input: byte 0 picks the type, byte 1 the rows (1-4) and whether weights follow; the rest are the
// floats, as many whole rows as fit (after the weights, one per column, when present).
//
// Built as a libFuzzer target (GGUF_BUILD_FUZZERS=ON, clang) and, with replay_main.cpp, as a plain
// program that runs the seed corpus through it in every build (ctest `fuzz.quantize_replay`).
#include <gguf/gguf.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace {

constexpr std::byte canary{0xA5};

/// The types whose quantizer refuses rows ggml aborts on (NaN, infinities, overflowing squares).
bool may_refuse_rows(gguf::ggml_type t) {
  using gguf::ggml_type;
  for (ggml_type g : {ggml_type::iq2_xxs, ggml_type::iq2_xs, ggml_type::iq2_s, ggml_type::iq3_xxs, ggml_type::iq3_s,
                      ggml_type::iq1_s, ggml_type::iq1_m}) {
    if (g == t) return true;
  }
  return false;
}

/// The types gguf::quantize writes, in id order.
std::vector<gguf::ggml_type> quantizable() {
  std::vector<gguf::ggml_type> types;
  for (std::uint32_t id = 0; id < 64; ++id) {
    const auto t = static_cast<gguf::ggml_type>(id);
    if (gguf::find_type(id) != nullptr && gguf::kernels::scalar_quantizer(t) != nullptr) types.push_back(t);
  }
  return types;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<gguf::ggml_type> types = quantizable();
  if (size < 2 || types.empty()) return 0;
  const gguf::ggml_type type = types[data[0] % types.size()];
  const gguf::type_traits& traits = *gguf::find_type(static_cast<std::uint32_t>(type));
  const std::size_t rows = 1 + (data[1] & 3u);
  const bool weighted = (data[1] & 4u) != 0;
  const std::size_t n_floats = (size - 2) / sizeof(float);
  // The longest row of whole blocks that fits, its weights included; at least one block (zero-padded).
  const std::size_t per_row_budget = n_floats / (rows + (weighted ? 1 : 0));
  const std::size_t n_per_row =
      traits.block_size * (per_row_budget / traits.block_size > 0 ? per_row_budget / traits.block_size : 1);
  std::vector<float> values((rows + (weighted ? 1 : 0)) * n_per_row, 0.0f);
  std::memcpy(values.data(), data + 2, std::min(n_floats, values.size()) * sizeof(float));
  const std::span<const float> src(values.data(), rows * n_per_row);
  const std::span<const float> importance =
      weighted ? std::span<const float>(values.data() + rows * n_per_row, n_per_row) : std::span<const float>{};

  const auto expected = gguf::quantized_size(type, rows, n_per_row);
  if (!expected) __builtin_trap();
  std::vector<std::byte> out(*expected + 64, canary), again(*expected + 64, canary);
  const auto written = gguf::quantize(type, src, n_per_row, out, importance);
  if (!written && written.error().code == gguf::errc::out_of_range) {
    // A row ggml aborts on: only the grid types; nothing past the output; the same answer again.
    if (!may_refuse_rows(type)) __builtin_trap();
    for (std::size_t i = *expected; i < out.size(); ++i) {
      if (out[i] != canary) __builtin_trap();
    }
    const auto twice = gguf::quantize(type, src, n_per_row, again, importance);
    if (twice || twice.error().code != gguf::errc::out_of_range) __builtin_trap();
    return 0;
  }
  if (!written) {
    // The other refusal these inputs can meet: a type that needs weights, given none. It writes nothing.
    if (weighted || !gguf::kernels::requires_importance(type)) __builtin_trap();
    for (std::byte b : out) {
      if (b != canary) __builtin_trap();
    }
    return 0;
  }
  if (*written != *expected) __builtin_trap();
  for (std::size_t i = *expected; i < out.size(); ++i) {
    if (out[i] != canary) __builtin_trap();
  }
  if (!gguf::quantize(type, src, n_per_row, again, importance)) __builtin_trap();
  if (std::memcmp(out.data(), again.data(), out.size()) != 0) __builtin_trap();

  // The scalar quantizer is the specification of every SIMD twin.
  const std::size_t row_bytes = *expected / rows;
  std::vector<std::byte> reference(row_bytes);
  const auto has_nan = [](std::span<const float> v) {
    return std::any_of(v.begin(), v.end(), [](float f) { return std::isnan(f); });
  };
  for (std::size_t r = 0; r < rows; ++r) {
    if (has_nan(src.subspan(r * n_per_row, n_per_row)) || has_nan(importance)) continue;
    const float* w = importance.empty() ? nullptr : importance.data();
    if (gguf::kernels::scalar_quantizer(type)(src.data() + r * n_per_row, reference.data(), n_per_row, w) !=
        gguf::errc::success) {
      __builtin_trap();
    }
    if (std::memcmp(reference.data(), out.data() + r * row_bytes, row_bytes) != 0) __builtin_trap();
  }

  std::vector<float> back(rows * n_per_row);
  if (!gguf::dequantize(type, std::span<const std::byte>(out.data(), *expected), back)) __builtin_trap();
  return 0;
}
