#ifndef GGUF_JINJA_PARSER_HPP
#define GGUF_JINJA_PARSER_HPP

/**
 * @file
 * Jinja2's parser, method for method (jinja2/parser.py of Jinja2 3.1): the same precedence (`~` below
 * `*` and above `+`; `**` left-associative; a filter binds to the unary expression before it), the same
 * statements, and the tags transformers adds: `{% generation %}` and the loop controls `break` and
 * `continue`. Names become symbol numbers of the template's table.
 */

#include <algorithm>
#include <iterator>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gguf/jinja/ast.hpp"
#include "gguf/jinja/lexer.hpp"
#include "gguf/jinja/stack.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

/// A template's names, numbered: variables, parameters, attributes a namespace is assigned.
class symbol_table {
 public:
  /// The number of `name` (a new one the first time).
  std::uint32_t intern(std::string_view name) {
    const auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    names_.emplace_back(name);
    const auto id = static_cast<std::uint32_t>(names_.size() - 1);
    index_.emplace(names_.back(), id);
    return id;
  }
  /// The number of `name`, or -1 when the template never names it.
  std::int64_t find(std::string_view name) const noexcept {
    const auto it = index_.find(name);
    return it == index_.end() ? -1 : static_cast<std::int64_t>(it->second);
  }
  /// The name of symbol `id`.
  std::string_view name(std::uint32_t id) const noexcept { return names_[id]; }
  /// How many there are.
  std::size_t size() const noexcept { return names_.size(); }

 private:
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

/// The parser: the nodes of a token list, into a pool the template keeps.
class parser {
 public:
  /// A parser over `tokens`, its nodes into `pool`, its names into `symbols`, its recursion within
  /// `max_stack` bytes of stack.
  parser(const std::vector<token>& tokens, std::deque<node>& pool, symbol_table& symbols,
         std::size_t max_stack) noexcept
      : t_(tokens), pool_(pool), symbols_(symbols), stack_(max_stack) {}

  /// The template's statements, or false with `err` set.
  bool parse(std::vector<const node*>& body, syntax_error& err) {
    err_ = &err;
    return subparse(nullptr, body) && (cur().type == tok::eof || fail_here("unexpected token"));
  }

 private:
  const std::vector<token>& t_;
  std::deque<node>& pool_;
  symbol_table& symbols_;
  syntax_error* err_ = nullptr;
  stack_budget stack_;
  std::size_t i_ = 0;
  std::vector<std::vector<std::string_view>> end_stack_;
  std::vector<std::string_view> tag_stack_;
  int loop_depth_ = 0;
  std::unordered_set<std::uint32_t> seen_;  // a signature's parameters so far

  const token& cur() const noexcept {
    static const token eof{};
    return i_ < t_.size() ? t_[i_] : eof;
  }
  const token& look() const noexcept {
    static const token eof{};
    return i_ + 1 < t_.size() ? t_[i_ + 1] : eof;
  }
  const token& next() noexcept {
    const token& t = cur();
    if (i_ < t_.size()) ++i_;
    return t;
  }
  bool is_name(std::string_view v) const noexcept { return cur().type == tok::name && cur().text == v; }
  bool skip_name(std::string_view v) noexcept {
    if (!is_name(v)) return false;
    ++i_;
    return true;
  }
  bool skip(tok type) noexcept {
    if (cur().type != type) return false;
    ++i_;
    return true;
  }

  node* make(nk kind, std::uint32_t line) {
    pool_.emplace_back();
    node* n = &pool_.back();
    n->kind = kind;
    n->line = line;
    return n;
  }

  bool fail(std::string msg, std::uint32_t line) {
    if (err_->message.empty()) {
      err_->message = std::move(msg);
      err_->line = line;
    }
    return false;
  }
  bool fail_here(std::string msg) { return fail(std::move(msg), cur().line); }
  // every recursion of the parser passes here: parentheses, brackets, unary operators, blocks
  bool too_deep() {
    if (!stack_.exceeded()) return false;
    fail_here("the template nests too deeply (beyond the parser's stack limit)");
    err_->limit = true;
    return true;
  }

  static std::string describe(const token& t) {
    switch (t.type) {
      case tok::eof: return "end of template";
      case tok::data: return "template data / text";
      case tok::variable_begin: return "begin of print statement";
      case tok::variable_end: return "end of print statement";
      case tok::block_begin: return "begin of statement block";
      case tok::block_end: return "end of statement block";
      case tok::name:
      case tok::integer:
      case tok::floating: return std::string(t.text);
      case tok::string: return "string";
      default: return std::string(t.text);
    }
  }

