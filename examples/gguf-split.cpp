// gguf-split [--split] [--split-max-tensors N | --split-max-size N(M|G)] [--no-tensor-first-split] [--dry-run]
//            IN OUT_PREFIX
// gguf-split --merge [--drop-split-keys] [--dry-run] SHARD OUT
// gguf-split --restore SHARD_OR_PREFIX
//
// Splits a model into shards, or merges shards into one file, compatible with llama.cpp's gguf-split:
// the same options give the same bytes. A shard set replaces an existing one all-or-nothing, through a
// journal that --restore (or the next run) completes or rolls back after a crash. Exit codes: 0 success, 1 a bad input
// or a write that failed (one `error:` line on stderr), 2 usage errors.
#include <gguf/gguf.hpp>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "cli.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-split",
    "gguf-split [--split] [--split-max-tensors N | --split-max-size N(M|G)] [--no-tensor-first-split]\n"
    "                  [--dry-run] IN OUT_PREFIX\n"
    "       gguf-split --merge [--drop-split-keys] [--dry-run] SHARD OUT\n"
    "       gguf-split --restore SHARD_OR_PREFIX",
    "Splits the model IN (a file, or any shard of a split model) into OUT_PREFIX-00001-of-0000n.gguf ...,\n"
    "or merges a split model, given by any of its shards, into the file OUT: compatible with llama.cpp's\n"
    "gguf-split, whose options these are, and for the same options the same bytes. The first shard holds\n"
    "the metadata; every shard the keys split.no, split.count and split.tensors.count.\n"
    "\n"
    "  --split                    split (the default)\n"
    "  --split-max-tensors N      at most N tensors per shard (default 128)\n"
    "  --split-max-size N(M|G)    at most N megabytes (1e6 bytes) or gigabytes (1e9) of tensor data per\n"
    "                             shard; a tensor larger than that gets a shard of its own\n"
    "  --no-tensor-first-split    the first shard holds only the metadata\n"
    "  --merge                    merge: SHARD is any shard of the model; OUT must not exist. As\n"
    "                             llama.cpp, the merged file keeps split.no and split.tensors.count, and\n"
    "                             split.count becomes 0 (moved last)\n"
    "  --drop-split-keys          with --merge: drop the three split.* keys instead, so that a split file\n"
    "                             merged back is byte for byte the original\n"
    "  --dry-run                  print the plan (shards, tensors, sizes) and write nothing\n"
    "  --restore SHARD_OR_PREFIX  after a crash or a kill during a split: bring the set back to exactly\n"
    "                             the old shards or exactly the new ones (see below)\n"
    "  --help, --version\n"
    "\n"
    "The plan goes to standard output (\"n_split: N\", then one line per shard, as llama.cpp prints it);\n"
    "progress to standard error when it is a terminal.\n"
    "\n"
    "What is guaranteed. Every new shard is first written beside its target (.NAME.gguf-tmp-XXXXXX) and\n"
    "flushed to the disk; then a journal, OUT_PREFIX.gguf-split-journal, records the swap; the shards that\n"
    "already have the prefix (of any count) are moved aside, the new ones renamed in (the first shard\n"
    "last), the journal is marked done, and the old shards and the journal are removed. So:\n"
    "  - an error (a full disk, a rename refused) leaves the old set as it was, byte for byte, and no new\n"
    "    file; the error names the shard it failed on;\n"
    "  - after a kill or a crash at any instant, --restore (or the next gguf-split on that prefix, which\n"
    "    does it first) leaves exactly the old set or exactly the new one: the old one unless every new\n"
    "    shard was in place. Until then the journal is there: the gguf tools refuse to read the set, and\n"
    "    since the first shard is the last renamed in, llama.cpp finds no first shard rather than a mix;\n"
    "  - SIGINT, SIGTERM and SIGHUP while the shards are written remove them (exit 130, 143, 129); once\n"
    "    the swap has begun it is finished first. --merge writes OUT the same way as one file.\n"
    "\n"
    "Exit status: 0 success; 1 a model that cannot be read, an existing OUT (--merge), a prefix that names\n"
    "a directory, nothing to restore, or a write that failed (one line on stderr starting with 'error:');\n"
    "2 usage errors.\n"};

