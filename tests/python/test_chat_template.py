"""pygguf.ChatTemplate renders chat templates as Hugging Face transformers renders them: Jinja2 in
transformers' environment (tests/chat/reference.py builds it; the spot checks here compare with it), from
Python objects passed as they are (dicts in their order, tuples, ints of any size, floats printed as Python
prints them), with Jinja2's errors as TemplateError (kind, message, line), the clock of strftime_now fixed
by `now`, one template rendered from many threads at once with the GIL released, and a model's templates
(Model.chat_template) with its bos_token and eos_token. With ../shared, every shared template × every case
of tests/chat/cases agrees with Jinja2 (tests/chat/agreement.py, in process)."""

from __future__ import annotations

import collections
import copy
import datetime
import enum
import io
import pickle
import sys
import threading

import pytest

import pygguf
from pygguf import ChatTemplate, GGUFError, TemplateError

from support import DATA, ROOT, SHARED

# the reference (tests/chat) needs jinja2: without it, the comparisons with Jinja2 skip and the rest runs
sys.path.insert(0, str(ROOT / "tests" / "chat"))
try:
    import jinja2

    import agreement
    import make_expected
    import reference
except ImportError:
    jinja2 = reference = None

NOW = datetime.datetime(2026, 1, 15, 10, 30, 0)
CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is 2+2?"},
    {"role": "assistant", "content": "4."},
    {"role": "user", "content": "And 3+3? \u00e9\u4e2d\U0001f600"},
]
PHI3 = DATA / "vocab" / "ggml-vocab-phi-3.gguf"


def jinja(source: str, messages=(), **variables) -> str:
    """Jinja2's text in transformers' environment (tools, documents and add_generation_prompt defaulted
    as apply_chat_template defaults them), the clock at NOW; the test skips without jinja2."""
    if reference is None:
        pytest.skip(f"jinja2 is not installed for {sys.executable}")
    variables["messages"] = list(messages) if isinstance(messages, tuple) else messages
    return reference.render(source, variables, NOW)


def ours(source: str, messages=(), **variables) -> str:
    return ChatTemplate(source).render(list(messages) if isinstance(messages, tuple) else messages, now=NOW, **variables)


def jinja_error(source: str, messages=(), **variables) -> BaseException:
    """The exception Jinja2 raises (the test skips without jinja2)."""
    with pytest.raises(Exception) as e:
        jinja(source, messages, **variables)
    return e.value


# ---- semantics: spot checks against Jinja2 ---------------------------------------------------------------