  bool expect(tok type, const char* what) {
    if (cur().type == type) {
      ++i_;
      return true;
    }
    if (cur().type == tok::eof) return fail_here(std::string("unexpected end of template, expected '") + what + "'.");
    return fail_here(std::string("expected token '") + what + "', got '" + describe(cur()) + "'");
  }
  bool expect_name(std::string_view v) {
    if (skip_name(v)) return true;
    if (cur().type == tok::eof) return fail_here("unexpected end of template, expected '" + std::string(v) + "'.");
    return fail_here("expected token '" + std::string(v) + "', got '" + describe(cur()) + "'");
  }
  bool expect_identifier(std::string_view& out) {
    if (cur().type == tok::name) {
      out = next().text;
      return true;
    }
    return fail_here("expected token 'name', got '" + describe(cur()) + "'");
  }

  // Jinja2's message for a tag it did not expect, or the end of the template
  bool fail_unknown(const std::string* name, std::uint32_t line) {
    std::string msg = name ? "Encountered unknown tag '" + *name + "'." : "Unexpected end of template.";
    if (!end_stack_.empty()) {
      bool expected = false;
      for (const auto& ends : end_stack_)
        for (std::string_view e : ends)
          if (name && e == *name) expected = true;
      std::string looking;
      for (std::string_view e : end_stack_.back()) {
        if (!looking.empty()) looking += " or ";
        looking += "'" + std::string(e) + "'";
      }
      if (name && expected) {
        msg += " You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for " +
               looking + ".";
      } else {
        msg += " Jinja was looking for the following tags: " + looking + ".";
      }
    }
    if (!tag_stack_.empty())
      msg += " The innermost block that needs to be closed is '" + std::string(tag_stack_.back()) + "'.";
    return fail(std::move(msg), line);
  }

  // ---- statements -------------------------------------------------------------------------------

  bool subparse(const std::vector<std::string_view>* end_tokens, std::vector<const node*>& body) {
    if (too_deep()) return false;
    if (end_tokens) end_stack_.push_back(*end_tokens);
    node* out = nullptr;  // the output node data and expressions collect in
    const auto flush = [&] { out = nullptr; };
    while (cur().type != tok::eof) {
      const token& t = cur();
      if (t.type == tok::data) {
        if (!out) {
          out = make(nk::output, t.line);
          body.push_back(out);
        }
        node* d = make(nk::data, t.line);
        d->text = t.text;
        out->items.push_back(d);
        ++i_;
      } else if (t.type == tok::variable_begin) {
        ++i_;
        if (!out) {
          out = make(nk::output, t.line);
          body.push_back(out);
        }
        const node* e = nullptr;
        if (!parse_tuple(e, false, true, nullptr, false)) return false;
        out->items.push_back(e);
        if (!expect(tok::variable_end, "end of print statement")) return false;
      } else if (t.type == tok::block_begin) {
        flush();
        ++i_;
        if (end_tokens && cur().type == tok::name) {
          for (std::string_view e : *end_tokens) {
            if (cur().text == e) {
              end_stack_.pop_back();
              return true;
            }
          }
        }
        if (!statement(body)) return false;
        if (!expect(tok::block_end, "end of statement block")) return false;
      } else {
        return fail_here("unexpected '" + describe(t) + "'");
      }
    }
    if (end_tokens) {
      // the end of the template before an end tag
      const std::uint32_t line = cur().line;
      fail_unknown(nullptr, line);
      end_stack_.pop_back();
      return false;
    }
    return true;
  }

  // the body of a statement up to one of `ends`; the end tag's name stays current (or is dropped)
  bool statements(const std::vector<std::string_view>& ends, std::vector<const node*>& body, bool drop_needle) {
    skip(tok::colon);
    if (!expect(tok::block_end, "end of statement block")) return false;
    if (!subparse(&ends, body)) return false;
    if (drop_needle) ++i_;
    return true;
  }

