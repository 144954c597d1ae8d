// Real files: reduced copies of llama.cpp's converter output and ggml-quantized fixtures (see
// data/README.md). Our JSON must equal, byte for byte, what ggml's own parser prints for each.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gguf_json.hpp"
#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_real_files {

namespace fs = std::filesystem;

namespace {

const fs::path data_dir = GGUF_TEST_DATA_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string json_of(const fs::path& p) {
  auto g = gguf::open(p.string().c_str());
  REQUIRE_MESSAGE(g, p.string() << ": " << gguf::to_string(g.error()));
  return gguf_json::to_json(g->info()) + "\n";
}

// The part of the JSON after the header facts: metadata and tensors.
std::string body(const std::string& json) { return json.substr(json.find("\"metadata\"")); }

}  // namespace

TEST_CASE("our JSON equals ggml's parse, byte for byte, for every committed file") {
  std::size_t compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(data_dir)) {
    if (entry.path().extension() != ".json") continue;
    fs::path gguf_path = entry.path();
    gguf_path.replace_extension(".gguf");
    CAPTURE(gguf_path.string());
    REQUIRE(fs::exists(gguf_path));
    CHECK(json_of(gguf_path) == slurp(entry.path()));
    ++compared;
  }
  CHECK(compared >= 12 + 20);  // 12 vocabularies, 20+ quant fixtures
}

TEST_CASE("a big-endian file reads exactly as its little-endian twin") {
  CHECK(json_of(data_dir / "quants/quants-be.gguf") == slurp(data_dir / "quants/quants-be-le.json"));
  auto be = gguf::open((data_dir / "quants/quants-be.gguf").string().c_str());
  REQUIRE(be);
  CHECK(be->byte_order() == std::endian::big);
}

TEST_CASE("a v1 file (32-bit counts) reads as its v3 twin") {
  const std::string v1 = json_of(data_dir / "quants/quants-v1.gguf");
  CHECK(v1.rfind("{\"version\": 1,", 0) == 0);
  CHECK(body(v1) == body(slurp(data_dir / "quants/quants-v1-le3.json")));
}

TEST_CASE("real vocabularies: tokens, scores and types line up") {
  auto g = gguf::open((data_dir / "vocab/ggml-vocab-llama-spm.gguf").string().c_str());
  REQUIRE(g);
  const auto& m = g->metadata();
  CHECK(m.architecture() == "llama");
  CHECK(*m.get<std::string_view>("tokenizer.ggml.model") == "llama");
  CHECK(*m.get_arch<std::uint32_t>("context_length") == 4096);
  const gguf::array_view tokens = *m.get<gguf::array_view>("tokenizer.ggml.tokens");
  const gguf::array_view scores = *m.get<gguf::array_view>("tokenizer.ggml.scores");
  const gguf::array_view types = *m.get<gguf::array_view>("tokenizer.ggml.token_type");
  CHECK(tokens.size() == scores.size());
  CHECK(tokens.size() == types.size());
  CHECK(*tokens.get<std::string_view>(0) == "<unk>");
  CHECK(*tokens.get<std::string_view>(1) == "<s>");
  CHECK(*tokens.get<std::string_view>(2) == "</s>");
  CHECK(*types.get<std::int32_t>(0) == 2);  // UNKNOWN
  CHECK(*types.get<std::int32_t>(1) == 3);  // CONTROL

  for (const char* name : {"gpt-2", "deepseek-llm", "falcon", "starcoder"}) {
    CAPTURE(name);
    auto v = gguf::open((data_dir / "vocab" / (std::string("ggml-vocab-") + name + ".gguf")).string().c_str());
    REQUIRE(v);
    const gguf::array_view merges = *v->metadata().get<gguf::array_view>("tokenizer.ggml.merges");
    CHECK(merges.size() > 0);
    for (std::string_view merge : *merges.as<std::string_view>()) CHECK(merge.find(' ') != std::string_view::npos);
  }
}

TEST_CASE("ggml's quantized fixtures: one tensor per type, each where ggml puts it") {
  auto g = gguf::open((data_dir / "quants/quants-s1.gguf").string().c_str());
  REQUIRE(g);
  CHECK(g->tensors().size() == gguf::ggml_types.size());
  for (const gguf::type_traits& t : gguf::ggml_types) {
    CAPTURE(t.name);
    const gguf::tensor_info* info = g->find_tensor("t." + std::string(t.name));
    REQUIRE(info);
    CHECK(info->type == t.type);
    CHECK(info->ne[0] % t.block_size == 0);
    CHECK(info->data.size() == info->n_bytes);
  }
}

}  // namespace test_real_files
