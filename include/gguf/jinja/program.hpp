#ifndef GGUF_JINJA_PROGRAM_HPP
#define GGUF_JINJA_PROGRAM_HPP

/**
 * @file
 * A compiled template: its nodes, names and strings, checked as Jinja2's compiler checks them (an unknown
 * filter or test outside an `if` is an error before any render), plus what the renderer wants to know
 * in advance: which macros take `varargs`, `kwargs` or `caller`, which loops define macros.
 */

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/jinja/ast.hpp"
#include "gguf/jinja/options.hpp"
#include "gguf/jinja/lexer.hpp"
#include "gguf/jinja/parser.hpp"
#include "gguf/jinja/stack.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

/// The global functions of transformers' environment, by number.
enum class global_fn : std::uint8_t {
  none,
  range,
  dict,
  namespace_,
  cycler,
  joiner,
  lipsum,
  raise_exception,
  strftime_now
};

/// Jinja2 3.1's filters (and transformers' tojson), as the compiler checks names against them.
inline constexpr std::string_view filter_names[] = {
    "abs",       "attr",       "batch",       "capitalize", "center",  "count",
    "d",         "default",    "dictsort",    "e",          "escape",  "filesizeformat",
    "first",     "float",      "forceescape", "format",     "groupby", "indent",
    "int",       "join",       "last",        "length",     "list",    "lower",
    "items",     "map",        "min",         "max",        "pprint",  "random",
    "reject",    "rejectattr", "replace",     "reverse",    "round",   "safe",
    "select",    "selectattr", "slice",       "sort",       "string",  "striptags",
    "sum",       "title",      "trim",        "truncate",   "unique",  "upper",
    "urlencode", "urlize",     "wordcount",   "wordwrap",   "xmlattr", "tojson"};

/// Whether `n` is one of `filter_names`.
inline bool is_filter_name(std::string_view n) noexcept {
  return std::ranges::find(filter_names, n) != std::end(filter_names);
}

/// Jinja2 3.1's tests.
inline constexpr std::string_view test_names[] = {
    "odd",     "even",   "divisibleby", "defined",  "undefined", "filter", "test",    "none",
    "boolean", "false",  "true",        "integer",  "float",     "lower",  "upper",   "string",
    "mapping", "number", "sequence",    "iterable", "callable",  "sameas", "escaped", "in",
    "==",      "eq",     "equalto",     "!=",       "ne",        ">",      "gt",      "greaterthan",
    ">=",      "ge",     "<",           "lt",       "lessthan",  "<=",     "le"};

/// Whether `n` is one of `test_names`.
inline bool is_test_name(std::string_view n) noexcept {
  return std::ranges::find(test_names, n) != std::end(test_names);
}

/// A compiled template, immutable once built (renders share it).
struct program {
  lexer lex;                        ///< the normalized source and the strings of literals
  std::deque<node> pool;            ///< every node
  std::deque<std::string> strings;  ///< the strings the parser made
  std::vector<const node*> body;    ///< the top-level statements
  symbol_table symbols;             ///< every name
  std::vector<global_fn> globals;   ///< per symbol: the global function of that name, if any
  std::uint32_t sym_loop = 0;       ///< the symbol of `loop`
  std::uint32_t sym_caller = 0;     ///< of `caller`
  std::uint32_t sym_varargs = 0;    ///< of `varargs`
  std::uint32_t sym_kwargs = 0;     ///< of `kwargs`
};

namespace detail {

// The compiler's checks and facts: unknown filters and tests (an error unless directly in an if or a
// conditional expression, where Jinja2 defers them), and which names macro and loop bodies use.
class analyzer {
 public:
  analyzer(program& p, std::size_t max_stack) noexcept : p_(p), stack_(max_stack) {}

  bool run(error_info& err) {
    err_ = &err;
    // what the renderer wants to know of loops and macros, node by node
    for (node& n : p_.pool) {
      if (n.kind == nk::for_loop) n.extra = defines_macro(n.body) ? 8 : 0;
      if (n.kind == nk::macro || n.kind == nk::call_block) n.extra = uses(n.body);
    }
    if (!deep_ && stmts(p_.body, false, {}) && !deep_) return true;
    if (deep_) {
      err.type = error_info::kind::limit;
      err.message = "the template nests too deeply (beyond the compiler's stack limit)";
      err.line = 0;
    }
    return false;
  }