  bool statement(std::vector<const node*>& body) {
    const token& t = cur();
    if (t.type != tok::name) return fail_here("tag name expected");
    const std::string_view kw = t.text;
    tag_stack_.push_back(kw);
    bool ok;
    if (kw == "for") {
      ok = parse_for(body);
    } else if (kw == "if") {
      ok = parse_if(body);
    } else if (kw == "set") {
      ok = parse_set(body);
    } else if (kw == "macro") {
      ok = parse_macro(body);
    } else if (kw == "call") {
      ok = parse_call_block(body);
    } else if (kw == "filter") {
      ok = parse_filter_block(body);
    } else if (kw == "with") {
      ok = parse_with(body);
    } else if (kw == "block") {
      ok = parse_block(body);
    } else if (kw == "print") {
      ok = parse_print(body);
    } else if (kw == "autoescape") {
      ok = parse_autoescape(body);
    } else if (kw == "generation") {  // transformers' AssistantTracker: the body as it is
      const std::uint32_t line = next().line;
      node* n = make(nk::scope, line);
      ok = statements({"endgeneration"}, n->body, true);
      body.push_back(n);
    } else if (kw == "break" || kw == "continue") {  // jinja2.ext.loopcontrols
      const token& k = next();
      if (loop_depth_ == 0) {
        ok = fail("'" + std::string(kw) + "' outside of a loop", k.line);  // Jinja2's compiler refuses it too
      } else {
        body.push_back(make(kw == "break" ? nk::brk : nk::cont, k.line));
        ok = true;
      }
    } else if (kw == "include" || kw == "import" || kw == "from" || kw == "extends") {
      ok = parse_unsupported(body);
    } else {
      tag_stack_.pop_back();
      const std::string name(kw);
      return fail_unknown(&name, t.line);
    }
    tag_stack_.pop_back();
    return ok;
  }

  bool parse_unsupported(std::vector<const node*>& body) {
    const token& k = next();
    node* n = make(nk::unsupported, k.line);
    n->text = k.text;
    // the rest of the tag as Jinja2 would parse it: an expression and what follows
    const node* e = nullptr;
    if (!parse_expression(e, true)) return false;
    while (cur().type != tok::block_end && cur().type != tok::eof) ++i_;
    body.push_back(n);
    return true;
  }

  bool parse_for(std::vector<const node*>& body) {
    node* n = make(nk::for_loop, next().line);
    const std::vector<std::string_view> in_end{"in"};
    const node* target = nullptr;
    if (!parse_assign_target(target, true, false, &in_end, false)) return false;
    n->a = target;
    if (!expect_name("in")) return false;
    const std::vector<std::string_view> rec_end{"recursive"};
    const node* iter = nullptr;
    if (!parse_tuple(iter, false, false, &rec_end, false)) return false;
    n->b = iter;
    if (skip_name("if")) {
      const node* test = nullptr;
      if (!parse_expression(test, true)) return false;
      n->c = test;
    }
    n->flag = skip_name("recursive");
    ++loop_depth_;
    const bool ok = statements({"endfor", "else"}, n->body, false);
    --loop_depth_;
    if (!ok) return false;
    if (next().text == "else") {
      if (!statements({"endfor"}, n->orelse, true)) return false;
    }
    body.push_back(n);
    return true;
  }

  bool parse_if(std::vector<const node*>& body) {
    node* n = make(nk::if_stmt, next().line);
    body.push_back(n);
    node* current = n;
    while (true) {
      const node* test = nullptr;
      if (!parse_tuple(test, false, false, nullptr, false)) return false;
      current->a = test;
      if (!statements({"elif", "else", "endif"}, current->body, false)) return false;
      const token& t = next();
      if (t.text == "elif") {
        node* e = make(nk::if_stmt, cur().line);
        e->flag = true;  // an elif: no deeper in Jinja2's Python than its if
        current->orelse.push_back(e);
        current = e;
        continue;
      }
      if (t.text == "else") {
        if (!statements({"endif"}, current->orelse, true)) return false;
      }
      return true;
    }
  }

  bool parse_set(std::vector<const node*>& body) {
    const std::uint32_t line = next().line;
    const node* target = nullptr;
    if (!parse_assign_target(target, true, false, nullptr, true)) return false;
    if (skip(tok::assign)) {
      node* n = make(nk::assign, line);
      n->a = target;
      const node* e = nullptr;
      if (!parse_tuple(e, false, true, nullptr, false)) return false;
      n->b = e;
      body.push_back(n);
      return true;
    }
    node* n = make(nk::assign_block, line);
    n->a = target;
    const node* f = nullptr;
    if (!parse_filter(nullptr, f, false)) return false;
    n->c = f;
    if (!statements({"endset"}, n->body, true)) return false;
    body.push_back(n);
    return true;
  }

  bool parse_signature(node* n) {
    if (!expect(tok::lparen, "(")) return false;
    while (cur().type != tok::rparen) {
      if (!n->names.empty() && !expect(tok::comma, ",")) return false;
      std::string_view name;
      if (!expect_identifier(name)) return false;
      if (skip(tok::assign)) {
        const node* d = nullptr;
        if (!parse_expression(d, true)) return false;
        n->items.push_back(d);
      } else if (!n->items.empty()) {
        return fail_here("non-default argument follows default argument");
      }
      const std::uint32_t sym = symbols_.intern(name);
      if (!seen_.insert(sym).second)
        return fail_here("duplicate argument '" + std::string(name) + "' in macro definition");
      n->names.push_back(name);
      n->name_syms.push_back(sym);
    }
    seen_.clear();
    return expect(tok::rparen, ")");
  }

