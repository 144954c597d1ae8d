// gguf-quantize [--imatrix FILE] [--threads N] [--allow-requantize] [--output-tensor-type T]
//               [--token-embedding-type T] [--leave-output-tensor] [--pure] [--dry-run] IN OUT FTYPE
//
// Quantizes a model as llama.cpp's llama-quantize does, to the same bytes: the same type for every tensor
// (llama.cpp's mixes), the same metadata, the same quantizers. Streams: the threads convert units of rows
// ahead of the writing; writes beside OUT, flushes and renames, so an error leaves no partial file.
#include <gguf/gguf.hpp>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-quantize",
    "gguf-quantize [--imatrix FILE] [--threads N] [--allow-requantize] [--output-tensor-type T]\n"
    "                     [--token-embedding-type T] [--leave-output-tensor] [--pure] [--dry-run] IN OUT FTYPE",
    "Quantizes the model IN (a file, or any shard of a split model) to the file type FTYPE into the file\n"
    "OUT, as llama.cpp's llama-quantize does: for the same input, FTYPE, options and importance matrix,\n"
    "the same bytes. FTYPE is llama-quantize's name (Q4_K_M, Q8_0, IQ2_XS, F16, ...; any case) or number.\n"
    "\n"
    "  --imatrix FILE              importance weights from llama-imatrix (its GGUF format or the legacy\n"
    "                              .dat); the file's name, dataset, entry and chunk counts are recorded\n"
    "                              under quantize.imatrix.*, as llama-quantize records them\n"
    "  --threads N                 threads converting (default: every core); the bytes do not\n"
    "                              depend on it\n"
    "  --allow-requantize          accept quantized tensors in IN: they are dequantized, then quantized\n"
    "  --output-tensor-type T      output.weight's type (a ggml type name: q8_0, f16, ...)\n"
    "  --token-embedding-type T    token_embd.weight's type\n"
    "  --leave-output-tensor       output.weight keeps its type\n"
    "  --pure                      every weight gets FTYPE's main type (no mix; fallbacks aside)\n"
    "  --dry-run                   print each tensor's type and the file's size, write nothing\n"
    "  --help, --version\n"
    "\n"
    "FTYPE names: F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M\n"
    "Q5_K_S Q5_K_M Q6_K IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_XS IQ3_S IQ3_M IQ4_NL IQ4_XS\n"
    "TQ1_0 TQ2_0 MXFP4_MOE NVFP4 Q1_0 Q2_0. IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS and Q2_K_S need --imatrix.\n"
    "\n"
    "Progress (tensor i/n, its types, MB/s) goes to standard error when it is a terminal; a summary line\n"
    "at the end. OUT is written beside its final name (.OUT.gguf-tmp-XXXXXX), flushed and renamed: an\n"
    "error, a kill or a full disk leaves OUT as it was; an existing OUT keeps its mode, owner and group,\n"
    "and a symlink stays a link to the rewritten file. SIGINT, SIGTERM and SIGHUP remove the temporary\n"
    "(exit 130, 143, 129). OUT may not be IN, by any name.\n"
    "\n"
    "Exit status: 0 success; 1 a model or imatrix that cannot be used (an entry missing or of the wrong\n"
    "length, quantized input without --allow-requantize, a row ggml cannot quantize) or a failed write (one\n"
    "line on stderr starting with 'error:'); 2 usage errors (an unknown FTYPE or type name).\n"};

/// A ggml type by name ("q8_0", "Q8_0", "f16"), as llama-quantize's --output-tensor-type reads it.
std::optional<gguf::ggml_type> parse_type(std::string_view name) {
  for (const gguf::type_traits& t : gguf::ggml_types) {
    if (t.name.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size(); ++i) {
      const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
      same = same && lower(t.name[i]) == lower(name[i]);
    }
    if (same) return t.type;
  }
  return std::nullopt;
}

/// FTYPE by name or number, as llama-quantize's try_parse_ftype.
const gguf::ftype_info* parse_ftype(const std::string& s) {
  if (const gguf::ftype_info* f = gguf::find_ftype(std::string_view(s))) return f;
  char* end = nullptr;
  const unsigned long id = std::strtoul(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || s[0] == '-' || id > 0xFFFF) return nullptr;
  return gguf::find_ftype(static_cast<std::uint32_t>(id));
}

