// gguf-bench: parse. Opens (maps) and fully parses and validates the file named by the environment
// variable GGUF_BENCH_PARSE_FILE (default: the reduced deepseek-llm vocabulary in tests/data, labelled
// as a reduced copy so that its figure is never taken for the full file's), every
// string of every array walked and bounds-checked, then unmaps it: the whole cost of `gguf::open`.
//   parse_mapped    gguf::parse of the bytes already mapped and paged in (the anchor of the next two)
//   parse_prefix    gguf::parse_prefix of the same bytes as a prefix of a file of known size
//   read_header     gguf::read_header of the file through a C stream: no mapping, the header copied
//   open_split/<n>  gguf::open_model of a model in n files (1: unsplit), opened through its first shard:
//                   a llama-3 8B's header (128k tokens, 280k merges) and 291 small tensors, split as
//                   gguf-split --split-max-tensors 59 splits it, in a temporary directory
#include <benchmark/benchmark.h>
#include <gguf/gguf.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace {

std::string parse_file() {
  const char* env = std::getenv("GGUF_BENCH_PARSE_FILE");
  return env && *env ? env : GGUF_BENCH_DEFAULT_FILE;
}

// The label of a parse benchmark: the file's name, or, for the default, what it is: a reduced copy of
// a real vocabulary (not to be taken for the full file's figure).
std::string parse_label(const std::string& path) {
  const char* env = std::getenv("GGUF_BENCH_PARSE_FILE");
  const std::string name = path.substr(path.find_last_of('/') + 1);
  return env && *env ? name : "reduced test copy of " + name + " (set GGUF_BENCH_PARSE_FILE)";
}

void parse(benchmark::State& state) {
  const std::string path = parse_file();
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto g = gguf::open(path.c_str());
    if (!g) {
      state.SkipWithError(("cannot parse " + path + ": " + gguf::to_string(g.error())).c_str());
      return;
    }
    bytes = g->bytes().size();
    benchmark::DoNotOptimize(g->metadata().size());
  }
  state.SetLabel(parse_label(path));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(parse)->Unit(benchmark::kMicrosecond);

// The parse alone, on bytes already mapped and paged in: the reader's own speed; with `prefix`, through
// parse_prefix, the whole file being the prefix (the header-only reader costs what the full parse costs).
void parse_in_memory(benchmark::State& state, bool prefix) {
  const std::string path = parse_file();
  auto m = gguf::mapped_file::open(path.c_str());
  if (!m) {
    state.SkipWithError(("cannot map " + path).c_str());
    return;
  }
  for (auto _ : state) {
    auto f = prefix ? gguf::parse_prefix(m->bytes(), m->size()) : gguf::parse(m->bytes());
    if (!f) {
      state.SkipWithError(gguf::to_string(f.error()).c_str());
      return;
    }
    benchmark::DoNotOptimize(f->metadata().size());
  }
  state.SetLabel(parse_label(path));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * m->size()));
}
void parse_mapped(benchmark::State& state) { parse_in_memory(state, false); }
void parse_prefix(benchmark::State& state) { parse_in_memory(state, true); }
BENCHMARK(parse_mapped)->Unit(benchmark::kMicrosecond);
BENCHMARK(parse_prefix)->Unit(benchmark::kMicrosecond);

// The header read through a C stream, as `gguf-dump -` reads a pipe: reads, copies and parses, no mapping.
void read_header(benchmark::State& state) {
  const std::string path = parse_file();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    auto h = gguf::read_header(f);
    std::fclose(f);
    if (!h) {
      state.SkipWithError(gguf::to_string(h.error()).c_str());
      return;
    }
    bytes = h->bytes().size();
    benchmark::DoNotOptimize(h->metadata().size());
  }
  state.SetLabel(parse_label(path));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(read_header)->Unit(benchmark::kMicrosecond);

// A model shaped like a llama-3 8B, without its weights: a 128,256-token vocabulary with 280,147 merges
// (a 6 MB header, as the real one) and 291 tensors of 16 KiB, written unsplit and in 5 shards to a
// temporary directory (once per run, removed at exit).
struct split_fixture {
  std::filesystem::path dir, single, first_shard;
  std::size_t shards = 0;
  split_fixture() {
    namespace fs = std::filesystem;
    dir = fs::temp_directory_path() / ("gguf-bench-split-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    std::vector<std::string> tokens(128256), merges(280147);
    std::vector<std::int32_t> types(tokens.size(), 1);
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = "tok" + std::to_string(i);
    for (std::size_t i = 0; i < merges.size(); ++i)
      merges[i] = "m" + std::to_string(i) + " x" + std::to_string(i % 977);
    gguf::writer w;
    (void)w.set("general.architecture", gguf::value("llama"));
    (void)w.set("llama.block_count", gguf::value(std::uint32_t{32}));
    (void)w.set("tokenizer.ggml.model", gguf::value("gpt2"));
    (void)w.set("tokenizer.ggml.tokens", gguf::value::strings(std::span<const std::string>(tokens)));
    (void)w.set("tokenizer.ggml.token_type", gguf::value::array(std::span<const std::int32_t>(types)));
    (void)w.set("tokenizer.ggml.merges", gguf::value::strings(std::span<const std::string>(merges)));
    static const std::vector<std::byte> data(4096 * 4);
    const std::uint64_t ne[] = {4096};
    for (int i = 0; i < 291; ++i)
      (void)w.add_tensor("blk." + std::to_string(i) + ".weight", gguf::ggml_type::f32, ne, data);
    single = dir / "model.gguf";
    gguf::save_options fast;
    fast.flush = false;
    if (!gguf::save(w, single, fast)) return;
    auto m = gguf::open_model(single);
    if (!m) return;
    gguf::split_options opt;
    opt.max_tensors = 59;
    auto paths = gguf::save_split(*m, dir / "model", opt, fast);
    if (!paths) return;
    shards = paths->size();
    first_shard = paths->front();
  }
  ~split_fixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

void open_split(benchmark::State& state) {
  static const split_fixture fixture;
  const bool split = state.range(0) > 1;
  if (fixture.shards != 5) {
    state.SkipWithError("cannot write the split model");
    return;
  }
  const std::filesystem::path& path = split ? fixture.first_shard : fixture.single;
  for (auto _ : state) {
    auto m = gguf::open_model(path);
    if (!m) {
      state.SkipWithError(gguf::to_string(m.error()).c_str());
      return;
    }
    benchmark::DoNotOptimize(m->tensors().size());
  }
  state.SetLabel(split ? "5 shards" : "one file");
}
BENCHMARK(open_split)->Arg(1)->Arg(5)->Unit(benchmark::kMicrosecond);

}  // namespace
