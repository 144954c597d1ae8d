// The tensor infos belong to the `file` object: taken from a temporary file, the span would dangle even
// though the parsed bytes are still alive.
// expect: use of deleted function|call to deleted member function|overload resolution selected deleted
#include <cstddef>
#include <vector>

#include <gguf/format/parser.hpp>

int main() {
  const std::vector<std::byte> bytes(64);
#if defined(GGUF_COMPILE_FAIL)
  auto tensors = gguf::parse(bytes).value().tensors();
#else
  const gguf::file f = gguf::parse(bytes).value();
  auto tensors = f.tensors();
#endif
  return static_cast<int>(tensors.size());
}
