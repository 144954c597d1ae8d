#ifndef GGUF_VERSION_HPP
#define GGUF_VERSION_HPP

// gguf is C++20. An older standard fails here, with one clear message, before anything else does: the
// include of a header that does not exist stops the compiler (an #error alone would let it go on to
// report every C++20 construct that follows).
#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 202002L
#error "gguf requires C++20: compile with -std=c++20 (MSVC: /std:c++20); the CMake target gguf::gguf asks for it"
#include <gguf_requires_cxx20>  // (does not exist: stops here)
#endif

/**
 * @file
 * The library version, its versioned namespace, and the GGUF_EXCEPTIONS switch: 1 (the default when the
 * compiler has exceptions enabled) makes `result<T>::value()` throw `gguf::gguf_error` on an error, 0
 * makes it print the error and abort. Define it before including any gguf header to choose.
 */

/// Library version, major (not the GGUF format version, which is `gguf::file::version()`).
#define GGUF_VERSION_MAJOR 0
#define GGUF_VERSION_MINOR 2  ///< library version, minor
#define GGUF_VERSION_PATCH 0  ///< library version, patch

/**
 * @namespace gguf
 * Reading GGUF model files: parse and validate a file (`gguf::open`, `gguf::parse`), read its metadata
 * and tensor infos as views into its bytes, and dequantize its tensors to float. Everything is in the
 * inline namespace `gguf::v0`, which qualified names omit.
 */

/// Everything lives in a versioned inline namespace, as fmt's `v12` and nlohmann's `json_abi_*`, so two
/// incompatible copies of the library in one program cannot silently violate the ODR.
#define GGUF_BEGIN_NAMESPACE \
  namespace gguf {           \
  inline namespace v0 {
/// Closes GGUF_BEGIN_NAMESPACE.
#define GGUF_END_NAMESPACE \
  }                        \
  }

/// Exceptions are optional: `result<T>::value()` throws `gguf::gguf_error` when they are on, and aborts
/// when they are off. Override by defining GGUF_EXCEPTIONS to 0 or 1 before including any gguf header.
#ifndef GGUF_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define GGUF_EXCEPTIONS 1
#else
#define GGUF_EXCEPTIONS 0
#endif
#endif

/// On the functions that build errors, and on a hot function's rare path (a new arena chunk, an
/// undefined name's message): kept out of line and out of the hot path, so that every caller is smaller,
/// faster to compile and faster to run (the common path then inlines).
#if defined(__GNUC__) || defined(__clang__)
#define GGUF_COLD [[gnu::cold, gnu::noinline]]
#elif defined(_MSC_VER)
#define GGUF_COLD __declspec(noinline)
#else
#define GGUF_COLD
#endif

/// On a tiny function called from many hot places (an append of a few bytes), which a compiler would
/// otherwise keep out of line for the size of all its callers together. Only in optimized builds: at
/// -O0 forced inlining only grows the callers' frames (a recursive caller's by kilobytes under ASan).
#if (defined(__GNUC__) || defined(__clang__)) && defined(__OPTIMIZE__)
#define GGUF_HOT_INLINE [[gnu::always_inline]] inline
#elif defined(_MSC_VER) && !defined(_DEBUG)
#define GGUF_HOT_INLINE __forceinline
#else
#define GGUF_HOT_INLINE inline
#endif

#endif  // GGUF_VERSION_HPP