/// The quantized file's tensors in output order, with where each one's data ends in the file.
struct layout_entry {
  const gguf::tensor_plan* plan;
  std::uint64_t end;  // the file offset just past its (padded) data
};

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool,
                                           {{"--imatrix", true},
                                            {"--threads", true},
                                            {"--allow-requantize"},
                                            {"--output-tensor-type", true},
                                            {"--token-embedding-type", true},
                                            {"--leave-output-tensor"},
                                            {"--pure"},
                                            {"--dry-run"}},
                                           3, 3);
  if (cmd.exit) return *cmd.exit;
  const cli::args& a = cmd.args;
  const std::string& in = a.positional[0];
  const std::string& out = a.positional[1];
  const gguf::ftype_info* ftype = parse_ftype(a.positional[2]);
  if (!ftype) return cli::usage_error(tool, "unknown file type '" + a.positional[2] + "'");

  gguf::quantize_model_options opt;
  opt.types.allow_requantize = a.has("--allow-requantize");
  opt.types.pure = a.has("--pure");
  opt.types.quantize_output = !a.has("--leave-output-tensor");
  for (const char* flag : {"--output-tensor-type", "--token-embedding-type"}) {
    if (!a.has(flag)) continue;
    const std::string v = a.value(flag);
    const auto t = parse_type(v);
    if (!t) return cli::usage_error(tool, std::string(flag) + ": unknown ggml type '" + v + "'");
    (std::string_view(flag) == "--output-tensor-type" ? opt.types.output_tensor_type : opt.types.token_embedding_type) =
        *t;
  }
  opt.n_threads = std::max(1u, std::thread::hardware_concurrency());
  if (a.has("--threads")) {
    const std::string v = a.value("--threads");
    char* end = nullptr;
    const unsigned long n = std::strtoul(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || v[0] == '-' || n == 0 || n > 1024) {
      return cli::usage_error(tool, "--threads takes a number from 1 to 1024, not '" + v + "'");
    }
    opt.n_threads = static_cast<unsigned>(n);
  }

  // The output is checked before any work: a directory, a missing directory, a pending restore.
  const auto target = cli::output_target(tool.name, out);
  if (!target) return 1;
  const auto m = cli::open_model(in);
  if (!m) return 1;
  // Never the input itself (by any name: a link, a hard link, a shard of it): it would be replaced by
  // its own quantization.
  for (std::size_t k = 0; k < m->n_shards(); ++k) {
    if (gguf::same_file(m->shard_path(k), *target)) {
      return cli::fail("%s: OUT is the input %s itself: write the quantized model to another file", out.c_str(),
                       m->shard_path(k).string().c_str());
    }
  }

  std::optional<gguf::imatrix> imat;
  if (a.has("--imatrix")) {
    const std::string path = a.value("--imatrix");
    auto loaded = gguf::load_imatrix(path);
    if (!loaded) return cli::fail("%s: %s", path.c_str(), gguf::to_string(loaded.error()).c_str());
    imat = std::move(*loaded);
    if (auto used = gguf::use_imatrix(opt, *imat, path); !used) {
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(used.error()).c_str());
    }
  }
  opt.types.has_imatrix = imat.has_value();

  std::vector<gguf::tensor_plan> plan(m->tensors().size());
  if (auto p = gguf::plan_quantization(m->metadata(), m->tensors(), *ftype, opt.types, plan); !p) {
    std::string why = gguf::to_string(p.error());
    if (p.error().code == gguf::errc::type_mismatch) why += " (--allow-requantize)";
    if (p.error().code == gguf::errc::not_found) why += " (--imatrix)";
    return cli::fail("%s: %s", in.c_str(), why.c_str());
  }
  auto w = gguf::quantized_writer(*m, *ftype, plan, opt);
  if (!w) return cli::fail("%s: %s", in.c_str(), gguf::to_string(w.error()).c_str());
  auto header = w->header();
  if (!header) return cli::fail("%s: %s", in.c_str(), gguf::to_string(header.error()).c_str());

  // the file's layout, to name the tensor being written from the writer's byte count
  std::vector<layout_entry> layout(plan.size());
  for (const gguf::tensor_plan& p : plan) layout[p.output_index].plan = &p;
  std::uint64_t at = header->size(), in_bytes = 0;
  for (std::size_t k = 0; k < layout.size(); ++k) {
    at += (w->tensor_bytes(k) + w->alignment() - 1) / w->alignment() * w->alignment();
    layout[k].end = at;
    in_bytes += m->tensors()[layout[k].plan->index].n_bytes;
  }

  if (a.has("--dry-run")) {
    for (const layout_entry& e : layout) {
      const gguf::tensor_plan& p = *e.plan;
      std::printf("%-40.*s %6s -> %-7s\n", static_cast<int>(p.name.size()), p.name.data(),
                  std::string(gguf::to_string(p.from)).c_str(), std::string(gguf::to_string(p.to)).c_str());
    }
    std::printf("%s: %.2f MB -> %.2f MB\n", ftype->name.data(), static_cast<double>(in_bytes) / 1e6,
                static_cast<double>(at) / 1e6);
    return 0;
  }

  const bool tty = cli::stderr_is_terminal();
  const auto start = std::chrono::steady_clock::now();
  std::size_t current = layout.size();
  gguf::save_options save;
  save.progress = [&](std::uint64_t written, std::uint64_t total) {
    if (!tty) return;
    std::size_t k = current == layout.size() ? 0 : current;  // the bytes only grow: go on from the last
    while (k < layout.size() && layout[k].end <= written) ++k;
    if (k == current && written != total) return;  // one redraw per tensor, and at the end
    current = k;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const gguf::tensor_plan& p = *layout[std::min(k, layout.size() - 1)].plan;
    std::fprintf(stderr, "\r\033[K[%4zu/%4zu] %.*s %s -> %s  %.0f MB/s", std::min(k + 1, layout.size()), layout.size(),
                 static_cast<int>(std::min<std::size_t>(p.name.size(), 40)), p.name.data(),
                 std::string(gguf::to_string(p.from)).c_str(), std::string(gguf::to_string(p.to)).c_str(),
                 s > 0 ? static_cast<double>(written) / 1e6 / s : 0.0);
    std::fflush(stderr);
  };
  const auto saved = gguf::save(*w, *target, save);
  if (tty) std::fputs("\r\033[K", stderr);
  if (!saved) return cli::fail("%s: %s", out.c_str(), gguf::to_string(saved.error()).c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "gguf-quantize: %s: %zu tensors, %.2f MB -> %.2f MB in %.2f s\n", ftype->name.data(),
               layout.size(), static_cast<double>(in_bytes) / 1e6, static_cast<double>(at) / 1e6, s);
  return 0;
}
