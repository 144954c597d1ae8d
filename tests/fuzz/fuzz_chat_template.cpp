// gguf-fuzz-chat-template: compiling and rendering hostile chat templates, with hostile contexts.
//  - The input is a template; a NUL byte, if any, ends it, and the bytes after it are the context (a
//    JSON document, read by gguf::parse_json; when it does not parse, or is not an object, a fixed chat
//    with a system prompt, tools, a tool call and a tool result stands in).
//  - The template compiles or is refused; a template that compiles renders the context twice, with the
//    clock fixed, under limits tight enough for a fuzzer (200k steps, 1 MiB of output, 64 MiB of values,
//    2 s), and without transformers' defaults once more.
// Whatever the input: no crash, no undefined behaviour (ASan, UBSan in the libFuzzer build), no stack
// overflow, no time or memory beyond the limits; a render gives the same text or the same error twice;
// an error has a kind and a message; the text is UTF-8 and within the output limit. A violation traps:
// a finding.
//
// Built as a libFuzzer target (GGUF_BUILD_FUZZERS=ON, clang) and, with replay_main.cpp, as a plain
// program that replays the corpus in every build (ctest `fuzz.chat_template_replay`).
#include <gguf/chat_template.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

const gguf::json& fallback_context() {
  static const gguf::json j = *gguf::parse_json(R"({
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "What's the weather in Paris? {{ not a template }}"},
      {"role": "assistant", "content": "", "reasoning_content": "Call the tool.",
       "tool_calls": [{"id": "call12345", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
      {"role": "tool", "tool_call_id": "call12345", "content": "{\"temp\": 21.5}"},
      {"role": "user", "content": [{"type": "text", "text": "thanks"}, {"type": "image"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"]}}}],
    "documents": [{"title": "t", "text": "d"}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": false
  })");
  return j;
}

void check(const gguf::template_result<std::string>& r, const gguf::render_options& o) {
  if (r) {
    require(r->size() <= o.limits.max_output);
    require(gguf::jinja::py::is_utf8(*r));  // UTF-8 in (checked at the door), UTF-8 out
  } else {
    require(r.error().type != gguf::template_error::kind::none);
    require(!r.error().message.empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view source = input.substr(0, nul);

  const gguf::json* context = &fallback_context();
  gguf::result<gguf::json> parsed = gguf::error{};
  if (nul != std::string_view::npos) {
    parsed = gguf::parse_json(input.substr(nul + 1));
    if (parsed) {
      const gguf::json copy = *parsed;  // a value type: deep copies compare equal
      require(copy == *parsed);
      if (parsed->type() == gguf::json::kind::object) context = &*parsed;
    }
  }

  const auto t = gguf::chat_template::compile(source);
  const auto again = gguf::chat_template::compile(source);
  require(t.has_value() == again.has_value());
  if (!t) {
    require(t.error().type == again.error().type && t.error().message == again.error().message);
    return 0;
  }

  gguf::render_options o;
  o.now = std::tm{};
  o.now->tm_year = 126;
  o.now->tm_mday = 15;
  o.limits.max_steps = 200'000;
  o.limits.max_output = std::size_t{1} << 20;
  o.limits.max_memory = std::size_t{64} << 20;
  o.limits.max_time = std::chrono::milliseconds(2000);
  const auto first = t->render(*context, o);
  check(first, o);
  const auto second = t->render(*context, o);
  check(second, o);
  // the same text or the same error, unless the clock stopped one of them
  const bool timed = (!first && first.error().message.find("time limit") != std::string::npos) ||
                     (!second && second.error().message.find("time limit") != std::string::npos);
  if (!timed) {
    require(first.has_value() == second.has_value());
    if (first)
      require(*first == *second);
    else
      require(first.error().type == second.error().type && first.error().message == second.error().message);
  }
  o.transformers_defaults = false;
  check(t->render(*context, o), o);
  return 0;
}
