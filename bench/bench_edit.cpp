// gguf-bench: writing files, against `cp` of the same file on the same disk in the same run. Registered
// when GGUF_BENCH_EDIT_DIR names a directory on the disk to measure (they write gigabytes):
//   edit/cp/<bytes>            cp of a model of that size (random data, not sparse): the data lands in the
//                              page cache, the disk writes it later
//   edit/cp_sync/<bytes>       cp, then `sync FILE`: the copy flushed to the disk, as gguf::save does
//   edit/rewrite/<bytes>       gguf::save of writer::from(that model) to a new path (a temporary, flushed
//                              to the disk, renamed): the default, safe even against a power failure
//   edit/rewrite_noflush/<bytes>  the same without the flush (save_options::flush = false)
//   edit/in_place/<bytes>  gguf::save_in_place of a general.name edit to a (sparse) model of that size:
//                          the backup, the header, two fsyncs; its time must not depend on the size
#include <benchmark/benchmark.h>
#include <gguf/gguf.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace fs = std::filesystem;

namespace {

fs::path bench_dir() {
  const char* d = std::getenv("GGUF_BENCH_EDIT_DIR");
  return d && *d ? fs::path(d) : fs::path();
}

// A model of about `bytes` bytes: a little metadata and one f32 tensor; random data unless `sparse`
// (then the tensor is a hole: only the header is written, the size set with resize_file).
fs::path make_model(std::uint64_t bytes, bool sparse) {
  const fs::path p = bench_dir() / ("gguf-bench-" + std::to_string(bytes) + (sparse ? "-sparse" : "") + ".gguf");
  if (fs::exists(p)) return p;
  const std::uint64_t weights = bytes / 4 / 4096 * 4096;
  gguf::writer w;
  (void)w.set("general.architecture", gguf::value("llama"));
  (void)w.set("general.name", gguf::value("bench-a"));
  const std::array<std::uint64_t, 2> ne{4096, weights / 4096};
  std::mt19937_64 rng(1);
  (void)w.add_tensor("w", gguf::ggml_type::f32, ne, [&](std::uint64_t, std::span<std::byte> out) {
    if (!sparse) {
      for (std::size_t i = 0; i + 8 <= out.size(); i += 8) {
        const std::uint64_t r = rng();
        std::memcpy(out.data() + i, &r, 8);
      }
    }
    return gguf::result<void>{};
  });
  if (sparse) {
    const auto header = w.header();
    std::FILE* f = std::fopen(p.string().c_str(), "wb");
    std::fwrite(header->data(), 1, header->size(), f);
    std::fclose(f);
    fs::resize_file(p, *w.size());
  } else if (!gguf::save(w, p)) {
    return {};
  }
  return p;
}

// Every timed iteration starts alike: the destination removed (freeing a 1 GiB file costs this disk more
// than writing one, and cp and a rename would free it at different moments), and nothing left for the
// disk to write, so that the writeback of one iteration (or benchmark) does not land in the next.
void settle(benchmark::State& state, const fs::path& destination) {
  state.PauseTiming();
  std::error_code ignored;
  fs::remove(destination, ignored);
#if !defined(_WIN32)
  ::sync();
#endif
  state.ResumeTiming();
}

void set_counters(benchmark::State& state, std::uint64_t bytes) {
  state.counters["bytes/s"] = benchmark::Counter(
      static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

void cp(benchmark::State& state, bool flush) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const fs::path src = make_model(bytes, false), dst = bench_dir() / "gguf-bench-cp.gguf";
  std::string cmd = "cp '" + src.string() + "' '" + dst.string() + "'";
  if (flush) cmd += " && sync '" + dst.string() + "'";
  for (auto _ : state) {
    settle(state, dst);
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("cp failed");
  }
  fs::remove(dst);
  set_counters(state, bytes);
}

void rewrite(benchmark::State& state, bool flush) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const fs::path src = make_model(bytes, false), dst = bench_dir() / "gguf-bench-rewrite.gguf";
  gguf::save_options opt;
  opt.flush = flush;
  for (auto _ : state) {
    settle(state, dst);
    const auto g = gguf::open(src);
    if (!g || !gguf::save(gguf::writer::from(g->info()), dst, opt)) state.SkipWithError("rewrite failed");
  }
  fs::remove(dst);
  set_counters(state, bytes);
}

void in_place(benchmark::State& state) {
  const auto bytes = static_cast<std::uint64_t>(state.range(0));
  const fs::path p = make_model(bytes, true);
  bool flip = false;
  for (auto _ : state) {
    settle(state, {});
    const auto g = gguf::open(p);
    if (!g) {
      state.SkipWithError("open failed");
      break;
    }
    gguf::writer w = gguf::writer::from(g->info());
    (void)w.replace("general.name", gguf::value((flip = !flip) ? "bench-b" : "bench-a"));
    if (!gguf::save_in_place(w, p)) state.SkipWithError("in-place edit failed");
  }
}

const int registered = [] {
  if (bench_dir().empty()) return 0;
  constexpr std::int64_t gib = std::int64_t{1} << 30;
  for (const bool flush : {false, true}) {
    benchmark::RegisterBenchmark(flush ? "edit/cp_sync" : "edit/cp", cp, flush)
        ->Arg(gib)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(flush ? "edit/rewrite" : "edit/rewrite_noflush", rewrite, flush)
        ->Arg(gib)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("edit/in_place", in_place)
      ->Arg(std::int64_t{64} << 20)
      ->Arg(4 * gib)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  return 0;
}();

}  // namespace
