// gguf-dump [--json] [--model] FILE|-
//
// Prints a summary of a GGUF file (header, metadata, tensors), or with --json the canonical JSON form
// that ggml's own reader gives for it (ggml_oracle.py inspect's schema); with --model, a whole split
// model through any of its shards; `-` reads the header from standard input (a pipe) without tensor
// data. Exit codes: 0 success, 1 a file that cannot be read or is not valid GGUF (one `error:` line on
// stderr), 2 usage errors.
#include <gguf/gguf.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#else
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "cli.hpp"
#include "remote.hpp"
#include "gguf_json.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-dump", "gguf-dump [--json] [--model] FILE|URL|-",
    "Prints a GGUF file: its header (version, byte order, alignment, where the data starts), every\n"
    "metadata key with its type and a preview of its value, and every tensor with its type, shape\n"
    "(innermost dimension first, as stored), offset and size.\n"
    "\n"
    "  --json     print instead the JSON ggml's own reader gives for the file: {\"version\", \"alignment\",\n"
    "             \"data_offset\", \"metadata\": [{\"key\", \"type\", \"value\"}...], \"tensors\": [{\"name\",\n"
    "             \"type\", \"shape\", \"offset\", \"size\"}...]}\n"
    "  --model    the whole model FILE belongs to: every shard of a split model (FILE is any shard, or\n"
    "             the shards' name prefix), checked to fit together; metadata from the first shard,\n"
    "             every tensor with its shard. With --json, each tensor gets \"shard\" (from 0; its\n"
    "             \"offset\" is in that shard) and the document \"shards\": [{\"file\", \"data_offset\",\n"
    "             \"tensors\", \"size\"}...]. Without --model a shard is shown as the file it is.\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
    "\n"
    "An http:// or https:// URL is read by range requests up to the end of the tensor infos (the first\n"
    "2 MiB, then the rest of a longer header), not the whole file; with --model, every shard's (a bearer\n"
    "token from HF_TOKEN; GGUF_HTTP_TIMEOUT: how many seconds a server may stay silent, 30).\n"
    "FILE '-' reads standard input up to the end of the tensor infos and no further (the tensor data is\n"
    "not read). When standard input is a regular file its size is known and tensors are checked to lie\n"
    "within it, as for FILE; from a pipe they cannot be.\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read or is not valid GGUF (one line on stderr\n"
    "starting with 'error:', with the byte offset and the likely cause of the damage); 2 usage errors.\n"};

// A value for the summary: scalars in full, strings cut at 60 bytes, arrays as their first items.
std::string preview(const gguf::value_view& v) {
  std::string out;
  if (v.type() == gguf::value_type::string) {
    const std::string_view s = *v.get<std::string_view>();
    gguf_json::append_string(out, s.substr(0, 60));
    if (s.size() > 60) out += "...";
    return out;
  }
  if (v.type() != gguf::value_type::array) {
    gguf_json::append_value(out, v);
    return out;
  }
  const gguf::array_view a = *v.get<gguf::array_view>();
  out += '[';
  std::uint64_t shown = 0;
  for (const gguf::value_view item : a) {
    if (shown == 8 || out.size() > 70) break;
    if (shown++) out += ", ";
    out += preview(item);
  }
  if (shown < a.size()) out += shown ? ", ..." : "...";
  out += ']';
  return out;
}

// Keys and names as printable text: JSON escapes, without the quotes.
std::string printable(std::string_view s) {
  std::string out;
  gguf_json::append_string(out, s);
  return out.substr(1, out.size() - 2);
}

std::string type_label(const gguf::value_view& v) {
  std::string t(gguf::to_string(v.type()));
  if (v.is_array()) {
    const gguf::array_view a = *v.get<gguf::array_view>();
    t = "array[" + std::string(gguf::to_string(a.item_type())) + "; " + std::to_string(a.size()) + "]";
  }
  return t;
}

std::string shape_text(const gguf::tensor_info& t) {
  std::string shape = "[";
  for (std::uint32_t d = 0; d < t.n_dims; ++d) shape += (d ? ", " : "") + std::to_string(t.ne[d]);
  return shape + ']';
}

void print_summary(const char* path, const gguf::file& f, bool with_tensors = true) {
  std::printf("%s: GGUF v%" PRIu32 ", %s-endian, alignment %" PRIu32 ", data section at byte %" PRIu64 "\n", path,
              f.version(), f.byte_order() == std::endian::little ? "little" : "big", f.alignment(), f.data_offset());
  const std::string_view arch = f.metadata().architecture();
  if (!arch.empty()) std::printf("architecture: %.*s\n", static_cast<int>(arch.size()), arch.data());

  std::printf("\nmetadata: %zu keys\n", f.metadata().size());
  for (const gguf::metadata_entry& e : f.metadata()) {
    const std::string key = printable(e.key);
    std::printf("  %-44s %-22s %s\n", key.c_str(), type_label(e.value).c_str(), preview(e.value).c_str());
  }

  if (!with_tensors) return;
  std::uint64_t total = 0, weights = 0;
  for (const gguf::tensor_info& t : f.tensors()) {
    total += t.n_bytes;
    weights += t.n_elements;
  }
  std::printf("\ntensors: %zu, %" PRIu64 " elements, %" PRIu64 " bytes\n", f.tensors().size(), weights, total);
  if (!f.tensors().empty()) {
    std::printf("  %-40s %-8s %-26s %14s %14s\n", "name", "type", "shape (ne0 first)", "offset", "bytes");
  }
  for (const gguf::tensor_info& t : f.tensors()) {
    std::printf("  %-40s %-8s %-26s %14" PRIu64 " %14" PRIu64 "\n", printable(t.name).c_str(),
                std::string(gguf::to_string(t.type)).c_str(), shape_text(t).c_str(), t.offset, t.n_bytes);
  }
}

