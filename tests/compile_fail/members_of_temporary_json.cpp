// The members of a temporary `gguf::json` (here the object `model_variables` returns) would dangle in a
// range-for: `items()`, `members()`, `as_string()` and `find()` are deleted on rvalues.
// expect: use of deleted function|call to deleted member function|overload resolution selected deleted
#include <gguf/json.hpp>

#include <cstddef>

namespace {
gguf::json variables() { return *gguf::parse_json(R"({"bos_token": "<s>"})"); }
}  // namespace

int main() {
  std::size_t n = 0;
#if defined(GGUF_COMPILE_FAIL)
  for (const auto& member : variables().members()) n += member.first.size();
#else
  const gguf::json v = variables();
  for (const auto& member : v.members()) n += member.first.size();
#endif
  return static_cast<int>(n);
}
