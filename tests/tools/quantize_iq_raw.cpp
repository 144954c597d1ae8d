// quantize_iq_raw TYPE IN OUT N_PER_ROW [IMATRIX]: raw little-endian f32 rows -> the library's IQ blocks,
// for tests/oracle/quantize_agreement_iq.py (which runs ggml on the same bytes). Exit 0 when written,
// 2 when the quantizer refuses the input (the error is printed: ggml aborts there), 1 on usage errors.
#include <gguf/kernels/scalar/quantize/iq_quants.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using quantizer = gguf::errc (*)(const float*, std::byte*, std::size_t, const float*) noexcept;

struct entry {
  const char* name;
  quantizer fn;
  std::size_t block_bytes;
};

namespace s = gguf::kernels::scalar;
namespace b = gguf::blocks;
const entry types[] = {
    {"iq2_xxs", s::quantize_iq2_xxs, sizeof(b::iq2_xxs)}, {"iq2_xs", s::quantize_iq2_xs, sizeof(b::iq2_xs)},
    {"iq2_s", s::quantize_iq2_s, sizeof(b::iq2_s)},       {"iq3_xxs", s::quantize_iq3_xxs, sizeof(b::iq3_xxs)},
    {"iq3_s", s::quantize_iq3_s, sizeof(b::iq3_s)},       {"iq1_s", s::quantize_iq1_s, sizeof(b::iq1_s)},
    {"iq1_m", s::quantize_iq1_m, sizeof(b::iq1_m)},
};

std::vector<float> read_floats(const char* path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> c{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<float> v(c.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), c.data(), v.size() * 4);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || argc > 6) {
    std::fprintf(stderr, "usage: %s TYPE IN OUT N_PER_ROW [IMATRIX]\n", argv[0]);
    return 1;
  }
  const entry* t = nullptr;
  for (const auto& e : types) {
    if (std::strcmp(e.name, argv[1]) == 0) t = &e;
  }
  const std::size_t n_per_row = std::strtoull(argv[4], nullptr, 10);
  const std::vector<float> src = read_floats(argv[2]);
  const std::vector<float> w = argc == 6 ? read_floats(argv[5]) : std::vector<float>{};
  if (t == nullptr || n_per_row == 0 || n_per_row % 256 != 0 || src.size() % n_per_row != 0 ||
      (argc == 6 && w.size() != n_per_row)) {
    std::fprintf(stderr, "bad arguments\n");
    return 1;
  }
  const std::size_t rows = src.size() / n_per_row, row_bytes = n_per_row / 256 * t->block_bytes;
  std::vector<std::byte> out(rows * row_bytes);
  for (std::size_t r = 0; r < rows; ++r) {
    const gguf::errc e =
        t->fn(src.data() + r * n_per_row, out.data() + r * row_bytes, n_per_row, w.empty() ? nullptr : w.data());
    if (e != gguf::errc::success) {
      std::fprintf(stderr, "error: row %zu: %s\n", r, gguf::message(e));
      return 2;
    }
  }
  std::ofstream(argv[3], std::ios::binary)
      .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  return 0;
}
