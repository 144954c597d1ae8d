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
