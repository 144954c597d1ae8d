// gguf-diff A B (A, B: files, or any shard of split models)
//
// What differs between two models: metadata keys added, removed or changed, and per tensor the type,
// the shape, whether the bytes are identical, and else the error of B against A after dequantization
// (max |a - b| and RMS). Exit 0 when they are equal, 1 when they differ, 2 on usage errors or a file that
// cannot be read.
#include <gguf/gguf.hpp>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "remote.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-diff", "gguf-diff [--quiet] [--layout] A B",
    "Compares the models A and B (files, or any shard of split models, which are compared as whole\n"
    "models; or http:// or https:// URLs, whose headers are read by range requests and each tensor's\n"
    "data by one request of its own when it is compared): metadata keys only in A ('-'), only in B ('+')\n"
    "or with another type or value ('~'); tensors only in A or B, of another type or shape, or whose data\n"
    "differ, with the error of B against A after dequantizing both (max |a-b| and RMS, when the shapes\n"
    "match: a re-quantization shows its error).\n"
    "Values compare as values: a big-endian file can equal a little-endian one.\n"
    "\n"
    "  --quiet    print nothing; the exit status says\n"
    "  --layout   also compare how the files are laid out: version, alignment, byte order, tensor order\n"
    "             and split.* keys (ignored by default: they change when a model is split or merged)\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
    "\n"
    "Exit status: 0 the models are equal; 1 they differ; 2 usage errors, or a file that cannot be read or\n"
    "is not valid GGUF (one line on stderr starting with 'error:').\n"};

constexpr std::uint64_t shown_items = 8;  // array items printed for a changed value

bool is_layout_key(std::string_view key) { return key.substr(0, 6) == "split."; }

std::string shown(const gguf::value_view& v) {
  std::string s(gguf::to_string(v.type()));
  if (v.is_array()) s += " of " + std::string(gguf::to_string(v.get<gguf::array_view>()->item_type()));
  if (v.is_string()) return s + " \"" + std::string(*v.get<std::string_view>()) + "\"";
  return s + " " + gguf::to_string(v, shown_items);
}

// A model to compare: mapped from files, or read from URLs as headers with each tensor's data fetched by
// its range when it is compared.
class side {
 public:
  // Opens the model at `path` (a path or a URL); false after printing the error line.
  bool open(const std::string& path) {
    if (remote::is_url(path)) {
#if GGUF_TOOLS_HTTP
      remote_ = remote::open_model(path);
      if (!remote_) return false;
      reader_.emplace(*remote_, path);
      return true;
#else
      remote::unsupported(path);
      return false;
#endif
    }
    local_ = cli::open_model(path);
    return local_.has_value();
  }
  const gguf::metadata_table& metadata() const {
#if GGUF_TOOLS_HTTP
    if (remote_) return remote_->metadata();
#endif
    return local_->metadata();
  }
  std::span<const gguf::tensor_info> tensors() const {
#if GGUF_TOOLS_HTTP
    if (remote_) return remote_->tensors();
#endif
    return local_->tensors();
  }
  const gguf::tensor_info* find_tensor(std::string_view name) const {
#if GGUF_TOOLS_HTTP
    if (remote_) return remote_->find_tensor(name);
#endif
    return local_->find_tensor(name);
  }
  std::size_t n_shards() const {
#if GGUF_TOOLS_HTTP
    if (remote_) return remote_->n_shards();
#endif
    return local_->n_shards();
  }
  const gguf::file& first_shard() const {
#if GGUF_TOOLS_HTTP
    if (remote_) return remote_->shard(0).info();
#endif
    return local_->shard(0).info();
  }
  // Bytes [offset, offset + n) of `t`'s data: a view of the mapping, or fetched from the URL (valid until
  // the next call), a part of one request for the tensor.
  gguf::result<std::span<const std::byte>> read(const gguf::tensor_info& t, std::uint64_t offset, std::size_t n) {
#if GGUF_TOOLS_HTTP
    if (reader_) {
      auto r = reader_->read(t, offset, n);
      if (!r) failed_url_ = reader_->url_of(t);
      return r;
    }
#endif
    if (!t.has_data()) return gguf::error{gguf::errc::out_of_bounds, "tensor data not read"}.about(t.name);
    return t.data.subspan(static_cast<std::size_t>(offset), n);
  }
  // The URL of the last read that failed; empty when none did.
  const std::string& failed_url() const { return failed_url_; }

