// Built with GGUF_NO_SIMD (gguf-tests-nosimd, with test_dequant.cpp): the library without xsimd, where
// every type dequantizes with its scalar kernel, still bit-exact with ggml.
#include <doctest/doctest.h>

#include <gguf/gguf.hpp>

#if !defined(GGUF_NO_SIMD)
#error "build this file with GGUF_NO_SIMD"
#endif
#if defined(XSIMD_VERSION_MAJOR)
#error "GGUF_NO_SIMD must leave xsimd out of every header"
#endif

TEST_CASE("GGUF_NO_SIMD: every type uses its scalar kernel, and xsimd is not included") {
  for (const gguf::type_traits& t : gguf::ggml_types) {
    CAPTURE(t.name);
    const bool same = gguf::kernels::best_kernel(t.type) == gguf::kernels::scalar_kernel(t.type);
    CHECK(same);
  }
}
