// quantize_raw TYPE IN OUT N_PER_ROW [IMATRIX]: raw little-endian f32 rows in IN quantized to TYPE (a ggml
// type name) into OUT, with one f32 importance weight per column from IMATRIX; the library's side of
// tests/oracle/quantize_agreement*.py, the same command line as the oracle's `quantize`. Exit 0 when
// written, 3 when the quantizer refuses a row ggml aborts on, 1 on other errors, 2 on usage errors.
#include <gguf/quantize.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::vector<float> read_floats(const char* path) {
  std::ifstream f(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: quantize_raw TYPE IN OUT N_PER_ROW [IMATRIX]\n");
    return 2;
  }
  const gguf::type_traits* type = nullptr;
  for (const gguf::type_traits& t : gguf::ggml_types) {
    if (t.name == argv[1]) type = &t;
  }
  if (!type) {
    std::fprintf(stderr, "error: unknown type %s\n", argv[1]);
    return 2;
  }
  const std::vector<float> src = read_floats(argv[2]);
  const std::vector<float> importance = argc == 6 ? read_floats(argv[5]) : std::vector<float>{};
  const auto n_per_row = static_cast<std::size_t>(std::strtoull(argv[4], nullptr, 10));
  const auto size = gguf::quantized_size(type->type, n_per_row ? src.size() / n_per_row : 0, n_per_row);
  if (!size) {
    std::fprintf(stderr, "error: %s\n", size.error().what());
    return 1;
  }
  std::vector<std::byte> dst(*size);
  const auto written = gguf::quantize(type->type, src, n_per_row, dst, importance);
  if (!written) {
    std::fprintf(stderr, "error: %s\n", written.error().what());
    return written.error().code == gguf::errc::out_of_range ? 3 : 1;
  }
  std::ofstream out(argv[3], std::ios::binary);
  out.write(reinterpret_cast<const char*>(dst.data()), static_cast<std::streamsize>(*written));
  return out ? 0 : 1;
}
