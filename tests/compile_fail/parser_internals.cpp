// Only the parser builds a metadata table and value views, from bytes it has validated: a view made by
// hand could point anywhere.
// expect: is private within this context|is a private member|private member
#include <gguf/format/file.hpp>

int main() {
  gguf::metadata_table table;
#if defined(GGUF_COMPILE_FAIL)
  table.push_back(gguf::metadata_entry{});
#endif
  return static_cast<int>(table.size());
}
