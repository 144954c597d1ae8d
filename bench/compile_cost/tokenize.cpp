// Tokenizing: <gguf/tokenizer.hpp> and a call of encode and decode (every tokenizer model compiled in).
#include <gguf/open.hpp>
#include <gguf/tokenizer.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const auto file = gguf::open(argv[1]);
  if (!file) return std::fprintf(stderr, "error: %s\n", gguf::to_string(file.error()).c_str()), 1;
  const auto tok = gguf::tokenizer::from(*file);
  if (!tok) return std::fprintf(stderr, "error: %s\n", gguf::to_string(tok.error()).c_str()), 1;
  const auto ids = tok->encode(argv[2]);
  if (!ids) return std::fprintf(stderr, "error: %s\n", gguf::to_string(ids.error()).c_str()), 1;
  std::printf("%zu tokens: %s\n", ids->size(), tok->decode(*ids).value_or("").c_str());
  return 0;
}