// An error of a shard set: "dir/shard: what" when it names a shard, "prefix: what" otherwise.
int fail_for(const std::string& prefix, const gguf::error& e) {
  const std::string_view subject = e.subject();
  if (subject.find(".gguf") == std::string_view::npos) {
    return cli::fail("%s: %s", prefix.c_str(), gguf::to_string(e).c_str());
  }
  const std::filesystem::path file = std::filesystem::path(prefix).parent_path() / std::string(subject);
  gguf::error bare = e;
  bare.about("");
  return cli::fail("%s: %s", file.string().c_str(), gguf::to_string(bare).c_str());
}

// An interrupted swap of the set, recovered (and said so) before anything else is done with it, then the
// stale temporaries of a split killed before its journal removed; 1 after an `error:` line when it
// cannot be.
int recover_first(const std::string& path) {
  const auto r = gguf::recover_split(path);
  if (!r) return fail_for(path, r.error());
  cli::report_sweep(tool.name, gguf::sweep_split_temporaries(gguf::split_prefix_of(path)));
  if (*r == gguf::split_recovery::rolled_back) {
    std::fprintf(stderr, "gguf-split: an interrupted split of %s was rolled back: the old shards are in place\n",
                 path.c_str());
  } else if (*r == gguf::split_recovery::completed) {
    std::fprintf(stderr, "gguf-split: an interrupted split of %s was completed: the new shards are in place\n",
                 path.c_str());
  }
  return 0;
}

// "4G" -> 4e9 bytes, "128M" -> 128e6, as gguf-split reads --split-max-size; nothing for anything else.
std::optional<std::uint64_t> parse_size(const std::string& s) {
  if (s.size() < 2 || (s.back() != 'M' && s.back() != 'G')) return std::nullopt;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || n > 1'000'000'000) return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(s[i] - '0');
  }
  if (n == 0) return std::nullopt;
  return n * (s.back() == 'G' ? 1'000'000'000u : 1'000'000u);
}

// The plan as llama.cpp's gguf-split prints it: sizes in whole megabytes, metadata included.
bool print_plan(const std::vector<gguf::writer>& shards) {
  std::printf("n_split: %zu\n", shards.size());
  for (std::size_t k = 0; k < shards.size(); ++k) {
    auto header = shards[k].header();
    if (!header) return false;
    std::uint64_t bytes = header->size();
    for (std::size_t i = 0; i < shards[k].n_tensors(); ++i) bytes += shards[k].tensor_bytes(i);
    std::printf("split %05zu: n_tensors = %zu, total_size = %" PRIu64 "M\n", k + 1, shards[k].n_tensors(),
                bytes / 1000 / 1000);
  }
  return true;
}

int split(const cli::args& a, const std::string& in, const std::string& prefix) {
  gguf::split_options opt;
  if (a.has("--split-max-tensors") && a.has("--split-max-size")) {
    return cli::usage_error(tool, "either --split-max-tensors or --split-max-size, not both");
  }
  if (a.has("--split-max-tensors")) {
    const std::string v = a.value("--split-max-tensors");
    char* end = nullptr;
    const unsigned long n = std::strtoul(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n == 0 || n > 0xFFFFFFFFul || v[0] == '-') {
      return cli::usage_error(tool, "--split-max-tensors takes a number of at least 1, not '" + v + "'");
    }
    opt.max_tensors = static_cast<std::uint32_t>(n);
  }
  if (a.has("--split-max-size")) {
    const std::string v = a.value("--split-max-size");
    const auto n = parse_size(v);
    if (!n) return cli::usage_error(tool, "--split-max-size takes a size like 500M or 4G, not '" + v + "'");
    opt.max_bytes = *n;
  }
  opt.metadata_only_first_shard = a.has("--no-tensor-first-split");

  if (auto r = gguf::check_split_prefix(prefix); !r) return fail_for(prefix, r.error());
  if (!a.has("--dry-run") && recover_first(prefix) != 0) return 1;
  const auto m = cli::open_model(in);
  if (!m) return 1;
  const auto plan = gguf::plan_split(m->tensors(), opt);
  if (!plan) return cli::fail("%s: %s", in.c_str(), gguf::to_string(plan.error()).c_str());
  std::vector<gguf::writer> shards;
  for (std::size_t k = 0; k < plan->size(); ++k) {
    auto w = gguf::shard_writer(*m, *plan, k);
    if (!w) return cli::fail("%s: %s", in.c_str(), gguf::to_string(w.error()).c_str());
    shards.push_back(std::move(*w));
  }
  if (!print_plan(shards)) return cli::fail("%s: the metadata is too large for one shard", in.c_str());
  std::fflush(stdout);
  if (a.has("--dry-run")) return 0;

  cli::progress show("writing shards");
  gguf::save_options save;
  save.progress = [&show](std::uint64_t done, std::uint64_t total) { show(done, total); };
  const auto written = gguf::save_split(*m, prefix, opt, save);
  show.done();
  if (!written) return fail_for(prefix, written.error());
  std::fprintf(stderr, "gguf-split: %zu shards written with a total of %zu tensors\n", written->size(),
               m->tensors().size());
  return 0;
}

