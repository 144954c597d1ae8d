#!/usr/bin/env python3
"""The reference for gguf::chat_template: chat templates rendered as Hugging Face transformers renders them.

This mirrors `_compile_jinja_template` and `render_jinja_template` of transformers'
`src/transformers/utils/chat_template_utils.py` (what `PreTrainedTokenizerBase.apply_chat_template` calls),
written anew from that description rather than copied:

- `jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)` with the extensions
  `jinja2.ext.loopcontrols` and transformers' AssistantTracker, which adds `{% generation %}...
  {% endgeneration %}` (a call block whose body renders unchanged; transformers only records its span);
- the `tojson` filter replaced by plain `json.dumps` (no HTML escaping, `ensure_ascii=False`, keyword
  arguments indent / separators / sort_keys);
- globals `raise_exception(message)`, raising `jinja2.exceptions.TemplateError(message)`, and
  `strftime_now(format)`, `datetime.now().strftime(format)` (here a fixed clock when one is given);
- `template.render(messages=..., tools=..., documents=..., add_generation_prompt=..., **kwargs)`: tools and
  documents are passed as None when absent (so `tools is none` holds and `tools is defined` too), and
  add_generation_prompt defaults to False as in apply_chat_template.

usage: reference.py TEMPLATE.jinja INPUT.json [--now YYYY-MM-DDTHH:MM:SS]
       reference.py --template TEMPLATE.jinja INPUT.json [--now ISO]   (gguf-chat's form)
       reference.py --batch [--now ISO]     (JSON lines on stdin, see README.md)

INPUT.json is the object of render variables (messages, tools, documents, add_generation_prompt, bos_token,
eos_token, extras). Prints the rendered text exactly, without a newline added, and exits 0; on an error
prints `error: <ExceptionClass>: <message>` to stderr and exits 1.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationBlock(jinja2.ext.Extension):
    """`{% generation %}...{% endgeneration %}` as transformers' AssistantTracker parses it: a CallBlock, so
    the body is a caller macro (its `{% set %}`s stay inside it) whose output is emitted unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        """Parse up to `{% endgeneration %}` into a call block of `_body`."""
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    @staticmethod
    def _body(caller):
        """The body's text, untouched (transformers records its offsets only when tracking is on)."""
        return caller()


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    """transformers' tojson: json.dumps as is (Jinja's own filter would HTML-escape <, >, &, ')."""
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    """The templates' way to refuse a conversation: a bare TemplateError carrying their message."""
    raise jinja2.exceptions.TemplateError(message)


def make_environment(now: datetime | None = None, env_class=ImmutableSandboxedEnvironment,
                     **options) -> ImmutableSandboxedEnvironment:
    """The environment transformers compiles chat templates in; strftime_now reads `now` when given.
    (`env_class` and `options` are for survey.py's instrumented copy; renders use neither.)"""
    env = env_class(trim_blocks=True, lstrip_blocks=True,
                    extensions=[GenerationBlock, jinja2.ext.loopcontrols], **options)
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda format: (now or datetime.now()).strftime(format)
    return env


def compile_template(source: str, now: datetime | None = None) -> jinja2.Template:
    """Compile `source` once (raises jinja2.TemplateSyntaxError as transformers would)."""
    return make_environment(now).from_string(source)


def render_variables(context: dict) -> dict:
    """The keyword arguments transformers gives template.render: tools and documents always present
    (None when absent), add_generation_prompt False unless given, every other variable as given."""
    variables = dict(context)
    variables.setdefault("tools", None)
    variables.setdefault("documents", None)
    variables.setdefault("add_generation_prompt", False)
    return variables


def render_compiled(template: jinja2.Template, context: dict) -> str:
    """Render an already compiled template with the variables of `context`."""
    return template.render(**render_variables(context))


def render(template_source: str, context: dict, now: datetime | None = None) -> str:
    """Render `template_source` with the render variables `context` as transformers does; the exception
    Jinja2 (or a filter such as tojson) raises propagates."""
    return render_compiled(compile_template(template_source, now), context)


def error_text(e: BaseException) -> str:
    """`Class: message`, the form errors take in reports and on stderr (raise_exception's verbatim)."""
    return f"{type(e).__name__}: {e}"


def is_raise_exception(error: str) -> bool:
    """Whether an `error_text` came from the templates' raise_exception (a bare TemplateError: Jinja2's
    own errors are its subclasses: TemplateSyntaxError, UndefinedError, SecurityError, ...)."""
    return error.startswith("TemplateError: ")


def parse_now(text: str | None) -> datetime | None:
    """`YYYY-MM-DDTHH:MM:SS` (the C++ side's --now) as a naive local datetime, or None."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S") if text else None


def load_case(path: str) -> dict:
    """A case file: one JSON object of render variables (json keeps ints as int, floats as float)."""
    with open(path, encoding="utf-8") as f:
        context = json.load(f)
    if not isinstance(context, dict):
        raise ValueError(f"{path}: a case is a JSON object of render variables")
    return context


def read_template(path: str) -> str:
    """A template's text exactly (no newline translation: templates' bytes matter)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def run_batch(now: datetime | None) -> int:
    """JSON lines on stdin `{"template": PATH, "input": PATH}` (optional "now"), one line each on stdout
    `{"ok": true, "text": ...}` or `{"ok": false, "error": "Class: message"}`; templates compiled once."""
    compiled: dict[tuple[str, str | None], object] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        when = request.get("now")
        key = (request["template"], when)
        try:
            if key not in compiled:
                try:
                    compiled[key] = compile_template(read_template(request["template"]),
                                                     parse_now(when) if when else now)
                except Exception as e:  # remembered so that every case of the template reports it
                    compiled[key] = e
            template = compiled[key]
            if isinstance(template, Exception):
                raise template
            reply = {"ok": True, "text": render_compiled(template, load_case(request["input"]))}
        except Exception as e:
            reply = {"ok": False, "error": error_text(e)}
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: render one template with one case, or serve --batch requests."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("template", nargs="?")
    ap.add_argument("input", nargs="?")
    ap.add_argument("--template", dest="template_option", metavar="TEMPLATE",
                    help="the template, as gguf-chat takes it (then the only positional is INPUT)")
    ap.add_argument("--now", help="fixed clock for strftime_now, YYYY-MM-DDTHH:MM:SS")
    ap.add_argument("--batch", action="store_true", help="JSON lines of requests on stdin")
    args = ap.parse_args(argv)
    if args.template_option:  # `--template T INPUT`: the positional read as TEMPLATE is INPUT
        if args.input:
            ap.error("with --template, give only INPUT")
        args.template, args.input = args.template_option, args.template
    # UTF-8 whatever the locale: the text is compared byte for byte.
    sys.stdin.reconfigure(encoding="utf-8")
    sys.stdout.reconfigure(encoding="utf-8", newline="")
    sys.stderr.reconfigure(encoding="utf-8")
    now = parse_now(args.now)
    if args.batch:
        return run_batch(now)
    if not args.template or not args.input:
        ap.error("TEMPLATE and INPUT are required (or --batch)")
    try:
        source, context = read_template(args.template), load_case(args.input)
    except (OSError, ValueError) as e:  # a bad invocation, not a render error: exit 2
        print(f"reference.py: {e}", file=sys.stderr)
        return 2
    try:
        text = render(source, context, now)
    except Exception as e:  # Jinja2's errors, and what filters raise (tojson's TypeError, ...)
        print("error: " + error_text(e), file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