// Where shard k of a model came from, and its size: a mapped model's path, a model read from URLs' file name.
std::string shard_label(const gguf::model& m, std::size_t k) { return m.shard_path(k).string(); }
std::uint64_t shard_size(const gguf::model& m, std::size_t k) { return m.shard(k).bytes().size(); }
#if GGUF_TOOLS_HTTP
std::string shard_label(const gguf::model_header& m, std::size_t k) { return m.shard_name(k); }
std::uint64_t shard_size(const gguf::model_header& m, std::size_t k) { return m.file_size(k); }
#endif

// A model's summary: its shards, then the first shard's header and metadata, then every tensor.
template <class Model>
void print_model(const char* path, const Model& m) {
  std::uint64_t bytes = 0;
  for (std::size_t k = 0; k < m.n_shards(); ++k) bytes += shard_size(m, k);
  std::printf("%s: %zu shard%s, %zu tensors, %" PRIu64 " bytes\n", path, m.n_shards(), m.n_shards() == 1 ? "" : "s",
              m.tensors().size(), bytes);
  for (std::size_t k = 0; k < m.n_shards(); ++k) {
    std::printf("  shard %zu: %s, %zu tensors, %" PRIu64 " bytes\n", k, shard_label(m, k).c_str(),
                m.shard(k).tensors().size(), shard_size(m, k));
  }
  std::printf("\n");
  print_summary(shard_label(m, 0).c_str(), m.shard(0).info(), false);
  std::printf("\ntensors: %zu\n", m.tensors().size());
  if (!m.tensors().empty()) {
    std::printf("  %-40s %-8s %-26s %5s %14s %14s\n", "name", "type", "shape (ne0 first)", "shard", "offset", "bytes");
  }
  for (const gguf::tensor_info& t : m.tensors()) {
    std::printf("  %-40s %-8s %-26s %5zu %14" PRIu64 " %14" PRIu64 "\n", printable(t.name).c_str(),
                std::string(gguf::to_string(t.type)).c_str(), shape_text(t).c_str(), m.shard_of(t), t.offset,
                t.n_bytes);
  }
}

// The size of standard input when it is a regular file (redirected from one), else unknown.
std::uint64_t stdin_size() {
#if defined(_WIN32)
  struct _stat64 st {};
  if (_fstat64(_fileno(stdin), &st) == 0 && (st.st_mode & _S_IFREG)) return static_cast<std::uint64_t>(st.st_size);
#else
  struct stat st {};
  if (fstat(fileno(stdin), &st) == 0 && S_ISREG(st.st_mode)) {
    // Where the stream stands is where the file starts for us.
    const off_t at = lseek(fileno(stdin), 0, SEEK_CUR);
    if (at >= 0 && at <= st.st_size) return static_cast<std::uint64_t>(st.st_size - at);
  }
#endif
  return gguf::unknown_size;
}

int dump_stdin(bool json) {
#if defined(_WIN32)
  _setmode(_fileno(stdin), _O_BINARY);
#endif
  const auto h = gguf::read_header(stdin, stdin_size());
  if (!h) return cli::fail("standard input: %s", gguf::to_string(h.error()).c_str());
  if (json) {
    const std::string out = gguf_json::to_json(h->info()) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    print_summary("-", h->info());
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  cli::binary_stdout();  // the JSON is compared byte for byte with ggml's
  const cli::parse_result cmd = cli::parse(argc, argv, tool, {{"--json"}, {"--model"}}, 1, 1);
  if (cmd.exit) return *cmd.exit;
  const std::string& path = cmd.args.positional[0];
  const bool json = cmd.args.has("--json");

  if (path == "-") {
    if (cmd.args.has("--model")) return cli::usage_error(tool, "--model reads files: not standard input");
    return dump_stdin(json);
  }
  if (remote::is_url(path)) {
#if GGUF_TOOLS_HTTP
    if (cmd.args.has("--model")) {
      const auto m = remote::open_model(path);
      if (!m) return 1;
      const std::string out = json ? gguf_json::to_json(*m) + "\n" : std::string();
      if (json) std::fwrite(out.data(), 1, out.size(), stdout);
      if (!json) print_model(path.c_str(), *m);
      return std::fflush(stdout) == 0 ? 0 : 1;
    }
    const auto h = remote::open(path);
    if (!h) return 1;
    if (json) {
      const std::string out = gguf_json::to_json(h->header.info()) + "\n";
      std::fwrite(out.data(), 1, out.size(), stdout);
    } else {
      print_summary(path.c_str(), h->header.info());
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
#else
    return remote::unsupported(path);
#endif
  }
  if (cmd.args.has("--model")) {
    const auto m = cli::open_model(path);
    if (!m) return 1;
    if (json) {
      const std::string out = gguf_json::to_json(*m) + "\n";
      std::fwrite(out.data(), 1, out.size(), stdout);
    } else {
      print_model(path.c_str(), *m);
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  const auto g = cli::open(path);
  if (!g) return 1;
  if (json) {
    const std::string out = gguf_json::to_json(g->info()) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    print_summary(path.c_str(), g->info());
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
