// A program that dequantizes, header-only: every type's float kernel for this compiler's instruction
// set (-march=native) is compiled into it.
#include <gguf/dequantize.hpp>
#include <gguf/model.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const auto model = gguf::open_model(argv[1]);
  if (!model) return std::fprintf(stderr, "error: %s\n", gguf::to_string(model.error()).c_str()), 1;
  const gguf::tensor_info* t = model->find_tensor(argv[2]);
  if (!t) return 1;
  std::vector<float> x(t->n_elements);
  return gguf::dequantize(*t, x) ? 0 : 1;
}
