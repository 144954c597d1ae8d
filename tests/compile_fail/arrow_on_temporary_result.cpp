// `->` on the temporary result of `gguf::open` would hand out tensor infos owned by a model that is
// destroyed at the end of the statement.
// expect: use of deleted function|call to deleted member function|overload resolution selected deleted
#include <gguf/open.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 0;
#if defined(GGUF_COMPILE_FAIL)
  auto tensors = gguf::open(argv[1])->tensors();
#else
  auto g = gguf::open(argv[1]);
  if (!g) return 1;
  auto tensors = g->tensors();
#endif
  return static_cast<int>(tensors.size());
}
