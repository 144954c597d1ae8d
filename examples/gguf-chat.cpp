// gguf-chat (MODEL | --template FILE) [--template-name NAME] [--now YYYY-MM-DDTHH:MM:SS] [--ids] [INPUT.json | -]
// gguf-chat --batch [--now YYYY-MM-DDTHH:MM:SS]
//
// A conversation through a chat template: the text Hugging Face transformers' apply_chat_template makes
// of it (gguf::chat_template), or with --ids the token ids llama.cpp's server feeds the model for it.
#include <gguf/chat_template.hpp>
#include <gguf/gguf.hpp>
#include <gguf/json.hpp>
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "cli.hpp"
#include "gguf_json.hpp"
#include "remote.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-chat",
    "gguf-chat (MODEL | --template FILE) [--template-name NAME] [--now YYYY-MM-DDTHH:MM:SS] [--ids]"
    " [INPUT.json | -]\n"
    "       gguf-chat --template FILE [--now ...] [--ids] MODEL (INPUT.json | -)\n"
    "       gguf-chat --batch [--now YYYY-MM-DDTHH:MM:SS]",
    "Renders a conversation with a chat template exactly as Hugging Face transformers' apply_chat_template\n"
    "does (Jinja2 in transformers' environment) and writes the text to standard output as it is, nothing\n"
    "added. INPUT is a JSON object of the template's variables: messages, tools, documents,\n"
    "add_generation_prompt, bos_token, eos_token and any other the template reads; without INPUT, or\n"
    "with '-', it is read from standard input. tools and documents are none and add_generation_prompt is\n"
    "false unless INPUT gives them, as apply_chat_template passes them.\n"
    "\n"
    "The template is MODEL's tokenizer.chat_template (MODEL: a file, any shard of a split model, or the\n"
    "http:// or https:// URL of one: only its header is read), or the file given by --template. With\n"
    "MODEL, bos_token and eos_token are the texts of the model's BOS and EOS tokens unless INPUT gives\n"
    "them. With --template a single operand is INPUT; give MODEL and INPUT (INPUT may be '-') to take\n"
    "bos_token, eos_token and the tokenizer from MODEL.\n"
    "\n"
    "  --template FILE       the template in FILE instead of the model's\n"
    "  --template-name NAME  the model's tokenizer.chat_template.NAME (e.g. tool_use) instead of its\n"
    "                        default template (gguf-info lists a model's templates)\n"
    "  --now T               the clock of strftime_now: the local time T (YYYY-MM-DDTHH:MM:SS), not now\n"
    "  --ids                 print the token ids of the text instead, separated by spaces (as\n"
    "                        gguf-tokenize prints them): what llama.cpp's server tokenizes for a chat\n"
    "                        completion. A leading BOS text (a trailing EOS text) is dropped when the\n"
    "                        vocabulary adds BOS (EOS) itself, then the text is tokenized with\n"
    "                        add_special and parse_special, as llama.cpp does. Needs MODEL\n"
    "  --batch               a testing aid (tests/chat/README.md): JSON lines {\"template\": PATH,\n"
    "                        \"input\": PATH} (and \"now\": T) on standard input, one line out each,\n"
    "                        {\"ok\": true, \"text\": ...} or {\"ok\": false, \"error\": \"Class: message\"};\n"
    "                        each template is compiled once\n"
    "  --help                this text\n"
    "  --version             the tool's version\n"
    "\n"
    "Exit status: 0 success; 1 a template that does not compile or raises while rendering (one line on\n"
    "stderr, 'error: <Python exception>: <message> (line N)', a raise_exception message verbatim), input\n"
    "that is not a JSON object, a model or file that cannot be read, a model without the template; 2\n"
    "usage errors.\n"};

// --- the clock -------------------------------------------------------------------------------------------

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's days_from_civil):
// timegm is not portable (Windows has _mkgmtime), and mktime would apply the local time zone.
constexpr std::int64_t days_from_civil(std::int64_t y, int m, int d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;                                    // [0, 399]
  const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}
static_assert(days_from_civil(1970, 1, 1) == 0 && days_from_civil(2000, 3, 1) == 11017);
static_assert(days_from_civil(1, 1, 1) == -719162 && days_from_civil(9999, 12, 31) == 2932896);

