// gguf::chat_template: Jinja2 as Hugging Face transformers runs it. The semantics cases
// (tests/chat/semantics.json, whose expectations tests/chat/semantics.py keeps equal to Jinja2's) render
// here byte for byte; the 150 real templates of ../shared are compared with Jinja2 by
// tests/chat/agreement.py. This file adds what a table cannot say: the API, the limits a hostile
// template meets, and rendering from many threads.
#include <doctest/doctest.h>
#include <gguf/chat_template.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gguf_writer.hpp"

namespace test_chat_template {

namespace {

using gguf::chat_template;
using gguf::json;
using kind = gguf::template_error::kind;

// The stack budgets are set for release builds, where Jinja2's deepest templates (197 nested macro
// calls: 217 KiB) fit the render's 512 KiB twice over. Frames are about 14 times larger under
// AddressSanitizer at -O0 (3 MiB for the same), so that the tests of what must be accepted hold in
// every build, such builds get budgets that much larger here.
#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
constexpr std::size_t stack_scale = 16;
#elif !defined(NDEBUG)
constexpr std::size_t stack_scale = 4;
#else
constexpr std::size_t stack_scale = 1;
#endif

gguf::jinja::compile_limits compile_budget() {
  gguf::jinja::compile_limits cl;
  cl.max_stack *= stack_scale;
  return cl;
}
gguf::render_options render_budget() {
  gguf::render_options o;
  o.limits.max_stack *= stack_scale;
  return o;
}

// The fixed clock of the semantics cases: 2026-01-15 10:30:00, a Thursday, day 15 of the year.
std::tm fixed_now() {
  std::tm t{};
  t.tm_year = 2026 - 1900;
  t.tm_mon = 0;
  t.tm_mday = 15;
  t.tm_hour = 10;
  t.tm_min = 30;
  t.tm_wday = 4;
  t.tm_yday = 14;
  return t;
}

json context(std::string_view text) {
  auto j = gguf::parse_json(text);
  REQUIRE(j);
  return *j;
}

// The text of `source` rendered with `vars` (a JSON object), or the error as "Name: message".
std::string render(std::string_view source, std::string_view vars = "{}",
                   const gguf::render_options& o = render_budget()) {
  const auto t = chat_template::compile(source, compile_budget());
  if (!t) return "error " + std::string(t.error().name()) + ": " + t.error().message;
  const auto text = t->render(context(vars), o);
  if (!text) return "error " + std::string(text.error().name()) + ": " + text.error().message;
  return *text;
}

// The kind of error `source` ends with (none when it renders).
kind failure(std::string_view source, std::string_view vars = "{}", const gguf::render_options& o = render_budget(),
             const gguf::jinja::compile_limits& cl = compile_budget()) {
  const auto t = chat_template::compile(source, cl);
  if (!t) return t.error().type;
  const auto text = t->render(context(vars), o);
  return text ? kind::none : text.error().type;
}

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t k = 0; k < n; ++k) out += s;
  return out;
}

}  // namespace

