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
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli.hpp"
#include "remote.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-dequant", "gguf-dequant [--to f32|f16|bf16] FILE TENSOR OUT",
    "Writes the elements of tensor TENSOR of the GGUF file FILE to OUT as little-endian float32, 4 bytes\n"
    "per element, in storage order (ne[0], the row, fastest): exactly the floats ggml's dequantizer\n"
    "computes for the tensor's type. With --to f16 or --to bf16, 2 bytes per element: each float rounded\n"
    "to nearest even, as ggml_fp32_to_fp16 / ggml_fp32_to_bf16 round it. OUT '-' is standard output.\n"
    "Any tensor streams through a bounded buffer, 1 Mi elements at a time.\n"
    "FILE may be any shard of a split model (or the shards' name prefix): the tensor is found in\n"
    "whichever shard holds it. List the tensor names with: gguf-dump --model FILE\n"
    "FILE may also be an http:// or https:// URL: the headers are read by range requests, then the\n"
    "tensor's bytes by one request of their own, streamed through the same buffer (a bearer token from\n"
    "HF_TOKEN; GGUF_HTTP_TIMEOUT, GGUF_HTTP_MIN_SPEED and GGUF_HTTP_DEADLINE bound the waits).\n"
    "\n"
    "  --to TYPE  the output type: f32 (the default), f16 or bf16\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
    "\n"
    "OUT is written beside its name and renamed when complete: never half-written, whatever happens.\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read or is not valid GGUF, no tensor of that name,\n"
    "or an output that cannot be written (one line on stderr starting with 'error:'); 2 usage errors.\n"};

constexpr std::uint64_t chunk_weights = std::uint64_t{1} << 20;  // stream big tensors 1 Mi elements at a time

/// The 2- or 4-byte words of a chunk made little-endian in place (a no-op on little-endian hosts).
template <class T>
void to_little_endian(std::span<T> chunk) {
  if constexpr (std::endian::native == std::endian::big) {
    auto* p = reinterpret_cast<unsigned char*>(chunk.data());
    for (std::size_t i = 0; i < chunk.size_bytes(); i += sizeof(T)) std::reverse(p + i, p + i + sizeof(T));
  }
}

/// A stream (standard output, a device, a pipe) as a sink: what cannot be replaced by a rename.
class stream_sink final : public gguf::sink {
 public:
  explicit stream_sink(std::FILE* f) : f_(f) {}
  gguf::result<void> write(std::span<const std::byte> bytes) override {
    if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size() || std::fflush(f_) != 0) {
      return gguf::error{gguf::errc::io_error, "cannot write the output"}.os(errno);
    }
    return {};
  }

 private:
  std::FILE* f_;
};

/// Where a tensor's bytes come from, a part at a time: `read(offset, n)` is the bytes `[offset, offset + n)`
/// of its data (a mapped file's, or fetched from a URL), valid until the next call; `failed(e)` prints
/// the `error:` line of a read that failed and returns the exit status.
template <class Read, class Failed>
struct tensor_source {
  Read read;
  Failed failed;
};
// clang before 17 does not deduce an aggregate's template arguments (P1816) by itself
template <class Read, class Failed>
tensor_source(Read, Failed) -> tensor_source<Read, Failed>;

/// Streams tensor `t` as `T` elements to `out`, a bounded number of blocks at a time whatever the
/// tensor's shape (one row may be gigabytes); returns 0, or the exit status after one `error:` line.
template <class T, class Source>
int write_tensor(const gguf::tensor_info& t, Source& src, const std::string& path, gguf::sink& out,
                 const std::string& out_path) {
  const gguf::type_traits& type = t.traits();
  const std::uint64_t blocks = t.n_elements / type.block_size;
  const std::uint64_t per_chunk = std::max<std::uint64_t>(1, chunk_weights / type.block_size);
  std::vector<T> buf(static_cast<std::size_t>(std::min(blocks, per_chunk) * type.block_size));
  for (std::uint64_t first = 0; first < blocks; first += per_chunk) {
    const std::uint64_t n = std::min(per_chunk, blocks - first);
    auto bytes = src.read(first * type.type_size, static_cast<std::size_t>(n * type.type_size));
    if (!bytes) return src.failed(bytes.error());
    const std::span<T> chunk(buf.data(), static_cast<std::size_t>(n * type.block_size));
    if (auto r = gguf::dequantize(t.type, *bytes, chunk, t.byte_order); !r) {
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(gguf::error(r.error()).about(t.name)).c_str());
    }
    to_little_endian(chunk);
    if (auto r = out.write(std::as_bytes(std::span<const T>(chunk))); !r) {
      return cli::fail("%s: %s", out_path.c_str(), gguf::to_string(r.error()).c_str());
    }
  }
  return 0;
}