  bool parse_macro(std::vector<const node*>& body) {
    node* n = make(nk::macro, next().line);
    std::string_view name;
    if (!expect_identifier(name)) return false;
    n->text = name;
    n->sym = symbols_.intern(name);
    if (!parse_signature(n)) return false;
    const int saved = loop_depth_;
    loop_depth_ = 0;
    const bool ok = statements({"endmacro"}, n->body, true);
    loop_depth_ = saved;
    if (!ok) return false;
    body.push_back(n);
    return true;
  }

  bool parse_call_block(std::vector<const node*>& body) {
    node* n = make(nk::call_block, next().line);
    if (cur().type == tok::lparen && !parse_signature(n)) return false;
    const node* call = nullptr;
    if (!parse_expression(call, true)) return false;
    if (call->kind != nk::call) return fail("expected call", n->line);
    n->a = call;
    const int saved = loop_depth_;
    loop_depth_ = 0;
    const bool ok = statements({"endcall"}, n->body, true);
    loop_depth_ = saved;
    if (!ok) return false;
    body.push_back(n);
    return true;
  }

  bool parse_filter_block(std::vector<const node*>& body) {
    node* n = make(nk::filter_block, next().line);
    const node* f = nullptr;
    if (!parse_filter(nullptr, f, true)) return false;
    n->a = f;
    if (!statements({"endfilter"}, n->body, true)) return false;
    body.push_back(n);
    return true;
  }

  bool parse_with(std::vector<const node*>& body) {
    node* n = make(nk::with_stmt, next().line);
    while (cur().type != tok::block_end) {
      if (!n->items.empty() && !expect(tok::comma, ",")) return false;
      const node* target = nullptr;
      if (!parse_assign_target(target, true, false, nullptr, false)) return false;
      if (!expect(tok::assign, "=")) return false;
      const node* v = nullptr;
      if (!parse_expression(v, true)) return false;
      n->items.push_back(target);
      n->values.push_back(v);
    }
    if (!statements({"endwith"}, n->body, true)) return false;
    body.push_back(n);
    return true;
  }

  bool parse_block(std::vector<const node*>& body) {
    node* n = make(nk::scope, next().line);
    std::string_view name;
    if (!expect_identifier(name)) return false;
    skip_name("scoped");
    skip_name("required");
    if (cur().type == tok::sub) {
      return fail_here(
          "Block names in Jinja have to be valid Python identifiers and may not contain hyphens, use an underscore "
          "instead.");
    }
    if (!statements({"endblock"}, n->body, true)) return false;
    skip_name(name);
    body.push_back(n);
    return true;
  }

  bool parse_print(std::vector<const node*>& body) {
    node* n = make(nk::output, next().line);
    while (cur().type != tok::block_end) {
      if (!n->items.empty() && !expect(tok::comma, ",")) return false;
      const node* e = nullptr;
      if (!parse_expression(e, true)) return false;
      n->items.push_back(e);
    }
    body.push_back(n);
    return true;
  }

  bool parse_autoescape(std::vector<const node*>& body) {
    node* n = make(nk::autoescape, next().line);
    const node* e = nullptr;
    if (!parse_expression(e, true)) return false;
    n->a = e;
    if (!statements({"endautoescape"}, n->body, true)) return false;
    body.push_back(n);
    return true;
  }

  // ---- assignment targets -----------------------------------------------------------------------

  bool parse_assign_target(const node*& out, bool with_tuple, bool name_only,
                           const std::vector<std::string_view>* extra_end, bool with_namespace) {
    if (with_namespace && look().type == tok::dot && cur().type == tok::name) {
      node* n = make(nk::nsref, cur().line);
      n->text = next().text;
      n->sym = symbols_.intern(n->text);
      ++i_;  // the dot
      std::string_view attr;
      if (!expect_identifier(attr)) return false;
      n->attr = attr;
      out = n;
      return true;
    }
    if (name_only) {
      std::string_view name;
      const std::uint32_t line = cur().line;
      if (!expect_identifier(name)) return false;
      node* n = make(nk::name, line);
      n->text = name;
      n->sym = symbols_.intern(name);
      out = n;
      return true;
    }
    const node* target = nullptr;
    if (with_tuple) {
      if (!parse_tuple(target, true, true, extra_end, false)) return false;
    } else if (!parse_primary(target)) {
      return false;
    }
    const auto assignable = [&](const node* n) {
      if (n->kind == nk::name)
        return n->text != "true" && n->text != "false" && n->text != "none" && n->text != "True" &&
               n->text != "False" && n->text != "None";
      return false;
    };
    bool ok = assignable(target) || target->kind == nk::nsref;
    if (target->kind == nk::tuple) {
      ok = true;
      for (const node* x : target->items) ok = ok && assignable(x);
    }
    if (!ok) {
      const char* what = target->kind == nk::constant ? "const"
                         : target->kind == nk::tuple  ? "tuple"
                         : target->kind == nk::list   ? "list"
                         : target->kind == nk::call   ? "call"
                                                      : "expression";
      return fail(std::string("can't assign to '") + what + "'", target->line);
    }
    out = target;
    return true;
  }