 private:
  std::optional<gguf::model> local_;
  std::string failed_url_;
#if GGUF_TOOLS_HTTP
  std::optional<gguf::model_header> remote_;
  std::optional<remote::tensor_reader> reader_;  // refers to remote_: a side does not move once opened
#endif
};

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool, {{"--quiet"}, {"--layout"}}, 2, 2);
  if (cmd.exit) return *cmd.exit;
  const bool quiet = cmd.args.has("--quiet"), layout = cmd.args.has("--layout");
  // printf to standard output unless --quiet (every call passes arguments: the format is a literal).
  const auto say = [quiet](const char* format, auto... args) {
    static_assert(sizeof...(args) > 0);
    if (!quiet) std::printf(format, args...);  // NOLINT(cppcoreguidelines-pro-type-vararg)
  };
  const std::string &pa = cmd.args.positional[0], &pb = cmd.args.positional[1];
  side sa, sb;
  if (!sa.open(pa) || !sb.open(pb)) return 2;
  side* const a = &sa;
  side* const b = &sb;

  std::uint64_t keys_differ = 0, tensors_differ = 0, tensors_same = 0;
  if (layout) {
    const gguf::file &fa = a->first_shard(), &fb = b->first_shard();
    if (fa.version() != fb.version()) say("~ version: %u -> %u\n", fa.version(), fb.version()), ++keys_differ;
    if (fa.alignment() != fb.alignment()) {
      say("~ alignment: %" PRIu64 " -> %" PRIu64 "\n", std::uint64_t{fa.alignment()}, std::uint64_t{fb.alignment()});
      ++keys_differ;
    }
    if (fa.byte_order() != fb.byte_order()) say("~ byte order: %s\n", "differs"), ++keys_differ;
    if (a->n_shards() != b->n_shards()) {
      say("~ shards: %" PRIu64 " -> %" PRIu64 "\n", std::uint64_t{a->n_shards()}, std::uint64_t{b->n_shards()});
      ++keys_differ;
    }
  }
  for (const gguf::metadata_entry& e : a->metadata()) {
    if (!layout && is_layout_key(e.key)) continue;
    const gguf::metadata_entry* o = b->metadata().find(e.key);
    const std::string key(e.key);
    if (!o) {
      say("- %s: %s\n", key.c_str(), shown(e.value).c_str());
      ++keys_differ;
    } else if (!gguf::same_value(e.value, o->value)) {
      say("~ %s: %s -> %s\n", key.c_str(), shown(e.value).c_str(), shown(o->value).c_str());
      ++keys_differ;
    }
  }
  for (const gguf::metadata_entry& e : b->metadata()) {
    if ((!layout && is_layout_key(e.key)) || a->metadata().contains(e.key)) continue;
    say("+ %s: %s\n", std::string(e.key).c_str(), shown(e.value).c_str());
    ++keys_differ;
  }

  const auto ta = a->tensors(), tb = b->tensors();
  for (std::size_t i = 0; i < ta.size(); ++i) {
    const gguf::tensor_info& t = ta[i];
    const std::string name(t.name);
    const gguf::tensor_info* o = b->find_tensor(t.name);
    if (!o) {
      say("- tensor %s: %s %s\n", name.c_str(), std::string(gguf::to_string(t.type)).c_str(), cli::dims(t).c_str());
      ++tensors_differ;
      continue;
    }
    // Data read a part at a time (a remote tensor streams through one request and a bounded buffer).
    const auto c = gguf::compare_tensors(
        t, [&](std::uint64_t at, std::size_t n) { return a->read(t, at, n); }, *o,
        [&](std::uint64_t at, std::size_t n) { return b->read(*o, at, n); });
    if (!c) {
      for (const side* s : {a, b}) {
#if GGUF_TOOLS_HTTP
        if (const std::string& url = s->failed_url(); !url.empty()) {
          return cli::fail("%s: %s", url.c_str(), remote::describe(url, c.error()).c_str()) + 1;
        }
#else
        (void)s;
#endif
      }
      return cli::fail("%s: %s", name.c_str(), gguf::to_string(c.error()).c_str()) + 1;
    }
    const bool moved = layout && (i >= tb.size() || tb[i].name != t.name);
    if (c->same_bytes || (c->same_shape && c->differing == 0 && c->same_type)) {
      if (moved)
        say("~ tensor %s: another place in the tensor order\n", name.c_str()), ++tensors_differ;
      else
        ++tensors_same;
      continue;
    }
    ++tensors_differ;
    std::string what;
    if (!c->same_type) what += std::string(gguf::to_string(t.type)) + " -> " + std::string(gguf::to_string(o->type));
    if (!c->same_shape) {
      what += (what.empty() ? "" : ", ") + cli::dims(t) + " -> " + cli::dims(*o);
    } else {
      char err[160];
      std::snprintf(err, sizeof err, "%s%" PRIu64 " of %" PRIu64 " values differ, max |a-b| %.6g, rms %.6g",
                    what.empty() ? "" : ", ", c->differing, t.n_elements, c->max_abs, c->rms);
      what += c->differing ? err : (what.empty() ? "the same values, other bytes" : ", the same values");
    }
    say("~ tensor %s: %s\n", name.c_str(), what.c_str());
  }
  for (const gguf::tensor_info& t : tb) {
    if (a->find_tensor(t.name)) continue;
    say("+ tensor %s: %s %s\n", std::string(t.name).c_str(), std::string(gguf::to_string(t.type)).c_str(),
        cli::dims(t).c_str());
    ++tensors_differ;
  }
  const auto count = [](std::uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  if (keys_differ + tensors_differ == 0) {
    say("equal: %s, %s\n", count(a->metadata().size(), "metadata key", "metadata keys").c_str(),
        count(tensors_same, "tensor", "tensors").c_str());
  } else {
    say("differ: %s, %s (%" PRIu64 " identical)\n", count(keys_differ, "metadata key", "metadata keys").c_str(),
        count(tensors_differ, "tensor", "tensors").c_str(), tensors_same);
  }
  if (!quiet && std::fflush(stdout) != 0) return cli::fail("cannot write to standard output") + 1;
  return keys_differ + tensors_differ == 0 ? 0 : 1;
}
