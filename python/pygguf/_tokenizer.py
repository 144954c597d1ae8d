"""The tokenizer a model carries (``Model.tokenizer``)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union, overload

import numpy as np

from . import _core

if TYPE_CHECKING:
    from ._model import Model

#: A text to encode: a ``str`` (encoded as UTF-8, lone surrogates U+DC80..U+DCFF as the bytes they
#: escape) or the raw bytes (``bytes``, ``bytearray``, ``memoryview``, any bytes-like object).
Text = Union[str, bytes, bytearray, memoryview]

#: Token ids: a sequence (or any iterable) of ints, or a 1-D numpy array of integers.
TokenIds = Union[Sequence[int], Iterable[int], np.ndarray]


class TokenAttr(enum.IntFlag):
    """A token's attributes, as llama.cpp loads them (``llama_token_attr``; the same bit values)."""

    #: No type given.
    UNDEFINED = 0
    #: The unknown token.
    UNKNOWN = 1 << 0
    #: Reserved; never produced by encoding.
    UNUSED = 1 << 1
    #: An ordinary piece of text.
    NORMAL = 1 << 2
    #: A control token (BOS, EOS, ...): matched in text only with ``parse_special``, and written by
    #: ``decode`` only with ``unparse_special``.
    CONTROL = 1 << 3
    #: An added token: matched in the text before it is tokenized.
    USER_DEFINED = 1 << 4
    #: A byte-fallback token (``<0xXX>``).
    BYTE = 1 << 5
    #: (Unused by llama.cpp's tokenizers.)
    NORMALIZED = 1 << 6
    #: Eats the whitespace before it when matched.
    LSTRIP = 1 << 7
    #: Eats the whitespace after it when matched.
    RSTRIP = 1 << 8
    #: (Unused by llama.cpp's tokenizers.)
    SINGLE_WORD = 1 << 9


def _special_id(name: str, doc: str) -> Any:
    """A read-only property giving the core tokenizer's special id ``name`` (``None`` when absent)."""
    return property(lambda self: getattr(self._t, name), doc=doc)


