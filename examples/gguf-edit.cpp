// gguf-edit IN -o OUT [--set KEY=TYPE:VALUE]... [--del KEY]... [--rename KEY=NEW]... [--byte-order little|big]
// gguf-edit FILE [--set ...] [--del ...] [--rename ...] [--in-place]
// gguf-edit --restore FILE
//
// Edits a GGUF file's metadata or byte order, writing it in the layout of ggml's gguf_write_to_file
// (the same bytes ggml writes for the same edits). Safe: a new file is written beside the target and
// renamed over it; --in-place rewrites only the header, with a backup first. Exit codes: 0 success,
// 1 a bad file or an edit it cannot take (one `error:` line on stderr), 2 usage errors.
#include <gguf/gguf.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cli.hpp"
#include "edit_args.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-edit",
    "gguf-edit IN -o OUT [--set KEY=TYPE:VALUE]... [--del KEY]... [--rename KEY=NEW]... [--byte-order little|big]\n"
    "       gguf-edit FILE [--set KEY=TYPE:VALUE]... [--del KEY]... [--rename KEY=NEW]... [--in-place]\n"
    "       gguf-edit --restore FILE",
    "Edits the metadata of a GGUF file, or converts its byte order, and writes it in the layout of ggml's\n"
    "gguf_write_to_file: for the same edits, the same bytes ggml writes. Edits apply in order.\n"
    "\n"
    "  --set KEY=TYPE:VALUE     set a key, as ggml's gguf_set_val_* (an existing key moves last). TYPE is\n"
    "                           uint8 int8 uint16 int16 uint32 int32 uint64 int64 float32 float64 bool\n"
    "                           string; an array is array:TYPE:[v1,v2,...] (JSON items; nested arrays\n"
    "                           as array:array:TYPE:[[...],[...]])\n"
    "  --del KEY                remove a key (nothing happens when it is not there)\n"
    "  --rename KEY=NEW         rename a key, keeping its place and value\n"
    "  --byte-order little|big  the output's byte order (a big-endian file holds big-endian tensors);\n"
    "                           without it the input's is kept\n"
    "  -o OUT                   write a new file OUT (atomically: a temporary beside OUT, renamed)\n"
    "  --in-place               rewrite FILE's header only, without moving a tensor byte, when the new\n"
    "                           metadata fits before the tensor data (the alignment padding); the old\n"
    "                           header, with what identifies FILE, is kept in FILE.gguf-backup until\n"
    "                           the edit is flushed. The header is written by one write, but a program\n"
    "                           reading FILE at that instant may see it torn and call the file corrupt\n"
    "                           (it never sees torn tensor data): edit in place when nothing reads it\n"
    "  --restore FILE           after a crash during --in-place: write FILE.gguf-backup back over FILE,\n"
    "                           once it is proven to be FILE's (same size, same tensor data); a backup\n"
    "                           of another file, or of FILE before it was replaced, is refused\n"
    "  --force                  accept a general.alignment above 64 MiB (each tensor padded to it)\n"
    "  --help, --version\n"
    "\n"
    "Without -o, FILE itself is rewritten: a new file beside it (.FILE.gguf-tmp-XXXXXX), flushed to the\n"
    "disk, renamed over it, so FILE always holds the old or the new content, byte for byte, whatever\n"
    "happens (a kill, a full disk). The new file keeps FILE's mode, owner and group; a symlink is followed\n"
    "and stays a link, the file it leads to is rewritten in its own directory (-o OUT likewise). SIGINT,\n"
    "SIGTERM and SIGHUP remove the temporary (exit 130, 143, 129); a temporary left by a kill is removed\n"
    "by the next run. A file with a pending FILE.gguf-backup is not rewritten until it is restored.\n"
    "Without edits, -o OUT rewrites IN in ggml's layout.\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read or written, or an edit it cannot take (one line\n"
    "on stderr starting with 'error:'; nothing is left half-written); 2 usage errors.\n"};

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool,
                                           {{"-o", true},
                                            {"--set", true},
                                            {"--del", true},
                                            {"--rename", true},
                                            {"--byte-order", true},
                                            {"--in-place"},
                                            {"--restore"},
                                            {"--force"}},
                                           1, 1);
  if (cmd.exit) return *cmd.exit;
  const cli::args& a = cmd.args;
  const std::string& path = a.positional[0];

  if (a.has("--restore")) {
    if (a.given.size() != 1) return cli::usage_error(tool, "--restore takes no other option");
    if (auto r = gguf::restore_in_place_backup(path); !r) {
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(r.error()).c_str());
    }
    std::fprintf(stderr, "%s: restored the header saved by an interrupted in-place edit\n", path.c_str());
    return 0;
  }
  const bool in_place = a.has("--in-place");
  const std::string out = a.value("-o", path);
  if (in_place && a.has("-o")) return cli::usage_error(tool, "--in-place edits FILE itself: no -o");
  std::optional<std::endian> order;
  if (a.has("--byte-order")) {
    const std::string o = a.value("--byte-order");
    if (o != "little" && o != "big") return cli::usage_error(tool, "--byte-order is little or big, not '" + o + "'");
    order = o == "big" ? std::endian::big : std::endian::little;
  }
  // An earlier in-place edit that was interrupted: the file may hold a half-written header.
  const auto source = gguf::resolve_symlinks(path);
  if (!source) return cli::fail("%s: %s", path.c_str(), gguf::to_string(source.error()).c_str());
  if (std::error_code ec; std::filesystem::exists(gguf::in_place_backup_path(*source), ec)) {
    return cli::fail("%s: an interrupted in-place edit left %s: run gguf-edit --restore %s first", path.c_str(),
                     gguf::in_place_backup_path(*source).string().c_str(), path.c_str());
  }
  // What an in-place edit killed while saving its backup leaves.
  cli::sweep(tool.name, gguf::in_place_backup_path(*source));
  // The output is checked before any work: a directory, a missing directory, a pending restore.
  std::optional<std::filesystem::path> target;
  if (!in_place) {
    target = cli::output_target(tool.name, out);
    if (!target) return 1;
  }

  std::optional<gguf::mapped_gguf> model = cli::open(path);
  if (!model) return 1;
  gguf::writer w = gguf::writer::from(model->info());
  if (order) w.set_byte_order(*order);

  // The edits, in command-line order.
  for (const auto& [option, text] : a.given) {
    if (option == "--set") {
      auto [key, v] = edit_args::edit(text);
      if (!v.value && v.out_of_range)
        return cli::fail("%s: --set %s: %s", path.c_str(), text.c_str(), v.problem.c_str());
      if (!v.value) return cli::usage_error(tool, "--set " + text + ": " + v.problem);
      if (auto r = w.set(key, std::move(*v.value)); !r) {
        return cli::fail("%s: --set %s: %s", path.c_str(), text.c_str(), gguf::to_string(r.error()).c_str());
      }
    } else if (option == "--del") {
      w.remove(text);
    } else if (option == "--rename") {
      const std::size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0)
        return cli::usage_error(tool, "--rename takes KEY=NEW, not '" + text + "'");
      if (auto r = w.rename(text.substr(0, eq), text.substr(eq + 1)); !r) {
        return cli::fail("%s: --rename %s: %s", path.c_str(), text.c_str(), gguf::to_string(r.error()).c_str());
      }
    }
  }

  // An alignment this large is a typo more often than a wish: every tensor is padded to it.
  constexpr std::uint32_t max_alignment = 64u << 20;
  if (w.alignment() > max_alignment && !a.has("--force")) {
    return cli::fail(
        "%s: general.alignment %u pads every tensor to a multiple of %u bytes (more than 64 MiB of "
        "padding each): --force if you mean it",
        path.c_str(), w.alignment(), w.alignment());
  }

  if (in_place) {
    if (order && *order != model->byte_order()) {
      return cli::fail("%s: --byte-order rewrites the tensor data: it cannot be done in place (drop --in-place)",
                       path.c_str());
    }
    if (auto r = gguf::save_in_place(w, path); !r) {
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(r.error()).c_str());
    }
    return 0;
  }
  auto staged = gguf::stage(w, *target);
  if (!staged) return cli::fail("%s: %s", out.c_str(), gguf::to_string(staged.error()).c_str());
  model.reset();  // the input's mapping goes before the rename (Windows cannot rename over a mapped file)
  if (auto r = staged->commit(); !r) return cli::fail("%s: %s", out.c_str(), gguf::to_string(r.error()).c_str());
  return 0;
}
