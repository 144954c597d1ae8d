// A consumer that instantiates as much of gguf's public API as it can, built by run.sh with the
// strictest warning set users apply to their own code (-Wall -Wextra -Wpedantic -Wconversion
// -Wsign-conversion -Wshadow -Werror), with gcc and clang, with and without -march=native: the headers
// must not leak a single warning into a user's build. (Compiled, not run.)
#include <gguf/gguf.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

template <class T>
void scalar_reads(const gguf::metadata_table& m, const gguf::value_view& v, const gguf::array_view& a) {
  (void)m.get<T>("k");
  (void)m.get_arch<T>("k");
  (void)v.get<T>();
  (void)a.get<T>(0);
  if (const auto items = a.as<T>()) {
    for (T x : *items) (void)x;
  }
  if constexpr (gguf::gguf_scalar<T>) (void)a.as_span<T>();
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    (void)m.get_integer<T>("k");
    (void)v.as_integer<T>();
  }
}

int use_everything(const char* path) {
  const auto model = gguf::open(path);
  if (!model) {
    std::cerr << gguf::explain(path, model.error()) << '\n' << model.error() << '\n';
    return 1;
  }
  const gguf::metadata_table& m = model->metadata();
  for (const gguf::metadata_entry& e : m) {
    std::cout << e.key << ' ' << e.value.type() << ' ' << e.value << ' ' << gguf::to_string(e.value, 3) << '\n';
    if (e.value.is_array()) {
      const gguf::array_view a = *e.value.get<gguf::array_view>();
      for (const gguf::value_view item : a) (void)item;
      scalar_reads<std::uint8_t>(m, e.value, a);
      scalar_reads<std::int8_t>(m, e.value, a);
      scalar_reads<std::uint16_t>(m, e.value, a);
      scalar_reads<std::int16_t>(m, e.value, a);
      scalar_reads<std::uint32_t>(m, e.value, a);
      scalar_reads<std::int32_t>(m, e.value, a);
      scalar_reads<std::uint64_t>(m, e.value, a);
      scalar_reads<std::int64_t>(m, e.value, a);
      scalar_reads<float>(m, e.value, a);
      scalar_reads<double>(m, e.value, a);
      scalar_reads<bool>(m, e.value, a);
      scalar_reads<std::string_view>(m, e.value, a);
      scalar_reads<gguf::array_view>(m, e.value, a);
    }
  }
  (void)m.architecture();
  (void)m.arch_find("context_length");
  (void)m.value("general.name");

  for (const gguf::tensor_info& t : model->tensors()) {
    std::cout << t << ' ' << t.shape() << ' ' << gguf::to_string(t.type) << '\n';
    for (std::uint64_t d : t.shape()) (void)d;
    std::vector<float> x(static_cast<std::size_t>(t.n_elements));
    if (!gguf::dequantize(t, x)) return 1;
    if (!gguf::dequantize_parallel(t, x, 2)) return 1;
    if (t.n_rows() > 0 && !gguf::dequantize_rows(t, 0, 1, std::span<float>(x).first(t.row_length()))) return 1;
  }
  // Every kernel, through the tables: instantiates every SIMD kernel of this translation unit's ISA.
  std::array<float, 256> out{};
  const std::array<std::byte, 292> block{};
  for (const gguf::type_traits& tt : gguf::ggml_types) {
    gguf::kernels::best_kernel(tt.type)(block.data(), out.data(), 1);
    gguf::kernels::scalar_kernel(tt.type)(block.data(), out.data(), 1);
    (void)gguf::dequantize(tt.type, std::span<const std::byte>(block).first(tt.type_size),
                           std::span<float>(out).first(tt.block_size));
  }
  // Parsing bytes, diagnosis, printing.
  const std::vector<std::byte> bytes(64);
  const auto f = gguf::parse(bytes);
  if (!f) {
    const gguf::diagnosis d = gguf::diagnose(bytes, f.error());
    std::cout << gguf::explain(bytes, f.error()) << static_cast<int>(d.kind) << f.error().code << '\n';
  }
  // Writing: every value kind, tensors from bytes and from a producer, both byte orders, in-memory and
  // file sinks, in place.
  gguf::writer w = gguf::writer::from(model->info());
  (void)w.set("u8", gguf::value(std::uint8_t{1}));
  (void)w.set("f64", gguf::value(0.5));
  (void)w.set("s", gguf::value("text"));
  (void)w.set("a", gguf::value::array<std::int16_t>({1, -1}));
  (void)w.set("b", gguf::value::array<bool>({true}));
  (void)w.set("strings", gguf::value::strings({"a", "b"}));
  const std::array<gguf::value, 1> rows{gguf::value::array<float>({1.0f})};
  if (auto nested = gguf::value::arrays(rows)) (void)w.replace("nested", std::move(*nested));
  (void)w.rename("nested", "nested2");
  (void)w.remove("u8");
  const std::array<std::uint64_t, 2> ne{32, 1};
  const std::vector<std::byte> t32(32 * 4);
  (void)w.add_tensor("t32", gguf::ggml_type::f32, ne, t32, std::endian::big);
  (void)w.add_tensor("p", gguf::ggml_type::q8_0, ne, [](std::uint64_t, std::span<std::byte> chunk) {
    for (std::byte& b : chunk) b = std::byte{0};
    return gguf::result<void>{};
  });
  (void)w.rename_tensor("p", "q");
  w.set_byte_order(std::endian::big);
  std::vector<std::byte> buffer;
  gguf::vector_sink to(buffer);
  gguf::write_options wo;
  wo.progress = [](std::uint64_t done, std::uint64_t total) { std::cout << done << '/' << total << '\n'; };
  (void)w.write(to, wo);
  (void)w.header();
  (void)w.in_place_header();
  (void)w.size();
  if (auto staged = gguf::stage(w, "out.gguf")) (void)staged->commit();
  (void)gguf::save(w, "out.gguf");
  (void)gguf::save_in_place(w, path);
  (void)gguf::restore_in_place_backup(path);
  std::vector<std::byte> blocks(34);
  gguf::swap_blocks(gguf::ggml_type::q8_0, blocks);
  (void)gguf::dequantize(gguf::ggml_type::q8_0, blocks, std::span<float>(out).first(32), std::endian::big);

  // Sharded models, splitting and merging, headers from a prefix or a stream.
  if (auto sharded = gguf::open_model(path)) {
    for (const gguf::tensor_info& t : sharded->tensors()) (void)sharded->shard_of(t);
    (void)sharded->find_tensor("x");
    (void)sharded->shard(0).tensors();
    (void)sharded->shard_path(0);
    (void)sharded->file_bytes();
    gguf::split_options so;
    so.max_bytes = std::uint64_t{1} << 30;
    if (auto plan = gguf::plan_split(sharded->tensors(), so)) {
      if (auto sw = gguf::shard_writer(*sharded, *plan, 0)) (void)sw->size();
      (void)plan->tensors_in(0);
    }
    (void)gguf::save_split(*sharded, "out", so);
    gguf::merge_options mo;
    mo.keep_split_keys = false;
    if (auto mw = gguf::merged_writer(*sharded, mo)) (void)gguf::save(*mw, "merged.gguf");
  }
  (void)gguf::find_shards(path);
  (void)gguf::shard_name("m", 0, 2);

  // Model facts, file names, comparisons.
  if (auto facts = gguf::facts(model->metadata(), model->tensors())) {
    const gguf::hparams& hp = facts->hp;
    (void)hp.n_head_kv(0);
    (void)hp.n_vocab();
    if (hp.head_count) (void)hp.head_count->max(hp.block_count.value_or(0));
    (void)facts->label().str();
    const gguf::size_notation label = gguf::size_label(facts->params);
    (void)label.view();
    (void)facts->census[gguf::ggml_type::q4_K].bits_per_weight();
    (void)gguf::guess_ftype(facts->census);
    if (facts->file_type.ftype) (void)facts->file_type.ftype->name;
    gguf::memory_options mo2;
    mo2.context = 4096;
    mo2.cache_type_v = gguf::ggml_type::q8_0;
    if (auto mem = gguf::estimate_memory(hp, model->tensors(), mo2)) (void)mem->total();
  }
  // The quantization plan, into a caller-owned vector.
  if (const gguf::ftype_info* q = gguf::find_ftype("Q4_K_M")) {
    gguf::quantize_options qo;
    qo.has_imatrix = true;
    qo.output_tensor_type = gguf::ggml_type::q8_0;
    std::vector<gguf::tensor_plan> qp(model->tensors().size());
    if (gguf::plan_quantization(model->info(), *q, qo, qp)) {
      for (const gguf::tensor_plan& p : qp) (void)(p.output_index + p.index + (p.quantize ? 1u : 0u));
    }
    (void)gguf::plan_quantization(model->metadata(), model->tensors(), *q, qo, qp);
    for (const gguf::quantize_added_key& k : gguf::quantize_added_keys(*q)) (void)k.value;
    (void)gguf::quantize_keeps_key("general.name");
    (void)gguf::quantize_tensor_less("blk.1.attn_k.weight", "blk.10.attn_k.weight");
    if (const auto whole = gguf::open_model(path)) {
      gguf::quantize_model_options mo;
      mo.n_threads = 2;
      mo.importance = [](std::string_view) { return std::span<const float>{}; };
      if (auto qw = gguf::quantized_writer(*whole, *q, qp, mo)) (void)qw->n_tensors();
    }
  }
  if (auto im = gguf::read_imatrix(model->bytes())) {
    for (const gguf::imatrix::entry& e : im->entries()) (void)im->find(e.name).size();
    (void)im->check_finite();
  }
  for (const gguf::tensor_info& t : model->tensors()) (void)gguf::check_finite(t.type, t.data);
  (void)gguf::read_hparams(model->metadata());
  (void)gguf::count_params(model->tensors());
  (void)gguf::rounded_notation(std::uint64_t{8} << 30).str();
  (void)gguf::find_ftype("Q4_K_M");
  (void)gguf::find_ftype(15u);
  if (auto name = gguf::parse_file_name("Mixtral-8x7B-v0.1-KQ2.gguf")) {
    (void)name->expert_count();
    (void)gguf::format_file_name(*name);
  }
  if (!model->metadata().empty()) (void)gguf::same_value(model->metadata()[0].value, model->metadata()[0].value);
  if (!model->tensors().empty()) (void)gguf::compare_tensors(model->tensors()[0], model->tensors()[0]);
  if (auto parts = gguf::parse_shard_name("m-00001-of-00002.gguf")) (void)parts->count;
  if (auto prefix = gguf::parse_prefix(bytes, gguf::unknown_size))
    (void)prefix->tensors();
  else
    (void)prefix.error().needed;
  (void)gguf::read_header(stdin);
  const auto from_source = gguf::read_header([&bytes](std::uint64_t offset, std::span<std::byte> into) {
    const std::size_t n =
        offset >= bytes.size() ? 0 : std::min(into.size(), bytes.size() - static_cast<std::size_t>(offset));
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(offset), n, into.begin());
    return n;
  });
  if (from_source) (void)from_source->reads();

  gguf::error e{gguf::errc::not_found, "x"};
  e.about("a", "b", "c").types("int32", "uint32").os(2).needs(3);
  e.about_file("a/very/long/path/of/a/model-00003-of-00005.gguf");
  std::cout << e << gguf::to_string(e) << gguf::value_type::string << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return argc > 1 ? use_everything(argv[1]) : 0; }