class Tokenizer:
    """The tokenizer of a model's vocabulary (the ``tokenizer.ggml.*`` keys), with exactly llama.cpp's
    ids (``llama_tokenize``) and bytes (``llama_detokenize``), for every tokenizer model llama.cpp has:
    SPM, BPE with each of its pre-tokenizers, WPM, UGM, RWKV and PLaMo-2.

    Get one from :attr:`Model.tokenizer` or :meth:`from_model`. It owns its tables: it keeps working
    after the model is closed. It is immutable and thread-safe: encoding and decoding long inputs
    release the GIL, so several Python threads can use one tokenizer at once, and
    :meth:`encode_batch` runs on several threads itself.

    Token ids are Python ints; an id outside the vocabulary raises :class:`GGUFError` with code
    ``"out_of_range"`` wherever one is taken (``is_eog`` answers ``False`` instead).

    Texts: a ``str`` is encoded as UTF-8; ``bytes`` are tokenized as they are (invalid UTF-8 as
    llama.cpp does). ``decode`` returns a ``str`` (``errors="replace"`` by default: a slice of ids may
    end inside a character) and ``decode_bytes`` the exact bytes.
    """

    __slots__ = ("_t",)

    #: The attribute flags :meth:`token_attr` returns.
    TokenAttr = TokenAttr

    def __init__(self, core: _core.Tokenizer):
        """Wraps a compiled tokenizer; use :attr:`Model.tokenizer` or :meth:`from_model` instead."""
        if not isinstance(core, _core.Tokenizer):
            raise TypeError("a Tokenizer comes from Model.tokenizer or Tokenizer.from_model(model)")
        self._t = core

    def __copy__(self) -> Tokenizer:
        """The tokenizer itself: it is immutable."""
        return self

    def __deepcopy__(self, memo: dict) -> Tokenizer:
        """The tokenizer itself: it is immutable."""
        return self

    @classmethod
    def from_model(cls, model: Model) -> Tokenizer:
        """Builds the tokenizer of ``model``'s vocabulary (a new one at each call; :attr:`Model.tokenizer`
        builds one once and keeps it). The GIL is released while it is built, on all cores for a large
        vocabulary (the tokenizer does not depend on it).

        Raises:
            GGUFError: ``not_found`` for a model without a tokenizer (the key says which is missing),
                ``out_of_range`` for a tokenizer model or pre-tokenizer llama.cpp does not know,
                ``bad_vocabulary`` (with the key) for a vocabulary no tokenizer can use.
            ValueError: the model is closed.
        """
        return cls(_core.Tokenizer.from_source(model._open()))

    # ---- encoding -------------------------------------------------------------------------------------

    @overload
    def encode(
        self, text: Text, *, add_special: bool = ..., parse_special: bool = ..., as_numpy: Literal[False] = ...
    ) -> list[int]: ...

    @overload
    def encode(
        self, text: Text, *, add_special: bool = ..., parse_special: bool = ..., as_numpy: Literal[True]
    ) -> np.ndarray: ...

    def encode(
        self, text: Text, *, add_special: bool = True, parse_special: bool = False, as_numpy: bool = False
    ) -> list[int] | np.ndarray:
        """The token ids of ``text``, identical to llama.cpp's ``llama_tokenize``.

        Args:
            text: a ``str`` (encoded as UTF-8; the lone surrogates of ``surrogateescape`` as the bytes
                they stand for) or bytes, tokenized as they are (invalid UTF-8 as llama.cpp does).
            add_special: add BOS/EOS/SEP as the vocabulary asks (``add_bos``/``add_eos``; BERT's always).
            parse_special: match the texts of control tokens (``<|im_end|>``, ``<s>``, ...) in ``text``;
                without it they are tokenized as plain text. Added (user-defined) tokens always match.
            as_numpy: return an int32 numpy array instead of a list.
        Returns:
            The ids, as a list of ints (or an int32 array).

        The GIL is released while a long text (4 KiB or more) is encoded.
        """
        return self._t.encode(text, add_special, parse_special, as_numpy)

    @overload
    def encode_batch(
        self,
        texts: Iterable[Text],
        *,
        add_special: bool = ...,
        parse_special: bool = ...,
        threads: int | None = ...,
        as_numpy: Literal[False] = ...,
    ) -> list[list[int]]: ...

    @overload
    def encode_batch(
        self,
        texts: Iterable[Text],
        *,
        add_special: bool = ...,
        parse_special: bool = ...,
        threads: int | None = ...,
        as_numpy: Literal[True],
    ) -> list[np.ndarray]: ...

    def encode_batch(
        self,
        texts: Iterable[Text],
        *,
        add_special: bool = True,
        parse_special: bool = False,
        threads: int | None = None,
        as_numpy: bool = False,
    ) -> list[list[int]] | list[np.ndarray]:
        """The token ids of each text, as :meth:`encode` gives them, encoded on several threads with the
        GIL released.

        Args:
            texts: an iterable of texts (``str`` or bytes; not one ``str``).
            add_special: as for :meth:`encode`.
            parse_special: as for :meth:`encode`.
            threads: how many threads (the calling one included), at most one per text; when ``None``,
                one per 16 KiB of text, at most one per core.
            as_numpy: each list of ids as an int32 numpy array instead.
        Returns:
            One list of ids (or array) per text, in order.
        """
        return self._t.encode_batch(texts, add_special, parse_special, threads, as_numpy)

    # ---- decoding -------------------------------------------------------------------------------------

    def decode(
        self, ids: TokenIds, *, remove_special: bool = False, unparse_special: bool = False, errors: str = "replace"
    ) -> str:
        """The text of ``ids``: :meth:`decode_bytes` decoded as UTF-8.

        Args:
            ids: token ids (a list, any iterable of ints, or a 1-D integer numpy array).
            remove_special: drop a leading BOS and a trailing EOS that the vocabulary adds.
            unparse_special: write the texts of control and unknown tokens (otherwise they write nothing).
            errors: how bytes that are not UTF-8 are decoded (Python's error handlers). ``"replace"``
                (the default) gives U+FFFD for them, as a display wants: llama.cpp's bytes may end inside a
                character when ``ids`` is a slice, and byte tokens may form invalid UTF-8.
                ``"surrogateescape"`` loses nothing: ``s.encode("utf-8", "surrogateescape")`` is
                :meth:`decode_bytes`' result, and :meth:`encode` takes such a ``str`` back as those
                bytes. ``"strict"`` raises ``UnicodeDecodeError``. To decode a stream of ids piece by
                piece, feed :meth:`decode_bytes` (or :meth:`token_to_piece`) to
                ``codecs.getincrementaldecoder("utf-8")()``.
        Raises:
            GGUFError: an id outside the vocabulary (code ``"out_of_range"``).
        """
        return self._t.decode(ids, remove_special, unparse_special, errors)

    def decode_bytes(self, ids: TokenIds, *, remove_special: bool = False, unparse_special: bool = False) -> bytes:
        """The bytes of ``ids``, identical to llama.cpp's ``llama_detokenize`` (not necessarily valid
        UTF-8: a character may be split across ids). The flags are :meth:`decode`'s. The GIL is released
        for long lists (1024 ids or more).

        Raises:
            GGUFError: an id outside the vocabulary (code ``"out_of_range"``).
        """
        return self._t.decode_bytes(ids, remove_special, unparse_special)

    def token_to_piece(self, id: int, *, special: bool = True) -> bytes:  # noqa: A002 (llama.cpp's name)
        """The bytes of one token, as llama.cpp's ``llama_token_to_piece`` (``lstrip`` 0) gives them.

        Args:
            id: the token.
            special: write the texts of control and unknown tokens (otherwise they give ``b""``).
        Raises:
            GGUFError: an id outside the vocabulary (code ``"out_of_range"``).
        """
        return self._t.token_to_piece(id, special)

    # ---- the vocabulary -------------------------------------------------------------------------------

    @property
    def n_vocab(self) -> int:
        """The number of tokens (``llama_vocab_n_tokens``); ids run from 0 to ``n_vocab - 1``."""
        return self._t.n_vocab

    def __len__(self) -> int:
        """The number of tokens, :attr:`n_vocab`."""
        return self._t.n_vocab

    @property
    def vocab_type(self) -> str:
        """The tokenizer model, llama.cpp's ``llama_vocab_type`` in lower case: ``"spm"``, ``"bpe"``,
        ``"wpm"``, ``"ugm"``, ``"rwkv"`` or ``"plamo2"``."""
        return self._t.vocab_type

    @property
    def model(self) -> str:
        """``tokenizer.ggml.model`` as written (``"llama"``, ``"gpt2"``, ``"bert"``, ``"t5"``, ...)."""
        return self._t.model

    @property
    def pre(self) -> str | None:
        """``tokenizer.ggml.pre`` as written (the BPE pre-tokenizer's name), or ``None`` when absent."""
        p = self._t.pre
        return p or None

    @property
    def add_bos(self) -> bool:
        """True when ``encode(..., add_special=True)`` starts with BOS."""
        return self._t.add_bos

    @property
    def add_eos(self) -> bool:
        """True when ``encode(..., add_special=True)`` ends with EOS."""
        return self._t.add_eos

    bos: int | None = _special_id("bos", "The beginning-of-sequence token, or ``None``.")
    eos: int | None = _special_id("eos", "The end-of-sequence token, or ``None``.")
    eot: int | None = _special_id("eot", "The end-of-turn token, or ``None``.")
    eom: int | None = _special_id("eom", "The end-of-message token, or ``None``.")
    sep: int | None = _special_id("sep", "The separator token, or ``None``.")
    unk: int | None = _special_id("unk", "The unknown token, or ``None``.")
    pad: int | None = _special_id("pad", "The padding token, or ``None``.")
    mask: int | None = _special_id("mask", "The mask token, or ``None``.")
    newline: int | None = _special_id("newline", "The newline token as llama.cpp finds it (``llama_vocab_nl``), or ``None``.")

    @property
    def eog_ids(self) -> list[int]:
        """Every end-of-generation token (EOS, EOT, EOM, and the ones llama.cpp recognizes by text),
        ascending."""
        return self._t.eog_ids

    def is_eog(self, id: int) -> bool:  # noqa: A002
        """True when ``id`` ends generation (``llama_vocab_is_eog``); ``False`` for an id outside the
        vocabulary."""
        return self._t.is_eog(id)

    def find(self, text: Text) -> int | None:
        """The id of the token whose text (as stored, e.g. ``"▁the"`` or ``"Ġthe"``) is exactly ``text``,
        or ``None``."""
        return self._t.find(text)

    def token_text(self, id: int) -> str:  # noqa: A002
        """The text of token ``id`` as stored (``llama_vocab_get_text``), decoded as UTF-8 with
        ``surrogateescape`` as the metadata's strings are (see :meth:`token_bytes`).

        Raises:
            GGUFError: an id outside the vocabulary (code ``"out_of_range"``).
        """
        return self._t.token_text(id)

    def token_bytes(self, id: int) -> bytes:  # noqa: A002
        """The text of token ``id`` as stored, as bytes.

        Raises:
            GGUFError: an id outside the vocabulary (code ``"out_of_range"``).
        """
        return self._t.token_bytes(id)

    def token_attr(self, id: int) -> TokenAttr:  # noqa: A002
        """The attributes of token ``id`` (``llama_vocab_get_attr``): its type (``NORMAL``, ``CONTROL``,
        ``BYTE``, ...) and flags.

        Raises:
            GGUFError: an id outside the vocabulary (code ``"out_of_range"``).
        """
        return TokenAttr(self._t.token_attr(id))

    def token_score(self, id: int) -> float:  # noqa: A002
        """The score of token ``id`` (``llama_vocab_get_score``; 0.0 when the file has none).

        Raises:
            GGUFError: an id outside the vocabulary (code ``"out_of_range"``).
        """
        return self._t.token_score(id)

    def __repr__(self) -> str:
        """``<pygguf.Tokenizer bpe ('gpt2', pre 'gpt-2'): 50257 tokens>``."""
        pre = f", pre {self.pre!r}" if self.pre else ""
        return f"<pygguf.Tokenizer {self.vocab_type} ({self.model!r}{pre}): {self.n_vocab} tokens>"
