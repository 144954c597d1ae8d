// A value view's constructor from raw parts is the parser's: a view made by hand could point anywhere.
// expect: is private within this context|is a private member|private member|calling a private constructor
#include <cstddef>

#include <gguf/format/value.hpp>

int main() {
  static const std::byte byte{1};
#if defined(GGUF_COMPILE_FAIL)
  const gguf::value_view v(gguf::value_type::uint8, gguf::value_type::uint8, {}, &byte, 1, 1);
#else
  const gguf::value_view v;  // the empty view is public; real ones come from a parsed file
#endif
  return v.bytes().size() == 0 && byte == std::byte{1} ? 0 : 1;
}