int merge(const cli::args& a, const std::string& in, const std::string& out) {
  if (a.has("--split-max-tensors") || a.has("--split-max-size") || a.has("--no-tensor-first-split")) {
    return cli::usage_error(tool, "--merge takes no split option");
  }
  // As llama.cpp: never overwrite. A directory, a missing directory: refused before any work.
  if (std::error_code ec; std::filesystem::exists(out, ec) && !std::filesystem::is_directory(out, ec)) {
    return cli::fail("%s: the output file exists", out.c_str());
  }
  const auto target = cli::output_target(tool.name, out);
  if (!target) return 1;
  const auto m = cli::open_model(in);
  if (!m) return 1;
  if (!m->metadata().contains(gguf::split_keys::count)) {
    return cli::fail("%s: not a shard of a split model: it has no split.count", in.c_str());
  }
  gguf::merge_options opt;
  opt.keep_split_keys = !a.has("--drop-split-keys");
  auto w = gguf::merged_writer(*m, opt);
  if (!w) return cli::fail("%s: %s", in.c_str(), gguf::to_string(w.error()).c_str());
  auto size = w->size();
  if (!size) return cli::fail("%s: %s", in.c_str(), gguf::to_string(size.error()).c_str());
  std::printf("merging %zu shards, %zu tensors: %" PRIu64 "M\n", m->n_shards(), w->n_tensors(), *size / 1000 / 1000);
  std::fflush(stdout);
  if (a.has("--dry-run")) return 0;

  cli::progress show("merging");
  gguf::save_options save;
  save.progress = [&show](std::uint64_t done, std::uint64_t total) { show(done, total); };
  auto r = gguf::save(*w, *target, save);
  show.done();
  if (!r) return cli::fail("%s: %s", out.c_str(), gguf::to_string(r.error()).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool,
                                           {{"--split"},
                                            {"--merge"},
                                            {"--split-max-tensors", true},
                                            {"--split-max-size", true},
                                            {"--no-tensor-first-split"},
                                            {"--drop-split-keys"},
                                            {"--dry-run"},
                                            {"--restore"}},
                                           1, 2);
  if (cmd.exit) return *cmd.exit;
  const cli::args& a = cmd.args;
  if (a.has("--restore")) {
    if (a.given.size() != 1 || a.positional.size() != 1) {
      return cli::usage_error(tool, "--restore takes one shard (or the prefix) and no other option");
    }
    const std::string& path = a.positional[0];
    const bool pending = gguf::pending_split_journal(path).has_value();
    if (recover_first(path) != 0) return 1;
    if (!pending) {
      return cli::fail("%s: nothing to restore: no interrupted split left a journal for this set", path.c_str());
    }
    return 0;
  }
  if (a.positional.size() != 2)
    return cli::usage_error(tool, a.positional.size() < 2 ? "missing operands" : "too many operands");
  if (a.has("--split") && a.has("--merge")) return cli::usage_error(tool, "either --split or --merge, not both");
  if (a.has("--drop-split-keys") && !a.has("--merge"))
    return cli::usage_error(tool, "--drop-split-keys is for --merge");
  return a.has("--merge") ? merge(a, a.positional[0], a.positional[1]) : split(a, a.positional[0], a.positional[1]);
}
