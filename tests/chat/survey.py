#!/usr/bin/env python3
"""What the shared chat templates ask of a Jinja engine: counts for README.md's "What the templates use".

usage: survey.py [--shared DIR]

Static part: each template's Jinja2 syntax tree (filters, tests, statements, method calls, loop
attributes, slices, operators, globals). Runtime part: every template × case rendered through the
reference with the sandbox's call and output hooks watched, which shows what the syntax cannot: which
type a method is called on, what types reach `{{ }}` (ints, floats, lists, dicts print as Python prints
them), attribute syntax on dicts. Each line: the feature, how many templates use it, how many times.
"""
from __future__ import annotations

import argparse
import collections
import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_expected  # noqa: E402
import reference  # noqa: E402
from jinja2 import nodes  # noqa: E402
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402


class Tally:
    """feature -> (set of templates, occurrences)."""

    def __init__(self):
        self.templates = collections.defaultdict(set)
        self.count = collections.Counter()

    def add(self, feature: str, template: str):
        """One occurrence of `feature` in `template`."""
        self.templates[feature].add(template)
        self.count[feature] += 1

    def lines(self, prefix: str = "") -> list[str]:
        """`templates occurrences feature`, most used first."""
        keys = sorted((k for k in self.count if k.startswith(prefix)),
                      key=lambda k: (-len(self.templates[k]), -self.count[k], k))
        return [f"{len(self.templates[k]):4d} {self.count[k]:6d}  {k}" for k in keys]


def literal(node) -> str:
    """A short text for a constant argument (to tell `startswith((a, b))` from `startswith(a)`)."""
    if isinstance(node, nodes.Const):
        return type(node.value).__name__
    if isinstance(node, nodes.Tuple):
        return "tuple"
    if isinstance(node, nodes.List):
        return "list"
    return "expr"


