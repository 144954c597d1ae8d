// A `gguf::file` copied out of what `gguf::open` returns would point into a mapping that is unmapped at
// the end of the statement. `mapped_gguf` is not a `file`, so this does not compile.
// expect: conversion from .*mapped_gguf.* to non-scalar type .*file|no viable conversion from .*mapped_gguf
#include <gguf/open.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 0;
#if defined(GGUF_COMPILE_FAIL)
  gguf::file f = *gguf::open(argv[1]);
  return static_cast<int>(f.tensors().size());
#else
  auto g = gguf::open(argv[1]);  // keep the mapping alive, then use the file it owns
  if (!g) return 1;
  const gguf::file& f = g->info();
  return static_cast<int>(f.tensors().size());
#endif
}
