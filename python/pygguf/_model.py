"""Reading: ``pygguf.open`` and the model, metadata and tensors it gives."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, Union

import numpy as np

from . import _core
from ._args import integer
from ._chat_template import ChatTemplate
from ._tokenizer import Tokenizer
from ._types import GGMLType, ValueType

PathLike = Union[str, "os.PathLike[str]"]

#: What ``dtype=`` accepts: ``numpy.float32`` (the default), ``numpy.float16``, or ``"bfloat16"``
#: (bf16 bits in a uint16 array: numpy has no bfloat16).
DType = Any


class Metadata(Mapping):
    """A model's metadata: a read-only mapping from key to value, in file order.

    Values are Python ints, floats, bools and strs; an array of numbers is a read-only numpy array
    over the file's bytes (no copy; in the file's byte order); an array of strings is a
    :class:`StringArray`, decoded item by item as it is read; an array of arrays is a list. Strings are
    decoded as UTF-8 with ``surrogateescape``: ``s.encode("utf-8", "surrogateescape")`` gives the
    stored bytes back, even for the partial UTF-8 some vocabularies hold.
    """

    __slots__ = ("_source", "_keys")

    def __init__(self, source: _core.Source):
        self._source = source
        self._keys: list[str] | None = None

    def __getitem__(self, key: str) -> Any:
        return self._source.value(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._source.contains(key)

    def __iter__(self) -> Iterator[str]:
        if self._keys is None:
            self._keys = self._source.keys()
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._source)

    def __repr__(self) -> str:
        return f"<pygguf.Metadata of {len(self)} keys>"

    def type(self, key: str) -> ValueType:
        """The stored type of ``key``'s value (:class:`ValueType`; ``ARRAY`` for arrays)."""
        return ValueType(self._source.value_type(key))

    def item_type(self, key: str) -> ValueType | None:
        """The type of the items of ``key``'s array, or ``None`` when the value is not an array."""
        t = self._source.item_type(key)
        return None if t is None else ValueType(t)

    def offset(self, key: str) -> int:
        """The byte offset of ``key``'s entry (its key's length field) in the file."""
        return self._source.entry_offset(key)


