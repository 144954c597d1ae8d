// The command-line layer every gguf tool shares: --help, --version, `--` ending the options, usage
// errors (exit 2), one `error:` line for bad input (exit 1) with the likely cause of a damaged file, and
// a binary standard output.
#ifndef GGUF_EXAMPLES_CLI_HPP
#define GGUF_EXAMPLES_CLI_HPP

#include <gguf/gguf.hpp>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <csignal>

#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#else
#include <unistd.h>
#endif

namespace cli {

/** What a tool says about itself. */
struct tool {
  const char* name;      ///< "gguf-dump"
  const char* synopsis;  ///< "gguf-dump [--json] FILE": the usage line without "usage: "
  const char* help;      ///< what it does, its output, options and exit codes (printed by --help)
};

/** An option the tool accepts: "--json" (a flag) or "--to" (takes a value: "--to f16" or "--to=f16"). */
struct option {
  std::string_view name;
  bool takes_value = false;
};

/** The parsed command line. */
struct args {
  /// The operands, in order (everything that is not an option, and everything after `--`).
  std::vector<std::string> positional;

  /// The options given, in order: name, value ("" for a flag).
  std::vector<std::pair<std::string, std::string>> given;

  /// True when the flag or option was given.
  bool has(std::string_view name) const {
    for (const auto& [k, v] : given) {
      if (k == name) return true;
    }
    return false;
  }
  /// The last value of an option, or `fallback`.
  std::string value(std::string_view name, std::string fallback = {}) const {
    std::string out = std::move(fallback);
    for (const auto& [k, v] : given) {
      if (k == name) out = v;
    }
    return out;
  }
  /// Every value of a repeatable option, in order.
  std::vector<std::string> values(std::string_view name) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : given) {
      if (k == name) out.push_back(v);
    }
    return out;
  }
};

/** `args`, or the exit code the tool should return now (--help, --version, a usage error). */
struct parse_result {
  std::optional<int> exit;  ///< set: return this from main
  cli::args args;           ///< the command line, when `exit` is not set
};

/** Prints the usage line (and a hint) to stderr for a usage error; returns 2. */
inline int usage_error(const tool& t, const std::string& problem) {
  std::fprintf(stderr, "%s: %s\nusage: %s\n(%s --help for more)\n", t.name, problem.c_str(), t.synopsis, t.name);
  return 2;
}

/** True when standard error is a terminal: progress is drawn there, and only there. */
inline bool stderr_is_terminal() {
#if defined(_WIN32)
  return _isatty(_fileno(stderr)) != 0;
#else
  return isatty(fileno(stderr)) != 0;
#endif
}

/// Whether standard error is a terminal, recorded where a signal handler can read it.
inline volatile std::sig_atomic_t& stderr_terminal_flag() {
  static volatile std::sig_atomic_t on = 0;
  return on;
}

/**
 * SIGINT, SIGTERM, SIGHUP: remove this process's temporary files and end with 128 + the signal's number
 * (130, 143, 129) after one `error:` line; once the output is being put in place, or is in place
 * (`gguf::output_committing`, `gguf::output_committed`), the signal is let pass, so that the tool
 * finishes what is already done.
 * Async-signal-safe: only write(2), unlink(2) and _exit.
 */
extern "C" inline void on_interrupt(int sig) {
  if (gguf::output_committing() || gguf::output_committed()) return;
  gguf::remove_temporaries();
  const char* what =
      sig == SIGINT ? "interrupted (SIGINT): nothing was written\n" : "terminated (SIGTERM): nothing was written\n";
#if !defined(_WIN32)
  if (sig == SIGHUP) what = "hung up (SIGHUP): nothing was written\n";
  const auto put = [](const char* text) { (void)!::write(2, text, std::strlen(text)); };
  if (stderr_terminal_flag()) put("\r\033[K");  // a progress line on a terminal is cleared first
  put("error: ");
  put(what);
  ::_exit(128 + sig);
#else
  std::fputs("error: ", stderr);
  std::fputs(what, stderr);
  std::_Exit(128 + sig);
#endif
}

/**
 * Installs `on_interrupt` for SIGINT, SIGTERM and SIGHUP, and turns SIGXFSZ (a write past a file-size
 * limit, which kills by default) into the write's own error (EFBIG: "File too large").
 */