 private:
  program& p_;
  error_info* err_ = nullptr;
  stack_budget stack_;
  bool deep_ = false;  // a pass went beyond the stack budget (left-deep chains like 1 + 1 + ... are deep trees)

  bool too_deep() {
    if (!deep_ && stack_.exceeded()) deep_ = true;
    return deep_;
  }

  // Where a statement's body lands in the Python Jinja2 compiles a template to, whose compiler refuses a
  // body indented beyond 100 levels (IndentationError) and more than 20 `for` statements nested in
  // one function (SyntaxError): an if, a for, a macro's or a call block's body are one level deeper
  // (a recursive loop, a function of its own, two), an elif, with, filter or set block none.
  struct python_block {
    std::uint32_t indent = 0;  // levels beyond the render function's body
    std::uint32_t fors = 0;    // for statements around, within the function
  };
  static constexpr std::uint32_t max_indent = 98, max_fors = 20;

  bool python_limits(const node* n, const python_block& inner) {
    if (inner.indent > max_indent) {
      err_->type = error_info::kind::syntax;
      err_->message = "too many levels of indentation (in the Python Jinja2 compiles the template to)";
      err_->line = n->line;
      return false;
    }
    if (inner.fors > max_fors) {
      err_->type = error_info::kind::syntax;
      err_->message = "too many statically nested blocks (more than 20 for loops in the Python Jinja2 compiles to)";
      err_->line = n->line;
      return false;
    }
    return true;
  }

  bool fail(std::string msg, std::uint32_t line) {
    err_->type = error_info::kind::assertion;
    err_->message = std::move(msg);
    err_->line = line;
    return false;
  }

  bool stmts(const std::vector<const node*>& body, bool soft, python_block at) {
    return std::ranges::all_of(body, [&](const node* n) { return stmt(n, soft, at); });
  }

  bool exprs(const std::vector<const node*>& v, bool soft) {
    return std::ranges::all_of(v, [&](const node* n) { return expr(n, soft); });
  }

  bool stmt(const node* n, bool soft, python_block at) {
    if (too_deep()) return false;
    switch (n->kind) {
      case nk::output: return exprs(n->items, soft);
      case nk::for_loop: {
        const python_block inner = n->flag ? python_block{at.indent + 2, 1} : python_block{at.indent + 1, at.fors + 1};
        const python_block orelse{inner.indent, n->flag ? 0 : at.fors};  // after the Python for, not in it
        return python_limits(n, inner) && expr(n->a, soft) && expr(n->b, soft) && (!n->c || expr(n->c, false)) &&
               stmts(n->body, false, inner) && stmts(n->orelse, false, orelse);
      }
      case nk::if_stmt: {
        const python_block inner{at.indent + 1, at.fors};
        if (!python_limits(n, inner) || !expr(n->a, true) || !stmts(n->body, true, inner)) return false;
        // an elif's if stands where its if does
        const bool elif = n->orelse.size() == 1 && n->orelse[0]->kind == nk::if_stmt && n->orelse[0]->flag;
        return stmts(n->orelse, true, elif ? at : inner);
      }
      case nk::assign: return expr(n->a, soft) && expr(n->b, soft);
      case nk::assign_block: return (!n->c || expr(n->c, false)) && stmts(n->body, false, at);
      case nk::macro:
      case nk::call_block: {
        const python_block inner{at.indent + 1, 0};
        return python_limits(n, inner) && exprs(n->items, false) && (!n->a || expr(n->a, soft)) &&
               stmts(n->body, false, inner);
      }
      case nk::filter_block: return expr(n->a, false) && stmts(n->body, false, at);
      case nk::with_stmt: return exprs(n->items, false) && exprs(n->values, soft) && stmts(n->body, false, at);
      case nk::scope:
      case nk::autoescape: return (!n->a || expr(n->a, soft)) && stmts(n->body, false, at);
      default: return true;
    }
  }

