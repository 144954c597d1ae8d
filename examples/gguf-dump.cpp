// gguf-dump [--json] FILE
//
// Prints a summary of a GGUF file (header, metadata, tensors), or with --json the canonical JSON form
// that ggml's own reader gives for it (ggml_oracle.py inspect's schema). Exit codes: 0 success, 1 a file
// that cannot be read or is not valid GGUF (one `error:` line on stderr), 2 usage errors.
#include <gguf/gguf.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "gguf_json.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-dump", "gguf-dump [--json] FILE",
    "Prints a GGUF file: its header (version, byte order, alignment, where the data starts), every\n"
    "metadata key with its type and a preview of its value, and every tensor with its type, shape\n"
    "(innermost dimension first, as stored), offset and size.\n"
    "\n"
    "  --json     print instead the JSON ggml's own reader gives for the file: {\"version\", \"alignment\",\n"
    "             \"data_offset\", \"metadata\": [{\"key\", \"type\", \"value\"}...], \"tensors\": [{\"name\",\n"
    "             \"type\", \"shape\", \"offset\", \"size\"}...]}\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
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

void print_summary(const char* path, const gguf::file& f) {
  std::printf("%s: GGUF v%" PRIu32 ", %s-endian, alignment %" PRIu32 ", data section at byte %" PRIu64 "\n", path,
              f.version(), f.byte_order() == std::endian::little ? "little" : "big", f.alignment(), f.data_offset());
  const std::string_view arch = f.metadata().architecture();
  if (!arch.empty()) std::printf("architecture: %.*s\n", static_cast<int>(arch.size()), arch.data());

  std::printf("\nmetadata: %zu keys\n", f.metadata().size());
  for (const gguf::metadata_entry& e : f.metadata()) {
    const std::string key = printable(e.key);
    std::printf("  %-44s %-22s %s\n", key.c_str(), type_label(e.value).c_str(), preview(e.value).c_str());
  }

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
    const std::string name = printable(t.name);
    std::string shape = "[";
    for (std::uint32_t d = 0; d < t.n_dims; ++d) shape += (d ? ", " : "") + std::to_string(t.ne[d]);
    shape += ']';
    std::printf("  %-40s %-8s %-26s %14" PRIu64 " %14" PRIu64 "\n", name.c_str(),
                std::string(gguf::to_string(t.type)).c_str(), shape.c_str(), t.offset, t.n_bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cli::binary_stdout();  // the JSON is compared byte for byte with ggml's
  const cli::parse_result cmd = cli::parse(argc, argv, tool, {{"--json"}}, 1, 1);
  if (cmd.exit) return *cmd.exit;
  const std::string& path = cmd.args.positional[0];

  const auto g = cli::open(path);
  if (!g) return 1;
  if (cmd.args.has("--json")) {
    const std::string out = gguf_json::to_json(g->info()) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    print_summary(path.c_str(), g->info());
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}
