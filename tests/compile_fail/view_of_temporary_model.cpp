// A view taken from a temporary `mapped_gguf` (here through `value()`, which moves the model out of the
// result into a temporary) would dangle: view accessors are deleted on rvalues.
// expect: use of deleted function|call to deleted member function|overload resolution selected deleted
#include <gguf/open.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 0;
#if defined(GGUF_COMPILE_FAIL)
  const gguf::metadata_table& m = gguf::open(argv[1]).value().metadata();
#else
  const gguf::mapped_gguf model = gguf::open(argv[1]).value();
  const gguf::metadata_table& m = model.metadata();
#endif
  return static_cast<int>(m.size());
}