inline void install_signal_handlers() {
  stderr_terminal_flag() = stderr_is_terminal() ? 1 : 0;
#if defined(_WIN32)
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
#else
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  std::signal(SIGXFSZ, SIG_IGN);
#endif
}

/**
 * Parses argv: `--help`/`-h` prints the usage and help (exit 0), `--version` the tool's and library's
 * version (exit 0); `--` ends the options; an unknown option, a missing option value or a wrong number of
 * operands is a usage error (exit 2).
 */
inline parse_result parse(int argc, char** argv, const tool& t, std::initializer_list<option> options,
                          std::size_t min_operands, std::size_t max_operands) {
  install_signal_handlers();
  parse_result r;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (options_done || a.size() < 2 || a[0] != '-') {  // "-" alone is an operand (standard input/output)
      r.args.positional.emplace_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: %s\n\n%s", t.synopsis, t.help);
      r.exit = 0;
      return r;
    } else if (a == "--version") {
      std::printf("%s %d.%d.%d (gguf library %d.%d.%d)\n", t.name, GGUF_VERSION_MAJOR, GGUF_VERSION_MINOR,
                  GGUF_VERSION_PATCH, GGUF_VERSION_MAJOR, GGUF_VERSION_MINOR, GGUF_VERSION_PATCH);
      r.exit = 0;
      return r;
    } else {
      const std::size_t eq = a.find('=');
      const std::string_view name = a.substr(0, eq);
      const option* o = nullptr;
      for (const option& candidate : options) {
        if (candidate.name == name) o = &candidate;
      }
      if (!o) {
        r.exit = usage_error(t, "unknown option '" + std::string(a) + "'");
        return r;
      }
      std::string value;
      if (o->takes_value) {
        if (eq != std::string_view::npos) {
          value = a.substr(eq + 1);
        } else if (i + 1 < argc) {
          value = argv[++i];
        } else {
          r.exit = usage_error(t, "option " + std::string(name) + " needs a value");
          return r;
        }
      } else if (eq != std::string_view::npos) {
        r.exit = usage_error(t, "option " + std::string(name) + " takes no value");
        return r;
      }
      r.args.given.emplace_back(std::string(name), std::move(value));
    }
  }
  const std::size_t n = r.args.positional.size();
  if (n < min_operands || n > max_operands) {
    r.exit = usage_error(t, n < min_operands ? "missing operands" : "too many operands");
  }
  return r;
}

#if defined(__GNUC__)
#define GGUF_CLI_PRINTF_LIKE __attribute__((format(printf, 1, 2)))
#else
#define GGUF_CLI_PRINTF_LIKE
#endif

/** One `error:` line on stderr (printf-style); returns 1, the exit code for bad input. */
GGUF_CLI_PRINTF_LIKE inline int fail(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::fputs("error: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  return 1;
}

/** Says what a sweep of temporaries found (one line each on stderr, starting with the tool's name). */
inline void report_sweep(const char* tool_name, const gguf::result<gguf::sweep_report>& found) {
  if (!found) return;
  for (const std::filesystem::path& p : found->removed) {
    std::fprintf(stderr, "%s: removed %s, a temporary file left by an interrupted run\n", tool_name,
                 p.string().c_str());
  }
  for (const std::filesystem::path& p : found->in_use) {
    std::fprintf(stderr, "%s: note: %s is being written by another process right now\n", tool_name, p.string().c_str());
  }
}

/**
 * Looks for temporaries of `target` left by an interrupted run: removes the stale ones and says so on
 * stderr (one line each, starting with the tool's name); names those another process is writing.
 */
inline void sweep(const char* tool_name, const std::filesystem::path& target) {
  report_sweep(tool_name, gguf::sweep_temporaries(target));
}

/**
 * Checks an output path before any work is done, and returns the file a write to it replaces (the end of
 * its symlinks); nothing after one `error:` line when it cannot be written: a directory, a directory that
 * does not exist, a file with a pending in-place backup or a shard of a set with a pending journal. Stale
 * temporaries of the target are removed (`sweep`).
 */
inline std::optional<std::filesystem::path> output_target(const char* tool_name, const std::string& path) {
  namespace fs = std::filesystem;
  auto resolved = gguf::resolve_symlinks(path);
  if (!resolved) {
    fail("%s: %s", path.c_str(), gguf::to_string(resolved.error()).c_str());
    return std::nullopt;
  }
  std::error_code ec;
  if (fs::is_directory(*resolved, ec)) {
    fail("%s: is a directory: give the output file's name", path.c_str());
    return std::nullopt;
  }
  const fs::path dir = resolved->parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec)) {
    fail("%s: the directory '%s' does not exist", path.c_str(), dir.string().c_str());
    return std::nullopt;
  }
  if (auto r = gguf::check_replaceable(*resolved); !r) {
    fail("%s: %s", path.c_str(), gguf::to_string(r.error()).c_str());
    return std::nullopt;
  }
  sweep(tool_name, *resolved);
  return std::move(*resolved);
}

