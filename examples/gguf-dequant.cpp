// gguf-dequant FILE TENSOR OUT
//
// Writes the elements of one tensor, dequantized to float32, little-endian, to OUT (`-` for stdout),
// in storage order (ne[0] fastest). Exit codes: 0 success, 1 a bad file, an unknown tensor or an
// output that cannot be written (one `error:` line on stderr), 2 usage errors.
#include <gguf/gguf.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "cli_common.hpp"

namespace {

constexpr const char* usage = "usage: gguf-dequant FILE TENSOR OUT\n";
constexpr std::uint64_t chunk_weights = std::uint64_t{1} << 20;  // stream big tensors 4 MiB at a time

int fail(const char* fmt, const char* a, const char* b = "") {
  std::fputs("error: ", stderr);
  std::fprintf(stderr, fmt, a, b);
  std::fputc('\n', stderr);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string_view(argv[1]) == "-h" || std::string_view(argv[1]) == "--help")) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc != 4) {
    std::fputs(usage, stderr);
    return 2;
  }
  const char* path = argv[1];
  const char* name = argv[2];
  const char* out_path = argv[3];

  const auto g = gguf::open(path);
  if (!g) {
    print_open_error(path, g.error());
    return 1;
  }
  const gguf::tensor_info* t = g->find_tensor(name);
  if (!t) return fail("%s: no tensor named '%s'", path, name);

  const bool to_stdout = std::string_view(out_path) == "-";
  if (to_stdout) binary_stdout();
  std::FILE* out = to_stdout ? stdout : std::fopen(out_path, "wb");
  if (!out) return fail("cannot open '%s' for writing: %s", out_path, std::strerror(errno));

  // Whole rows at a time, so that any tensor streams through a bounded buffer.
  const std::uint64_t row = t->ne[0];
  const std::uint64_t rows = t->n_rows();
  const std::uint64_t rows_per_chunk = row == 0 ? rows : std::max<std::uint64_t>(1, chunk_weights / row);
  std::vector<float> buf(static_cast<std::size_t>(std::min(rows, rows_per_chunk) * row));
  bool ok = true;
  for (std::uint64_t first = 0; first < rows && row != 0 && ok; first += rows_per_chunk) {
    const std::uint64_t n = std::min(rows_per_chunk, rows - first);
    const std::span<float> chunk(buf.data(), static_cast<std::size_t>(n * row));
    if (auto r = gguf::dequantize_rows(*t, first, n, chunk); !r) {
      if (!to_stdout) std::fclose(out), std::remove(out_path);
      return fail("%s: %s", name, r.error().what());
    }
    if constexpr (std::endian::native == std::endian::big) {
      for (float& x : chunk) x = std::bit_cast<float>(__builtin_bswap32(std::bit_cast<std::uint32_t>(x)));
    }
    ok = std::fwrite(chunk.data(), sizeof(float), chunk.size(), out) == chunk.size();
  }
  ok = (to_stdout ? std::fflush(out) : std::fclose(out)) == 0 && ok;
  if (!ok) {
    if (!to_stdout) std::remove(out_path);
    return fail("cannot write '%s': %s", out_path, std::strerror(errno));
  }
  return 0;
}
