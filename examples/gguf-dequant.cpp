// gguf-dequant FILE TENSOR OUT (FILE: a model, or any shard of a split one)
//
// Writes the elements of one tensor, dequantized to float32, little-endian, to OUT (`-` for standard
// output), in storage order (ne[0] fastest), streamed through a bounded buffer. Exit codes: 0 success,
// 1 a bad file, an unknown tensor or an output that cannot be written (one `error:` line on stderr),
// 2 usage errors.
#include <gguf/gguf.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-dequant", "gguf-dequant FILE TENSOR OUT",
    "Writes the elements of tensor TENSOR of the GGUF file FILE to OUT as little-endian float32, 4 bytes\n"
    "per element, in storage order (ne[0], the row, fastest): exactly the floats ggml's dequantizer\n"
    "computes for the tensor's type. OUT '-' is standard output. Big tensors stream 4 MiB at a time.\n"
    "FILE may be any shard of a split model (or the shards' name prefix): the tensor is found in\n"
    "whichever shard holds it. List the tensor names with: gguf-dump --model FILE\n"
    "\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read or is not valid GGUF, no tensor of that name,\n"
    "or an output that cannot be written (one line on stderr starting with 'error:'; a partial OUT is\n"
    "removed); 2 usage errors.\n"};

constexpr std::uint64_t chunk_weights = std::uint64_t{1} << 20;  // stream big tensors 4 MiB at a time

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool, {}, 3, 3);
  if (cmd.exit) return *cmd.exit;
  const std::string& path = cmd.args.positional[0];
  const std::string& name = cmd.args.positional[1];
  const std::string& out_path = cmd.args.positional[2];

  const auto g = cli::open_model(path);  // a file, or a split model through any shard
  if (!g) return 1;
  const gguf::tensor_info* t = g->find_tensor(name);
  if (!t) {
    return cli::fail("%s: no tensor named '%s' (list the tensor names with: gguf-dump --model %s)", path.c_str(),
                     name.c_str(), path.c_str());
  }

  const bool to_stdout = out_path == "-";
  if (to_stdout) cli::binary_stdout();
  std::FILE* out = to_stdout ? stdout : std::fopen(out_path.c_str(), "wb");
  if (!out) return cli::fail("cannot open '%s' for writing: %s", out_path.c_str(), std::strerror(errno));

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
      if (!to_stdout) std::fclose(out), std::remove(out_path.c_str());
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(r.error()).c_str());
    }
    if constexpr (std::endian::native == std::endian::big) {
      for (float& x : chunk) x = std::bit_cast<float>(__builtin_bswap32(std::bit_cast<std::uint32_t>(x)));
    }
    ok = std::fwrite(chunk.data(), sizeof(float), chunk.size(), out) == chunk.size();
  }
  ok = (to_stdout ? std::fflush(out) : std::fclose(out)) == 0 && ok;
  if (!ok) {
    if (!to_stdout) std::remove(out_path.c_str());
    return cli::fail("cannot write '%s': %s", out_path.c_str(), std::strerror(errno));
  }
  return 0;
}