TEST_CASE("every semantics case renders as Jinja2 renders it (tests/chat/semantics.json)") {
  std::ifstream in(GGUF_TEST_DATA_DIR "/../chat/semantics.json", std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto cases = gguf::parse_json(ss.str());
  REQUIRE(cases);
  REQUIRE(cases->items().size() >= 100);
  gguf::render_options o = render_budget();
  o.now = fixed_now();
  for (const json& c : cases->items()) {
    const std::string why(c.find("why")->as_string());
    CAPTURE(why);
    const auto t = chat_template::compile(c.find("template")->as_string(), compile_budget());
    gguf::template_result<std::string> text = t ? t->render(*c.find("context"), o) : t.error();
    if (const json* want = c.find("text")) {
      CHECK_MESSAGE(text.has_value(), (text ? "" : gguf::to_string(text.error())));
      if (text) CHECK(*text == want->as_string());
      continue;
    }
    REQUIRE_FALSE(text.has_value());
    // the exception Jinja2 raises, or ours where Python raises outside Jinja2 (case["ours"])
    const json* name = c.find("ours") ? c.find("ours") : c.find("error");
    CHECK(std::string_view(text.error().name()) == name->as_string());
    if (const json* message = c.find("message")) CHECK(text.error().message == message->as_string());
  }
}

TEST_CASE("a template compiles once and renders many times, with transformers' defaults") {
  const auto t = chat_template::compile(
      "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}{{ tools is none }}{{ documents is none }}");
  REQUIRE(t);
  CHECK(*t->render(context(R"({"messages": [{"role": "user", "content": "hi"}]})")) == "<user>hiTrueTrue");
  CHECK(*t->render(context(R"({"messages": [], "add_generation_prompt": true, "tools": []})")) ==
        "<assistant>FalseTrue");
  gguf::render_options plain;
  plain.transformers_defaults = false;  // then tools is Undefined, which is not none
  CHECK(*t->render(context(R"({"messages": []})"), plain) == "FalseFalse");
}

TEST_CASE("errors carry Jinja2's exception, the message and the line") {
  const auto t = chat_template::compile(
      "line one\n{% if messages[0].role != 'user' %}{{ raise_exception('Roles must alternate') }}{% endif %}");
  REQUIRE(t);
  const auto r = t->render(context(R"({"messages": [{"role": "system"}]})"));
  REQUIRE_FALSE(r);
  CHECK(r.error().type == kind::raised);
  CHECK(std::string_view(r.error().name()) == "TemplateError");
  CHECK(r.error().message == "Roles must alternate");
  CHECK(r.error().line == 2);
  CHECK(gguf::to_string(r.error()) == "TemplateError: Roles must alternate (line 2)");

  const auto bad = chat_template::compile("{% for %}");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().type == kind::syntax);
  CHECK(render("{{ x|nope }}") == "error TemplateAssertionError: No filter named 'nope'.");
  CHECK(render("{{ 'a' + 1 }}") == "error TypeError: can only concatenate str (not \"int\") to str");
}

TEST_CASE("every filter and test the compiler accepts has an implementation") {
  // the compiler checks names against one table and the renderer dispatches on others: a name in the
  // first and missing from the second would compile and then fail at render time
  const std::string_view inputs[] = {"1", "-2.5", "'a b'", "[3, 1, 2]", "{'k': 1}", "none"};
  for (const std::string_view name : gguf::jinja::filter_names) {
    for (const std::string_view x : inputs) {
      const std::string out = render("{{ " + std::string(x) + "|" + std::string(name) + " }}");
      INFO(name, " of ", x, ": ", out);
      CHECK(out.find("No filter named") == std::string::npos);
    }
  }
  for (const std::string_view name : gguf::jinja::test_names) {
    const std::string out = render("{{ [1, 'a', none]|select('" + std::string(name) + "', 1)|list }}");
    INFO(name, ": ", out);
    CHECK(out.find("No test named") == std::string::npos);
  }
}

TEST_CASE("strftime_now reads the caller's clock") {
  gguf::render_options o = render_budget();
  o.now = fixed_now();
  CHECK(render("{{ strftime_now('%d %B %Y, %A') }}", "{}", o) == "15 January 2026, Thursday");
  // without one, the current local time
  const std::string year = render("{{ strftime_now('%Y') }}");
  CHECK(year.size() == 4);
}

TEST_CASE("the context must be a JSON object") {
  const auto t = chat_template::compile("x");
  REQUIRE(t);
  const auto r = t->render(json(1));
  REQUIRE_FALSE(r);
  CHECK(r.error().type == kind::type);
}

TEST_CASE("a model's templates: the default and the named ones, and its BOS and EOS texts") {
  test::file_builder fb;
  fb.kv("general.architecture", "llama");
  fb.kv("tokenizer.chat_template", "{{ bos_token }}default{{ eos_token }}");
  fb.kv("tokenizer.chat_template.tool_use", "tools:{{ tools|length }}");
  fb.kv_array<std::string>("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"});
  fb.kv("tokenizer.ggml.bos_token_id", std::uint32_t{1});
  fb.kv("tokenizer.ggml.eos_token_id", std::uint32_t{2});
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f);
  CHECK(chat_template::names(f->metadata()) == std::vector<std::string>{"", "tool_use"});

  const json vars = chat_template::model_variables(f->metadata());
  CHECK(vars == context(R"({"bos_token": "<s>", "eos_token": "</s>"})"));

  const auto def = chat_template::from(*f);
  REQUIRE(def);
  CHECK(*def->render(vars) == "<s>default</s>");
  const auto named = chat_template::from(*f, "tool_use");
  REQUIRE(named);
  CHECK(*named->render(context(R"({"tools": [1, 2]})")) == "tools:2");
  const auto missing = chat_template::from(*f, "rag");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().type == kind::key);
  CHECK(missing.error().message.find("tokenizer.chat_template.rag") != std::string::npos);
}

