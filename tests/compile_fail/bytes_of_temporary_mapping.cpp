// The bytes of a temporary mapping are unmapped at the end of the statement.
// expect: use of deleted function|call to deleted member function|overload resolution selected deleted
#include <gguf/platform/mapped_file.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 0;
#if defined(GGUF_COMPILE_FAIL)
  auto bytes = gguf::mapped_file::open(argv[1]).value().bytes();
#else
  const gguf::mapped_file m = gguf::mapped_file::open(argv[1]).value();
  auto bytes = m.bytes();
#endif
  return static_cast<int>(bytes.size());
}
