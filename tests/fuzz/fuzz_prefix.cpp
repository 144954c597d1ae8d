// gguf-fuzz-prefix: parse_prefix on arbitrary bytes. Every prefix of the input (all of them for inputs of
// up to 1 KiB; the first 64, 64 spread ones and every request they lead to for longer ones) must agree
// with the parse of the whole input: a request for exactly the bytes that get the parse further, or the
// whole input's result (tests/prefix_property.hpp states it). A violation traps: a finding.
//
// Built as a libFuzzer target (GGUF_BUILD_FUZZERS=ON, clang) and, with replay_main.cpp, as a plain
// program that runs the seed corpus through it in every build (ctest `fuzz.prefix_replay`).
#include <gguf/gguf.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

#include "prefix_property.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  if (size <= 1024) {
    if (prefix_property::check_every_cut(bytes) != nullptr) __builtin_trap();
    return 0;
  }
  const auto full = gguf::parse(bytes);
  std::uint64_t x = size;  // a cheap deterministic spread of cuts
  for (std::size_t i = 0; i < 128; ++i) {
    std::size_t cut = i;
    if (i >= 64) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      cut = static_cast<std::size_t>((x >> 17) % (size + 1));
    }
    if (prefix_property::check_cut_exact(bytes, full, cut) != nullptr) __builtin_trap();
  }
  return 0;
}