  // ---- expressions ------------------------------------------------------------------------------

  bool parse_expression(const node*& out, bool with_condexpr) {
    if (too_deep()) return false;
    return with_condexpr ? parse_condexpr(out) : parse_or(out);
  }

  bool parse_condexpr(const node*& out) {
    std::uint32_t line = cur().line;
    const node* expr1 = nullptr;
    if (!parse_or(expr1)) return false;
    while (skip_name("if")) {
      const node* expr2 = nullptr;
      if (!parse_or(expr2)) return false;
      const node* expr3 = nullptr;
      if (skip_name("else") && !parse_condexpr(expr3)) return false;
      node* n = make(nk::condexpr, line);
      n->a = expr2;
      n->b = expr1;
      n->c = expr3;
      expr1 = n;
      line = cur().line;
    }
    out = expr1;
    return true;
  }

  bool parse_or(const node*& out) {
    std::uint32_t line = cur().line;
    const node* left = nullptr;
    if (!parse_and(left)) return false;
    while (skip_name("or")) {
      const node* right = nullptr;
      if (!parse_and(right)) return false;
      node* n = make(nk::logical, line);
      n->oper = op::or_;
      n->a = left;
      n->b = right;
      left = n;
      line = cur().line;
    }
    out = left;
    return true;
  }

  bool parse_and(const node*& out) {
    std::uint32_t line = cur().line;
    const node* left = nullptr;
    if (!parse_not(left)) return false;
    while (skip_name("and")) {
      const node* right = nullptr;
      if (!parse_not(right)) return false;
      node* n = make(nk::logical, line);
      n->oper = op::and_;
      n->a = left;
      n->b = right;
      left = n;
      line = cur().line;
    }
    out = left;
    return true;
  }

  bool parse_not(const node*& out) {
    if (too_deep()) return false;
    if (is_name("not")) {
      const std::uint32_t line = next().line;
      const node* e = nullptr;
      if (!parse_not(e)) return false;
      node* n = make(nk::unary, line);
      n->oper = op::not_;
      n->a = e;
      out = n;
      return true;
    }
    return parse_compare(out);
  }

  bool parse_compare(const node*& out) {
    const std::uint32_t line = cur().line;
    const node* expr = nullptr;
    if (!parse_math1(expr)) return false;
    node* cmp = nullptr;
    while (true) {
      op o;
      const tok ty = cur().type;
      if (ty == tok::eq) {
        o = op::eq;
      } else if (ty == tok::ne) {
        o = op::ne;
      } else if (ty == tok::lt) {
        o = op::lt;
      } else if (ty == tok::lteq) {
        o = op::le;
      } else if (ty == tok::gt) {
        o = op::gt;
      } else if (ty == tok::gteq) {
        o = op::ge;
      } else if (is_name("in")) {
        o = op::in;
      } else if (is_name("not") && look().type == tok::name && look().text == "in") {
        o = op::notin;
        ++i_;
      } else {
        break;
      }
      ++i_;
      const node* right = nullptr;
      if (!parse_math1(right)) return false;
      if (!cmp) {
        cmp = make(nk::compare, line);
        cmp->a = expr;
      }
      cmp->ops.push_back(o);
      cmp->items.push_back(right);
    }
    out = cmp ? cmp : expr;
    return true;
  }

  bool binary_loop(const node*& out, bool (parser::*operand)(const node*&),
                   std::initializer_list<std::pair<tok, op>> ops) {
    std::uint32_t line = cur().line;
    const node* left = nullptr;
    if (!(this->*operand)(left)) return false;
    while (true) {
      const op* found = nullptr;
      for (const auto& p : ops)
        if (cur().type == p.first) found = &p.second;
      if (!found) break;
      const op o = *found;
      ++i_;
      const node* right = nullptr;
      if (!(this->*operand)(right)) return false;
      node* n = make(nk::binary, line);
      n->oper = o;
      n->a = left;
      n->b = right;
      left = n;
      line = cur().line;
    }
    out = left;
    return true;
  }

