// gguf-dequant [--to f32|f16|bf16] FILE TENSOR OUT (FILE: a model, or any shard of a split one)
//
// Writes the elements of one tensor, dequantized to float32 (or rounded to f16 / bf16), little-endian, to
// OUT (`-` for standard output), in storage order (ne[0] fastest), streamed through a bounded buffer. Exit codes: 0
// success, 1 a bad file, an unknown tensor or an output that cannot be written (one `error:` line on stderr), 2 usage
// errors.
#include <gguf/gguf.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-dequant", "gguf-dequant [--to f32|f16|bf16] FILE TENSOR OUT",
    "Writes the elements of tensor TENSOR of the GGUF file FILE to OUT as little-endian float32, 4 bytes\n"
    "per element, in storage order (ne[0], the row, fastest): exactly the floats ggml's dequantizer\n"
    "computes for the tensor's type. With --to f16 or --to bf16, 2 bytes per element: each float rounded\n"
    "to nearest even, as ggml_fp32_to_fp16 / ggml_fp32_to_bf16 round it. OUT '-' is standard output.\n"
    "Big tensors stream 1 Mi elements at a time.\n"
    "FILE may be any shard of a split model (or the shards' name prefix): the tensor is found in\n"
    "whichever shard holds it. List the tensor names with: gguf-dump --model FILE\n"
    "\n"
    "  --to TYPE  the output type: f32 (the default), f16 or bf16\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read or is not valid GGUF, no tensor of that name,\n"
    "or an output that cannot be written (one line on stderr starting with 'error:'; a partial OUT is\n"
    "removed); 2 usage errors.\n"};

constexpr std::uint64_t chunk_weights = std::uint64_t{1} << 20;  // stream big tensors 1 Mi elements at a time

/// The 2- or 4-byte words of a chunk made little-endian in place (a no-op on little-endian hosts).
template <class T>
void to_little_endian(std::span<T> chunk) {
  if constexpr (std::endian::native == std::endian::big) {
    auto* p = reinterpret_cast<unsigned char*>(chunk.data());
    for (std::size_t i = 0; i < chunk.size_bytes(); i += sizeof(T)) std::reverse(p + i, p + i + sizeof(T));
  }
}

/// Streams tensor `t` as `T` elements to `out`; returns 0, or the exit status after one `error:` line.
template <class T>
int write_tensor(const gguf::tensor_info& t, const std::string& path, std::FILE* out, const std::string& out_path,
                 bool to_stdout) {
  // Whole rows at a time, so that any tensor streams through a bounded buffer.
  const std::uint64_t row = t.ne[0];
  const std::uint64_t rows = t.n_rows();
  const std::uint64_t rows_per_chunk = row == 0 ? rows : std::max<std::uint64_t>(1, chunk_weights / row);
  std::vector<T> buf(static_cast<std::size_t>(std::min(rows, rows_per_chunk) * row));
  bool ok = true;
  for (std::uint64_t first = 0; first < rows && row != 0 && ok; first += rows_per_chunk) {
    const std::uint64_t n = std::min(rows_per_chunk, rows - first);
    const std::span<T> chunk(buf.data(), static_cast<std::size_t>(n * row));
    if (auto r = gguf::dequantize_rows(t, first, n, chunk); !r) {
      if (!to_stdout) std::fclose(out), std::remove(out_path.c_str());
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(r.error()).c_str());
    }
    to_little_endian(chunk);
    ok = std::fwrite(chunk.data(), sizeof(T), chunk.size(), out) == chunk.size();
  }
  ok = (to_stdout ? std::fflush(out) : std::fclose(out)) == 0 && ok;
  if (!ok) {
    if (!to_stdout) std::remove(out_path.c_str());
    return cli::fail("cannot write '%s': %s", out_path.c_str(), std::strerror(errno));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool, {{"--to", true}}, 3, 3);
  if (cmd.exit) return *cmd.exit;
  const std::string to = cmd.args.value("--to", "f32");
  if (to != "f32" && to != "f16" && to != "bf16") {
    return cli::usage_error(tool, "--to takes f32, f16 or bf16, not '" + to + "'");
  }
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
  if (to == "f16") return write_tensor<gguf::f16>(*t, path, out, out_path, to_stdout);
  if (to == "bf16") return write_tensor<gguf::bf16>(*t, path, out, out_path, to_stdout);
  return write_tensor<float>(*t, path, out, out_path, to_stdout);
}
