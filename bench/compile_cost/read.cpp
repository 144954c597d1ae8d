// Reading a file: <gguf/open.hpp> and a call of gguf::open (the parser and the mapping compiled in).
#include <gguf/open.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const auto model = gguf::open(argv[1]);
  if (!model) return std::fprintf(stderr, "error: %s\n", gguf::to_string(model.error()).c_str()), 1;
  std::printf("%zu keys, %zu tensors\n", model->metadata().size(), model->tensors().size());
  return 0;
}
