// Parses a GGUF file built in memory and dequantizes its q8_0 tensor: the package's headers, its
// xsimd kernels and its error values, without a file on disk.
#include <gguf/gguf.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  // GGUF v3: no metadata, one tensor "w" of 32 q8_0 weights at offset 0, data aligned to 32 bytes.
  std::vector<unsigned char> f = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 0, 0, 0, 0, 0,   0, 0, 0, 0, 0,
                                  0,   0,   0,   0,   0, 1, 0, 0, 0, 0, 0, 0, 0, 'w', 1, 0, 0, 0, 32,
                                  0,   0,   0,   0,   0, 0, 0, 8, 0, 0, 0, 0, 0, 0,   0, 0, 0, 0, 0};
  f.resize(64, 0);
  const unsigned char block[34] = {0x00, 0x3C};  // scale 1.0 (half), then 32 int8 weights
  f.insert(f.end(), block, block + sizeof block);
  f[64 + 2] = 5;  // the first weight

  const auto file = gguf::parse(f.data(), f.size());
  if (!file) {
    std::printf("error: %s\n", gguf::to_string(file.error()).c_str());
    return 1;
  }
  std::vector<float> out(32);
  if (!gguf::dequantize(file->tensors()[0], out) || out[0] != 5.0f) return 1;
  std::printf("gguf %d.%d.%d: %zu tensor, w[0] = %g\n", GGUF_VERSION_MAJOR, GGUF_VERSION_MINOR, GGUF_VERSION_PATCH,
              file->tensors().size(), static_cast<double>(out[0]));
  return 0;
}