/// The tensor as `to` to `out`.
template <class Source>
int write_as(const std::string& to, const gguf::tensor_info& t, Source& src, const std::string& path, gguf::sink& out,
             const std::string& out_path) {
  if (to == "f16") return write_tensor<gguf::f16>(t, src, path, out, out_path);
  if (to == "bf16") return write_tensor<gguf::bf16>(t, src, path, out, out_path);
  return write_tensor<float>(t, src, path, out, out_path);
}

/// The tensor from `src` to OUT: standard output, a stream (a device, a pipe), or a file written beside
/// its target and renamed over it when complete.
template <class Source>
int write_output(const std::string& to, const gguf::tensor_info& t, Source& src, const std::string& path,
                 const std::string& out_path, bool stream, const std::optional<std::filesystem::path>& target) {
  if (out_path == "-") {
    cli::binary_stdout();
    stream_sink out(stdout);
    return write_as(to, t, src, path, out, out_path);
  }
  if (stream) {
    std::FILE* f = std::fopen(out_path.c_str(), "wb");
    if (!f) return cli::fail("%s: cannot open it for writing: %s", out_path.c_str(), std::strerror(errno));
    stream_sink out(f);
    const int rc = write_as(to, t, src, path, out, out_path);
    return std::fclose(f) == 0 || rc != 0 ? rc : cli::fail("%s: %s", out_path.c_str(), std::strerror(errno));
  }
  // A new file beside OUT, renamed over it when complete: OUT is never half-written.
  auto out = gguf::output_file::create_beside(*target);
  if (!out) return cli::fail("%s: %s", out_path.c_str(), gguf::to_string(out.error()).c_str());
  if (const int rc = write_as(to, t, src, path, *out, out_path); rc != 0) return rc;
  if (auto r = out->commit(*target); !r)
    return cli::fail("%s: %s", out_path.c_str(), gguf::to_string(r.error()).c_str());
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

  // The output is checked before any work: a directory, a missing directory. A device or a pipe
  // (/dev/null, a shell's process substitution) is written as a stream.
  const bool to_stdout = out_path == "-";
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(out_path, ec);
  const bool stream = !to_stdout && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
                      !std::filesystem::is_directory(st);
  std::optional<std::filesystem::path> target;
  if (!to_stdout && !stream) {
    target = cli::output_target(tool.name, out_path);
    if (!target) return 1;
  }
  // A URL: headers, then the tensor's range streamed in parts (one request); a file, or a split model
  // through any shard: its mapping.
  const auto no_tensor = [&] {
    return remote::is_url(path)
               ? cli::fail("%s: no tensor named '%s' (list the tensor names with: gguf-dump --model and the URL)",
                           path.c_str(), name.c_str())
               : cli::fail("%s: no tensor named '%s' (list the tensor names with: gguf-dump --model %s)", path.c_str(),
                           name.c_str(), path.c_str());
  };
  if (remote::is_url(path)) {
#if GGUF_TOOLS_HTTP
    const std::optional<gguf::model_header> m = remote::open_model(path);
    if (!m) return 1;
    const gguf::tensor_info* t = m->find_tensor(name);
    if (!t) return no_tensor();
    remote::tensor_reader reader(*m, path);
    tensor_source src{[&](std::uint64_t at, std::size_t n) { return reader.read(*t, at, n); },
                      [&](const gguf::error& e) {
                        const std::string url = reader.url_of(*t);
                        return cli::fail("%s: %s", url.c_str(), remote::describe(url, e).c_str());
                      }};
    return write_output(to, *t, src, path, out_path, stream, target);
#else
    return remote::unsupported(path);
#endif
  }
  const std::optional<gguf::model> g = cli::open_model(path);
  if (!g) return 1;
  const gguf::tensor_info* t = g->find_tensor(name);
  if (!t) return no_tensor();
  if (!t->has_data()) {
    return cli::fail(
        "%s: %s", path.c_str(),
        gguf::to_string(gguf::error{gguf::errc::out_of_bounds, "tensor data not read"}.about(t->name)).c_str());
  }
  tensor_source src{
      [&](std::uint64_t at, std::size_t n) -> gguf::result<std::span<const std::byte>> {
        return t->data.subspan(static_cast<std::size_t>(at), n);
      },
      [&](const gguf::error& e) { return cli::fail("%s: %s", path.c_str(), gguf::to_string(e).c_str()); }};
  return write_output(to, *t, src, path, out_path, stream, target);
}
