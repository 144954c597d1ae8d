// gguf-fuzz-tokenizer: building tokenizers from hostile vocabularies, and tokenizing hostile text.
//  - An input that starts with "GGUF" is a file: when it parses, its tokenizer is built (or refused with
//    an error); a tokenizer that builds encodes a fixed mixed text and the input itself, both ways of
//    add_special/parse_special, and decodes what it made.
//  - Any other input is text: its first byte picks one of the vocabularies (../shared's 12 when present,
//    else tests/data/vocab's reduced copies that build), which encodes the rest, both flag settings, and
//    decodes the ids (the replay runs every input through every vocabulary).
// Whatever the input: no crash, no undefined behaviour (ASan, UBSan in the libFuzzer build), every id
// inside the vocabulary, decode accepts every id encode made, and encoding twice gives the same ids.
// A violation traps: a finding.
//
// Built as a libFuzzer target (GGUF_BUILD_FUZZERS=ON, clang) and, with replay_main.cpp, as a plain
// program that replays the corpus in every build (ctest `fuzz.tokenizer_replay`).
#include <gguf/format/parser.hpp>
#include <gguf/open.hpp>
#include <gguf/tokenizer.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

void exercise(const gguf::tokenizer& t, std::string_view text) {
  for (const bool add : {true, false}) {
    for (const bool parse : {false, true}) {
      const auto ids = t.encode(text, {add, parse});
      const auto again = t.encode(text, {add, parse});
      require(ids.has_value() == again.has_value());
      if (!ids) {  // only an SPM vocabulary without a byte token a character needs
        require(ids.error() == gguf::errc::bad_vocabulary && again.error() == gguf::errc::bad_vocabulary);
        continue;
      }
      for (const gguf::token_id id : *ids) require(id >= 0 && static_cast<std::size_t>(id) < t.n_vocab());
      require(again == *ids);
      for (const bool remove : {false, true}) {
        for (const bool unparse : {false, true}) require(t.decode(*ids, {remove, unparse}).has_value());
      }
    }
  }
}

const std::vector<gguf::tokenizer>& vocabularies() {
  static const std::vector<gguf::tokenizer> all = [] {
    std::vector<gguf::tokenizer> v;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(GGUF_FUZZ_VOCAB_DIR, ec)) {
      if (e.path().extension() != ".gguf") continue;
      auto f = gguf::open(e.path());
      if (!f) continue;
      auto t = gguf::tokenizer::from(*f);
      if (t) v.push_back(std::move(*t));
    }
    return v;
  }();
  return all;
}

constexpr std::string_view sample =
    "Hello world! It's 2024: 12345 caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80\n\n   "
    "<s></s><|endoftext|>\xFF";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.substr(0, 4) == "GGUF") {
    const auto f = gguf::parse(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
    if (!f) return 0;
    const auto t = gguf::tokenizer::from(*f);
    if (!t) return 0;
    exercise(*t, sample);
    exercise(*t, input.substr(0, 4096));
    return 0;
  }
  const auto& all = vocabularies();
  if (all.empty() || input.empty()) return 0;
#ifdef GGUF_FUZZ_REPLAY_ALL
  for (const gguf::tokenizer& t : all) exercise(t, input.substr(1));
#else
  exercise(all[static_cast<unsigned char>(input[0]) % all.size()], input.substr(1));
#endif
  return 0;
}
