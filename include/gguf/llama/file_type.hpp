#ifndef GGUF_LLAMA_FILE_TYPE_HPP
#define GGUF_LLAMA_FILE_TYPE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "gguf/format/ggml_types.hpp"
#include "gguf/format/tensor_info.hpp"

GGUF_BEGIN_NAMESPACE

namespace detail {
// ASCII case-insensitive equality (file type names are ASCII).
constexpr bool iequal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}
}  // namespace detail

/// llama.cpp's LLAMA_FTYPE_GUESSED: set on a file type the loader inferred from the tensors.
inline constexpr std::uint32_t ftype_guessed = 1024;

/**
 * One of llama.cpp's file types (`enum llama_ftype`, the value of `general.file_type`): a quantization
 * mix, named as `llama-quantize` names it.
 */
struct ftype_info {
  std::uint32_t id;       ///< the llama_ftype value
  std::string_view name;  ///< llama-quantize's name: "Q4_K_M", "F16", "F32" for ALL_F32
  ggml_type main_type;    ///< the type most weights of such a file have (Q4_K_M: q4_K)
};

/// Every llama_ftype of llama.h that a file can carry (the removed Q4_1_SOME_F16, Q4_2, Q4_3 are not).
inline constexpr std::array<ftype_info, 36> ftypes{{
    {0, "F32", ggml_type::f32},        {1, "F16", ggml_type::f16},          {2, "Q4_0", ggml_type::q4_0},
    {3, "Q4_1", ggml_type::q4_1},      {7, "Q8_0", ggml_type::q8_0},        {8, "Q5_0", ggml_type::q5_0},
    {9, "Q5_1", ggml_type::q5_1},      {10, "Q2_K", ggml_type::q2_K},       {11, "Q3_K_S", ggml_type::q3_K},
    {12, "Q3_K_M", ggml_type::q3_K},   {13, "Q3_K_L", ggml_type::q3_K},     {14, "Q4_K_S", ggml_type::q4_K},
    {15, "Q4_K_M", ggml_type::q4_K},   {16, "Q5_K_S", ggml_type::q5_K},     {17, "Q5_K_M", ggml_type::q5_K},
    {18, "Q6_K", ggml_type::q6_K},     {19, "IQ2_XXS", ggml_type::iq2_xxs}, {20, "IQ2_XS", ggml_type::iq2_xs},
    {21, "Q2_K_S", ggml_type::q2_K},   {22, "IQ3_XS", ggml_type::iq3_s},    {23, "IQ3_XXS", ggml_type::iq3_xxs},
    {24, "IQ1_S", ggml_type::iq1_s},   {25, "IQ4_NL", ggml_type::iq4_nl},   {26, "IQ3_S", ggml_type::iq3_s},
    {27, "IQ3_M", ggml_type::iq3_s},   {28, "IQ2_S", ggml_type::iq2_s},     {29, "IQ2_M", ggml_type::iq2_s},
    {30, "IQ4_XS", ggml_type::iq4_xs}, {31, "IQ1_M", ggml_type::iq1_m},     {32, "BF16", ggml_type::bf16},
    {36, "TQ1_0", ggml_type::tq1_0},   {37, "TQ2_0", ggml_type::tq2_0},     {38, "MXFP4_MOE", ggml_type::mxfp4},
    {39, "NVFP4", ggml_type::nvfp4},   {40, "Q1_0", ggml_type::q1_0},       {41, "Q2_0", ggml_type::q2_0},
}};

/**
 * The file type with this id (`LLAMA_FTYPE_GUESSED` ignored).
 * @return its entry, or nullptr for an id llama.h does not define
 */
