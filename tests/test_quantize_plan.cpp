// llama.cpp's choice of tensor types for llama_model_quantize, against what the oracle's llama.cpp chose
// for tiny models of several architectures: every file type, without and with an importance matrix, and
// the options (tests/oracle/make_quantize_plan_golden.py wrote tests/data/quantize_plan/).
#include <doctest/doctest.h>

#include <gguf/format/parser.hpp>
#include <gguf/llama/file_type.hpp>
#include <gguf/llama/quantize_plan.hpp>
#include <gguf/print.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "test_files.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_quantize_plan {

using gguf::errc;
using gguf::ggml_type;

namespace {

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const std::size_t j = std::min(line.find(' ', i), line.size());
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The golden files write a tensor type as one character: the id's digit in this alphabet.
constexpr std::string_view type_digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

std::string type_name_of_digit(char c) {
  const std::size_t id = type_digits.find(c);
  const gguf::type_traits* t = id == std::string_view::npos ? nullptr : gguf::find_type(static_cast<std::uint32_t>(id));
  return t ? std::string(t->name) : std::string("?") + c;
}

std::filesystem::path golden_dir() { return std::filesystem::path(GGUF_TEST_DATA_DIR) / "quantize_plan"; }

// The options of a run line's label: FTYPE IMATRIX OUT EMB PURE REQUANT (OUT "keep": --leave-output-tensor).
gguf::quantize_options options_of(const std::vector<std::string>& w) {
  gguf::quantize_options o;
  o.has_imatrix = w[1] == "1";
  if (w[2] == "keep") {
    o.quantize_output = false;
  } else if (w[2] != "-") {
    o.output_tensor_type = gguf::type_from_name(w[2]);
  }
  if (w[3] != "-") o.token_embedding_type = gguf::type_from_name(w[3]);
  o.pure = w[4] == "1";
  o.allow_requantize = w[5] == "1";
  return o;
}

// Checks every line of MODEL.txt against the plan for MODEL.gguf; returns the number of runs checked.
int check_model(const std::string& model) {
  const std::vector<std::byte> bytes = test::read_file(golden_dir() / (model + ".header"));
  const gguf::result<gguf::file> f = gguf::parse_prefix(bytes);
  REQUIRE_MESSAGE(f, model);
  const auto tensors = f->tensors();
  std::vector<gguf::tensor_plan> plan(tensors.size());
  std::ifstream in(golden_dir() / (model + ".txt"));
  int runs = 0;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> w = words(line);
    const auto colon = std::find(w.begin(), w.end(), ":");
    REQUIRE(colon != w.end());
    const std::vector<std::string> label(w.begin(), colon), want(colon + 1, w.end());
    if (label[0] == "order") {  // the quantized file's order: by block, then by name
      REQUIRE(want.size() == plan.size());
      for (std::size_t k = 0; k < want.size(); ++k) {
        const gguf::tensor_plan& p = plan[std::stoul(want[k])];
        CHECK_MESSAGE(p.output_index == k, model, ": ", p.name, " is written at ", p.output_index, ", not ", k);
      }
      continue;
    }
    if (label[0] == "keys") {  // the kept keys in order, then the two added (arrays are not in the header)
      std::vector<std::string> expect, got;
      for (const gguf::metadata_entry& e : f->metadata()) {
        if (gguf::quantize_keeps_key(e.key)) expect.emplace_back(e.key);
      }
      for (const gguf::quantize_added_key& k : gguf::quantize_added_keys(*gguf::find_ftype("Q4_K_M"))) {
        expect.emplace_back(k.key);
      }
      for (const std::string& k : want) {
        if (std::find(expect.begin(), expect.end(), k) != expect.end()) got.push_back(k);
      }
      CHECK_MESSAGE(got == expect, model, ": metadata key order");
      continue;
    }
    REQUIRE(label.size() == 6);
    const gguf::ftype_info* ft = gguf::find_ftype(label[0]);
    REQUIRE_MESSAGE(ft, label[0]);
    const gguf::result<void> r = gguf::plan_quantization(*f, *ft, options_of(label), plan);
    ++runs;
    const std::string what = model + " " + line.substr(0, line.find(':'));
    if (want.size() == 1 && want[0] == "error") {
      CHECK_MESSAGE(!r, what, ": llama.cpp refused, the plan did not");
      continue;
    }
    CHECK_MESSAGE(r, what, ": ", gguf::to_string(r.error()));
    REQUIRE(want.size() == 1);
    REQUIRE(want[0].size() == plan.size());
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const gguf::tensor_plan& p = plan[i];
      const std::string made = type_name_of_digit(want[0][i]);
      CHECK_MESSAGE(gguf::to_string(p.to) == made, what, ": ", p.name, " becomes ", gguf::to_string(p.to),
                    ", llama.cpp made ", made);
      CHECK(p.name == tensors[i].name);
      CHECK(p.index == i);
      CHECK(p.from == tensors[i].type);
      CHECK(p.quantize == (p.to != p.from));
    }
  }
  return runs;
}

}  // namespace

TEST_CASE("quantize plan: every file type of tiny llama, qwen2, gemma2, phi3, MoE, falcon, deepseek2, mamba, gpt2") {
  std::vector<std::string> models;
  for (const auto& e : std::filesystem::directory_iterator(golden_dir())) {
    if (e.path().extension() == ".header") models.push_back(e.path().stem().string());
  }
  std::sort(models.begin(), models.end());
  REQUIRE(models.size() >= 10);
  for (const std::string& m : models) {
    CAPTURE(m);
    CHECK(check_model(m) >= 8);
  }
}

TEST_CASE("quantize plan: the plan's size, unknown file types and missing imatrices are errors") {
  const std::vector<std::byte> bytes = test::read_file(golden_dir() / "llama16.header");
  const gguf::result<gguf::file> f = gguf::parse_prefix(bytes);
  REQUIRE(f);
  std::vector<gguf::tensor_plan> plan(f->tensors().size());
  std::vector<gguf::tensor_plan> short_plan(plan.size() - 1);
  const gguf::ftype_info& q4 = *gguf::find_ftype("Q4_K_M");
  CHECK(gguf::plan_quantization(*f, q4, {}, short_plan).error().code == errc::size_mismatch);
  const gguf::ftype_info bogus{99, "Q9", ggml_type::q8_0};
  CHECK(gguf::plan_quantization(*f, bogus, {}, plan).error().code == errc::out_of_range);
  // the oracle's llama.cpp refuses NVFP4 ("invalid output file type 39")
  CHECK(gguf::plan_quantization(*f, *gguf::find_ftype("NVFP4"), {}, plan).error().code == errc::out_of_range);
  // IQ2_XXS without an importance matrix: refused, about the first tensor in llama.cpp's order that needs it,
  // and the plan complete all the same
  const gguf::result<void> r = gguf::plan_quantization(*f, *gguf::find_ftype("IQ2_XXS"), {}, plan);
  REQUIRE(!r);
  CHECK(r.error().code == errc::not_found);
  CHECK(std::string_view(r.error().subject()) == "blk.0.attn_k.weight");
  CHECK(std::any_of(plan.begin(), plan.end(), [](const gguf::tensor_plan& p) { return p.needs_imatrix; }));
  CHECK(gguf::quantize_tensor_less("output.weight", "blk.0.attn_k.weight"));
  CHECK(gguf::quantize_tensor_less("blk.2.ffn_up.weight", "blk.10.attn_k.weight"));
  CHECK(!gguf::quantize_keeps_key("split.count"));
  CHECK(gguf::quantize_added_keys(q4)[1].value == 15);
}

}  // namespace test_quantize_plan