  bool expr(const node* n, bool soft) {
    if (!n) return true;
    if (too_deep()) return false;
    switch (n->kind) {
      case nk::filter:
        if (!is_filter_name(n->text) && !soft) return fail("No filter named '" + std::string(n->text) + "'.", n->line);
        break;
      case nk::test:
        if (!is_test_name(n->text) && !soft) return fail("No test named '" + std::string(n->text) + "'.", n->line);
        break;
      case nk::condexpr: return expr(n->a, true) && expr(n->b, true) && expr(n->c, true);
      default: break;
    }
    return expr(n->a, soft) && expr(n->b, soft) && expr(n->c, soft) && exprs(n->items, soft) && exprs(n->values, soft);
  }

  // 1 varargs, 2 kwargs, 4 caller: named in a body (Jinja2's find_undeclared: nested macros count)
  std::uint8_t uses(const std::vector<const node*>& body) {
    std::uint8_t bits = 0;
    for (const node* n : body) bits |= uses_node(n);
    return bits;
  }
  std::uint8_t uses_node(const node* n) {
    if (!n || too_deep()) return 0;
    std::uint8_t bits = 0;
    if (n->kind == nk::name) {
      if (n->sym == p_.sym_varargs) bits |= 1;
      if (n->sym == p_.sym_kwargs) bits |= 2;
      if (n->sym == p_.sym_caller) bits |= 4;
    }
    bits = static_cast<std::uint8_t>(bits | uses_node(n->a) | uses_node(n->b) | uses_node(n->c));
    for (const node* x : n->items) bits |= uses_node(x);
    for (const node* x : n->values) bits |= uses_node(x);
    for (const node* x : n->body) bits |= uses_node(x);
    for (const node* x : n->orelse) bits |= uses_node(x);
    return bits;
  }

  bool defines_macro(const std::vector<const node*>& body) {
    if (too_deep()) return false;
    return std::ranges::any_of(body, [&](const node* n) {
      return n->kind == nk::macro || n->kind == nk::call_block || defines_macro(n->body) || defines_macro(n->orelse);
    });
  }
};

}  // namespace detail

/**
 * Compiles `source` into `p` (a fresh program): lexes, parses and checks it as Jinja2 does.
 * @return true, or false with `err` set (TemplateSyntaxError, TemplateAssertionError, or a limit)
 */
inline bool compile(std::string_view source, program& p, error_info& err, const compile_limits& limits = {}) {
  if (source.size() > limits.max_source) {
    err.type = error_info::kind::limit;
    err.message = "the template is larger than the compile limit (" + std::to_string(limits.max_source) + " bytes)";
    return false;
  }
  if (!py::is_utf8(source)) {  // what Python's str cannot hold, Jinja2 never sees
    err.type = error_info::kind::syntax;
    err.message = "the template is not valid UTF-8";
    return false;
  }
  std::vector<token> tokens;
  syntax_error se;
  const auto syntax = [&]() {
    err.type = se.limit ? error_info::kind::limit : error_info::kind::syntax;
    err.message = se.message;
    err.line = se.line;
    return false;
  };
  if (!p.lex.run(source, tokens, se)) return syntax();
  // the names the renderer knows of, numbered first
  p.sym_loop = p.symbols.intern("loop");
  p.sym_caller = p.symbols.intern("caller");
  p.sym_varargs = p.symbols.intern("varargs");
  p.sym_kwargs = p.symbols.intern("kwargs");
  parser ps(tokens, p.pool, p.symbols, limits.max_stack);
  if (!ps.parse(p.body, se)) return syntax();
  p.strings = std::move(ps.strings());
  p.globals.assign(p.symbols.size(), global_fn::none);
  static constexpr std::pair<std::string_view, global_fn> globals[] = {{"range", global_fn::range},
                                                                       {"dict", global_fn::dict},
                                                                       {"namespace", global_fn::namespace_},
                                                                       {"cycler", global_fn::cycler},
                                                                       {"joiner", global_fn::joiner},
                                                                       {"lipsum", global_fn::lipsum},
                                                                       {"raise_exception", global_fn::raise_exception},
                                                                       {"strftime_now", global_fn::strftime_now}};
  for (const auto& [name, fn] : globals) {
    const std::int64_t s = p.symbols.find(name);
    if (s >= 0) p.globals[static_cast<std::size_t>(s)] = fn;
  }
  return detail::analyzer(p, limits.max_stack).run(err);
}

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_PROGRAM_HPP
