// Rendering a chat template: <gguf/chat_template.hpp>, compile a template and render a context read as JSON.
#include <gguf/chat_template.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const auto tmpl = gguf::chat_template::compile(argv[1]);
  if (!tmpl) return std::fprintf(stderr, "error: %s\n", gguf::to_string(tmpl.error()).c_str()), 1;
  const auto context = gguf::parse_json(argv[2]);
  if (!context) return std::fprintf(stderr, "error: %s\n", gguf::to_string(context.error()).c_str()), 1;
  const auto text = tmpl->render(*context);
  if (!text) return std::fprintf(stderr, "error: %s\n", gguf::to_string(text.error()).c_str()), 1;
  std::fputs(text->c_str(), stdout);
  return 0;
}