constexpr bool leap_year(int y) noexcept { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/**
 * `YYYY-MM-DDTHH:MM:SS` (Python's datetime range: years 1 to 9999, seconds to 59), every field
 * zero-padded, as a `std::tm` with the weekday and day of the year filled in; nothing for anything else.
 */
std::optional<std::tm> parse_time(std::string_view s) {
  static constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd";
  if (s.size() != shape.size()) return std::nullopt;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i]) return std::nullopt;
  }
  const auto field = [&](std::size_t at, std::size_t n) {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) v = v * 10 + (s[i] - '0');
    return v;
  };
  const int year = field(0, 4), month = field(5, 2), day = field(8, 2);
  const int hour = field(11, 2), minute = field(14, 2), second = field(17, 2);
  static constexpr int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  if (day > month_days[month - 1] + (month == 2 && leap_year(year) ? 1 : 0)) return std::nullopt;
  const std::int64_t days = days_from_civil(year, month, day);
  std::tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = minute;
  t.tm_sec = second;
  t.tm_wday = static_cast<int>(((days + 4) % 7 + 7) % 7);  // 1970-01-01 was a Thursday
  t.tm_yday = static_cast<int>(days - days_from_civil(year, 1, 1));
  t.tm_isdst = -1;  // unknown, as Python's timetuple() of a naive datetime says
  return t;
}

// --- input and output ------------------------------------------------------------------------------------

bool read_all(std::FILE* f, std::string& out) {
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return !std::ferror(f);
}

/**
 * A file's bytes (a regular file or a pipe: --template <(...)), or "PATH: why not" in the words of the
 * other tools (gguf::mapped_file's).
 */
std::optional<std::string> read_file(const std::string& path, std::string& problem) {
  std::string out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  const bool ok = f && read_all(f, out);
  if (f) std::fclose(f);
  if (ok) return out;
  const auto m = gguf::mapped_file::open(path);  // the OS's reason, as every tool words it
  problem = path + ": " + (m ? std::string("cannot be read") : gguf::to_string(m.error()));
  return std::nullopt;
}

/// The render variables in `text`, or "WHERE: why not".
std::optional<gguf::json> parse_input(std::string_view text, const std::string& where, std::string& problem) {
  auto j = gguf::parse_json(text);
  if (!j) {
    problem = where + ": " + gguf::to_string(j.error());
    return std::nullopt;
  }
  if (j->type() != gguf::json::kind::object) {
    problem = where + ": not a JSON object (the input is an object of render variables: {\"messages\": [...]})";
    return std::nullopt;
  }
  return std::move(*j);
}

bool write_out(std::string_view bytes) {
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  return std::fflush(stdout) == 0 && !std::ferror(stdout);
}

// --- the model -------------------------------------------------------------------------------------------

/** A model's metadata: mapped from a file (or any shard of a set), or read as headers from a URL. */
struct model_source {
  std::optional<gguf::model> local;
#if GGUF_TOOLS_HTTP
  std::optional<gguf::model_header> remote;
#endif
  /// The metadata (the first shard's) of the one that is open.
  const gguf::metadata_table& metadata() const {
#if GGUF_TOOLS_HTTP
    if (remote) return remote->metadata();
#endif
    return local->metadata();
  }
};

/// Opens MODEL (a path or a URL); on failure prints the `error:` line.
bool open_model(const std::string& path, model_source& out) {
  if (remote::is_url(path)) {
#if GGUF_TOOLS_HTTP
    out.remote = remote::open_model(path);
    return out.remote.has_value();
#else
    remote::unsupported(path);
    return false;
#endif
  }
  out.local = cli::open_model(path);
  return out.local.has_value();
}

/// The text of the names of a model's templates: "default, tool_use", or "none".
std::string template_names(const gguf::metadata_table& md) {
  std::string s;
  for (const std::string& n : gguf::chat_template::names(md)) {
    s += (s.empty() ? "" : ", ") + (n.empty() ? "default" : n);
  }
  return s.empty() ? "none" : s;
}

/// One `error:` line for a template that failed: "error: Name: message (line N)"; returns 1.
int template_failed(const gguf::template_error& e) {
  std::fprintf(stderr, "error: %s\n", gguf::to_string(e).c_str());
  return 1;
}

// --- --batch ---------------------------------------------------------------------------------------------

bool read_line(std::FILE* f, std::string& line) {
  line.clear();
  char buf[1 << 12];
  while (std::fgets(buf, sizeof buf, f)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') return true;
  }
  return !line.empty();
}

/// A string member of a request, or nothing.
std::optional<std::string> string_member(const gguf::json& request, std::string_view key) {
  const gguf::json* v = request.find(key);
  if (!v || v->type() != gguf::json::kind::string) return std::nullopt;
  return std::string(v->as_string());
}

/**
 * The agreement harness's protocol (tests/chat/README.md): a JSON line in, a JSON line out, in order,
 * until the end of standard input. Each template is compiled once (its compile error, too, is kept and
 * given for each request).
 */
