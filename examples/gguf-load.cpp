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

namespace {

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
  if (argc != 2 || argv[1][0] == '-') {
    std::fputs("usage: gguf-load FILE\n", argc == 2 && std::strcmp(argv[1], "--help") == 0 ? stdout : stderr);
    return argc == 2 && std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
  }

  // 1. Map and parse. Everything below points into the mapping, which `model` owns.
  const auto model = gguf::open(argv[1]);
  if (!model) {
    std::fprintf(stderr, "error: %s: %s\n", argv[1], gguf::to_string(model.error()).c_str());
    return 1;
  }

  // 2. Hyperparameters come from the metadata, keyed by architecture.
  const std::string_view arch = model->metadata().architecture();
  const auto n_layer = model->metadata().get_arch<std::uint32_t>("block_count");
  std::printf("%s: %.*s, %u layers, %zu tensors\n", argv[1], static_cast<int>(arch.size()), arch.data(),
              n_layer ? *n_layer : 0u, model->tensors().size());

  // 3. Every tensor to float32. dequantize() checks the buffer size and never throws; a parsed file's
  //    tensors always fit (their bytes were checked against the file).
  std::vector<weight> weights;
  weights.reserve(model->tensors().size());
  for (const gguf::tensor_info& t : model->tensors()) {
    weight& w = weights.emplace_back(weight{&t, std::vector<float>(t.n_elements)});
    if (const auto r = gguf::dequantize(t, w.data); !r) {
      std::fprintf(stderr, "error: %s: tensor %.*s: %s\n", argv[1], static_cast<int>(t.name.size()), t.name.data(),
                   gguf::to_string(r.error()).c_str());
      return 1;
    }
  }

  // 4. Use them: here, a line per tensor and a checksum of everything.
  std::uint64_t h = 0xcbf29ce484222325u, floats = 0;
  for (const weight& w : weights) {
    const gguf::tensor_info& t = *w.info;
    std::string shape;
    for (std::uint32_t d = 0; d < t.n_dims; ++d) shape += (d ? " x " : "") + std::to_string(t.shape()[d]);
    std::printf("  %-32.*s %-7s [%s]\n", static_cast<int>(t.name.size()), t.name.data(),
                std::string(gguf::name(t.type)).c_str(), shape.c_str());
    h = fnv1a(h, w.data.data(), w.data.size() * sizeof(float));
    floats += w.data.size();
  }
  std::printf("%" PRIu64 " floats, checksum %016" PRIx64 "\n", floats, h);
  return 0;
}
