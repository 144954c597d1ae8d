// The umbrella header, then read.cpp's program (the same call of gguf::open), compiled with
// GGUF_RUNTIME_DISPATCH=1 (what linking gguf::dispatch defines): every header is parsed, no kernel
// is compiled.
#include <gguf/gguf.hpp>

#include "read.cpp"