  bool parse_math1(const node*& out) {
    return binary_loop(out, &parser::parse_concat, {{tok::add, op::add}, {tok::sub, op::sub}});
  }

  bool parse_concat(const node*& out) {
    const std::uint32_t line = cur().line;
    const node* first = nullptr;
    if (!parse_math2(first)) return false;
    if (cur().type != tok::tilde) {
      out = first;
      return true;
    }
    node* n = make(nk::concat, line);
    n->items.push_back(first);
    while (skip(tok::tilde)) {
      const node* e = nullptr;
      if (!parse_math2(e)) return false;
      n->items.push_back(e);
    }
    out = n;
    return true;
  }

  bool parse_math2(const node*& out) {
    return binary_loop(out, &parser::parse_pow,
                       {{tok::mul, op::mul}, {tok::div, op::div}, {tok::floordiv, op::floordiv}, {tok::mod, op::mod}});
  }

  bool parse_pow(const node*& out) { return binary_loop(out, &parser::parse_unary_filtered, {{tok::pow, op::pow}}); }

  bool parse_unary_filtered(const node*& out) { return parse_unary(out, true); }

  bool parse_unary(const node*& out, bool with_filter) {
    if (too_deep()) return false;
    const tok ty = cur().type;
    const std::uint32_t line = cur().line;
    const node* n = nullptr;
    if (ty == tok::sub || ty == tok::add) {
      ++i_;
      const node* operand = nullptr;
      if (!parse_unary(operand, false)) return false;
      node* u = make(nk::unary, line);
      u->oper = ty == tok::sub ? op::neg : op::pos;
      u->a = operand;
      n = u;
    } else if (!parse_primary(n)) {
      return false;
    }
    if (!parse_postfix(n)) return false;
    if (with_filter && !parse_filter_expr(n)) return false;
    out = n;
    return true;
  }

  bool parse_primary(const node*& out) {
    const token& t = cur();
    if (t.type == tok::name) {
      node* n = nullptr;
      if (t.text == "true" || t.text == "false" || t.text == "True" || t.text == "False") {
        n = make(nk::constant, t.line);
        n->lit.type = literal::kind::boolean;
        n->lit.b = t.text == "true" || t.text == "True";
      } else if (t.text == "none" || t.text == "None") {
        n = make(nk::constant, t.line);
      } else {
        n = make(nk::name, t.line);
        n->text = t.text;
        n->sym = symbols_.intern(t.text);
      }
      ++i_;
      out = n;
      return true;
    }
    if (t.type == tok::string) {
      node* n = make(nk::constant, t.line);
      n->lit.type = literal::kind::string;
      ++i_;
      if (cur().type != tok::string) {
        n->text = t.text;
      } else {  // adjacent literals join
        std::string joined(t.text);
        while (cur().type == tok::string) joined += next().text;
        joined_.push_back(std::move(joined));
        n->text = joined_.back();
      }
      out = n;
      return true;
    }
    if (t.type == tok::integer || t.type == tok::floating) {
      node* n = make(nk::constant, t.line);
      if (t.type == tok::floating) {
        n->lit.type = literal::kind::floating;
        n->lit.f = t.floating;
      } else if (t.big) {
        n->lit.type = literal::kind::big_integer;
        n->text = t.text;
      } else {
        n->lit.type = literal::kind::integer;
        n->lit.i = t.integer;
      }
      ++i_;
      out = n;
      return true;
    }
    if (t.type == tok::lparen) {
      ++i_;
      if (!parse_tuple(out, false, true, nullptr, true)) return false;
      return expect(tok::rparen, ")");
    }
    if (t.type == tok::lbracket) return parse_list(out);
    if (t.type == tok::lbrace) return parse_dict(out);
    if (t.type == tok::eof) return fail_here("unexpected 'end of template'");
    return fail_here("unexpected '" + describe(t) + "'");
  }

  bool is_tuple_end(const std::vector<std::string_view>* extra) const noexcept {
    const tok ty = cur().type;
    if (ty == tok::variable_end || ty == tok::block_end || ty == tok::rparen) return true;
    if (extra && ty == tok::name) {
      for (std::string_view e : *extra)
        if (cur().text == e) return true;
    }
    return false;
  }