def static(tally: Tally, name: str, ast) -> None:
    """Walk one template's syntax tree."""
    macros = {m.name for m in ast.find_all(nodes.Macro)}
    for node in ast.find_all(nodes.Node):
        kind = type(node).__name__
        if isinstance(node, nodes.Filter):
            kw = "".join(f", {k.key}=" for k in node.kwargs)
            tally.add(f"filter |{node.name}" + (f"({kw[2:]})" if kw else ""), name)
            if node.name == "tojson" and node.args:
                tally.add("filter |tojson(positional args)", name)
        elif isinstance(node, nodes.Test):
            tally.add(f"test is {node.name}", name)
        elif isinstance(node, nodes.Call):
            if isinstance(node.node, nodes.Getattr):
                args = ", ".join(literal(a) for a in node.args)
                tally.add(f"method .{node.node.attr}({args})", name)
            elif isinstance(node.node, nodes.Name):
                callee = node.node.name
                if callee in macros:
                    tally.add("call a macro of the template" + (" with keyword arguments" if node.kwargs else ""), name)
                elif callee == "namespace":
                    tally.add("call namespace(" + ("key=value..." if node.kwargs else "") + ")", name)
                else:
                    tally.add(f"call {callee}()" + ("".join(f" {k.key}=" for k in node.kwargs)), name)
        elif isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name == "loop":
            tally.add(f"loop.{node.attr}", name)
        elif isinstance(node, nodes.Slice):
            step = node.step
            if step is not None:
                neg = isinstance(step, nodes.Neg) or (isinstance(step, nodes.Const) and step.value < 0)
                tally.add("slice with step" + (" (negative)" if neg else ""), name)
            else:
                tally.add("slice [a:b]", name)
        elif isinstance(node, nodes.For):
            tally.add("stmt for", name)
            if node.test is not None:
                tally.add("stmt for ... if (loop filter)", name)
            if node.else_:
                tally.add("stmt for ... else", name)
            if node.recursive:
                tally.add("stmt for ... recursive", name)
            if isinstance(node.target, nodes.Tuple):
                tally.add("stmt for a, b in (unpacking)", name)
        elif isinstance(node, (nodes.Assign, nodes.AssignBlock)):
            if isinstance(node, nodes.AssignBlock):
                tally.add("stmt set block ({% set x %}...{% endset %})", name)
            target = node.target
            if isinstance(target, nodes.NSRef):
                tally.add("stmt set ns.attr (namespace assignment)", name)
            elif isinstance(target, nodes.Tuple):
                tally.add("stmt set a, b = (unpacking)", name)
        elif isinstance(node, nodes.Macro):
            tally.add("stmt macro", name)
            if node.defaults:
                tally.add("stmt macro with default arguments", name)
        elif isinstance(node, nodes.CallBlock):
            # The generation extension parses into a call block of its own method.
            if isinstance(node.call.node, nodes.ExtensionAttribute):
                tally.add("stmt generation ... endgeneration", name)
            else:
                tally.add("stmt call (macro with caller)", name)
        elif isinstance(node, nodes.FilterBlock):
            tally.add("stmt filter block", name)
        elif isinstance(node, (nodes.Break, nodes.Continue)):
            tally.add(f"stmt {kind.lower()} (loopcontrols)", name)
        elif isinstance(node, nodes.If) and node.elif_:
            tally.add("stmt if ... elif", name)
        elif isinstance(node, nodes.CondExpr):
            tally.add("expr a if c else b" if node.expr2 is not None else "expr a if c (no else: undefined)", name)
        elif isinstance(node, nodes.Concat):
            tally.add("op ~ (concatenation)", name)
        elif isinstance(node, nodes.Compare):
            for op in node.ops:
                if op.op in ("in", "notin"):
                    tally.add(f"op {'not in' if op.op == 'notin' else 'in'}", name)
            if len(node.ops) > 1:
                tally.add("op chained comparison (a < b < c)", name)
        elif isinstance(node, (nodes.Mod, nodes.FloorDiv, nodes.Pow, nodes.Div, nodes.Mul, nodes.Sub)):
            tally.add(f"op {kind}", name)
            if isinstance(node, nodes.Mod) and isinstance(node.left, nodes.Const) and isinstance(node.left.value, str):
                tally.add("op 'fmt' % value (printf formatting)", name)
        elif isinstance(node, nodes.Dict):
            tally.add("literal dict {...}", name)
        elif isinstance(node, nodes.List):
            tally.add("literal list [...]", name)
        elif isinstance(node, nodes.Tuple) and node.ctx == "load":
            tally.add("literal tuple (...)", name)
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, int) \
                and node.arg.value < 0:
            tally.add("subscript [-n] (negative index)", name)
        elif isinstance(node, nodes.Neg) and isinstance(node.node, nodes.Const):
            pass
        elif isinstance(node, nodes.Const) and isinstance(node.value, float):
            tally.add("literal float", name)