int batch(const std::optional<std::tm>& now) {
  std::map<std::string, gguf::template_result<gguf::chat_template>> compiled;
  std::string line, reply;
  std::size_t number = 0;
  while (read_line(stdin, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    const auto answer = [&](bool ok, std::string_view text) {
      reply = ok ? R"({"ok": true, "text": )" : R"({"ok": false, "error": )";
      gguf_json::append_string(reply, text, false);  // a NUL of the text kept
      reply += "}\n";
      return write_out(reply);
    };
    const auto request = gguf::parse_json(line);
    const std::optional<std::string> template_path =
        request && request->type() == gguf::json::kind::object ? string_member(*request, "template") : std::nullopt;
    const std::optional<std::string> input_path = template_path ? string_member(*request, "input") : std::nullopt;
    if (!input_path) {
      if (!answer(false, "ValueError: line " + std::to_string(number) +
                             R"(: not a JSON object {"template": PATH, "input": PATH})")) {
        return cli::fail("standard output: cannot be written");
      }
      continue;
    }
    gguf::render_options options;
    options.now = now;
    if (const gguf::json* t = request->find("now"); t && !t->is_null()) {
      options.now = t->type() == gguf::json::kind::string ? parse_time(t->as_string()) : std::nullopt;
      if (!options.now) {
        if (!answer(false, "ValueError: line " + std::to_string(number) + ": \"now\" is not YYYY-MM-DDTHH:MM:SS")) {
          return cli::fail("standard output: cannot be written");
        }
        continue;
      }
    }
    auto it = compiled.find(*template_path);
    std::string problem;
    if (it == compiled.end()) {
      const auto source = read_file(*template_path, problem);
      if (!source) {
        if (!answer(false, "OSError: " + problem)) return cli::fail("standard output: cannot be written");
        continue;  // not kept: the file may appear
      }
      it = compiled.emplace(*template_path, gguf::chat_template::compile(*source)).first;
    }
    bool written;
    if (!it->second) {
      written = answer(false, gguf::to_string(it->second.error()));
    } else if (const auto text = read_file(*input_path, problem); !text) {
      written = answer(false, "OSError: " + problem);
    } else if (const auto context = parse_input(*text, *input_path, problem); !context) {
      written = answer(false, "ValueError: " + problem);
    } else if (const auto out = it->second->render(*context, options); !out) {
      written = answer(false, gguf::to_string(out.error()));
    } else {
      written = answer(true, *out);
    }
    if (!written) return cli::fail("standard output: cannot be written");
  }
  if (std::ferror(stdin)) return cli::fail("standard input: cannot be read");
  return 0;
}

// --- --ids -----------------------------------------------------------------------------------------------

/**
 * The ids llama.cpp's server evaluates for a rendered chat prompt. common_chat_template_direct_apply
 * (common/chat.cpp) drops a leading BOS piece from the rendered text when the vocabulary adds BOS
 * itself (llama_vocab_get_add_bos), and a trailing EOS piece when it adds EOS, "to avoid double BOS /
 * EOS tokens"; server_routes::handle_completions_impl (tools/server/server-context.cpp) then tokenizes the
 * prompt with tokenize_input_prompts(vocab, mctx, prompt, add_special = true, parse_special = true).
 */
int print_ids(const std::string& path, const gguf::metadata_table& md, std::string_view text) {
  const auto tok = gguf::tokenizer::from_metadata(md, {std::max(1u, std::thread::hardware_concurrency())});
  if (!tok) return cli::fail("%s: %s", path.c_str(), gguf::to_string(tok.error()).c_str());
  const gguf::text::vocabulary& v = tok->vocabulary();
  if (v.add_bos && tok->bos() >= 0) {
    const auto piece = tok->token_to_piece(tok->bos(), true);  // common_token_to_piece(vocab, bos, true)
    if (piece && text.substr(0, piece->size()) == *piece) text.remove_prefix(piece->size());
  }
  if (v.add_eos && tok->eos() >= 0) {
    const auto piece = tok->token_to_piece(tok->eos(), true);
    if (piece && text.size() >= piece->size() && text.substr(text.size() - piece->size()) == *piece) {
      text.remove_suffix(piece->size());
    }
  }
  gguf::encode_options opt;
  opt.add_special = true;
  opt.parse_special = true;
  const auto ids = tok->encode(text, opt);
  if (!ids) return cli::fail("%s: %s", path.c_str(), gguf::to_string(ids.error()).c_str());
  std::string out;
  out.reserve(ids->size() * 7 + 1);
  for (std::size_t i = 0; i < ids->size(); ++i) {
    if (i) out += ' ';
    out += std::to_string((*ids)[i]);
  }
  out += '\n';
  return write_out(out) ? 0 : cli::fail("standard output: cannot be written");
}

}  // namespace

