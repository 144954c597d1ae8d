// gguf-tokenize [--no-add-special] [--parse-special] [--json] MODEL [TEXT]
// gguf-tokenize --decode [--remove-special] [--unparse-special] MODEL [IDS...]
//
// Text to token ids with the tokenizer the model carries, exactly as llama.cpp's llama_tokenize, and
// ids back to bytes as llama_detokenize.
#include <gguf/gguf.hpp>
#include <gguf/tokenizer.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-tokenize",
    "gguf-tokenize [--no-add-special] [--parse-special] [--json] MODEL [TEXT]\n"
    "       gguf-tokenize --decode [--remove-special] [--unparse-special] MODEL [IDS...]",
    "Tokenizes TEXT (or, without TEXT, all of standard input as one text, as raw bytes) with the tokenizer\n"
    "of MODEL (a model or vocabulary file, or any shard of a split model), exactly as llama.cpp's\n"
    "llama_tokenize does, and prints the token ids separated by spaces on one line.\n"
    "\n"
    "  --no-add-special    do not add the BOS/EOS/SEP tokens the vocabulary asks for\n"
    "  --parse-special     match the texts of control tokens (<|im_end|>, <s>, ...) in the input\n"
    "  --json              print a JSON array of ids instead\n"
    "  --decode            the other way: IDS (integers separated by spaces, commas or newlines, or a JSON\n"
    "                      array; from standard input without IDS) to the bytes of llama_detokenize,\n"
    "                      written to standard output as they are\n"
    "  --remove-special    with --decode: drop a leading BOS and trailing EOS the vocabulary adds\n"
    "  --unparse-special   with --decode: write the texts of control tokens (otherwise they write nothing)\n"
    "  --help              this text\n"
    "  --version           the tool's version\n"
    "\n"
    "Exit status: 0 success; 1 a model that cannot be read or has no usable tokenizer, or an id outside\n"
    "the vocabulary (one line on stderr starting with 'error:'); 2 usage errors.\n"};

bool read_all(std::FILE* f, std::string& out) {
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return !std::ferror(f);
}

// Integers separated by anything that is not a digit or a sign ("1 2 3", "[1, 2, 3]", "1,2\n3").
bool parse_ids(std::string_view s, std::vector<gguf::token_id>& out, std::string& bad) {
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == ',' || c == '\n' || c == '\r' || c == '\t' || c == '[' || c == ']') {
      ++i;
      continue;
    }
    std::size_t j = i;
    if (s[j] == '-' || s[j] == '+') ++j;
    const std::size_t digits = j;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    const bool separated =
        j == s.size() || s[j] == ' ' || s[j] == ',' || s[j] == '\n' || s[j] == '\r' || s[j] == '\t' || s[j] == ']';
    if (j == digits || !separated || j - digits > 10) {
      std::size_t k = i;
      while (k < s.size() && s[k] != ' ' && s[k] != ',' && s[k] != '\n') ++k;
      bad = std::string(s.substr(i, k - i));
      return false;
    }
    const long long v = std::strtoll(std::string(s.substr(i, j - i)).c_str(), nullptr, 10);
    if (v < INT32_MIN || v > INT32_MAX) {
      bad = std::string(s.substr(i, j - i));
      return false;
    }
    out.push_back(static_cast<gguf::token_id>(v));
    i = j;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool,
                                           {{"--no-add-special"},
                                            {"--parse-special"},
                                            {"--json"},
                                            {"--decode"},
                                            {"--remove-special"},
                                            {"--unparse-special"}},
                                           1, SIZE_MAX);
  if (cmd.exit) return *cmd.exit;
  const cli::args& a = cmd.args;
  const bool decode = a.has("--decode");
  if (!decode && a.positional.size() > 2) return cli::usage_error(tool, "too many operands (quote TEXT as one)");
  if (decode && (a.has("--no-add-special") || a.has("--parse-special") || a.has("--json"))) {
    return cli::usage_error(tool, "--decode takes --remove-special and --unparse-special only");
  }
  if (!decode && (a.has("--remove-special") || a.has("--unparse-special"))) {
    return cli::usage_error(tool, "--remove-special and --unparse-special go with --decode");
  }
  const std::string& path = a.positional[0];
  const auto model = cli::open_model(path);
  if (!model) return 1;
  const auto tok = gguf::tokenizer::from(*model, {std::max(1u, std::thread::hardware_concurrency())});
  if (!tok) return cli::fail("%s: %s", path.c_str(), gguf::to_string(tok.error()).c_str());

  cli::binary_stdout();
  if (decode) {
    std::vector<gguf::token_id> ids;
    std::string bad;
    if (a.positional.size() > 1) {
      for (std::size_t i = 1; i < a.positional.size(); ++i) {
        if (!parse_ids(a.positional[i], ids, bad)) return cli::usage_error(tool, "'" + bad + "' is not a token id");
      }
    } else {
      std::string in;
      if (!read_all(stdin, in)) return cli::fail("standard input: cannot be read");
      if (!parse_ids(in, ids, bad)) return cli::fail("standard input: '%s' is not a token id", bad.c_str());
    }
    gguf::decode_options opt;
    opt.remove_special = a.has("--remove-special");
    opt.unparse_special = a.has("--unparse-special");
    const auto text = tok->decode(ids, opt);
    if (!text) {
      for (const gguf::token_id id : ids) {
        if (id < 0 || static_cast<std::size_t>(id) >= tok->n_vocab()) {
          return cli::fail("%s: token id %d is outside the vocabulary (0 to %llu)", path.c_str(), static_cast<int>(id),
                           static_cast<unsigned long long>(tok->n_vocab() - 1));
        }
      }
      return cli::fail("%s: %s", path.c_str(), gguf::to_string(text.error()).c_str());
    }
    std::fwrite(text->data(), 1, text->size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : cli::fail("standard output: cannot be written");
  }

  std::string input;
  if (a.positional.size() > 1) {
    input = a.positional[1];
  } else if (!read_all(stdin, input)) {
    return cli::fail("standard input: cannot be read");
  }
  gguf::encode_options opt;
  opt.add_special = !a.has("--no-add-special");
  opt.parse_special = a.has("--parse-special");
  const auto encoded = tok->encode(input, opt);
  if (!encoded) return cli::fail("%s: %s", path.c_str(), gguf::to_string(encoded.error()).c_str());
  const std::vector<gguf::token_id>& ids = *encoded;
  std::string out;
  out.reserve(ids.size() * 7 + 3);
  const bool json = a.has("--json");
  if (json) out += '[';
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) out += json ? "," : " ";
    out += std::to_string(ids[i]);
  }
  if (json) out += ']';
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : cli::fail("standard output: cannot be written");
}