class Watched(ImmutableSandboxedEnvironment):
    """The reference environment with its calls and its output watched (for one template at a time)."""

    tally: Tally
    template_name = ""

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (the sandbox's own signature)
        """Record `receiver_type.method` for bound methods (what `.strip()` etc. are really called on)."""
        receiver = getattr(__obj, "__self__", None)
        method = getattr(__obj, "__name__", None)
        if receiver is not None and method and not isinstance(receiver, type(sys)):
            cls = type(receiver).__name__
            if cls not in ("Namespace", "GenerationBlock", "Context", "TemplateReference"):
                __self.tally.add(f"runtime {cls}.{method}()", __self.template_name)
        return super().call(__context, __obj, *args, **kwargs)

    # Every binary operator through call_binop, to see the operand types (str + str, list + list, ...).
    intercepted_binops = frozenset(["+", "-", "*", "/", "//", "%", "**"])

    def call_binop(self, context, operator, left, right):
        """Record `type op type`."""
        self.tally.add(f"runtime {type(left).__name__} {operator} {type(right).__name__}", self.template_name)
        return super().call_binop(context, operator, left, right)

    def getattr(self, obj, attribute):
        """Record dot syntax on dicts (`message.content`: Jinja2 falls back to the item)."""
        if isinstance(obj, dict):
            if not hasattr(dict, attribute):
                kind = "a key"
            elif attribute in obj:  # `schema.items` is the method even where "items" is a key
                kind = f"a key that is also a dict method (.{attribute}: Jinja2 gives the method)"
            else:
                kind = "a method"
            self.tally.add(f"runtime dict.name for {kind}", self.template_name)
        return super().getattr(obj, attribute)

    def getitem(self, obj, argument):
        """Record subscripts by receiver and index type (negative indexes, slices of strings...)."""
        index = type(argument).__name__
        if isinstance(argument, int) and argument < 0:
            index = "negative int"
        if isinstance(argument, slice):
            index = "slice" + (" with negative step" if (argument.step or 1) < 0 else "")
        self.tally.add(f"runtime {type(obj).__name__}[{index}]", self.template_name)
        return super().getitem(obj, argument)


def watch_filters(env, tally: Tally, name: str) -> None:
    """Wrap every filter of `env` to record the type of value it is given (`|length` of a dict, ...)."""
    for key, function in list(env.filters.items()):
        def wrapped(*args, _f=function, _key=key, **kwargs):
            value = args[1] if getattr(_f, "jinja_pass_arg", None) else args[0]
            tally.add(f"runtime |{_key}({type(value).__name__})", name)
            return _f(*args, **kwargs)
        env.filters[key] = functools.update_wrapper(wrapped, function)


def runtime(tally: Tally, templates: list[Path], cases: list[Path]) -> None:
    """Render every pair with the watched environment; the output hook records what `{{ }}` prints."""
    when = reference.parse_now(make_expected.NOW)
    contexts = [reference.load_case(str(c)) for c in cases]
    for path in templates:
        def finalize(value, _name=path.stem):
            """Count non-string output (Python's str() of it is what Jinja2 prints)."""
            if not isinstance(value, str):
                kind = type(value).__name__
                if isinstance(value, float) and (value != value or abs(value) in (float("inf"),)):
                    kind = "float (nan/inf)"
                tally.add(f"prints {kind}", _name)
            return value
        watched = reference.make_environment(when, env_class=Watched, finalize=finalize)
        watched.tally, watched.template_name = tally, path.stem
        watch_filters(watched, tally, path.stem)
        try:
            template = watched.from_string(reference.read_template(str(path)))
        except Exception:
            continue
        for context in contexts:
            try:
                template.render(**reference.render_variables(context))
            except Exception:
                pass


def main() -> int:
    """Print the survey."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", help="the shared directory (default ../shared or $GGUF_SHARED_DIR)")
    args = ap.parse_args()
    templates = make_expected.template_paths(make_expected.shared_dir(args.shared))
    if not templates:
        print("skip: no chat templates")
        return 0
    tally = Tally()
    env = reference.make_environment()
    for path in templates:
        source = reference.read_template(str(path))
        static(tally, path.stem, env.parse(source))
        for token, feature in (("{%-", "whitespace control {%- / -%}"), ("{{-", "whitespace control {{- / -}}"),
                               ("{#", "comment {# #}"), ("\r", "CR in the template source")):
            if token in source:
                tally.add(feature, path.stem)
        if not source.endswith("\n"):
            tally.add("source without a final newline", path.stem)
    runtime(tally, templates, make_expected.case_paths())
    print(f"{len(templates)} templates; columns: templates using it, occurrences")
    for title, prefix in (("Filters", "filter"), ("Tests", "test"), ("Statements", "stmt"),
                          ("Method calls (syntax)", "method"),
                          ("At runtime: methods, operands, subscripts, filter inputs", "runtime"),
                          ("Global calls", "call"), ("loop attributes", "loop."), ("Slices", "slice"),
                          ("Subscripts", "subscript"), ("Operators", "op"), ("Expressions", "expr"),
                          ("Literals", "literal"), ("Printed non-strings (runtime)", "prints"),
                          ("Source", "whitespace"), ("", "comment"), ("", "CR"), ("", "source")):
        lines = tally.lines(prefix)
        if lines:
            if title:
                print(f"\n## {title}")
            print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