class Tensor:
    """One tensor of a model: its info, its bytes as stored, and its values.

    ``shape`` is in ggml's order, innermost first (``shape[0]`` is ``ne0``, a row's length), as every
    GGUF tool prints it; ``numpy_shape`` is the reverse, the shape ``numpy()`` returns.
    """

    __slots__ = ("_source", "_index", "name", "type", "shape", "n_elements", "n_bytes", "offset", "data_offset", "shard")

    def __init__(self, source: _core.Source, index: int):
        name, type_, shape, n_elements, n_bytes, offset, data_offset, shard = source.tensor(index)
        self._source = source
        self._index = index
        #: The tensor's name.
        self.name: str = name
        #: Its ggml type.
        self.type: GGMLType = GGMLType(type_)
        #: Elements per dimension, ggml's order: ``shape[0]`` is ``ne0``, the row length.
        self.shape: tuple[int, ...] = shape
        #: The number of elements.
        self.n_elements: int = n_elements
        #: The size of its data, in bytes.
        self.n_bytes: int = n_bytes
        #: The absolute byte offset of its data in its file.
        self.offset: int = offset
        #: The offset of its data from the start of the file's data section (as stored).
        self.data_offset: int = data_offset
        #: The shard holding it (0 for a model in one file).
        self.shard: int = shard

    @property
    def numpy_shape(self) -> tuple[int, ...]:
        """The shape in numpy's order (``shape`` reversed): ``numpy()``'s shape."""
        return tuple(reversed(self.shape))

    @property
    def n_rows(self) -> int:
        """The number of rows of ``shape[0]`` elements."""
        return self.n_elements // self.shape[0] if self.shape and self.shape[0] else 0

    @property
    def raw(self) -> np.ndarray:
        """The tensor's bytes as stored: a read-only uint8 array over the file, no copy. It keeps the
        file mapped while it lives."""
        return self._source.raw(self._index)

    def numpy(self, dtype: DType = np.float32, out: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
        """The tensor's values, dequantized by the library's SIMD kernels (the GIL released).

        Args:
            dtype: ``numpy.float32``, ``numpy.float16`` (each value rounded to nearest even), or
                ``"bfloat16"`` (bf16 bits in a uint16 array).
            out: an array to write into (C-contiguous, writeable, of that dtype in the native byte
                order, of ``n_elements`` elements); a new one of ``numpy_shape`` when ``None``.
            threads: how many threads (the calling one included), at least 1 (more than 1024 count as
                1024); all cores when ``None``. Small tensors use one.
        Returns:
            ``out``, or the new array.
        """
        return self._source.dequantize(self._index, dtype, out, threads)

    def rows(self, first: int, last: int, dtype: DType = np.float32, out: np.ndarray | None = None) -> np.ndarray:
        """Rows ``first`` to ``last`` (excluded) of the tensor seen as ``n_rows`` rows of ``shape[0]``
        values, dequantized: an array of shape ``(last - first, shape[0])``.

        Raises:
            IndexError: unless ``0 <= first <= last <= n_rows``.
        """
        return self._source.dequantize(self._index, dtype, out, 1, first, last)

    def torch(self, dtype: Any = None, threads: int | None = None) -> Any:
        """The values as a torch tensor of ``numpy_shape`` (``torch.float32`` by default;
        ``torch.float16`` and ``torch.bfloat16`` too). Needs torch."""
        import torch  # noqa: PLC0415 (optional)

        dtype = torch.float32 if dtype is None else dtype
        if dtype == torch.bfloat16:
            # torch takes no uint16 array (before 2.3): the bits go through int16
            return torch.from_numpy(self.numpy("bfloat16", threads=threads).view(np.int16)).view(torch.bfloat16)
        if dtype == torch.float16:
            return torch.from_numpy(self.numpy(np.float16, threads=threads))
        if dtype == torch.float32:
            return torch.from_numpy(self.numpy(np.float32, threads=threads))
        raise ValueError("dtype must be torch.float32, torch.float16 or torch.bfloat16")

    def __repr__(self) -> str:
        return f"<pygguf.Tensor {self.name!r} {self.type.ggml_name} {list(self.shape)}>"


class Tensors(Mapping):
    """A model's tensors: a read-only mapping from name to :class:`Tensor`, in file order (shard by
    shard for a split model)."""

    __slots__ = ("_source", "_names")

    def __init__(self, source: _core.Source):
        self._source = source
        self._names: list[str] | None = None

    def __getitem__(self, name: str) -> Tensor:
        i = self._source.tensor_index(name) if isinstance(name, str) else -1
        if i < 0:
            raise KeyError(name)
        return Tensor(self._source, i)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._source.tensor_index(name) >= 0

    def __iter__(self) -> Iterator[str]:
        if self._names is None:
            self._names = [self._source.tensor(i)[0] for i in range(self._source.tensor_count())]
        return iter(self._names)

    def __len__(self) -> int:
        return self._source.tensor_count()

    def at(self, index: int) -> Tensor:
        """The tensor at position ``index`` in file order."""
        n = len(self)
        index = integer(index, "index")
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("tensor index out of range")
        return Tensor(self._source, index)

    def __repr__(self) -> str:
        return f"<pygguf.Tensors of {len(self)} tensors>"


class Model:
    """A GGUF file, a shard set opened as one model, or a buffer: see :func:`open`.

    Its views (numpy arrays of metadata and tensors, :class:`Tensor` objects) keep the files mapped
    while they live; :meth:`close` (or leaving a ``with`` block) lets go of the model's own hold, and is
    safe while views exist.
    """

    def __init__(self, source: _core.Source):
        self._source: _core.Source | None = source
        self._metadata = Metadata(source)
        self._tensors = Tensors(source)
        self._tokenizer: Any = None
        self._chat_templates: dict[str, ChatTemplate] = {}

    def _open(self) -> _core.Source:
        if self._source is None:
            raise ValueError("the model is closed")
        return self._source

    @property
    def version(self) -> int:
        """The GGUF format version: 1, 2 or 3."""
        return self._open().version

    @property
    def alignment(self) -> int:
        """``general.alignment``, or 32."""
        return self._open().alignment

    @property
    def byte_order(self) -> str:
        """``"little"`` or ``"big"``: the file's byte order."""
        return self._open().byte_order

    @property
    def paths(self) -> list[str]:
        """The files (every shard of a split model); empty for a buffer."""
        return [os.fspath(p) for p in self._open().paths]

    @property
    def metadata(self) -> Metadata:
        """The metadata (a split model's first shard's)."""
        self._open()
        return self._metadata

    @property
    def tensors(self) -> Tensors:
        """The tensors, by name, in file order."""
        self._open()
        return self._tensors

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of the model's vocabulary (:class:`Tokenizer`), built at the first use and kept.
        It owns its tables: it keeps working after :meth:`close`.

        Raises:
            GGUFError: a model without a usable vocabulary (code ``not_found``, ``out_of_range`` or
                ``bad_vocabulary``, with the key).
            ValueError: the model is closed.
        """
        source = self._open()
        if self._tokenizer is None:
            self._tokenizer = Tokenizer(_core.Tokenizer.from_source(source))
        return self._tokenizer

    @property
    def chat_template_names(self) -> list[str]:
        """The names of the model's chat templates, in file order: ``"default"`` for
        ``tokenizer.chat_template`` (first when there is one), then each ``NAME`` of
        ``tokenizer.chat_template.NAME`` (``"tool_use"``, ``"rag"``, ...). "default" is the name Hugging
        Face gives the default template in a tokenizer's list of templates, and the one its converters
        write as ``tokenizer.chat_template``. Empty for a model without a template."""
        names: list[str] = []
        for name in _core.ChatTemplate.names(self._open()):
            name = name or "default"
            if name not in names:
                names.append(name)
        return names

    def chat_template(self, name: str | None = None) -> ChatTemplate:
        """The model's chat template (:class:`ChatTemplate`), compiled at the first use and kept. It
        renders with the model's ``bos_token`` and ``eos_token`` unless a render gives them, and keeps
        working after :meth:`close`.

        Args:
            name: ``None`` or ``"default"`` for ``tokenizer.chat_template``; another name (see
                :attr:`chat_template_names`) for ``tokenizer.chat_template.NAME``.
        Raises:
            KeyError: the model has no such template (the message is the metadata key).
            TemplateError: the template does not compile.
            GGUFError: the key's value is not a string (code ``"type_mismatch"``).
            ValueError: the model is closed.
        """
        source = self._open()
        if name is None:
            name = "default"
        if not isinstance(name, str):
            raise TypeError(f"a chat template's name is a str, not {type(name).__name__}")
        template = self._chat_templates.get(name)
        if template is None:
            key = name
            if name == "default" and not (
                source.contains("tokenizer.chat_template.default") and not source.contains("tokenizer.chat_template")
            ):
                key = ""  # tokenizer.chat_template (a key named ".default" stands in only when it is missing)
            text, defaults = _core.ChatTemplate.model_template(source, key)
            template = ChatTemplate._make(text, defaults, name)
            self._chat_templates[name] = template
        return template

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._source is None

    def close(self) -> None:
        """Lets go of the model; the files stay mapped until its last view is gone."""
        self._source = None
        self._metadata = None  # type: ignore[assignment]
        self._tensors = None  # type: ignore[assignment]
        self._tokenizer = None
        self._chat_templates = {}

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._source is None:
            return "<pygguf.Model (closed)>"
        where = self.paths[0] if self.paths else "a buffer"
        return f"<pygguf.Model {where!r}: {len(self._metadata)} keys, {len(self._tensors)} tensors>"


def open(source: PathLike | bytes | bytearray | memoryview | Any, *, limits: dict[str, int] | None = None) -> Model:  # noqa: A001
    """Opens a GGUF file, a split model or a buffer.

    Args:
        source: a path (``str`` or ``os.PathLike``): a file, any shard of a set (``m-00002-of-00003.gguf``
            opens all three), or a set's prefix; or any object with the buffer protocol. A buffer is
            parsed in place (no copy) when its bytes cannot change: ``bytes``, an ``mmap`` made with
            ``ACCESS_READ`` (which cannot then be closed while the model or a view lives), or a
            memoryview or numpy array over one of those (``numpy.memmap(path, mode="r")``). Any other
            buffer is copied first, read-only views of writable memory included
            (``memoryview(bytearray).toreadonly()``).
        limits: the parser's limits (``max_depth``, up to 2**32 - 1; ``max_string_length``,
            ``max_array_length``, ``max_metadata_bytes``, up to 2**64 - 1), for files from strangers.
    Raises:
        GGUFError: a file that breaks the format (with its byte offset).
        OSError: a file that cannot be opened or mapped.
    """
    limits = dict(limits or {})
    if isinstance(source, (str, os.PathLike)):
        return Model(_core.Source.open(os.fspath(source), limits))
    return Model(_core.Source.parse(source, limits))