// clang-tidy sees a throw in std::variant's assignment (gguf::json's values): bad_variant_access, which
// cannot happen there.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  const cli::parse_result cmd =
      cli::parse(argc, argv, tool,
                 {{"--template", true}, {"--template-name", true}, {"--now", true}, {"--ids"}, {"--batch"}}, 0, 2);
  if (cmd.exit) return *cmd.exit;
  const cli::args& a = cmd.args;
  const std::size_t n = a.positional.size();
  const bool from_file = a.has("--template");

  std::optional<std::tm> now;
  if (a.has("--now")) {
    now = parse_time(a.value("--now"));
    if (!now) {
      return cli::usage_error(tool, "--now wants a local time YYYY-MM-DDTHH:MM:SS, not '" + a.value("--now") + "'");
    }
  }
  cli::binary_stdout();
  if (a.has("--batch")) {
    if (n || from_file || a.has("--template-name") || a.has("--ids")) {
      return cli::usage_error(tool, "--batch takes --now only (the requests name the templates and inputs)");
    }
    return batch(now);
  }
  if (!from_file && n == 0) return cli::usage_error(tool, "missing operands: give MODEL, or --template FILE");
  if (from_file && a.has("--template-name")) {
    return cli::usage_error(tool, "--template-name picks one of MODEL's templates, not with --template");
  }
  // MODEL [INPUT]; with --template: [INPUT], or MODEL INPUT.
  const bool has_model = !from_file || n == 2;
  const std::string model_path = has_model ? a.positional[0] : std::string();
  const std::string input_path = n > (has_model ? 1u : 0u) ? a.positional[n - 1] : std::string("-");
  if (a.has("--ids") && !has_model) return cli::usage_error(tool, "--ids needs MODEL (its tokenizer)");

  model_source model;
  if (has_model && !open_model(model_path, model)) return 1;

  // The template, then the input: a model without the template fails before standard input is read.
  std::optional<gguf::chat_template> tmpl;
  if (from_file) {
    std::string problem;
    const auto source = read_file(a.value("--template"), problem);
    if (!source) return cli::fail("%s", problem.c_str());
    auto t = gguf::chat_template::compile(*source);
    if (!t) return template_failed(t.error());
    tmpl = std::move(*t);
  } else {
    const gguf::metadata_table& md = model.metadata();
    const std::string name = a.value("--template-name");
    const std::string key = std::string(gguf::chat_template::default_key) + (name.empty() ? "" : "." + name);
    const auto source = md.get<std::string_view>(key);
    if (!source) {
      if (source.error() != gguf::errc::not_found) {
        return cli::fail("%s: %s", model_path.c_str(), gguf::to_string(source.error()).c_str());
      }
      return cli::fail("%s: the model has no chat template '%s' (its templates: %s)", model_path.c_str(), key.c_str(),
                       template_names(md).c_str());
    }
    auto t = gguf::chat_template::compile(*source);
    if (!t) return template_failed(t.error());
    tmpl = std::move(*t);
  }

  std::string text, problem;
  if (input_path == "-") {
    if (!read_all(stdin, text)) return cli::fail("standard input: cannot be read");
  } else if (auto bytes = read_file(input_path, problem)) {
    text = std::move(*bytes);
  } else {
    return cli::fail("%s", problem.c_str());
  }
  auto context = parse_input(text, input_path == "-" ? std::string("standard input") : input_path, problem);
  if (!context && from_file && n == 1 && text.starts_with("GGUF")) {  // `--template T MODEL`: MODEL read as INPUT
    return cli::fail("%s: a GGUF file, not a JSON input: with --template, give MODEL INPUT (INPUT may be '-')",
                     input_path.c_str());
  }
  if (!context) return cli::fail("%s", problem.c_str());
  if (has_model) {  // the model's bos_token and eos_token, where the input has none
    gguf::json vars = gguf::chat_template::model_variables(model.metadata());
    for (auto& [key, value] : vars.members()) {
      if (!context->find(key)) context->set(key, std::move(value));
    }
  }

  gguf::render_options options;
  options.now = now;
  const auto rendered = tmpl->render(*context, options);
  if (!rendered) return template_failed(rendered.error());
  if (a.has("--ids")) return print_ids(model_path, model.metadata(), *rendered);
  return write_out(*rendered) ? 0 : cli::fail("standard output: cannot be written");
}