SNIPPETS = {
    "loop": "{% for m in messages %}{{ loop.index0 }}:{{ m['role'] }}={{ m.content }}{% if not loop.last %}|{% endif %}{% endfor %}",
    "system_split": "{% if messages[0].role == 'system' %}[{{ messages[0].content }}]{% set rest = messages[1:] %}"
    "{% else %}{% set rest = messages %}{% endif %}{% for m in rest %}<{{ m.role }}>{% endfor %}",
    "namespace": "{% set ns = namespace(n=0, last='') %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
    "{% set ns.last = m.role %}{% endfor %}{{ ns.n }} {{ ns.last }}",
    "scoping": "{% set x = 1 %}{% for m in messages %}{% set x = x + 1 %}{% endfor %}{{ x }}",
    "macro": "{% macro f(a, b='B') %}({{ a }},{{ b }}){% endmacro %}{{ f(1) }}{{ f(2, b=3) }}",
    "defaults": "{{ tools is defined }} {{ tools is none }} {{ documents is none }} {{ add_generation_prompt }}"
    " {{ bos_token is defined }} [{{ bos_token }}]",
    "str_methods": "{{ '  a b  '.strip() }}|{{ 'a,b,,c'.split(',') }}|{{ 'Hello'.startswith('He') }}|"
    "{{ 'x-y'.replace('-', '+') }}|{{ 'abc'.upper() }}|{{ '<think>x</think>y'.split('</think>')[-1] }}",
    "filters": "{{ messages|length }} {{ messages|map(attribute='role')|join(',') }} "
    "{{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ ' x '|trim }} {{ [3, 1, 2]|sort }}",
    "tojson": "{{ messages[0]|tojson }} {{ {'b': 1, 'a': [1.5, none, true]}|tojson(indent=2) }}"
    " {{ 'é'|tojson }} {{ 'é'|tojson(ensure_ascii=True) }}",
    "repr": "{{ messages[0] }} {{ [1, 'a', none, true, 1.0, \"it's\"] }} {{ {'k': 'v\\n'} }} {{ (1, 2) }}",
    "numbers": "{{ 7 // 2 }} {{ 7 / 2 }} {{ 2 ** 62 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 10 % 3 }} {{ -7 // 2 }}",
    "items": "{% for k, v in {'z': 1, 'a': 2}.items() %}{{ k }}={{ v }};{% endfor %}{{ {'b': 1, 'a': 2}|dictsort }}",
    "strftime": "{{ strftime_now('%Y-%m-%d %H:%M:%S %a %d %b %Y %B %j') }}",
    "undefined_prints_empty": "[{{ nothing }}][{{ messages[0].nothing }}][{{ messages[10] }}]",
    "get": "{{ messages[0].get('content') }} {{ messages[0].get('missing') }} {{ messages[0].get('missing', 'd') }}",
    "slices": "{{ messages[-1].role }} {{ messages[::-1]|map(attribute='role')|list }} {{ 'abcdef'[1:4] }}",
    "unicode": "{{ messages[-1].content|length }} {{ messages[-1].content[-1] }} {{ messages[-1].content.upper() }}",
    "whitespace": "{%- for m in messages %}\n  {{- m.role }}\n{% endfor -%}\n  {% if true %}\n    x\n  {% endif %}\n",
    "generation": "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}",
    "safe_markup": "{{ \"it's\"|safe + \"<b>it's</b>\" }}",
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippets_render_as_jinja2(name):
    source = SNIPPETS[name]
    variables = {"bos_token": "<s>"} if name == "defaults" else {}
    assert ours(source, CHAT, **variables) == jinja(source, CHAT, **variables)


def test_the_variables_of_apply_chat_template():
    source = SNIPPETS["defaults"] + " {{ enable_thinking }} {{ reasoning_effort }}"
    for variables in ({}, {"tools": [], "documents": [{"title": "t"}], "add_generation_prompt": True},
                      {"enable_thinking": False, "reasoning_effort": "low", "bos_token": ""}):
        assert ours(source, CHAT, **variables) == jinja(source, CHAT, **variables), variables


def test_messages_as_a_keyword_and_other_arguments():
    t = ChatTemplate("{{ messages|length }}")
    assert t.render(messages=CHAT) == "4"
    assert t.render(CHAT, unused="x", tools=None, documents=[], add_generation_prompt=True) == "4"
    # a variable the template never names is never looked at, as in Jinja2; one it names must convert
    assert t.render(CHAT, unused=object()) == "4"
    with pytest.raises(TypeError, match=r"^used is of type object"):
        ChatTemplate("{{ used }}").render(CHAT, used=object())
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'messages'"):
        t.render()
    with pytest.raises(TypeError, match="1 positional argument"):
        t.render(CHAT, [])
    with pytest.raises(TypeError, match="multiple values for argument 'messages'"):
        t.render(CHAT, messages=CHAT)


# ---- Python objects as template values ------------------------------------------------------------------

VALUES = {
    "big_ints": [2**63 - 1, -(2**63), 2**63, 2**64 + 1, -(2**100), 10**40, 2**53 + 1],
    "floats": [0.1, 1.0, -0.0, 1e20, 1e16, 1e-05, 2.5e-07, 1.7976931348623157e308, 5e-324, 123456789.125],
    "strings": ["it's", 'say "hi"', "both ' and \"", "a\nb\tc\\", "\u2028\xa0\x07", "\U0001f600 \u00e9", ""],
    "nested": {"z": {"y": [1, {"x": None, "w": [True, False]}]}, "a": [1, "two", 3.0], "m": {}},
    "tuples": (1, (2, 3), [4, (5,)], ()),
}


def lists(value):
    """`value` with its tuples as lists, as a template sees them."""
    if isinstance(value, (list, tuple)):
        return [lists(x) for x in value]
    if isinstance(value, dict):
        return {k: lists(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("name", sorted(VALUES))
def test_python_values_print_as_python(name):
    value = VALUES[name]
    source = "{{ v }}|{% for x in v %}{{ x }};{% endfor %}|{{ v|length }}|{{ v|tojson }}"
    assert ours(source, v=value) == jinja(source, v=lists(value))


def test_tuples_are_lists():
    # gguf::json has no tuples: they print as lists (Jinja2 would print (1, 2)); tojson is the same
    assert ours("{{ v }} {{ v|tojson }} {{ v is sequence }}", v=(1, (2,))) == "[1, [2]] [1, [2]] True"


def test_big_ints_and_floats_compare_and_compute_as_python():
    source = "{{ v == 18446744073709551617 }} {{ f * 2 }} {{ f|round(2) }} {{ v|string|length }} {{ i + 1 }}"
    variables = {"v": 2**64 + 1, "f": 0.125, "i": 2**62}
    assert ours(source, **variables) == jinja(source, **variables)


def test_dicts_keep_their_order():
    d = {"zeta": 1, "alpha": 2, "mid": {"c": 3, "b": 4, "a": 5}}
    source = "{% for k in d %}{{ k }},{% endfor %} {{ d.mid.keys()|list }} {{ d|tojson }} {{ d }}"
    assert ours(source, d=d) == jinja(source, d=d) == (
        "zeta,alpha,mid, ['c', 'b', 'a'] {\"zeta\": 1, \"alpha\": 2, \"mid\": {\"c\": 3, \"b\": 4, \"a\": 5}}"
        " {'zeta': 1, 'alpha': 2, 'mid': {'c': 3, 'b': 4, 'a': 5}}")
    # a subclass in its own order (an OrderedDict's after move_to_end is not its storage's)
    od = collections.OrderedDict([("a", 1), ("b", 2), ("c", 3)])
    od.move_to_end("a")
    assert ours("{% for k in d %}{{ k }}{% endfor %}", d=od) == "bca"


class Color(enum.IntEnum):
    RED = 1


class Text(str):
    pass


def test_subclasses_and_other_integers():
    assert ours("{{ v + 1 }} {{ s }} {{ d['k'] }}", v=Color.RED, s=Text("text"),
                d=collections.defaultdict(int, k=7)) == "2 text 7"
    np = pytest.importorskip("numpy")
    assert ours("{{ a }} {{ b }} {{ a + 1 }}", a=np.int64(41), b=np.float64(0.5)) == "41 0.5 42"


@pytest.mark.parametrize(
    "messages, where, what",
    [
        ([{"role": "user", "content": {1, 2}}], "messages[0]['content']", "set"),
        ([{"role": "user"}, {"role": "tool", "content": [1, b"bytes"]}], "messages[1]['content'][1]", "bytes"),
        ([{"role": "user", "content": object()}], "messages[0]['content']", "object"),
        ([{"role": "user", "content": 1j}], "messages[0]['content']", "complex"),
        (iter([]), "messages", "list_iterator"),
    ],
)
def test_unsupported_types_are_named_where_they_sit(messages, where, what):
    with pytest.raises(TypeError) as e:
        ours("{{ messages }}", messages)
    assert str(e.value).startswith(f"{where} is of type {what}:")


def test_unsupported_types_in_variables_and_keys():
    with pytest.raises(TypeError, match=r"^tools\[0\]\['function'\] is of type function"):
        ours("{{ tools }}", tools=[{"function": lambda: 0}])
    with pytest.raises(TypeError, match=r"^v\['a'\] has a key of type tuple"):
        ours("{{ v }}", v={"a": {(1, 2): 3}})
    with pytest.raises(TypeError, match=r"^v has a key of type int \(1\): a template's dict keys are str"):
        ours("{{ v }}", v={1: "one"})


def test_cycles_and_depth_raise_value_error():
    a = [1]
    a.append(a)
    with pytest.raises(ValueError, match=r"^v\[1\] contains itself"):
        ours("{{ v }}", v=a)
    d = {"k": []}
    d["k"].append(d)
    with pytest.raises(ValueError, match=r"^messages\[0\]\['k'\]\[0\] contains itself"):
        ours("{{ messages }}", [d])
    # the same list twice, side by side, is no cycle
    shared = [1, 2]
    assert ours("{{ v }}", v=[shared, shared, {"x": shared}]) == "[[1, 2], [1, 2], {'x': [1, 2]}]"
    deep = []
    for _ in range(600):
        deep = [deep]
    with pytest.raises(ValueError, match=r"^v\[0\]\[0\].*\.\.\..*is nested deeper than 512 levels"):
        ours("{{ v }}", v=deep)
    ok = []
    for _ in range(100):
        ok = [ok]
    assert ours("{{ v|length }}", v=ok) == "1"


def test_huge_ints_beyond_python_s_str_limit():
    if not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("Python before 3.11 prints any int")
    with pytest.raises(ValueError, match=r"^v\[0\]: Exceeds the limit"):
        ours("{{ v }}", v=[10**5000])


def test_a_str_the_render_points_into_outlives_what_converting_does_to_its_container():
    # The render's values point into the Python strs' own text and hold the strs until it ends: code
    # that runs while the context is converted (an __index__) may drop them from their containers.
    class Dropper:
        def __index__(self):
            messages[0]["content"] = None  # the dict held the only reference to its text
            junk.extend("z" * 3000 for _ in range(64))  # room for the freed text to be reused
            return 7

    junk: list[str] = []
    text = "".join(["mine", "!" * 3000])  # made here: nothing else holds it
    messages = [{"role": "user", "content": text}, {"role": "user", "content": Dropper()}]
    del text
    out = ours("{{ messages[0].content[:5] }} {{ messages[0].content|length }} {{ messages[1].content }}", messages)
    assert out == "mine! 3004 7"


@pytest.mark.parametrize("widest", ["", "a", "\x7f", "\x80", "\xe9", "\xff", "\u0100", "\u07ff", "\u0800", "\uff5c",
                                    "\uffff", "\U00010000", "\U0001f600", "\U0010ffff"])
def test_the_text_is_the_str_python_makes_whatever_its_widest_character(widest):
    # the render's str is made directly (its kind from the widest character): equal to Python's own
    # (a str of the wrong kind would compare unequal), at every length around a word
    for n in range(0, 20):
        text = ("ab\xe9"[: n % 3] * n)[:n] + widest + "z" * (n % 5)
        out = ours("{{ messages[0].content }}", [{"content": text}])
        assert out == text and len(out) == len(text) and hash(out) == hash(text)


def test_text_that_is_not_unicode():
    text = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")  # as pygguf reads a file's partial UTF-8
    with pytest.raises(ValueError, match=r"^messages\[0\]\['content'\] is a str with lone surrogates"):
        ours("{{ messages }}", [{"content": text}])
    with pytest.raises(ValueError, match="lone surrogates"):
        ChatTemplate("{{ x }}\udcff")


def test_a_context_beyond_the_memory_limit_fails_cleanly():
    # 17 Mi list items are 272 MiB of values: past the render's 256 MiB
    with pytest.raises(TemplateError) as e:
        ours("{{ messages|length }}", [None] * (17 << 20))
    assert e.value.kind == "limit"


# ---- errors -----------------------------------------------------------------------------------------------


def test_syntax_errors():
    source = "line one\n{% for m in messages %}\n{{ m }\n{% endfor %}"
    want = jinja_error(source)
    with pytest.raises(TemplateError) as e:
        ChatTemplate(source)
    assert type(want).__name__ == e.value.kind == "TemplateSyntaxError"
    assert e.value.line == want.lineno == 3
    assert str(e.value) == f"TemplateSyntaxError: {e.value.message} (line 3)"
    with pytest.raises(TemplateError) as e:
        ChatTemplate("{{ x|no_such_filter }}")
    assert e.value.kind == type(jinja_error("{{ x|no_such_filter }}")).__name__ == "TemplateAssertionError"


def test_raise_exception_is_a_template_error_with_the_message_verbatim():
    source = "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/... \"quoted\" é') }}{% endif %}ok"
    want = jinja_error(source, CHAT)
    with pytest.raises(TemplateError) as e:
        ours(source, CHAT)
    assert type(want) is jinja2.exceptions.TemplateError  # noqa (jinja2 is there: jinja_error ran)
    assert e.value.kind == "TemplateError" and e.value.message == str(want)
    assert e.value.line == 1 and str(e.value) == f"TemplateError: {want} (line 1)"
    assert ours(source, CHAT[1:]) == "ok"


@pytest.mark.parametrize(
    "source, kind",
    [
        ("{{ messages[0].nothing.deeper }}", "UndefinedError"),
        ("{{ nothing + 'a' }}", "UndefinedError"),
        ("{{ 'a' + none }}", "TypeError"),
        ("{{ 'a' + messages }}", "TypeError"),
        ("{{ 1 // 0 }}", "ZeroDivisionError"),
        ("{{ messages.append(1) }}", "SecurityError"),
        ("{{ nothing|tojson }}", "TypeError"),
        ("{% for x in none %}{% endfor %}", "TypeError"),
    ],
)
def test_runtime_errors_are_jinja2_s(source, kind):
    want = jinja_error(source, CHAT)
    with pytest.raises(TemplateError) as e:
        ours(source, CHAT)
    assert e.value.kind == kind == type(want).__name__, (e.value, want)


def test_limits():
    with pytest.raises(TemplateError) as e:
        ours("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    assert e.value.kind == "limit"
    with pytest.raises(TemplateError) as e:  # the immutable sandbox's own limit
        ours("{% for i in range(100001) %}{% endfor %}")
    assert e.value.kind == "OverflowError" == type(jinja_error("{% for i in range(100001) %}{% endfor %}")).__name__
    with pytest.raises(TemplateError) as e:
        ours("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
    assert e.value.kind in ("limit", "RecursionError")


def test_template_error_is_a_value_error_not_a_gguf_error():
    assert issubclass(TemplateError, ValueError) and not issubclass(TemplateError, GGUFError)
    e = TemplateError("UndefinedError", "'x' is undefined")
    assert e.line is None and str(e) == "UndefinedError: 'x' is undefined"
    back = pickle.loads(pickle.dumps(TemplateError("TemplateError", "no", 3)))
    assert (back.kind, back.message, back.line, str(back)) == ("TemplateError", "no", 3, "TemplateError: no (line 3)")


# ---- the clock ------------------------------------------------------------------------------------------------


def test_now_fixes_strftime_now():
    t = ChatTemplate("{{ strftime_now('%Y-%m-%d %H:%M:%S %A %j %U') }}")
    want = NOW.strftime("%Y-%m-%d %H:%M:%S %A %j %U")
    assert t.render([], now=NOW) == want
    assert t.render([], now="2026-01-15T10:30:00") == want
    assert t.render([], now="2026-01-15 10:30:00") == want  # datetime.fromisoformat's forms
    aware = datetime.datetime(2024, 2, 29, 23, 59, 58, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
    assert t.render([], now=aware) == aware.strftime("%Y-%m-%d %H:%M:%S %A %j %U")
    with pytest.raises(ValueError, match="isoformat"):
        t.render([], now="15/01/2026")
    with pytest.raises(TypeError, match="datetime"):
        t.render([], now=1700000000)
    with pytest.raises(TypeError, match="datetime"):
        t.render([], now=datetime.date(2026, 1, 15))


def test_the_clock_is_the_local_time_by_default():
    t = ChatTemplate("{{ strftime_now('%Y-%m-%d %H') }}")
    before = datetime.datetime.now().strftime("%Y-%m-%d %H")
    got = t.render([])
    after = datetime.datetime.now().strftime("%Y-%m-%d %H")
    assert got in (before, after)


# ---- the object ---------------------------------------------------------------------------------------------


def test_the_template_object():
    source = "{% for m in messages %}{{ m.content }}{% endfor %}"
    t = ChatTemplate(source)
    assert t.source == source and t.name is None and t.defaults == {}
    assert repr(t).startswith("<pygguf.ChatTemplate of 50 characters: '{% for m in messages %}")
    assert copy.copy(t) is t and copy.deepcopy(t) is t
    back = pickle.loads(pickle.dumps(t))
    assert type(back) is ChatTemplate and back.source == source and back.render(CHAT) == t.render(CHAT)
    with pytest.raises(AttributeError):
        t.source = "x"
    with pytest.raises(TypeError):
        ChatTemplate(source.encode())
    assert "ChatTemplate" in pygguf.__all__ and "TemplateError" in pygguf.__all__
    assert "messages" in (ChatTemplate.render.__doc__ or "")
    # CRLF line ends and a trailing newline as Jinja2 reads them; the source is kept as given
    crlf = "a\r\n{{ 1 }}\r\nb\n"
    assert ChatTemplate(crlf).source == crlf and ours(crlf) == jinja(crlf)


# ---- threads ------------------------------------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                           "parameters": {"type": "object", "properties": {
                                               "city": {"type": "string", "enum": ["Paris", "Zürich"]},
                                               "days": {"type": "integer"}}, "required": ["city"]}}}]
BUSY = (
    "{%- for t in tools or [] %}{{ t|tojson }}\n{% endfor %}"
    "{%- for m in messages %}<|{{ m.role }}|>{{ m.content|trim }}{% if m.tool_calls is defined %}"
    "{% for c in m.tool_calls %}{{ c.function.name }}({{ c.function.arguments|tojson }}){% endfor %}{% endif %}"
    "<|end|>\n{%- endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}{{ strftime_now('%d %b %Y') }}"
)


def test_many_python_threads_render_one_template():
    t = ChatTemplate(BUSY)
    contexts = []
    for k in range(16):
        messages = CHAT[: 1 + k % 4] + [{"role": "assistant", "content": f" {k} ", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris", "days": k}}}]}]
        contexts.append((messages, {"tools": TOOLS if k % 2 else None, "add_generation_prompt": bool(k % 3)}))
    want = [t.render(m, now=NOW, **kw) for m, kw in contexts]
    assert want[1] == jinja(BUSY, contexts[1][0], **contexts[1][1])
    failures = []
    start = threading.Barrier(8)

    def work(k: int) -> None:
        try:
            start.wait()
            for r in range(200):
                i = (k * 7 + r) % len(contexts)
                assert t.render(contexts[i][0], now=NOW, **contexts[i][1]) == want[i]
        except BaseException as ex:  # noqa: BLE001 (reported below)
            failures.append(ex)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures, failures[0]


def test_the_gil_is_released_while_rendering():
    """With a switch interval too long to ever force a switch, the main thread can only run while the
    worker is inside render if render let go of the GIL (as a render does once it has run a few
    microseconds): the main thread then sees it unfinished."""
    t = ChatTemplate("{% for i in range(100000) %}{% for j in range(3) %}{{ i }}{% endfor %}{% endfor %}")
    started, finished = threading.Event(), []

    def work() -> None:
        started.set()
        t.render([])
        finished.append(True)

    old = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        th = threading.Thread(target=work)
        th.start()
        started.wait()
        unfinished = not finished
        th.join()
    finally:
        sys.setswitchinterval(old)
    assert unfinished and finished


# ---- a model's templates --------------------------------------------------------------------------------

DEFAULT = "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}{{ eos_token }}"
TOOL_USE = "{{ bos_token }}tools: {{ tools|tojson }}{% for m in messages %}[{{ m.content }}]{% endfor %}"


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    """phi-3's vocabulary (tests/data) with an EOS inside its 312 tokens, a default and a named template."""
    path = tmp_path_factory.mktemp("chat") / "phi-3-chat.gguf"
    pygguf.edit(PHI3, path, set={"tokenizer.ggml.eos_token_id": 2, "tokenizer.chat_template": DEFAULT,
                                 "tokenizer.chat_template.tool_use": TOOL_USE})
    return path


def test_a_model_s_templates(model_path):
    with pygguf.open(model_path) as m:
        assert m.chat_template_names == ["default", "tool_use"]
        t = m.chat_template()
        assert m.chat_template("default") is t and m.chat_template(None) is t  # compiled once
        assert t.name == "default" and t.source == DEFAULT
        assert t.defaults == {"bos_token": "<s>", "eos_token": "</s>"}
        assert repr(t).startswith("<pygguf.ChatTemplate 'default' of ")
        tool_use = m.chat_template("tool_use")
        with pytest.raises(KeyError, match="tokenizer.chat_template.rag"):
            m.chat_template("rag")
        with pytest.raises(TypeError):
            m.chat_template(1)
    # the templates outlive the model, with its tokens
    assert t.render(CHAT[1:2]) == "<s><|user|>What is 2+2?<|end|></s>"
    assert t.render(CHAT[1:2], bos_token="", eos_token="<eos>") == "<|user|>What is 2+2?<|end|><eos>"
    assert tool_use.render(CHAT[1:2], tools=[{"a": 1}]) == '<s>tools: [{"a": 1}][What is 2+2?]'
    back = pickle.loads(pickle.dumps(tool_use))
    assert (back.name, back.defaults, back.source) == ("tool_use", tool_use.defaults, TOOL_USE)
    assert back.render(CHAT[1:2], tools=None) == tool_use.render(CHAT[1:2], tools=None)
    with pytest.raises(ValueError):
        m.chat_template()
    with pytest.raises(ValueError):
        _ = m.chat_template_names


def test_models_without_templates_and_odd_ones(tmp_path):
    path = tmp_path / "none.gguf"
    pygguf.edit(PHI3, path, delete=["tokenizer.chat_template", "tokenizer.ggml.bos_token_id"])
    with pygguf.open(path) as m:
        assert m.chat_template_names == []
        with pytest.raises(KeyError, match="'tokenizer.chat_template'"):
            m.chat_template()
    # a template named "default" stands in for tokenizer.chat_template only when that is missing
    pygguf.edit(path, tmp_path / "named.gguf", set={"tokenizer.chat_template.default": "named {{ bos_token }}"})
    with pygguf.open(tmp_path / "named.gguf") as m:
        assert m.chat_template_names == ["default"]
        assert m.chat_template().render([]) == "named "  # no BOS id: no bos_token
        assert m.chat_template().defaults == {}
    pygguf.edit(PHI3, tmp_path / "both.gguf", set={"tokenizer.chat_template.default": "named"})
    with pygguf.open(tmp_path / "both.gguf") as m:
        assert m.chat_template_names == ["default"]
        assert m.chat_template().source.startswith("{{ bos_token }}")
    pygguf.edit(PHI3, tmp_path / "bad.gguf", set={"tokenizer.chat_template": 7,
                                                  "tokenizer.chat_template.broken": "{% if %}"})
    with pygguf.open(tmp_path / "bad.gguf") as m:
        with pytest.raises(GGUFError) as e:
            m.chat_template()
        assert e.value.code == "type_mismatch" and e.value.key == "tokenizer.chat_template"
        with pytest.raises(TemplateError) as e:
            m.chat_template("broken")
        assert e.value.kind == "TemplateSyntaxError"


def test_the_committed_phi3_template():
    with pygguf.open(PHI3) as m:
        t = m.chat_template()
        source = m.metadata["tokenizer.chat_template"]
    assert t.defaults == {"bos_token": "<s>"}  # its EOS id (32000) is past the 312 tokens kept
    conversation = CHAT[1:3] + [CHAT[3]]
    assert t.render(conversation, add_generation_prompt=True) == jinja(
        source, conversation, add_generation_prompt=True, bos_token="<s>")


# ---- every shared template and case (tests/chat/agreement.py, in process) --------------------------------

needs_templates = pytest.mark.skipif(
    reference is None or not sorted((SHARED / "data" / "chat-templates").glob("*.jinja")),
    reason=f"no chat templates in {SHARED / 'data' / 'chat-templates'} (or no jinja2)")


@needs_templates
def test_every_shared_template_agrees_with_jinja2():
    templates, cases = make_expected.template_paths(SHARED), make_expected.case_paths()
    expected = make_expected.render_all(templates, cases, make_expected.NOW)[0]
    report = io.StringIO()
    kinds = agreement.run_agreement(agreement.pygguf_renderer(make_expected.NOW), templates, cases, expected,
                                    show=5, rows=10, out=report)
    assert len(templates) * len(cases) == 10650
    assert not kinds, report.getvalue()
