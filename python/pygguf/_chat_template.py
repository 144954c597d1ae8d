"""Chat templates: :class:`ChatTemplate`, and a model's own (``Model.chat_template``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Union

from . import _core

#: What a template's variables may be: dicts (their order kept; str keys), lists, tuples (as lists), strs,
#: ints (of any size), floats, bools and None, nested; and their subclasses.
Value = Union[Mapping[str, Any], Sequence[Any], str, int, float, bool, None]


def _restore(source: str, defaults: dict[str, Any] | None, name: str | None) -> ChatTemplate:
    """Unpickles a :class:`ChatTemplate` (compiled anew from its source)."""
    return ChatTemplate._make(source, defaults, name)


class ChatTemplate(_core.ChatTemplate):
    """A chat template compiled once, rendered as Hugging Face transformers renders it
    (``apply_chat_template``): Jinja2 3.1 in transformers' environment, with Python's semantics where
    templates rely on them (str methods, printing of lists, dicts and floats, integers of any size).

    Compile one from a source (``ChatTemplate(source)``) or take a model's
    (:meth:`Model.chat_template`). It is immutable and thread-safe: a render releases the GIL once it has run a
    few microseconds, so several Python threads can render one template at once. Every render is bounded in output (64 MiB), memory
    (256 MiB), steps, call depth and time (2 s): a hostile template fails with
    :class:`TemplateError` (kind ``"limit"``) instead of hanging.

    ``render(messages, *, tools=None, documents=None, add_generation_prompt=False, now=None,
    **variables)`` gives the text (see its own documentation): Python objects are passed as they are,
    dicts in their order, without JSON text in between.

    Errors: where Jinja2 raises, :class:`TemplateError`, whose ``kind`` names the exception Jinja2
    raises (``TemplateSyntaxError``, ``UndefinedError``, ``TypeError``, ``TemplateError`` for the
    template's own ``raise_exception(message)``, ...), with the message and the template's line.

    Pickling compiles the source again; copies are the template itself.
    """

    __slots__ = ()

    def __init__(self, source: str):
        """Compiles ``source`` as Jinja2 compiles it in transformers' environment.

        Raises:
            TemplateError: a template Jinja2 refuses (``kind`` ``"TemplateSyntaxError"``, or
                ``"TemplateAssertionError"`` for an unknown filter or test outside an ``if``), or one
                over the compile limit of 1 MiB (``"limit"``); ``line`` says where.
            TypeError: ``source`` is not a str.
            ValueError: ``source`` has lone surrogates (it is not text).
        """
        if not isinstance(source, str):
            raise TypeError(f"a template's source is a str, not {type(source).__name__}")
        super().__init__(source)

    @classmethod
    def _make(cls, source: str, defaults: dict[str, Any] | None, name: str | None) -> ChatTemplate:
        """A template with default variables and a name (a model's)."""
        t = cls.__new__(cls)
        _core.ChatTemplate.__init__(t, source, defaults, name)
        return t

    # render is the core's, a C function taking its arguments as they come: a Python wrapper's **kwargs
    # and call would cost a fifth of a small template's render
    if TYPE_CHECKING:

        def render(
            self,
            messages: Value,
            *,
            tools: Value = None,
            documents: Value = None,
            add_generation_prompt: Value = False,
            now: datetime | str | None = None,
            **variables: Value,
        ) -> str:
            """Renders the template as ``apply_chat_template(..., tokenize=False)`` does (the full
            documentation is the method's own: ``help(pygguf.ChatTemplate.render)``)."""

    source = property(_core.ChatTemplate.source.fget, doc="The template's text as given (or as the model has it).")
    name = property(
        _core.ChatTemplate.name.fget,
        doc="""The model's name of the template (``"default"``, ``"tool_use"``, ...; see
        :attr:`Model.chat_template_names`), or ``None`` for a template compiled from a source.""",
    )
    defaults = property(
        _core.ChatTemplate.defaults.fget,
        doc="""The variables every render gets unless given: a model's ``bos_token`` and ``eos_token``
        (the texts of its BOS and EOS tokens, each absent when the model has none); empty for a
        template compiled from a source. A new dict at each call.""",
    )

    def __copy__(self) -> ChatTemplate:
        """The template itself: it is immutable."""
        return self

    def __deepcopy__(self, memo: dict) -> ChatTemplate:
        """The template itself: it is immutable."""
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (self.source, self.defaults or None, self.name))

    def __repr__(self) -> str:
        """``<pygguf.ChatTemplate 'default' of 1234 characters: '{%- if messages[0]...'>``."""
        source = self.source
        head = source[:40] + ("..." if len(source) > 40 else "")
        name = f" {self.name!r}" if self.name is not None else ""
        return f"<pygguf.ChatTemplate{name} of {len(source)} characters: {head!r}>"
