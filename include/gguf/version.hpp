#ifndef GGUF_VERSION_HPP
#define GGUF_VERSION_HPP

/// Library version (not the GGUF format version, which is `gguf::file::version()`).
#define GGUF_VERSION_MAJOR 0
#define GGUF_VERSION_MINOR 1
#define GGUF_VERSION_PATCH 0

/// Everything lives in a versioned inline namespace, as fmt's `v12` and nlohmann's `json_abi_*`, so two
/// incompatible copies of the library in one program cannot silently violate the ODR.
#define GGUF_BEGIN_NAMESPACE \
  namespace gguf {           \
  inline namespace v0 {
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

#endif  // GGUF_VERSION_HPP