TEST_CASE("a model without BOS or EOS gives no such variable (transformers leaves it out)") {
  test::file_builder fb;
  fb.kv_array<std::string>("tokenizer.ggml.tokens", {"a", "b"});
  fb.kv("tokenizer.ggml.eos_token_id", std::uint32_t{7});  // out of range: ignored
  const test::bytes b = fb.build();
  const auto f = test::parse(b);
  REQUIRE(f);
  CHECK(chat_template::model_variables(f->metadata()) == json(json::object_type{}));
  CHECK(chat_template::names(f->metadata()).empty());
}

TEST_CASE("one compiled template renders from many threads at once") {
  const auto t = chat_template::compile(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + m.content|length %}"
      "{{ m.content|upper }}{% endfor %}={{ ns.n }}");
  REQUIRE(t);
  std::vector<std::string> texts(8);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int k = 0; k < 8; ++k) {
    threads.emplace_back([&, k] {
      std::string vars = R"({"messages": [)";
      for (int m = 0; m <= k; ++m) vars += std::string(m ? "," : "") + R"({"content": "ab"})";
      vars += "]}";
      for (int round = 0; round < 200; ++round) {
        const auto text = t->render(*gguf::parse_json(vars));
        if (!text)
          failures.fetch_add(1);
        else
          texts[static_cast<std::size_t>(k)] = *text;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  for (std::size_t k = 0; k < 8; ++k) CHECK(texts[k] == repeat("AB", k + 1) + "=" + std::to_string(2 * (k + 1)));
}

// ---- hostile templates: each stops at a limit, cleanly ---------------------------------------------------

TEST_CASE("work without end stops at the step limit") {
  CHECK(failure("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}") == kind::limit);
  CHECK(failure("{% for x in range(10**9) %}{% endfor %}") == kind::overflow);  // the sandbox's MAX_RANGE
  // a single filter over a large list counts its items
  gguf::render_options o = render_budget();
  o.limits.max_steps = 100;
  CHECK(failure("{{ range(5000)|list|length }}", "{}", o) == kind::limit);
}

TEST_CASE("the time limit stops a render that runs long within the step limit") {
  gguf::render_options o;
  o.limits.max_steps = ~std::uint64_t{0};
  o.limits.max_time = std::chrono::milliseconds(50);
  const auto t =
      chat_template::compile("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}");
  REQUIRE(t);
  const auto r = t->render(json(json::object_type{}), o);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("time") != std::string::npos);
}

TEST_CASE("recursion stops at the depth of Python's recursion limit") {
  // Jinja2 recurses 197 macro calls deep before Python stops it
  const std::string countdown = "{% macro f(k) %}{% if k > 0 %}{{ f(k - 1) }}{% endif %}{% endmacro %}";
  CHECK(failure(countdown + "{{ f(190) }}") == kind::none);
  CHECK(failure(countdown + "{{ f(100000) }}") == kind::limit);
  CHECK(failure("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}") == kind::limit);
  CHECK(failure("{% macro f() %}{{ caller() }}{% endmacro %}{% call f() %}{{ f() }}{% endcall %}") == kind::undefined);
  CHECK(failure("{% set l = [1] %}{% for x in [l] recursive %}{{ loop([l]) }}{% endfor %}") == kind::limit);
}

TEST_CASE("nesting the parser or the renderer would overflow the stack with is refused") {
  // what Jinja2 compiles is accepted: 74 parentheses, 490 nots, 491 additions, 327 filters, 98 ifs
  CHECK(failure("{{ " + repeat("(", 74) + "1" + repeat(")", 74) + " }}") == kind::none);
  CHECK(failure("{{ " + repeat("not ", 490) + "1 }}") == kind::none);
  CHECK(failure("{{ 1" + repeat(" + 1", 490) + " }}") == kind::none);
  CHECK(failure("{{ 1" + repeat("|string", 327) + " }}") == kind::none);
  CHECK(failure(repeat("{% if true %}", 98) + "x" + repeat("{% endif %}", 98)) == kind::none);
  // far more fails cleanly, at compile time
  for (const std::string& src :
       {"{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}",
        "{{ " + repeat("[", 100000) + repeat("]", 100000) + " }}", "{{ " + repeat("not ", 100000) + "1 }}",
        "{{ " + repeat("-", 100000) + "1 }}", "{{ 1" + repeat(" + 1", 100000) + " }}",
        "{{ 1" + repeat("|string", 100000) + " }}", "{{ x" + repeat(".a", 100000) + " }}",
        repeat("{% filter upper %}", 30000) + repeat("{% endfilter %}", 30000)}) {
    CAPTURE(src.substr(0, 40));
    CHECK(failure(src) == kind::limit);
  }
  // Python's own compile limits, which Jinja2 meets: 99 nested ifs, 21 for loops in one function
  CHECK(failure(repeat("{% if true %}", 99) + repeat("{% endif %}", 99)) == kind::syntax);
  CHECK(failure(repeat("{% for a in [1] %}", 21) + repeat("{% endfor %}", 21)) == kind::syntax);
  CHECK(failure("{% macro m() %}" + repeat("{% for a in [1] %}", 20) + repeat("{% endfor %}", 20) +
                "{% endmacro %}{% for a in [1] %}{{ m() }}{% endfor %}") == kind::none);
}

TEST_CASE("a smaller stack budget stops sooner, and a budget holds whatever the frames cost") {
  gguf::jinja::compile_limits cl;
  cl.max_stack = 4096;
  CHECK(failure("{{ " + repeat("(", 60) + "1" + repeat(")", 60) + " }}", "{}", {}, cl) == kind::limit);
  gguf::render_options o;
  o.limits.max_stack = 8192;
  const std::string countdown = "{% macro f(k) %}{% if k > 0 %}{{ f(k - 1) }}{% endif %}{% endmacro %}";
  CHECK(failure(countdown + "{{ f(150) }}", "{}", o) == kind::limit);
}

TEST_CASE("values nested beyond Python's recursion limit cannot be printed, compared or serialized") {
  const std::string deep = "{% set x = 1 %}" + repeat("{% set x = [x] %}", 5000);
  CHECK(failure(deep + "{{ x|length }}") == kind::none);  // making them is fine
  CHECK(failure(deep + "{{ x }}") == kind::limit);
  CHECK(failure(deep + "{{ x|tojson }}") == kind::limit);
  CHECK(failure(deep + "{% set y = x %}{{ x == y }}") == kind::limit);
  CHECK(failure(deep + "{{ [x, x]|sort }}") == kind::limit);
  // Jinja2 prints 990 levels
  const std::string ok = "{% set x = 1 %}" + repeat("{% set x = [x] %}", 990);
  CHECK(render(ok + "{{ x }}") == repeat("[", 990) + "1" + repeat("]", 990));
  // a namespace that holds itself prints as Python prints a recursive dict
  CHECK(render("{% set ns = namespace(a=1) %}{% set ns.a = [ns] %}{{ ns }}") ==
        "<Namespace {'a': [<Namespace {...}>]}>");
}

TEST_CASE("output and memory stop at their limits before anything is built") {
  for (const char* src :
       {"{{ 'a' * 10**9 }}", "{{ 'a'.center(10**9) }}", "{{ 'a'.ljust(10**9) }}", "{{ 'a'.zfill(10**9) }}",
        "{{ '\t\t'.expandtabs(10**9) }}", "{{ 'a\nb'|indent(10**9) }}", "{{ 'a'|center(10**9) }}",
        "{{ '%999999999d' % 1 }}", "{{ '{:>999999999}'.format(1) }}", "{{ ('a' * 1000000).replace('a', 'a' * 1000) }}",
        "{{ [1]|tojson(indent=10**9) }}",
        "{% set s = namespace(x='a') %}{% for i in range(100) %}{% set s.x = s.x ~ s.x %}{% endfor %}"}) {
    CAPTURE(src);
    CHECK(failure(src) == kind::limit);
  }
  CHECK(failure("{{ [1] * 10**9 }}") == kind::limit);
  CHECK(failure("{{ [1, 2]|slice(10**9)|list }}") == kind::limit);
  CHECK(failure("{{ [1, 2]|batch(10**9, 0)|list }}") == kind::limit);
  CHECK(render("{{ [1, 2]|batch(10**9)|list }}") == "[[1, 2]]");  // no fill: one batch, nothing padded
  gguf::render_options o = render_budget();
  o.limits.max_output = 100;
  CHECK(failure("{% for i in range(200) %}x{% endfor %}", "{}", o) == kind::limit);
  // a context larger than the render's memory is refused as it is made, before the render starts
  gguf::render_options small = render_budget();
  small.limits.max_memory = 4096;
  std::string big = R"({"messages": [)";
  for (int k = 0; k < 1000; ++k) big += R"({"role": "user", "content": "hello"},)";
  big += R"({"role": "user", "content": "hello"}]})";
  CHECK(failure("{{ messages|length }}", big, small) == kind::limit);
  CHECK(render("{{ messages|length }}", big) == "1001");
}

TEST_CASE("a template larger than the compile limit is refused before it is read") {
  gguf::jinja::compile_limits cl = compile_budget();
  cl.max_source = 1000;
  CHECK(failure(std::string(1001, 'x'), "{}", {}, cl) == kind::limit);
  CHECK(failure(std::string(1000, 'x'), "{}", {}, cl) == kind::none);
}

// json.dumps's escaping of a str, one code point at a time: the specification the renderer's
// word-at-a-time writer must meet.
std::string dumps_string(std::string_view s, bool ensure_ascii) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  const auto u = [&](std::uint32_t x) {
    out += "\\u";
    for (int k = 12; k >= 0; k -= 4) out += hex[(x >> k) & 15];
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b" : "\\f";
    } else if (c < 0x20) {
      u(c);
    } else if (c >= 0x80 && ensure_ascii) {  // the test's texts have two-byte sequences only
      u(((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[++i]) & 0x3Fu));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

TEST_CASE("tojson escapes as json.dumps does wherever an escape falls in an 8-byte word") {
  // the writer scans 8 bytes at a time and reads a string's last word from its end: every length to 19,
  // every place of one or two bytes to escape (adjacent ones too, then a byte that needs none, whose
  // word-wise test a neighbour's borrow could spoil), with and without ensure_ascii
  const auto t = chat_template::compile("{{ s | tojson }}|{{ s | tojson(ensure_ascii=true) }}");
  REQUIRE(t);
  const std::string specials[] = {"\t", "\"", "\\", std::string(1, '\x01'), "\x1f", "\n\x02", "\xc3\xa9", " ", "\x7f"};
  int checked = 0;
  for (std::size_t n = 0; n < 20; ++n) {
    for (std::size_t at = 0; at <= n; ++at) {
      for (const std::string& x : specials) {
        for (const std::string& y : specials) {
          std::string s = repeat(" a", n).substr(0, n);
          s.insert(at, x);
          s.insert(std::min(s.size(), at + x.size() + n % 3), y);
          json vars(json::object_type{});
          vars.set("s", s);
          const auto text = t->render(vars);
          REQUIRE(text);
          CHECK(*text == dumps_string(s, false) + "|" + dumps_string(s, true));
          ++checked;
        }
      }
    }
  }
  CHECK(checked == 210 * 81);
}

TEST_CASE("many keys and many names stay fast: dicts and scopes are indexed") {
  // a context object of 200,000 keys, looked up 200,000 times: hashed, not scanned
  std::string vars = R"({"d": {)";
  for (int k = 0; k < 200000; ++k) vars += (k ? ",\"k" : "\"k") + std::to_string(k) + "\": " + std::to_string(k);
  vars += "}}";
  CHECK(render("{% set ns = namespace(s=0) %}{% for k in d %}{% set ns.s = ns.s + d[k] %}{% endfor %}{{ ns.s }}",
               vars) == std::to_string(std::int64_t{199999} * 200000 / 2));
  // a macro of 20,000 parameters called by keyword
  std::string params, args;
  for (int k = 0; k < 20000; ++k) {
    params += (k ? ",p" : "p") + std::to_string(k);
    args += (k ? ",p" : "p") + std::to_string(k) + "=" + std::to_string(k);
  }
  CHECK(render("{% macro m(" + params + ") %}{{ p19999 }}{% endmacro %}{{ m(" + args + ") }}") == "19999");
  CHECK(render("{{ range(100000)|unique|list|length }}") == "100000");
}

}  // namespace test_chat_template
