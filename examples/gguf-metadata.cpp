// gguf-metadata FILE
//
// Reads what a model says about itself, the way an inference engine sets itself up: the architecture
// and its hyperparameters, the tokenizer's vocabulary and special tokens, and the chat template. Every
// key may be missing (a tokenizer-only file has no hyperparameters); a key of the wrong type is
// reported, never converted. Exit codes: 0 success, 1 a bad file (one `error:` line), 2 usage errors.
#include <gguf/gguf.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "cli.hpp"

namespace {

constexpr cli::tool tool{
    "gguf-metadata", "gguf-metadata FILE",
    "Prints what the GGUF model FILE (or the split model any shard FILE belongs to) says about itself:\n"
    "the architecture's hyperparameters\n"
    "(<arch>.context_length, .embedding_length, .block_count, .attention.head_count, ...), the\n"
    "tokenizer (tokenizer.ggml.model, the vocabulary's size and first tokens, the special tokens) and\n"
    "the chat template (tokenizer.chat_template).\n"
    "\n"
    "  --help     this text\n"
    "  --version  the tool's version\n"
    "\n"
    "Exit status: 0 success; 1 a file that cannot be read or is not valid GGUF (one line on stderr\n"
    "starting with 'error:'); 2 usage errors.\n"};

// An integer hyperparameter: absent is fine, another type is a problem worth printing.
void print_integer(const gguf::metadata_table& m, const char* label, std::string_view key) {
  const auto v = m.get_arch<std::uint32_t>(key);
  if (v) {
    std::printf("  %-22s %u\n", label, *v);
  } else if (v.error() != gguf::errc::not_found) {
    std::printf("  %-22s (%s)\n", label, gguf::to_string(v.error()).c_str());
  }
}

// A token as text: quoted, with control bytes escaped (tokens include "\n", "<0x0A>", ...).
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The text of token `id`, if the vocabulary has it.
std::optional<std::string_view> token_text(const gguf::array_view& tokens, std::uint32_t id) {
  const auto t = tokens.get<std::string_view>(id);
  return t ? std::optional<std::string_view>(*t) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  const cli::parse_result cmd = cli::parse(argc, argv, tool, {}, 1, 1);
  if (cmd.exit) return *cmd.exit;
  const auto model = cli::open_model(cmd.args.positional[0]);  // a file, or a split model through any shard
  if (!model) return 1;
  const gguf::metadata_table& m = model->metadata();

  // 1. The architecture names the hyperparameters: "<arch>.context_length", ...
  const std::string_view arch = m.architecture();
  std::printf("architecture: %s\n", arch.empty() ? "(none)" : std::string(arch).c_str());
  if (const auto name = m.get<std::string_view>("general.name")) {
    std::printf("name: %.*s\n", static_cast<int>(name->size()), name->data());
  }
  print_integer(m, "context length", "context_length");
  print_integer(m, "embedding length", "embedding_length");
  print_integer(m, "layers", "block_count");
  print_integer(m, "feed-forward length", "feed_forward_length");
  print_integer(m, "attention heads", "attention.head_count");
  print_integer(m, "key/value heads", "attention.head_count_kv");
  if (const auto base = m.get_arch<float>("rope.freq_base")) std::printf("  %-22s %g\n", "rope frequency base", *base);

  // 2. The tokenizer: its model, the vocabulary (a lazy view: 150k strings cost nothing until read),
  //    and the special tokens, which are ids into it.
  const auto tokenizer = m.get<std::string_view>("tokenizer.ggml.model");
  std::printf("tokenizer: %s\n", tokenizer ? std::string(*tokenizer).c_str() : "(none)");
  if (const auto tokens = m.get<gguf::array_view>("tokenizer.ggml.tokens")) {
    std::printf("  vocabulary: %llu tokens:", static_cast<unsigned long long>(tokens->size()));
    if (const auto texts = tokens->as<std::string_view>()) {
      int shown = 0;
      for (std::string_view t : *texts) {
        if (shown++ == 8) break;
        std::printf(" %s", quoted(t).c_str());
      }
    }
    std::printf(" ...\n");
    for (const char* special : {"bos", "eos", "unknown", "padding"}) {
      const auto id = m.get<std::uint32_t>(std::string("tokenizer.ggml.") + special + "_token_id");
      if (!id) continue;
      const auto text = token_text(*tokens, *id);
      std::printf("  %-8s %u %s\n", special, *id, text ? quoted(*text).c_str() : "(past the vocabulary)");
    }
  }

  // 3. The chat template, a Jinja string the engine renders conversations with.
  if (const auto tmpl = m.get<std::string_view>("tokenizer.chat_template")) {
    const std::string_view head = tmpl->substr(0, 60);
    std::printf("chat template: %zu bytes: %s%s\n", tmpl->size(), quoted(head).c_str(), tmpl->size() > 60 ? "..." : "");
  } else {
    std::printf("chat template: (none)\n");
  }
  return 0;
}
