// Model facts: the standard keys typed, the parameter count and size label, the file type and census,
// the naming convention, and the memory estimate. The numbers that llama.cpp computes itself (parameter
// counts, KV cache sizes) are checked against it in tests/oracle/facts_agreement.py; here, the rules.
#include <doctest/doctest.h>

#include <gguf/compare.hpp>
#include <gguf/llama/file_name.hpp>
#include <gguf/llama/file_type.hpp>
#include <gguf/llama/hparams.hpp>
#include <gguf/llama/model_facts.hpp>
#include <gguf/open.hpp>
#include <gguf/print.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "gguf_writer.hpp"

// Each test file keeps its names in a namespace of its own.
namespace test_facts {

using gguf::errc;
using gguf::ggml_type;

namespace {

// A llama-shaped model's metadata (no tensors unless added): 4 heads of 64, 2 KV heads.
test::file_builder llama_keys(std::uint32_t layers = 2) {
  test::file_builder fb;
  fb.kv("general.architecture", "llama")
      .kv("general.name", "tiny")
      .kv("llama.block_count", layers)
      .kv("llama.context_length", std::uint32_t{4096})
      .kv("llama.embedding_length", std::uint32_t{256})
      .kv("llama.feed_forward_length", std::uint32_t{512})
      .kv("llama.attention.head_count", std::uint32_t{4})
      .kv("llama.attention.head_count_kv", std::uint32_t{2})
      .kv("llama.rope.freq_base", 10000.0f)
      .kv("general.file_type", std::uint32_t{15});
  return fb;
}

gguf::result<gguf::hparams> hparams_of(const test::bytes& b, gguf::result<gguf::file>& keep) {
  keep = test::parse(b);
  REQUIRE(keep);
  return gguf::read_hparams(keep->metadata());
}

}  // namespace

TEST_CASE("hparams: the standard keys typed, absent keys absent, per-layer arrays read per layer") {
  test::file_builder fb = llama_keys(3);
  fb.kv_array("llama.attention.head_count_kv", std::vector<std::int32_t>{2, 0, 4})
      .kv("tokenizer.ggml.model", "llama")
      .kv_array("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "c"})
      .kv("tokenizer.chat_template", "{{ x }}");
  fb.kvs.erase(fb.kvs.begin() + 7);  // the scalar head_count_kv: the array replaces it
  const test::bytes b = fb.build();
  gguf::result<gguf::file> f = gguf::error{};
  const auto h = hparams_of(b, f);
  REQUIRE(h);
  CHECK(h->architecture == "llama");
  CHECK(h->name == "tiny");
  CHECK(h->block_count == 3u);
  CHECK(h->context_length == 4096u);
  CHECK(h->embedding_length == 256u);
  CHECK(h->file_type == 15u);
  CHECK(h->rope_freq_base == 10000.0f);
  CHECK(!h->expert_count);
  CHECK(!h->sliding_window);
  CHECK(!h->head_count->is_array());
  CHECK(h->head_count_kv->is_array());
  CHECK(h->n_head_kv(0) == 2);
  CHECK(h->n_head_kv(1) == 0);
  CHECK(h->n_head_kv(2) == 4);
  CHECK(h->head_count_kv->max(3) == 4);
  CHECK(h->n_vocab() == 3u);
  CHECK(h->tokenizer_model == "llama");
  CHECK(h->has_chat_template);
}

TEST_CASE("hparams: a wrong type is an error naming the key, never converted") {
  const auto refused = [](test::file_builder fb, std::string_view key) {
    const test::bytes b = fb.build();
    gguf::result<gguf::file> f = gguf::error{};
    const auto h = hparams_of(b, f);
    REQUIRE(!h);
    CHECK(h.error().code == errc::type_mismatch);
    CHECK(h.error().subject() == key);
  };
  test::file_builder a = llama_keys();
  a.kvs[3].second = [](test::byte_writer& w) { w.u32(8).str("4096"); };  // context_length as a string
  refused(a, "llama.context_length");
  test::file_builder b = llama_keys();
  b.kvs[2].second = [](test::byte_writer& w) { w.u32(10).u64(2); };  // block_count as a uint64
  refused(b, "llama.block_count");
  test::file_builder c = llama_keys();
  c.kvs[8].second = [](test::byte_writer& w) { w.u32(12).put(10000.0); };  // freq_base as a float64
  refused(c, "llama.rope.freq_base");
  test::file_builder d = llama_keys();
  d.kv_array("llama.attention.head_count", std::vector<float>{4.0f, 4.0f});  // a per-layer array of floats
  d.kvs.erase(d.kvs.begin() + 6);
  refused(d, "llama.attention.head_count");
}

TEST_CASE("hparams: per-layer arrays of the wrong length, negative counts and absurd layer counts are refused") {
  const auto refused = [](test::file_builder fb, std::string_view why) {
    const test::bytes b = fb.build();
    gguf::result<gguf::file> f = gguf::error{};
    const auto h = hparams_of(b, f);
    REQUIRE(!h);
    CHECK(h.error().code == errc::bad_hparams);
    CHECK(gguf::to_string(h.error()).find(why) != std::string::npos);
  };
  test::file_builder a = llama_keys(3);
  a.kvs.erase(a.kvs.begin() + 7);
  a.kv_array("llama.attention.head_count_kv", std::vector<std::uint32_t>{2, 2});
  refused(a, "length differs from block_count");
  test::file_builder b = llama_keys(2);
  b.kvs.erase(b.kvs.begin() + 7);
  b.kv_array("llama.attention.head_count_kv", std::vector<std::int32_t>{2, -1});
  refused(b, "negative");
  refused(llama_keys(513), "more blocks than llama.cpp's 512");
  test::file_builder c;
  c.kv("general.architecture", "llama").kv_array("llama.attention.head_count", std::vector<std::uint32_t>{4});
  refused(c, "a model without block_count");
}

TEST_CASE("hparams: an unknown architecture still reads general.* and the tokenizer, raw keys stay in metadata") {
  test::file_builder fb;
  fb.kv("general.architecture", "brand-new").kv("brand-new.context_length", std::uint32_t{77}).kv("general.name", "x");
  const test::bytes b = fb.build();
  gguf::result<gguf::file> f = gguf::error{};
  const auto h = hparams_of(b, f);
  REQUIRE(h);
  CHECK(h->architecture == "brand-new");
  CHECK(h->context_length == 77u);  // the standard suffixes are read for any architecture
  CHECK(f->metadata().get_arch<std::uint32_t>("context_length").value() == 77u);
}

TEST_CASE("parameters: every element counted, routed experts apart, size labels as gguf-py writes them") {
  test::file_builder fb = llama_keys();
  fb.tensor("token_embd.weight", ggml_type::f32, {256, 1000})
      .tensor("blk.0.ffn_gate_exps.weight", ggml_type::f32, {256, 512, 8})
      .tensor("blk.0.ffn_down_exps.weight", ggml_type::f32, {512, 256, 8})
      .tensor("blk.0.ffn_gate_inp.weight", ggml_type::f32, {256, 8});
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f);
  const gguf::param_count p = gguf::count_params(f->tensors());
  CHECK(p.total == 256000 + 2 * 256 * 512 * 8 + 2048);
  CHECK(p.experts == 2 * 256 * 512 * 8);
  CHECK(p.per_expert == 2 * 256 * 512);
  CHECK(p.shared == 256000 + 2048);
  CHECK(p.expert_count == 8);
  CHECK(gguf::size_label(p) == "8x520K");

  // gguf-py's model_weight_count_rounded_notation: two significant digits at least, half to even.
  CHECK(gguf::rounded_notation(8'030'261'248) == "8.0B");
  CHECK(gguf::rounded_notation(70'553'706'496) == "71B");
  CHECK(gguf::rounded_notation(134'515'008) == "135M");
  CHECK(gguf::rounded_notation(1'235'814'400) == "1.2B");
  CHECK(gguf::rounded_notation(671'026'419'200) == "671B");
  CHECK(gguf::rounded_notation(1'500'000'000'000) == "1.5T");
  CHECK(gguf::rounded_notation(999) == "1.0K");
  CHECK(gguf::rounded_notation(0) == "0.00K");
  // Mixtral 8x7B: 1.6B shared and 5.6B per expert, as gguf-py counts them.
  gguf::param_count mixtral;
  mixtral.shared = 1'604'424'704;
  mixtral.per_expert = 5'637'144'576;
  mixtral.expert_count = 8;
  CHECK(gguf::size_label(mixtral) == "8x7.2B");
}

TEST_CASE("file types: llama.cpp's names both ways, the census, and the guess when the key is absent or wrong") {
  CHECK(gguf::find_ftype(15u)->name == "Q4_K_M");
  CHECK(gguf::find_ftype(15u | gguf::ftype_guessed)->name == "Q4_K_M");
  CHECK(gguf::find_ftype(0u)->name == "F32");
  CHECK(gguf::find_ftype(4u) == nullptr);  // Q4_1_SOME_F16, removed
  CHECK(gguf::find_ftype(1000u) == nullptr);
  CHECK(gguf::find_ftype("q4_k_m")->id == 15);
  CHECK(gguf::find_ftype("MOSTLY_Q4_K_M")->id == 15);
  CHECK(gguf::find_ftype("LLAMA_FTYPE_MOSTLY_IQ2_XXS")->id == 19);
  CHECK(gguf::find_ftype("ALL_F32")->id == 0);
  CHECK(gguf::find_ftype("Q4_K") == nullptr);
  for (const gguf::ftype_info& f : gguf::ftypes) CHECK(gguf::find_ftype(f.name) == &f);

  test::file_builder fb;
  fb.tensor("a", ggml_type::q4_K, {256, 4})
      .tensor("b", ggml_type::q4_K, {256, 4})
      .tensor("b2", ggml_type::q4_K, {256, 4})
      .tensor("c", ggml_type::q6_K, {256, 2})
      .tensor("n1", ggml_type::f32, {256})
      .tensor("n2", ggml_type::f32, {256});
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f);
  const gguf::type_census c = gguf::census(f->tensors());
  CHECK(c.total.tensors == 6);
  CHECK(c[ggml_type::q4_K].tensors == 3);
  CHECK(c[ggml_type::q4_K].elements == 3072);
  CHECK(c[ggml_type::q4_K].bytes == 12 * 144);
  CHECK(c[ggml_type::q4_K].bits_per_weight() == 4.5);
  CHECK(c[ggml_type::q6_K].bits_per_weight() == 6.5625);
  CHECK(c.most_common() == ggml_type::q4_K);  // three q4_K tensors, two f32 norms, one q6_K
  CHECK(gguf::file_type_of(15u, c).declared);
  CHECK(gguf::file_type_of(std::nullopt, c).ftype->name == "Q4_K_M");
  const gguf::file_type_fact wrong = gguf::file_type_of(2u, c);  // says Q4_0: no q4_0 tensor
  CHECK(wrong.inconsistent);
  CHECK(!wrong.declared);
  CHECK(wrong.ftype->name == "Q4_K_M");
  CHECK(gguf::file_type_of(0u, c).inconsistent);     // says F32: but quantized tensors
  CHECK(gguf::file_type_of(4242u, c).inconsistent);  // an id llama.h does not define
}

TEST_CASE("file names: the naming convention's examples, parsed and formatted back") {
  struct example {
    std::string_view name, base, size, fine_tune, version, encoding, type;
    std::uint32_t shard, count;
  };
  const example examples[] = {
      {"Mixtral-8x7B-v0.1-KQ2.gguf", "Mixtral", "8x7B", "", "v0.1", "KQ2", "", 0, 0},
      {"Hermes-2-Pro-Llama-3-8B-F16.gguf", "Hermes-2-Pro-Llama-3", "8B", "", "", "F16", "", 0, 0},
      {"Grok-100B-v1.0-Q4_0-00003-of-00009.gguf", "Grok", "100B", "", "v1.0", "Q4_0", "", 3, 9},
      {"Llama-3-8B-Instruct-v1.0-Q4_K_M.gguf", "Llama-3", "8B", "Instruct", "v1.0", "Q4_K_M", "", 0, 0},
      {"Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf", "Qwen3", "30B-A3B", "Instruct-2507", "", "Q4_K_M", "", 0, 0},
      {"Qwen2.5-7B-Instruct-Q8_0.gguf", "Qwen2.5", "7B", "Instruct", "", "Q8_0", "", 0, 0},
      {"Phi-3-mini-3.8B-v1.0-F16-LoRA.gguf", "Phi-3-mini", "3.8B", "", "v1.0", "F16", "LoRA", 0, 0},
      {"Llama-2-7B-v1.0-vocab.gguf", "Llama-2", "7B", "", "v1.0", "", "vocab", 0, 0},
      {"DeepSeek-R1-671B-Q2_K-00001-of-00005.gguf", "DeepSeek-R1", "671B", "", "", "Q2_K", "", 1, 5},
      {"models/tiny-llama-135M-chat.gguf", "tiny-llama", "135M", "chat", "", "", "", 0, 0},
  };
  for (const example& e : examples) {
    CAPTURE(e.name);
    const auto p = gguf::parse_file_name(e.name);
    REQUIRE(p);
    CHECK(p->base_name == e.base);
    CHECK(p->size_label == e.size);
    CHECK(p->fine_tune == e.fine_tune);
    CHECK(p->version == e.version);
    CHECK(p->encoding == e.encoding);
    CHECK(p->type == e.type);
    CHECK(p->shard == e.shard);
    CHECK(p->shard_count == e.count);
    std::string_view plain = e.name;
    plain.remove_prefix(plain.find_last_of('/') == std::string_view::npos ? 0 : plain.find_last_of('/') + 1);
    CHECK(gguf::format_file_name(*p) == plain);
  }
  CHECK(gguf::parse_file_name("Mixtral-8x7B-v0.1-KQ2.gguf")->expert_count() == 8);
  CHECK(gguf::parse_file_name("Grok-100B-v1.0-Q4_0.gguf")->expert_count() == 0);
  gguf::file_name_parts p;
  p.base_name = "Hermes 2 Pro";
  p.size_label = "8B";
  p.version = "v1.0";
  p.encoding = "Q4_K_M";
  p.shard = 2;
  p.shard_count = 3;
  CHECK(gguf::format_file_name(p) == "Hermes-2-Pro-8B-v1.0-Q4_K_M-00002-of-00003.gguf");
}

TEST_CASE("file names: what does not match the convention is refused with the reason") {
  const auto refused = [](std::string_view name, std::string_view why) {
    CAPTURE(name);
    const auto p = gguf::parse_file_name(name);
    REQUIRE(!p);
    CHECK(p.error().code == errc::out_of_range);
    CHECK(gguf::to_string(p.error()).find(why) != std::string::npos);
  };
  refused("not-a-known-arrangement.gguf", "no size label (8B, 8x7B) or version (v1.0)");
  refused("Mixtral-8x7B-v0.1-KQ2.bin", "ends in .gguf");
  refused(".gguf", "ends in .gguf");
  refused("Mixtral--8x7B.gguf", "empty part");
  refused("-8B.gguf", "empty part");
  refused("8B.gguf", "no size label");
  refused("Grok-100B-v1.0-Q4_0-00000-of-00009.gguf", "shard number");
  refused("Grok-100B-v1.0-Q4_0-00010-of-00009.gguf", "shard number");
  refused("Grok-100B-v1.0-Q4_0-extra.gguf", "more than one part");
}

TEST_CASE("memory: weights plus K and V per layer, the context padded to 256, grouped-query heads") {
  test::file_builder fb = llama_keys(2);
  fb.tensor("token_embd.weight", ggml_type::q4_K, {256, 1000});
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f);
  const auto h = gguf::read_hparams(f->metadata());
  REQUIRE(h);
  gguf::memory_options o;
  o.context = 1000;
  const auto m = gguf::estimate_memory(*h, f->tensors(), o);
  REQUIRE(m);
  CHECK(m->weights == 1000 * 144);
  CHECK(m->cells == 1024);
  CHECK(m->k == 2 * 1024 * (64 * 2) * 2);  // layers x cells x (head size x KV heads) x f16
  CHECK(m->v == m->k);
  CHECK(m->recurrent == 0);
  CHECK(m->kv_cache() == 2 * m->k);
  o.cache_type_k = ggml_type::q8_0;
  o.cache_type_v = ggml_type::q4_0;
  const auto q = gguf::estimate_memory(*h, f->tensors(), o);
  REQUIRE(q);
  CHECK(q->k == 2 * 1024 * (128 / 32 * 34));
  CHECK(q->v == 2 * 1024 * (128 / 32 * 18));
  o.context = 0;  // the model's own: 4096
  CHECK(gguf::estimate_memory(*h, f->tensors(), o)->cells == 4096);
}

TEST_CASE("memory: sliding-window layers, recurrent layers, and what cannot be estimated") {
  test::file_builder g = llama_keys(6);
  g.kvs[0].second = [](test::byte_writer& w) { w.u32(8).str("gemma3"); };
  for (auto& kv : g.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first.replace(0, 5, "gemma3");
  }
  g.kv("gemma3.attention.sliding_window", std::uint32_t{512});
  const test::bytes gb = g.build();
  const auto gf = test::parse(gb);
  REQUIRE(gf);
  const auto gh = gguf::read_hparams(gf->metadata());
  REQUIRE(gh);
  gguf::memory_options o;
  o.context = 8192;
  auto m = gguf::estimate_memory(*gh, gf->tensors(), o);
  REQUIRE(m);
  CHECK(m->swa_layers == 5);    // five of every six layers
  CHECK(m->swa_cells == 1024);  // the window plus a 512-token ubatch, padded
  CHECK(m->k == (5 * 1024 + 8192) * 128 * 2);
  o.swa_full = true;
  CHECK(gguf::estimate_memory(*gh, gf->tensors(), o)->k == 6 * 8192 * 128 * 2);

  test::file_builder mb;
  mb.kv("general.architecture", "mamba")
      .kv("mamba.block_count", std::uint32_t{4})
      .kv("mamba.embedding_length", std::uint32_t{256})
      .kv("mamba.context_length", std::uint32_t{1 << 20})
      .kv("mamba.ssm.conv_kernel", std::uint32_t{4})
      .kv("mamba.ssm.inner_size", std::uint32_t{512})
      .kv("mamba.ssm.state_size", std::uint32_t{16});
  const test::bytes mbb = mb.build();
  const auto mf = test::parse(mbb);
  REQUIRE(mf);
  const auto mh = gguf::read_hparams(mf->metadata());
  REQUIRE(mh);
  m = gguf::estimate_memory(*mh, mf->tensors());
  REQUIRE(m);
  CHECK(m->k == 0);
  CHECK(m->recurrent_layers == 4);
  CHECK(m->recurrent == 4 * (3 * 512 + 16 * 512) * 4);

  // Embedding models keep no context: llama.cpp creates no memory for them.
  test::file_builder eb = llama_keys(2);
  eb.kvs[0].second = [](test::byte_writer& w) { w.u32(8).str("bert"); };
  for (auto& kv : eb.kvs) {
    if (kv.first.rfind("llama.", 0) == 0) kv.first.replace(0, 5, "bert");
  }
  const test::bytes ebb = eb.build();
  const auto ef = test::parse(ebb);
  REQUIRE(ef);
  m = gguf::estimate_memory(*gguf::read_hparams(ef->metadata()), ef->tensors());
  REQUIRE(m);
  CHECK(m->kv_cache() == 0);
  CHECK(m->attention_layers == 0);

  test::file_builder bad = llama_keys(2);
  bad.kvs[6].second = [](test::byte_writer& w) { w.u32(4).u32(0); };  // head_count 0: no head size
  bad.kvs.erase(bad.kvs.begin() + 7);
  const test::bytes bb = bad.build();
  const auto bf = test::parse(bb);
  REQUIRE(bf);
  const auto bh = gguf::read_hparams(bf->metadata());
  REQUIRE(bh);
  CHECK(gguf::estimate_memory(*bh, bf->tensors()).error().code == errc::bad_hparams);
  o = {};
  o.cache_type_k = ggml_type::q4_K;  // 128-wide rows are not whole 256-element blocks
  const test::bytes lb = llama_keys().build();
  const auto fl = test::parse(lb);
  REQUIRE(fl);
  CHECK(gguf::estimate_memory(*gguf::read_hparams(fl->metadata()), fl->tensors(), o).error().code == errc::bad_hparams);
  // Absurd head sizes overflow: refused, not wrapped.
  test::file_builder huge = llama_keys(2);
  huge.kv("llama.attention.key_length", std::uint32_t{0xFFFFFFFF}).kv("llama.attention.value_length", std::uint32_t{1});
  huge.kvs[6].second = [](test::byte_writer& w) { w.u32(4).u32(0xFFFFFFFF); };
  huge.kvs[7].second = [](test::byte_writer& w) { w.u32(4).u32(0xFFFFFFFF); };
  const test::bytes hb = huge.build();
  const auto hf = test::parse(hb);
  REQUIRE(hf);
  CHECK(gguf::estimate_memory(*gguf::read_hparams(hf->metadata()), hf->tensors()).error().code == errc::bad_hparams);
}

TEST_CASE("same_value and compare_tensors: values as values, tensors by bytes then by dequantized error") {
  test::file_builder fb;
  fb.kv("a", std::uint32_t{7}).kv("b", std::int32_t{7}).kv("c", "x").kv_array("d", std::vector<float>{1.0f, 2.0f});
  const test::bytes b = fb.build();
  test::file_builder be(3, true);
  be.kvs = fb.kvs;
  const test::bytes bb = be.build();
  const auto f = test::parse(b), g = test::parse(bb);
  REQUIRE(f);
  REQUIRE(g);
  for (std::size_t i = 0; i < 4; ++i) CHECK(gguf::same_value(f->metadata()[i].value, g->metadata()[i].value));
  CHECK(!gguf::same_value(f->metadata()[0].value, f->metadata()[1].value));  // uint32 7 is not int32 7
  CHECK(!gguf::same_value(f->metadata()[2].value, f->metadata()[3].value));

  test::file_builder t;
  t.tensor("x", ggml_type::f32, {4, 2}).tensor("y", ggml_type::f32, {4, 2}).tensor("z", ggml_type::f32, {2, 4});
  t.tensors[1].data = t.tensors[0].data = test::bytes(32);
  test::bytes yb(32);
  reinterpret_cast<float*>(yb.data())[3] = 0.5f;   // NOLINT: one element differs
  reinterpret_cast<float*>(yb.data())[5] = -1.5f;  // NOLINT: and another
  t.tensors[1].data = yb;
  const test::bytes tb = t.build();
  const auto tf = test::parse(tb);
  REQUIRE(tf);
  const auto same = gguf::compare_tensors(tf->tensors()[0], tf->tensors()[0]);
  REQUIRE(same);
  CHECK(same->same_bytes);
  const auto c = gguf::compare_tensors(tf->tensors()[0], tf->tensors()[1]);
  REQUIRE(c);
  CHECK(!c->same_bytes);
  CHECK(c->differing == 2);
  CHECK(c->max_abs == 1.5);
  CHECK(c->rms == doctest::Approx(std::sqrt((0.25 + 2.25) / 8)));
  const auto shape = gguf::compare_tensors(tf->tensors()[0], tf->tensors()[2]);
  REQUIRE(shape);
  CHECK(!shape->same_shape);
}

TEST_CASE("compare_tensors over data sources: parts of whole blocks of both types, the answer of the data in memory") {
  // q: six q8_0 blocks (scale 1.0), three rows of 64; r: the same but one weight; f: q's weights as f32,
  // one of them a quarter more.
  test::bytes q;
  for (int block = 0; block < 6; ++block) {
    q.push_back(std::byte{0x00});
    q.push_back(std::byte{0x3C});  // f16 1.0
    for (int i = 0; i < 32; ++i) q.push_back(static_cast<std::byte>((block * 32 + i) * 7 % 251));
  }
  test::bytes r = q;
  r[3 * 34 + 2 + 5] = static_cast<std::byte>(static_cast<int>(r[3 * 34 + 2 + 5]) ^ 1);
  std::vector<float> weights(192);
  REQUIRE(gguf::dequantize(ggml_type::q8_0, q, std::span<float>(weights)));
  weights[100] += 0.25f;
  test::bytes f(192 * 4);
  std::memcpy(f.data(), weights.data(), f.size());
  test::file_builder t;
  t.tensor("q", ggml_type::q8_0, {64, 3}).tensor("r", ggml_type::q8_0, {64, 3}).tensor("f", ggml_type::f32, {64, 3});
  t.tensors[0].data = q;
  t.tensors[1].data = r;
  t.tensors[2].data = f;
  const test::bytes tb = t.build();
  const auto tf = test::parse(tb);
  REQUIRE(tf);
  const auto ts = tf->tensors();
  for (const std::pair<int, int>& pair : {std::pair{0, 0}, std::pair{0, 1}, std::pair{0, 2}, std::pair{2, 0}}) {
    const int a = pair.first, b = pair.second;  // not a structured binding: clang 14 cannot capture one
    CAPTURE(a);
    CAPTURE(b);
    const gguf::tensor_info &x = ts[static_cast<std::size_t>(a)], &y = ts[static_cast<std::size_t>(b)];
    const auto whole = gguf::compare_tensors(x, y);
    REQUIRE(whole);
    // Parts of 32 elements (the 40 asked for, down to whole blocks of both): half a row each.
    std::size_t reads_x = 0, reads_y = 0;
    const auto parts = gguf::compare_tensors(
        x,
        [&](std::uint64_t at, std::size_t n) -> gguf::result<std::span<const std::byte>> {
          ++reads_x;
          return x.data.subspan(static_cast<std::size_t>(at), n);
        },
        y,
        [&](std::uint64_t at, std::size_t n) -> gguf::result<std::span<const std::byte>> {
          ++reads_y;
          return y.data.subspan(static_cast<std::size_t>(at), n);
        },
        40);
    REQUIRE(parts);
    CHECK(reads_x == 6);
    CHECK(reads_y == 6);
    CHECK(parts->same_type == whole->same_type);
    CHECK(parts->same_bytes == whole->same_bytes);
    CHECK(parts->differing == whole->differing);
    CHECK(parts->max_abs == whole->max_abs);
    CHECK(parts->rms == whole->rms);
    CHECK(whole->same_bytes == (a == b));
    CHECK(whole->differing == (a == b ? 0 : 1));
  }
  CHECK(gguf::compare_tensors(ts[0], ts[2])->max_abs == 0.25);
  // A source's error is the comparison's; a part of another size than asked for is refused.
  const auto in_memory = [&](std::uint64_t at, std::size_t n) -> gguf::result<std::span<const std::byte>> {
    return ts[1].data.subspan(static_cast<std::size_t>(at), n);
  };
  const auto failing = gguf::compare_tensors(
      ts[0], [](std::uint64_t, std::size_t) -> gguf::result<std::span<const std::byte>> { return errc::io_error; },
      ts[1], in_memory);
  CHECK(failing.error().code == errc::io_error);
  const auto short_part = gguf::compare_tensors(
      ts[0],
      [&](std::uint64_t at, std::size_t n) -> gguf::result<std::span<const std::byte>> {
        return ts[0].data.subspan(static_cast<std::size_t>(at), n - 1);
      },
      ts[1], in_memory);
  CHECK(short_part.error().code == errc::size_mismatch);
  CHECK(short_part.error().subject() == "q");
}

}  // namespace test_facts
