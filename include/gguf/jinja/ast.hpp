#ifndef GGUF_JINJA_AST_HPP
#define GGUF_JINJA_AST_HPP

/**
 * @file
 * A compiled Jinja template's nodes: Jinja2's node classes (jinja2/nodes.py) folded into one struct whose
 * fields each kind uses as its comment says. Nodes live in the template's pool and point at each other;
 * names are interned to symbol numbers, so a render looks variables up by number.
 */

#include <cstdint>
#include <string_view>
#include <vector>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace jinja {

/// What a node is.
enum class nk : std::uint8_t {
  // expressions
  constant,  ///< a literal: `lit` and `text` (strings)
  name,      ///< a variable: `sym`, `text` its name
  tuple,     ///< `items`
  list,      ///< `items`
  dict,      ///< `items`: key, value, key, value...
  getattr,   ///< `a`.`text`
  getitem,   ///< `a`[`b`]
  slice,     ///< `a`:`b`:`c` (each may be null)
  call,      ///< `a`(`items`, `names`=`values`, *`b`, **`c`)
  filter,    ///< `a` | `text`(`items`, `names`=`values`, *`b`, **`c`); `a` null in a filter block
  test,      ///< `a` is `text`(`items`, `names`=`values`)
  unary,     ///< `op` `a` (neg, pos, not)
  binary,    ///< `a` `op` `b` (add, sub, mul, div, floordiv, mod, pow)
  logical,   ///< `a` and/or `b` (`op`)
  concat,    ///< `items` joined with ~
  compare,   ///< `a` then `ops[i]` `items[i]`...
  condexpr,  ///< `b` if `a` else `c` (`c` may be null)
  nsref,     ///< `text` (namespace name, `sym`) . `attr` (assignment target)
  // statements
  data,          ///< template text `text`
  output,        ///< print each of `items` (data or expressions)
  for_loop,      ///< for `a` (target) in `b` [if `c`]: `body`, else `orelse`; `flag` recursive
  if_stmt,       ///< if `a`: `body`, else `orelse` (an elif is an if in `orelse`, `flag` set)
  assign,        ///< set `a` (target) = `b`
  assign_block,  ///< set `a` (target) [| filter `c`]: `body`
  macro,         ///< macro `text` (`sym`) (`names` params, `items` defaults): `body`
  call_block,    ///< call(`names` params, `items` defaults) `a` (a call): `body`
  filter_block,  ///< filter `a` (a filter chain over null): `body`
  with_stmt,     ///< with `items` (targets) = `values`: `body`
  scope,         ///< `body` in a scope of its own (a block)
  autoescape,    ///< autoescape `a`: `body`
  brk,           ///< break
  cont,          ///< continue
  unsupported,   ///< include, import, extends: `text` says which (fails when reached)
};

/// Operators of unary, binary, logical and compare nodes.
enum class op : std::uint8_t {
  neg,
  pos,
  not_,
  add,
  sub,
  mul,
  div,
  floordiv,
  mod,
  pow,
  and_,
  or_,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  in,
  notin
};

/// A literal's value.
struct literal {
  /// What the literal is (a string's text is the node's `text`, a big integer's digits too).
  enum class kind : std::uint8_t { none, boolean, integer, big_integer, floating, string };
  kind type = kind::none;  ///< which
  bool b = false;          ///< a boolean
  std::int64_t i = 0;      ///< an integer
  double f = 0;            ///< a float
};

/// A node (see `nk` for which fields each kind uses).
struct node {
  nk kind = nk::constant;  ///< what it is
  op oper = op::add;       ///< unary, binary, logical: the operator
  bool flag = false;       ///< for_loop: recursive; if_stmt: an elif
  /// macro, call_block: 1 its body names `varargs`, 2 `kwargs`, 4 `caller`; for_loop: 8 its body defines a
  /// macro or call block (its scopes must outlive an iteration); getattr: 1 when the name is no dict
  /// method (a dict's item is looked up first)
  std::uint8_t extra = 0;
  std::uint32_t line = 0;                ///< the template line it starts on
  std::uint32_t sym = 0;                 ///< name, macro, nsref: the symbol
  std::string_view text;                 ///< a name, a string literal, a filter or test name, template text
  std::string_view attr;                 ///< getattr, nsref: the attribute
  literal lit;                           ///< constant: the value
  const node* a = nullptr;               ///< the first operand (see `nk`)
  const node* b = nullptr;               ///< the second operand
  const node* c = nullptr;               ///< the third operand
  std::vector<const node*> items;        ///< items, arguments, targets (see `nk`)
  std::vector<const node*> values;       ///< keyword arguments' values, with's values
  std::vector<std::string_view> names;   ///< keyword arguments' names, parameters
  std::vector<std::uint32_t> name_syms;  ///< the symbols of `names` (parameters, targets)
  std::vector<op> ops;                   ///< compare: the operators
  std::vector<const node*> body;         ///< a statement's body
  std::vector<const node*> orelse;       ///< else, elif
};

}  // namespace jinja
GGUF_END_NAMESPACE

#endif  // GGUF_JINJA_AST_HPP
