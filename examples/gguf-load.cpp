// gguf-load FILE
//
// Loads every tensor of a GGUF model into float32 buffers: the loop an inference engine starts from.
// Prints one line per tensor and a checksum of all the floats (FNV-1a of their bytes), so two
// loaders can be compared. Exit codes: 0 success, 1 a bad file (one `error:` line), 2 usage errors.
#include <gguf/gguf.hpp>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-load", "gguf-load FILE",
    "Loads every tensor of the GGUF model FILE (a file, or any shard of a split model, or the shards'\n"
    "name prefix) into float32 buffers, the loop an inference engine starts\n"
    "from, then prints one line per tensor (name, type, shape outermost first) and a checksum of all the\n"
    "floats (FNV-1a 64 of their bytes), so two loaders can be compared.\n"
    "\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read or is not valid GGUF (one line on stderr\n"
    "starting with 'error:'); 2 usage errors.\n"};

struct weight {
  const gguf::tensor_info* info;  // name, type, shape; views into the mapping
  std::vector<float> data;        // ne[0] fastest, as stored
};

std::uint64_t fnv1a(std::uint64_t h, const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3u;
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool, {}, 1, 1);
  if (cmd.exit) return *cmd.exit;
  const std::string& path = cmd.args.positional[0];

  // 1. Map and parse. Everything below points into the mapping, which `model` owns.
  const auto model = cli::open_model(path);  // a file, or a split model through any shard
  if (!model) return 1;

  // 2. Hyperparameters come from the metadata, keyed by architecture.
  const std::string_view arch = model->metadata().architecture();
  const auto n_layer = model->metadata().get_arch<std::uint32_t>("block_count");
  std::printf("%s: %.*s, %u layers, %zu tensors in %zu file%s\n", path.c_str(), static_cast<int>(arch.size()),
              arch.data(), n_layer ? *n_layer : 0u, model->tensors().size(), model->n_shards(),
              model->n_shards() == 1 ? "" : "s");

  // 3. Every tensor to float32. dequantize() checks the buffer size and never throws; a parsed file's
  //    tensors always fit (their bytes were checked against the file).
  std::vector<weight> weights;
  weights.reserve(model->tensors().size());
  for (const gguf::tensor_info& t : model->tensors()) {
    weight& w = weights.emplace_back(weight{&t, std::vector<float>(t.n_elements)});
    if (const auto r = gguf::dequantize(t, w.data); !r) {
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(r.error()).c_str());  // names the tensor
    }
  }

  // 4. Use them: here, a line per tensor and a checksum of everything.
  std::uint64_t h = 0xcbf29ce484222325u, floats = 0;
  for (const weight& w : weights) {
    const gguf::tensor_info& t = *w.info;
    std::string shape;  // ne[0] (the row, innermost) first, as GGUF stores it and every gguf tool prints it
    for (std::uint64_t d : t.dims()) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    std::printf("  %-32.*s %-7s [%s]\n", static_cast<int>(t.name.size()), t.name.data(),
                std::string(gguf::to_string(t.type)).c_str(), shape.c_str());
    h = fnv1a(h, w.data.data(), w.data.size() * sizeof(float));
    floats += w.data.size();
  }
  std::printf("%" PRIu64 " floats, checksum %016" PRIx64 "\n", floats, h);
  return 0;
}
