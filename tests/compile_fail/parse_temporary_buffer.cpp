// The file returned by `gguf::parse` holds views into the bytes it parsed: parsing a temporary buffer
// would leave every view dangling at the end of the statement.
// expect: use of deleted function|call to deleted function
#include <cstddef>
#include <vector>

#include <gguf/format/parser.hpp>

int main() {
#if defined(GGUF_COMPILE_FAIL)
  auto f = gguf::parse(std::vector<std::byte>(64));
#else
  const std::vector<std::byte> bytes(64);  // the buffer outlives the parsed file
  auto f = gguf::parse(bytes);
#endif
  return f ? 0 : 1;
}
