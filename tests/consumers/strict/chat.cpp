// The headers left out of the umbrella, under the strict warnings of run.sh: the chat-template engine
// (compiled here, header-only) and the tokenizer, each used.
#include <gguf/chat_template.hpp>
#include <gguf/json.hpp>
#include <gguf/model.hpp>
#include <gguf/tokenizer.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const auto t =
      gguf::chat_template::compile("{% for m in messages %}{{ m.role }}: {{ m.content|trim }}\n{% endfor %}");
  if (!t) return 1;
  const auto context = gguf::parse_json(argv[1]);
  if (!context) return 1;
  const auto text = t->render(*context);
  if (!text) return std::fprintf(stderr, "%s\n", gguf::to_string(text.error()).c_str()), 1;
  std::fputs(text->c_str(), stdout);
  if (argc > 2) {
    const auto model = gguf::open_model(argv[2]);
    if (!model) return 1;
    const auto tok = gguf::tokenizer::from(*model);
    if (!tok) return 1;
    const auto ids = tok->encode(*text, {.add_special = true, .parse_special = true});
    return ids ? static_cast<int>(ids->size() % 2) : 1;
  }
  return 0;
}