/** Opens and parses a model; on failure prints the `error:` line with the likely cause of the damage. */
inline std::optional<gguf::mapped_gguf> open(const std::string& path) {
  // One file of a set caught in a swap (gguf::open_model refuses the whole set itself).
  if (const auto journal = gguf::pending_split_journal(path)) {
    fail("%s: an interrupted gguf-split left %s: the set may be half replaced (gguf-split --restore %s first)",
         path.c_str(), journal->string().c_str(), path.c_str());
    return std::nullopt;
  }
  auto g = gguf::open(path);
  if (!g) {
    fail("%s: %s", path.c_str(), gguf::explain(path, g.error()).c_str());
    return std::nullopt;
  }
  return std::move(*g);
}

/**
 * Opens a model from any shard's path, a prefix, or a plain file; on failure prints the `error:` line,
 * with the likely cause of the damage when one shard is damaged (looked for in that shard).
 */
inline std::optional<gguf::model> open_model(const std::string& path) {
  auto m = gguf::open_model(path);
  if (m) return std::move(*m);
  const gguf::error& e = m.error();
  // The damaged file: the one whose name ends the error's subject ("...-00003-of-00005.gguf: key"), or
  // the path itself.
  std::string damaged = path;
  if (auto shards = gguf::find_shards(path); shards && e.has_offset()) {
    for (const std::filesystem::path& p : *shards) {
      const std::string name = p.filename().string();
      const std::string_view tail = std::string_view(name).substr(name.size() > 20 ? name.size() - 20 : 0);
      if (e.subject().find(tail) != std::string_view::npos) damaged = p.string();
    }
  }
  fail("%s: %s", path.c_str(), gguf::explain(std::filesystem::path(damaged), e).c_str());
  return std::nullopt;
}

/** A progress line on a terminal ("writing: 42% of 4.1 GB"), redrawn at most once per percent. */
class progress {
 public:
  /// Draws on stderr only when it is a terminal and `enabled`.
  explicit progress(const char* what, bool enabled = stderr_is_terminal()) : what_(what), on_(enabled) {}
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;
  /// Clears the line.
  ~progress() { done(); }
  /// Reports `done` of `total` bytes.
  void operator()(std::uint64_t done_bytes, std::uint64_t total) {
    if (!on_ || total == 0) return;
    const int pct = static_cast<int>(done_bytes * 100 / total);
    if (pct == last_) return;
    last_ = pct;
    std::fprintf(stderr, "\r%s: %3d%% of %.1f GB", what_, pct, static_cast<double>(total) / 1e9);
    std::fflush(stderr);
  }
  /// Clears the line (once).
  void done() {
    if (on_ && last_ >= 0) std::fputs("\r\033[K", stderr);
    last_ = -1;
  }

 private:
  const char* what_;
  bool on_;
  int last_ = -1;
};

/**
 * A tensor's dimensions as every gguf tool prints them: ne[0] (the row, innermost) first, as GGUF stores
 * them and ggml names them: "[4096, 32000]" for token_embd.weight (PyTorch's [32000, 4096]).
 */
inline std::string dims(const gguf::tensor_info& t) {
  std::string out = "[";
  for (std::uint32_t d = 0; d < t.n_dims; ++d) out += (d ? ", " : "") + std::to_string(t.ne[d]);
  return out + "]";
}

/** Bytes out as written: Windows' text mode would turn every LF of JSON or float data into CR LF. */
inline void binary_stdout() {
#if defined(_WIN32)
  _setmode(_fileno(stdout), _O_BINARY);
#endif
}

}  // namespace cli

#endif  // GGUF_EXAMPLES_CLI_HPP
