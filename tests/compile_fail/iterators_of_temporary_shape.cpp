// `tensor_info::shape()` returns a small value: iterators taken from the temporary would dangle (and two
// calls give iterators into two different temporaries).
// expect: use of deleted function|call to deleted member function|overload resolution selected deleted
#include <cstdint>
#include <vector>

#include <gguf/format/tensor_info.hpp>

int main() {
  const gguf::tensor_info t;
#if defined(GGUF_COMPILE_FAIL)
  const std::vector<std::uint64_t> dims(t.shape().begin(), t.shape().end());
#else
  const gguf::tensor_shape shape = t.shape();
  const std::vector<std::uint64_t> dims(shape.begin(), shape.end());
  for (std::uint64_t d : t.shape()) (void)d;  // a range-for keeps the temporary alive
#endif
  return static_cast<int>(dims.size());
}
