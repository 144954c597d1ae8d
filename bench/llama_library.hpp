// llama.cpp's libllama for the benchmarks' anchors: the shared oracle's prebuilt library beside the
// ggml it finds (bench/ggml_library.hpp), opened at run time, never linked. GGUF_BENCH_LLAMA is defined
// where it can be opened (dlopen).
#ifndef GGUF_BENCH_LLAMA_LIBRARY_HPP
#define GGUF_BENCH_LLAMA_LIBRARY_HPP

#include <cstdint>
#include <string>
#include <type_traits>

#include "ggml_library.hpp"

#if defined(__linux__) || defined(__APPLE__)
#include <dlfcn.h>
#define GGUF_BENCH_LLAMA 1
#endif

namespace bench {

/// llama.cpp's `llama_model_params` as the oracle's libllama has it (80 bytes).
struct llama_model_params {
  void* devices;
  void* tensor_buft_overrides;
  std::int32_t n_gpu_layers;
  int split_mode, load_mode, lazy_mode;
  std::int32_t main_gpu;
  void* tensor_split;
  void* progress_callback;
  void* progress_callback_user_data;
  void* kv_overrides;
  bool vocab_only, check_tensors, use_extra_bufts, no_host, no_alloc, load_mtp;
};
static_assert(sizeof(llama_model_params) == 80);

/// The functions of libllama the benchmarks call; `ok` when all were found.
struct llama_api {
  void (*log_set)(void (*)(int, const char*, void*), void*) = nullptr;
  void (*backend_init)() = nullptr;
  llama_model_params (*default_params)() = nullptr;
  void* (*load)(const char*, llama_model_params) = nullptr;
  void (*free_model)(void*) = nullptr;
  const void* (*get_vocab)(const void*) = nullptr;
  std::int32_t (*tokenize)(const void*, const char*, std::int32_t, std::int32_t*, std::int32_t, bool, bool) = nullptr;
  bool ok = false;
};

/// libllama, opened once (its log silenced); `ok` is false where it cannot be found.
inline const llama_api& llama() {
  static const llama_api api = [] {
    llama_api a;
#ifdef GGUF_BENCH_LLAMA
    std::string path = ggml_library().path;
    if (path.empty()) return a;
    path = path.substr(0, path.find_last_of('/') + 1) + "libllama.v0.5.0.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return a;
    const auto sym = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(h, name));
    };
    sym(a.log_set, "llama_log_set");
    sym(a.backend_init, "llama_backend_init");
    sym(a.default_params, "llama_model_default_params");
    sym(a.load, "llama_model_load_from_file");
    sym(a.free_model, "llama_model_free");
    sym(a.get_vocab, "llama_model_get_vocab");
    sym(a.tokenize, "llama_tokenize");
    a.ok = a.log_set && a.backend_init && a.default_params && a.load && a.free_model && a.get_vocab && a.tokenize;
    if (a.ok) {
      a.log_set([](int, const char*, void*) {}, nullptr);
      a.backend_init();
    }
#endif
    return a;
  }();
  return api;
}

}  // namespace bench

#endif  // GGUF_BENCH_LLAMA_LIBRARY_HPP
