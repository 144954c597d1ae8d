// gguf-bench: chat templates. For a few real templates of GGUF_BENCH_TEMPLATE_DIR (default:
// ../shared/data/chat-templates beside the checkout; without it, the seeds of tests/fuzz/seeds/chat,
// labelled seed/):
//   chat_template/compile/<name>  gguf::chat_template::compile of the template's source
//   chat_template/render/<name>   one render of the compiled template with tests/chat/cases'
//                                 tools_full_round.json (a system prompt, a tool declared, called and
//                                 answered), or chat_multi_turn.json where the template refuses tools
// Items per second are renders (or compiles). bench/chat_template_speed.py compares the same work with
// Jinja2's, in one process, through pygguf.
#include <benchmark/benchmark.h>
#include <gguf/chat_template.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct bench_template {
  std::string name;
  std::string source;
};

std::vector<bench_template> templates() {
  // the families a server meets most, each with its tool-calling and reasoning code
  static const char* const picks[][2] = {
      {"llama-3.1", "llamacpp__meta-llama-Llama-3.1-8B-Instruct.jinja"},
      {"qwen3", "llamacpp__Qwen-Qwen3-0.6B.jinja"},
      {"gpt-oss", "llamacpp__openai-gpt-oss-120b.jinja"},
      {"deepseek-r1", "hfjs__deepseek-ai--DeepSeek-R1.jinja"},
      {"gemma-3", "unsloth__gemma3.jinja"},
      {"mistral-small-3.2", "llamacpp__Mistral-Small-3.2-24B-Instruct-2506.jinja"},
      {"granite-4.0", "llamacpp__ibm-granite-granite-4.0.jinja"},
      {"phi-4", "unsloth__phi4.jinja"},
  };
  std::vector<bench_template> out;
  fs::path dir = fs::path(GGUF_BENCH_SOURCE_DIR) / ".." / "shared" / "data" / "chat-templates";
  if (const char* env = std::getenv("GGUF_BENCH_TEMPLATE_DIR"); env && *env) dir = env;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    for (const auto& [name, file] : picks) {
      if (fs::exists(dir / file, ec)) out.push_back({name, slurp(dir / file)});
    }
  }
  if (out.empty()) {
    for (const char* seed : {"chatml", "llama3", "tools"}) {
      out.push_back({std::string("seed/") + seed, slurp(fs::path(GGUF_BENCH_SOURCE_DIR) / "tests" / "fuzz" / "seeds" /
                                                        "chat" / (std::string(seed) + ".jinja"))});
    }
  }
  return out;
}

gguf::json case_json(const char* name) {
  auto j = gguf::parse_json(slurp(fs::path(GGUF_BENCH_SOURCE_DIR) / "tests" / "chat" / "cases" / name));
  return j ? *j : gguf::json(gguf::json::object_type{});
}

void compile(benchmark::State& state, const std::string& source) {
  for (auto _ : state) {
    auto t = gguf::chat_template::compile(source);
    benchmark::DoNotOptimize(t);
    if (!t) {
      state.SkipWithError(gguf::to_string(t.error()).c_str());
      return;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void render(benchmark::State& state, const std::string& source) {
  const auto t = gguf::chat_template::compile(source);
  if (!t) {
    state.SkipWithError(gguf::to_string(t.error()).c_str());
    return;
  }
  gguf::render_options o;
  o.now = std::tm{};
  gguf::json context = case_json("tools_full_round.json");
  if (!t->render(context, o)) context = case_json("chat_multi_turn.json");
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto text = t->render(context, o);
    if (!text) {
      state.SkipWithError(gguf::to_string(text.error()).c_str());
      return;
    }
    bytes += text->size();
    benchmark::DoNotOptimize(text);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

[[maybe_unused]] const bool registered = [] {
  for (const bench_template& t : templates()) {
    benchmark::RegisterBenchmark(("chat_template/compile/" + t.name).c_str(), compile, t.source)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("chat_template/render/" + t.name).c_str(), render, t.source)
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