constexpr const ftype_info* find_ftype(std::uint32_t id) noexcept {
  id &= ~ftype_guessed;
  for (const ftype_info& f : ftypes) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

/**
 * The file type named `name` as llama-quantize spells it, in any case ("Q4_K_M", "q4_k_m"); "ALL_F32",
 * "MOSTLY_Q4_K_M" and "LLAMA_FTYPE_MOSTLY_Q4_K_M" (llama.h's spelling) too.
 * @return its entry, or nullptr
 */
constexpr const ftype_info* find_ftype(std::string_view name) noexcept {
  for (std::string_view prefix : {"LLAMA_FTYPE_", "MOSTLY_"}) {
    if (name.size() > prefix.size() && detail::iequal(name.substr(0, prefix.size()), prefix)) {
      name.remove_prefix(prefix.size());
    }
  }
  if (detail::iequal(name, "ALL_F32")) name = "F32";
  for (const ftype_info& f : ftypes) {
    if (detail::iequal(f.name, name)) return &f;
  }
  return nullptr;
}

/** The tensors, elements and bytes of one tensor type in a model. */
struct type_count {
  std::uint64_t tensors = 0;   ///< how many tensors have the type
  std::uint64_t elements = 0;  ///< their elements (weights)
  std::uint64_t bytes = 0;     ///< their data bytes
  /** Bits per weight: 8 * bytes / elements (0 with no elements). */
  double bits_per_weight() const noexcept {
    return elements ? 8.0 * static_cast<double>(bytes) / static_cast<double>(elements) : 0.0;
  }
};

/** How many tensors, elements and bytes a model has of each tensor type: its quantization mix. */
struct type_census {
  std::array<type_count, ggml_type_count> by_type{};  ///< indexed by the ggml type id
  type_count total;                                   ///< over every type

  /** The count of type `t`. */
  const type_count& operator[](ggml_type t) const noexcept { return by_type[static_cast<std::uint32_t>(t)]; }

  /**
   * The type llama.cpp's loader takes for the file's when `general.file_type` is absent: the one the most
   * tensors have (the lowest id on a tie), counting every tensor, norms and biases included.
   */
  std::optional<ggml_type> most_common() const noexcept {
    std::optional<ggml_type> best;
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < ggml_type_count; ++i) {
      if (by_type[i].tensors > n) {
        n = by_type[i].tensors;
        best = static_cast<ggml_type>(i);
      }
    }
    return best;
  }
};

/** The census of `tensors` (all of a model's: every shard's). */
inline type_census census(std::span<const tensor_info> tensors) noexcept {
  type_census c;
  for (const tensor_info& t : tensors) {
    type_count& k = c.by_type[static_cast<std::uint32_t>(t.type)];
    ++k.tensors;
    k.elements += t.n_elements;
    k.bytes += t.n_bytes;
    ++c.total.tensors;
    c.total.elements += t.n_elements;
    c.total.bytes += t.n_bytes;
  }
  return c;
}

/**
 * llama.cpp's guess of the file type from the most common tensor type (`llama_model_loader`): a k-quant
 * type gives its medium mix (q4_K: Q4_K_M), q3_K gives Q3_K_M, iq2_s IQ2_S, mxfp4 MXFP4_MOE.
 * @return the file type, or nullptr when there are no tensors or the type names no mix (i32, f64, ...)
 */
inline const ftype_info* guess_ftype(const type_census& c) noexcept {
  const std::optional<ggml_type> t = c.most_common();
  if (!t) return nullptr;
  switch (*t) {
    case ggml_type::f32: return find_ftype(0u);
    case ggml_type::q2_K: return find_ftype(10u);
    case ggml_type::q3_K: return find_ftype(12u);
    case ggml_type::q4_K: return find_ftype(15u);
    case ggml_type::q5_K: return find_ftype(17u);
    case ggml_type::iq3_s: return find_ftype(26u);
    case ggml_type::iq2_s: return find_ftype(28u);
    default: break;
  }
  for (const ftype_info& f : ftypes) {
    if (f.main_type == *t) return &f;
  }
  return nullptr;
}

/** A model's file type, and where it comes from. */
struct file_type_fact {
  const ftype_info* ftype = nullptr;  ///< the file type; nullptr when neither the key nor the tensors name one
  bool declared = false;              ///< from `general.file_type` (else guessed from the tensors)
  /// `general.file_type` was present but disagrees with the tensors (no tensor of its main type, or an
  /// id llama.h does not define): `ftype` is then the guess.
  bool inconsistent = false;
};

/**
 * The file type of a model: `general.file_type` when it is a known id whose main type some tensor has
 * (F32: when every tensor is f32, or no tensor is quantized), else llama.cpp's guess from the census.
 * @param declared the value of `general.file_type`, if any
 * @param c        the census of every tensor of the model
 */
inline file_type_fact file_type_of(std::optional<std::uint32_t> declared, const type_census& c) noexcept {
  file_type_fact f;
  if (declared) {
    const ftype_info* d = find_ftype(*declared);
    bool consistent = d != nullptr;
    if (d && c.total.tensors != 0) {
      if (d->main_type == ggml_type::f32) {
        for (const type_traits& t : ggml_types) consistent = consistent && !(t.quantized && c[t.type].tensors);
        consistent = consistent && c[ggml_type::f16].tensors + c[ggml_type::bf16].tensors == 0;
      } else {
        consistent = c[d->main_type].tensors != 0;
      }
    }
    if (consistent) {
      f.ftype = d;
      f.declared = true;
      return f;
    }
    f.inconsistent = true;
  }
  f.ftype = guess_ftype(c);
  return f;
}

GGUF_END_NAMESPACE

#endif  // GGUF_LLAMA_FILE_TYPE_HPP