  bool parse_tuple(const node*& out, bool simplified, bool with_condexpr, const std::vector<std::string_view>* extra,
                   bool explicit_parentheses) {
    std::uint32_t line = cur().line;
    std::vector<const node*> args;
    bool is_tuple = false;
    while (true) {
      if (!args.empty() && !expect(tok::comma, ",")) return false;
      if (is_tuple_end(extra)) break;
      const node* e = nullptr;
      if (simplified) {
        if (!parse_primary(e)) return false;
      } else if (!parse_expression(e, with_condexpr)) {
        return false;
      }
      args.push_back(e);
      if (cur().type == tok::comma) {
        is_tuple = true;
      } else {
        break;
      }
      line = cur().line;
    }
    if (!is_tuple) {
      if (!args.empty()) {
        out = args[0];
        return true;
      }
      if (!explicit_parentheses) return fail_here("Expected an expression, got '" + describe(cur()) + "'");
    }
    node* n = make(nk::tuple, line);
    n->items = std::move(args);
    out = n;
    return true;
  }

  bool parse_list(const node*& out) {
    node* n = make(nk::list, next().line);
    while (cur().type != tok::rbracket) {
      if (!n->items.empty() && !expect(tok::comma, ",")) return false;
      if (cur().type == tok::rbracket) break;
      const node* e = nullptr;
      if (!parse_expression(e, true)) return false;
      n->items.push_back(e);
    }
    if (!expect(tok::rbracket, "]")) return false;
    out = n;
    return true;
  }

  bool parse_dict(const node*& out) {
    node* n = make(nk::dict, next().line);
    while (cur().type != tok::rbrace) {
      if (!n->items.empty() && !expect(tok::comma, ",")) return false;
      if (cur().type == tok::rbrace) break;
      const node* k = nullptr;
      if (!parse_expression(k, true)) return false;
      if (!expect(tok::colon, ":")) return false;
      const node* v = nullptr;
      if (!parse_expression(v, true)) return false;
      n->items.push_back(k);
      n->items.push_back(v);
    }
    if (!expect(tok::rbrace, "}")) return false;
    out = n;
    return true;
  }

  bool parse_postfix(const node*& n) {
    while (true) {
      const tok ty = cur().type;
      if (ty == tok::dot || ty == tok::lbracket) {
        if (!parse_subscript(n)) return false;
      } else if (ty == tok::lparen) {
        if (!parse_call(n)) return false;
      } else {
        return true;
      }
    }
  }

  bool parse_filter_expr(const node*& n) {
    while (true) {
      const tok ty = cur().type;
      if (ty == tok::pipe) {
        if (!parse_filter(n, n, false)) return false;
      } else if (is_name("is")) {
        if (!parse_test(n)) return false;
      } else if (ty == tok::lparen) {
        if (!parse_call(n)) return false;
      } else {
        return true;
      }
    }
  }

  // `x.name` of a dict is the dict's item `name` unless a dict method or Python's internals are named:
  // such a getattr (extra 1) skips the method lookup
  static bool dict_member_name(std::string_view name) noexcept {
    static constexpr std::string_view methods[] = {"get",   "items", "keys",    "values",     "copy",
                                                   "clear", "pop",   "popitem", "setdefault", "update"};
    if (name.size() >= 2 && name[0] == '_' && name[1] == '_') return false;
    return std::ranges::find(methods, name) == std::end(methods);
  }

  bool parse_subscript(const node*& n) {
    const token& t = next();
    if (t.type == tok::dot) {
      const token& attr = cur();
      ++i_;
      if (attr.type == tok::name) {
        node* g = make(nk::getattr, t.line);
        g->a = n;
        g->text = attr.text;
        g->extra = dict_member_name(attr.text) ? 1 : 0;
        n = g;
        return true;
      }
      if (attr.type != tok::integer) return fail("expected name or number", attr.line);
      node* k = make(nk::constant, attr.line);
      k->lit.type = literal::kind::integer;
      k->lit.i = attr.integer;
      node* g = make(nk::getitem, t.line);
      g->a = n;
      g->b = k;
      n = g;
      return true;
    }
    std::vector<const node*> args;
    while (cur().type != tok::rbracket) {
      if (!args.empty() && !expect(tok::comma, ",")) return false;
      const node* e = nullptr;
      if (!parse_subscribed(e)) return false;
      args.push_back(e);
    }
    if (!expect(tok::rbracket, "]")) return false;
    node* g = make(nk::getitem, t.line);
    g->a = n;
    if (args.size() == 1) {
      g->b = args[0];
    } else {
      node* tup = make(nk::tuple, t.line);
      tup->items = std::move(args);
      g->b = tup;
    }
    n = g;
    return true;
  }

