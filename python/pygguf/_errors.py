"""The exception pygguf raises for a file it refuses or a call it cannot make."""

from __future__ import annotations


class GGUFError(ValueError):
    """A GGUF file that breaks a rule of the format, or a call the library cannot make with it.

    Attributes:
        code: the library's name for what failed (``"truncated"``, ``"bad_vocabulary"``, ...).
        offset: the byte offset of the failing field in the file, or ``None`` when the error is not
            about one byte (a lookup, a size check).
        key: what the error is about (a metadata key, a tensor name), or ``None``.

    Errors of the operating system (a missing file, a full disk) are raised as :class:`OSError` with
    ``errno`` and ``filename`` instead.
    """

    def __init__(self, message: str, code: str | None = None, offset: int | None = None, key: str | None = None):
        super().__init__(message)
        self.code = code
        self.offset = offset
        self.key = key


class TemplateError(ValueError):
    """A chat template that does not compile, or a render that fails: where Jinja2 (in transformers'
    environment) raises, pygguf raises this.

    Attributes:
        kind: the name of the exception Jinja2 raises there: ``"TemplateSyntaxError"``,
            ``"TemplateAssertionError"`` (an unknown filter or test), ``"UndefinedError"``,
            ``"TypeError"``, ``"ValueError"``, ``"IndexError"``, ``"KeyError"``, ``"ZeroDivisionError"``,
            ``"OverflowError"``, ``"SecurityError"`` (the immutable sandbox), ``"TemplateRuntimeError"``,
            ``"TemplateError"`` (the template's own ``raise_exception(message)``); or ``"limit"`` (a
            render past its limits of output, memory, steps, depth or time) and ``"unsupported"`` (what
            this engine does not do: ``include``, ``import``, ``extends``, ...).
        message: the message; a ``raise_exception`` message verbatim.
        line: the template's line (from 1), or ``None`` when unknown.

    ``str(e)`` is ``"kind: message (line N)"``. A ``ValueError`` like every pygguf error about what the
    caller gave (a request handler's ``except ValueError`` catches it), but not a :class:`GGUFError`:
    nothing is wrong with the file.
    """

    def __init__(self, kind: str, message: str, line: int | None = None):
        super().__init__(kind, message, line)
        self.kind = kind
        self.message = message
        self.line = line

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind}: {self.message}{where}"