  bool parse_subscribed(const node*& out) {
    const std::uint32_t line = cur().line;
    const node* parts[3] = {nullptr, nullptr, nullptr};
    if (cur().type == tok::colon) {
      ++i_;
    } else {
      const node* e = nullptr;
      if (!parse_expression(e, true)) return false;
      if (cur().type != tok::colon) {
        out = e;
        return true;
      }
      ++i_;
      parts[0] = e;
    }
    if (cur().type != tok::colon && cur().type != tok::rbracket && cur().type != tok::comma) {
      if (!parse_expression(parts[1], true)) return false;
    }
    if (cur().type == tok::colon) {
      ++i_;
      if (cur().type != tok::rbracket && cur().type != tok::comma) {
        if (!parse_expression(parts[2], true)) return false;
      }
    }
    node* s = make(nk::slice, line);
    s->a = parts[0];
    s->b = parts[1];
    s->c = parts[2];
    out = s;
    return true;
  }

  // (args, name=value, *args, **kwargs) into n->items, n->names / n->values, n->b, n->c
  bool parse_call_args(node* n) {
    const std::uint32_t line = cur().line;
    if (!expect(tok::lparen, "(")) return false;
    bool require_comma = false;
    const auto ensure = [&](bool ok) {
      if (!ok) fail("invalid syntax for function call expression", line);
      return ok;
    };
    while (cur().type != tok::rparen) {
      if (require_comma) {
        if (!expect(tok::comma, ",")) return false;
        if (cur().type == tok::rparen) break;
      }
      if (cur().type == tok::mul) {
        if (!ensure(n->b == nullptr && n->c == nullptr)) return false;
        ++i_;
        if (!parse_expression(n->b, true)) return false;
      } else if (cur().type == tok::pow) {
        if (!ensure(n->c == nullptr)) return false;
        ++i_;
        if (!parse_expression(n->c, true)) return false;
      } else if (cur().type == tok::name && look().type == tok::assign) {
        if (!ensure(n->c == nullptr)) return false;
        n->names.push_back(cur().text);
        i_ += 2;
        const node* v = nullptr;
        if (!parse_expression(v, true)) return false;
        n->values.push_back(v);
      } else {
        if (!ensure(n->b == nullptr && n->c == nullptr && n->names.empty())) return false;
        const node* e = nullptr;
        if (!parse_expression(e, true)) return false;
        n->items.push_back(e);
      }
      require_comma = true;
    }
    return expect(tok::rparen, ")");
  }

  bool parse_call(const node*& n) {
    node* c = make(nk::call, cur().line);
    c->a = n;
    if (!parse_call_args(c)) return false;
    n = c;
    return true;
  }

  bool parse_filter(const node* input, const node*& out, bool start_inline) {
    const node* n = input;
    while (cur().type == tok::pipe || start_inline) {
      if (!start_inline) ++i_;
      const std::uint32_t line = cur().line;
      std::string_view name;
      if (!expect_identifier(name)) return false;
      std::string dotted;
      while (cur().type == tok::dot) {
        ++i_;
        std::string_view part;
        if (!expect_identifier(part)) return false;
        if (dotted.empty()) dotted = name;
        dotted += "." + std::string(part);
      }
      if (!dotted.empty()) {
        joined_.push_back(std::move(dotted));
        name = joined_.back();
      }
      node* f = make(nk::filter, line);
      f->a = n;
      f->text = name;
      if (cur().type == tok::lparen && !parse_call_args(f)) return false;
      n = f;
      start_inline = false;
    }
    out = n;
    return true;
  }

  bool parse_test(const node*& n) {
    const std::uint32_t line = next().line;
    const bool negated = skip_name("not");
    std::string_view name;
    if (!expect_identifier(name)) return false;
    std::string dotted;
    while (cur().type == tok::dot) {
      ++i_;
      std::string_view part;
      if (!expect_identifier(part)) return false;
      if (dotted.empty()) dotted = name;
      dotted += "." + std::string(part);
    }
    if (!dotted.empty()) {
      joined_.push_back(std::move(dotted));
      name = joined_.back();
    }
    node* t = make(nk::test, line);
    t->a = n;
    t->text = name;
    const tok ty = cur().type;
    if (ty == tok::lparen) {
      if (!parse_call_args(t)) return false;
    } else if ((ty == tok::name || ty == tok::string || ty == tok::integer || ty == tok::floating ||
                ty == tok::lbracket || ty == tok::lbrace) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) return fail_here("You cannot chain multiple tests with is");
      const node* arg = nullptr;
      if (!parse_primary(arg) || !parse_postfix(arg)) return false;
      t->items.push_back(arg);
    }
    if (negated) {
      node* u = make(nk::unary, line);
      u->oper = op::not_;
      u->a = t;
      n = u;
    } else {
      n = t;
    }
    return true;
  }

  std::deque<std::string> joined_;  // strings the parser makes (adjacent literals, dotted names)

 public:
  /// The strings the parser made: the template keeps them with the nodes.
  std::deque<std::string>& strings() noexcept { return joined_; }
};

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_PARSER_HPP
