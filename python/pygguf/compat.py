"""A drop-in for gguf-py's reader and ``gguf.quants``: code written for gguf-py changes one import.

gguf-py is llama.cpp's Python package. Code such as transformers' GGUF loader::

    from gguf import GGUFReader, dequantize, GGML_QUANT_SIZES, GGUFValueType

runs unchanged on ``from pygguf.compat import ...``; the file is validated by the C++ library and the
blocks are (de)quantized by its kernels, bit-exact with ggml.

What is emulated, as gguf-py's ``gguf.gguf_reader`` and ``gguf.quants`` do it:

- :class:`GGUFReader`: ``fields`` (an ``OrderedDict`` of :class:`ReaderField`, with the ``GGUF.version``,
  ``GGUF.tensor_count`` and ``GGUF.kv_count`` pseudo-fields first), ``tensors`` (a list of
  :class:`ReaderTensor`), ``alignment``, ``data_offset``, ``byte_order`` (``'I'`` or ``'S'``),
  ``endianess``, ``data`` (the file as a ``numpy.memmap``), ``get_field`` and ``get_tensor``. Every
  part is the numpy view over the file that gguf-py builds: same bytes, dtype (byte order included) and
  shape, one part per array item as gguf-py has them, with the same ``data`` indices and ``types``.
  ``mode`` ``'r+'`` and ``'c'`` give writeable views, as gguf-py's in-place editing scripts use them.
- :func:`dequantize`, :func:`quantize`, :func:`quant_shape_to_byte_shape`,
  :func:`quant_shape_from_byte_shape`, :class:`QuantError`, with the same shapes and dtypes.
- ``GGMLQuantizationType`` (:class:`pygguf.GGMLType`, same member names and ids), ``GGUFValueType``
  (:class:`pygguf.ValueType`), :class:`GGUFEndian`, ``GGML_QUANT_SIZES`` and
  ``READER_SUPPORTED_VERSIONS``.

Where it differs:

- Speed: a field's parts are read when the field is first used, and the tensor list when it is first
  used, so a vocabulary of 100k tokens opens in milliseconds (gguf-py builds its 500k parts at once).
- Validation is the library's (ggml's rules), stricter than gguf-py's: misaligned, overlapping or
  out-of-bounds tensor data, bad booleans and the like raise :class:`pygguf.GGUFError` (a
  ``ValueError``) where gguf-py reads on. GGUF v1 files, which gguf-py refuses, are refused too.
- Keys and tensor names that are not valid UTF-8 are decoded with ``surrogateescape`` (gguf-py raises
  ``UnicodeDecodeError``); ``contents()`` decodes strings exactly as gguf-py does (strict UTF-8).
- ``alignment`` and ``data_offset`` are Python ints (gguf-py gives ``general.alignment`` as a
  ``numpy.uint32``); parts and tensor data are plain ``numpy.ndarray`` views (gguf-py's are
  ``numpy.memmap`` slices); a zero-dimensional tensor of a block type has the data shape
  ``(n_bytes,)`` (gguf-py fails on it).
- :func:`quantize` and :func:`dequantize` take numpy arrays only (not gguf-py's lazy tensors) and cover
  more types: :func:`dequantize` every type (gguf-py lacks Q8_1, Q8_K, I8 to I64, F64, Q1_0 and Q2_0),
  :func:`quantize` every type ggml has a quantizer for (gguf-py's BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
  TQ1_0, TQ2_0 and MXFP4, and the k-quants, IQ types, NVFP4, Q1_0 and Q2_0). IQ1_S, IQ2_XXS and IQ2_XS
  need importance weights and raise :class:`pygguf.GGUFError`: use :func:`pygguf.quantize` with
  ``imatrix=``.
- :func:`quantize` gives ggml's bytes where gguf-py's differ: a block holding a NaN (gguf-py's scale
  turns NaN, ggml's comparisons skip NaN weights), and a block of zeros whose first weight is -0.0 in
  Q4_0, Q5_0 (ggml's scale is -0.0) and Q4_1, Q5_1 (ggml's minimum is that -0.0).
- :func:`dequantize` reads typed data in the other byte order (a byte-swapped file's F32, F16, I16,
  I32, I64, F64 tensors) by its dtype, where gguf-py reinterprets the swapped bytes. Blocks in uint8
  arrays are read as little-endian, as by gguf-py: a big-endian file's blocks are read by
  :meth:`pygguf.Tensor.numpy`.

Not emulated: gguf-py's writer (``GGUFWriter``), constants beyond the ones above, the reader's private
helpers (``_get``, ``_build_fields``, ...), and GGUF files given as open file objects.
"""

from __future__ import annotations

import enum
import functools
import os
import struct
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, NamedTuple, Union

import numpy as np
import numpy.typing as npt

from . import _model
from ._arrays import dequantize as _dequantize
from ._arrays import quantize as _quantize
from ._errors import GGUFError
from ._types import GGMLType, ValueType

__all__ = [
    "GGML_QUANT_SIZES",
    "GGMLQuantizationType",
    "GGUFEndian",
    "GGUFReader",
    "GGUFValueType",
    "READER_SUPPORTED_VERSIONS",
    "QuantError",
    "ReaderField",
    "ReaderTensor",
    "dequantize",
    "quant_shape_from_byte_shape",
    "quant_shape_to_byte_shape",
    "quantize",
]

#: gguf-py's name for the tensor types: :class:`pygguf.GGMLType` (same member names and values).
GGMLQuantizationType = GGMLType
#: gguf-py's name for the metadata value types: :class:`pygguf.ValueType`.
GGUFValueType = ValueType

#: ``(block_size, type_size)`` of every tensor type: weights per block and bytes per block.
GGML_QUANT_SIZES: dict[GGMLType, tuple[int, int]] = {t: (t.block_size, t.type_size) for t in GGMLType}

#: The GGUF versions gguf-py's reader (and so this one) accepts.
READER_SUPPORTED_VERSIONS: list[int] = [2, 3]

_DEFAULT_ALIGNMENT = 32


class GGUFEndian(enum.IntEnum):
    """A file's byte order, as gguf-py's ``GGUFReader.endianess`` gives it."""

    LITTLE = 0
    BIG = 1


def _to_string(part: np.ndarray) -> str:
    return str(part.tobytes(), encoding="utf-8")


class ReaderField(NamedTuple):
    """One key/value of the file (or a tensor's info, or a ``GGUF.*`` header pseudo-field) as gguf-py
    describes it: the views over the file that make it up.

    Attributes:
        offset: the byte offset of the field (its key's length) in the file.
        name: the key.
        parts: numpy views over the file, in file order: for a key/value the key's length, the key's
            bytes, the value type, then the value's parts (a string is its length and its bytes; an
            array is its item type, its length, then each item's parts, one item after another).
        data: the indices in ``parts`` of the value's items (of each item's bytes for strings).
        types: the value's type, then for an array its item type (and so on for nested arrays; only
            ``[ARRAY]`` for an empty one).
    """

    offset: int
    name: str
    parts: list[npt.NDArray[Any]] = []
    data: list[int] = [-1]
    types: list[ValueType] = []

    def contents(self, index_or_slice: int | slice = slice(None)) -> Any:
        """The value as Python objects, exactly as gguf-py's ``ReaderField.contents``.

        A scalar is a Python number or bool, a string a ``str`` (strict UTF-8); for an array, an int
        index gives one item and a slice a list of items (a nested array's items flattened). ``None``
        for a field without types (a tensor's info).
        """
        if not self.types:
            return None
        main_type = self.types[0]
        if main_type == ValueType.ARRAY:
            indices = self.data[index_or_slice]
            if self.types[-1] == ValueType.STRING:
                if isinstance(index_or_slice, int):
                    return _to_string(self.parts[indices])  # type: ignore[index]
                return [_to_string(self.parts[i]) for i in indices]  # type: ignore[union-attr]
            if isinstance(index_or_slice, int):
                return self.parts[indices].tolist()[0]  # type: ignore[index]
            return [v for i in indices for v in self.parts[i].tolist()]  # type: ignore[union-attr]
        if main_type == ValueType.STRING:
            return _to_string(self.parts[-1])
        return self.parts[-1].tolist()[0]


#: A field's parts, data indices and types.
_Parts = tuple[list[npt.NDArray[Any]], list[int], list[ValueType]]


class _LazyField(ReaderField):
    """A :class:`ReaderField` whose ``parts``, ``data`` and ``types`` are read on first use.

    The tuple holds three empty lists from the start; the first access to any of them (by attribute,
    index, iteration, comparison or ``repr``) fills all three in place, so the lists a caller got stay
    the field's lists. Building twice (two threads at once) fills them twice with the same views.
    """

    def __new__(cls, offset: int, name: str, build: Callable[[], _Parts]) -> _LazyField:
        self = super().__new__(cls, offset, name, [], [], [])
        self.__dict__["_build"] = build
        return self

    def _fill(self) -> None:
        build = self.__dict__.get("_build")
        if build is None:
            return
        parts, data, types = build()
        tuple.__getitem__(self, 2)[:] = parts
        tuple.__getitem__(self, 3)[:] = data
        tuple.__getitem__(self, 4)[:] = types
        self.__dict__.pop("_build", None)

    @property
    def parts(self) -> list[npt.NDArray[Any]]:  # type: ignore[override]
        """See :class:`ReaderField`."""
        self._fill()
        return tuple.__getitem__(self, 2)

    @property
    def data(self) -> list[int]:  # type: ignore[override]
        """See :class:`ReaderField`."""
        self._fill()
        return tuple.__getitem__(self, 3)

    @property
    def types(self) -> list[ValueType]:  # type: ignore[override]
        """See :class:`ReaderField`."""
        self._fill()
        return tuple.__getitem__(self, 4)

    def __getitem__(self, index: Any) -> Any:
        self._fill()
        return tuple.__getitem__(self, index)

    def __iter__(self) -> Iterator[Any]:
        self._fill()
        return tuple.__iter__(self)

    def __contains__(self, item: object) -> bool:
        self._fill()
        return tuple.__contains__(self, item)

    def __eq__(self, other: object) -> bool:
        return tuple(self) == other

    def __ne__(self, other: object) -> bool:
        return tuple(self) != other

    __hash__ = tuple.__hash__  # as ReaderField's: unhashable, it holds lists

    def __repr__(self) -> str:
        return repr(ReaderField(*self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReaderField, tuple(self))


class ReaderTensor(NamedTuple):
    """One tensor as gguf-py's reader gives it.

    Attributes:
        name: the tensor's name.
        tensor_type: its :class:`pygguf.GGMLType` (equal to gguf-py's ``GGMLQuantizationType``).
        shape: its dimensions in ggml's order (``ne0`` first): the uint64 view over its info.
        n_elements: the number of elements.
        n_bytes: the size of its data in bytes.
        data_offset: the absolute byte offset of its data in the file.
        data: its data as a view over the file, in numpy's order (``shape`` reversed): typed for
            F32, F16, F64, I8, I16, I32 and I64; for the other types (BF16 included) uint8, with the
            last axis in bytes (:func:`quant_shape_to_byte_shape`).
        field: the tensor's info as a :class:`ReaderField` (name length, name, dimension count,
            dimensions, type, offset; ``data`` = ``[1, 3, 4, 5]``; no ``types``).
    """

    name: str
    tensor_type: GGMLType
    shape: npt.NDArray[np.uint64]
    n_elements: int
    n_bytes: int
    data_offset: int
    data: npt.NDArray[Any]
    field: ReaderField


# The element type of ReaderTensor.data for the types gguf-py gives typed arrays; bytes for the others.
_TYPED_DATA: dict[GGMLType, type[np.generic]] = {
    GGMLType.F16: np.float16,
    GGMLType.F32: np.float32,
    GGMLType.F64: np.float64,
    GGMLType.I8: np.int8,
    GGMLType.I16: np.int16,
    GGMLType.I32: np.int32,
    GGMLType.I64: np.int64,
}


class _Layout:
    """Reads the parts of fields and tensor infos out of a file's bytes, as gguf-py lays them out.

    Everything is read from ``data`` (bounds-checked numpy slicing and ``struct``), never through the
    library's parse, so views of a file opened for writing reflect what is in it when they are built.
    """

    def __init__(self, data: np.ndarray, byte_order: Literal["I", "S"], file_order: str):
        self.arr = np.asarray(data)  # plain ndarray views: slicing a memmap is several times slower
        self.order = byte_order
        self.dtypes = {t: np.dtype(np_t).newbyteorder(byte_order) for t, np_t in GGUFReader.gguf_scalar_to_np.items()}
        self.u32 = self.dtypes[ValueType.UINT32]
        self.u64 = self.dtypes[ValueType.UINT64]
        prefix = "<" if file_order == "little" else ">"
        self._u32 = struct.Struct(prefix + "I")
        self._u64 = struct.Struct(prefix + "Q")
        self._buf = memoryview(self.arr)
        self._lanes_cache: list[np.ndarray] | None = None

    def get(self, offset: int, dtype: np.dtype, count: int = 1) -> np.ndarray:
        """``count`` items of ``dtype`` at ``offset`` (gguf-py's ``GGUFReader._get``)."""
        return self.arr[offset : offset + dtype.itemsize * count].view(dtype)

    def u32_at(self, offset: int) -> int:
        return self._u32.unpack_from(self._buf, offset)[0]

    def u64_at(self, offset: int) -> int:
        return self._u64.unpack_from(self._buf, offset)[0]

    @property
    def _lanes(self) -> list[np.ndarray]:
        # uint64 views of the file starting at byte 0..7: the (1,) view at offset o is lanes[o & 7][o >> 3].
        if self._lanes_cache is None:
            n = len(self.arr)
            self._lanes_cache = [self.arr[r : r + (n - r) // 8 * 8].view(self.u64) for r in range(8)]
        return self._lanes_cache

    def _strings(self, offset: int, count: int) -> tuple[int, list[np.ndarray]]:
        """The parts of ``count`` strings from ``offset`` (length, bytes, length, bytes, ...) and their end."""
        starts: list[int] = []
        unpack, buf, pos = self._u64.unpack_from, self._buf, offset
        for _ in range(count):
            starts.append(pos)
            pos += 8 + unpack(buf, pos)[0]
        lanes, arr = self._lanes, self.arr
        parts: list[np.ndarray] = []
        append = parts.append
        for start, end in zip(starts, starts[1:] + [pos]):
            k = start >> 3
            append(lanes[start & 7][k : k + 1])
            append(arr[start + 8 : end])
        return pos, parts

    def value_parts(self, offset: int, raw_type: int) -> tuple[int, list[np.ndarray], list[int], list[ValueType]]:
        """A value's size, parts, data indices and types (gguf-py's ``_get_field_parts``)."""
        vtype = _value_type(raw_type, offset)
        if vtype == ValueType.STRING:
            end, parts = self._strings(offset, 1)
            return end - offset, parts, [1], [vtype]
        dtype = self.dtypes.get(vtype)
        if dtype is not None:
            return dtype.itemsize, [self.get(offset, dtype)], [0], [vtype]
        item_type, count = self.get(offset, self.u32), self.get(offset + 4, self.u64)
        parts: list[np.ndarray] = [item_type, count]
        types = [vtype]
        n, itype, pos = int(count[0]), int(item_type[0]), offset + 12
        if n == 0:
            return 12, parts, [], types
        types.append(_value_type(itype, offset))
        if types[-1] == ValueType.STRING:
            end, items = self._strings(pos, n)
            return end - offset, parts + items, list(range(3, 2 + 2 * n, 2)), types
        dtype = self.dtypes.get(types[-1])
        if dtype is not None:
            items = list(self.arr[pos : pos + n * dtype.itemsize].view(dtype).reshape(n, 1))
            return 12 + n * dtype.itemsize, parts + items, list(range(2, 2 + n)), types
        idxs: list[int] = []
        for k in range(n):  # arrays of arrays, flattened as gguf-py does
            size, item_parts, item_idxs, item_types = self.value_parts(pos, itype)
            if k == 0:
                types[1:] = item_types
            idxs += (i + len(parts) for i in item_idxs)
            parts += item_parts
            pos += size
        return pos - offset, parts, idxs, types

    def value_size(self, offset: int, raw_type: int) -> int:
        """A value's size in bytes, without building its parts."""
        vtype = _value_type(raw_type, offset)
        if vtype == ValueType.STRING:
            return 8 + self.u64_at(offset)
        dtype = self.dtypes.get(vtype)
        if dtype is not None:
            return dtype.itemsize
        itype, n = self.u32_at(offset), self.u64_at(offset + 4)
        item = self.dtypes.get(_value_type(itype, offset)) if n else None
        if item is not None:
            return 12 + n * item.itemsize
        pos = offset + 12
        for _ in range(n):
            pos += self.value_size(pos, itype)
        return pos - offset

    def kv_parts(self, offset: int) -> _Parts:
        """The parts, data indices and types of the key/value at ``offset``."""
        key_len = self.get(offset, self.u64)
        key = self.get(offset + 8, self.dtypes[ValueType.UINT8], int(key_len[0]))
        raw_type = self.get(offset + 8 + len(key), self.u32)
        _, parts, idxs, types = self.value_parts(offset + 12 + len(key), int(raw_type[0]))
        return [key_len, key, raw_type, *parts], [i + 3 for i in idxs], types

    def kv_end(self, offset: int) -> int:
        """The offset just past the key/value at ``offset``."""
        pos = offset + 8 + self.u64_at(offset)
        return pos + 4 + self.value_size(pos + 4, self.u32_at(pos))

    def tensor_info(self, offset: int) -> ReaderField:
        """The info of the tensor at ``offset`` (gguf-py's ``_get_tensor_info_field``)."""
        name_len = self.get(offset, self.u64)
        pos = offset + 8 + int(name_len[0])
        name = self.get(offset + 8, self.dtypes[ValueType.UINT8], int(name_len[0]))
        n_dims = self.get(pos, self.u32)
        dims = self.get(pos + 4, self.u64, int(n_dims[0]))
        pos += 4 + dims.nbytes
        raw_type = self.get(pos, self.u32)
        data_offset = self.get(pos + 4, self.u64)
        name_str = name.tobytes().decode("utf-8", "surrogateescape")
        return ReaderField(offset, name_str, [name_len, name, n_dims, dims, raw_type, data_offset], [1, 3, 4, 5], [])

    def tensor(self, info: ReaderField, data_start: int) -> ReaderTensor:
        """A :class:`ReaderTensor` from its info (gguf-py's ``_build_tensors``)."""
        _, _, _, dims, raw_type, offset = info.parts
        tensor_type = GGMLType(int(raw_type[0]))
        n_elements = 1
        for d in dims.tolist():
            n_elements *= int(d)
        np_dims: tuple[int, ...] = tuple(reversed(dims.tolist()))
        block_size, type_size = GGML_QUANT_SIZES[tensor_type]
        n_bytes = n_elements * type_size // block_size
        start = data_start + int(offset[0])
        typed = _TYPED_DATA.get(tensor_type)
        if typed is not None:
            data = self.get(start, np.dtype(typed).newbyteorder(self.order), n_elements)
        else:
            data = self.get(start, np.dtype(np.uint8), n_bytes)
            np_dims = quant_shape_to_byte_shape(np_dims, tensor_type) if np_dims else (n_bytes,)
        return ReaderTensor(info.name, tensor_type, dims, n_elements, n_bytes, start, data.reshape(np_dims), info)


def _value_type(raw: int, offset: int) -> ValueType:
    try:
        return ValueType(raw)
    except ValueError:  # only in a file changed after it was opened (mode 'r+')
        raise GGUFError(f"unknown value type {raw}", "bad_value_type", offset) from None


class GGUFReader:
    """A GGUF file read as gguf-py's ``GGUFReader`` reads it (see the module's notes).

    Args:
        path: the file.
        mode: ``'r'`` (read-only views), ``'r+'`` (views that write to the file) or ``'c'``
            (copy-on-write views), as ``numpy.memmap``'s.
    Raises:
        GGUFError: a file that breaks the format, or a GGUF v1 file.
        OSError: a file that cannot be opened.

    Attributes:
        data: the whole file, a ``numpy.memmap`` of uint8.
        fields: every key/value by key, in file order, after the three ``GGUF.*`` pseudo-fields of the
            header (``GGUF.version``, ``GGUF.tensor_count``, ``GGUF.kv_count``).
        tensors: every tensor, in file order.
        alignment: ``general.alignment``, or 32.
        data_offset: the offset of the data section: the end of the tensor infos rounded up to the
            alignment (for a file without tensors too, where ggml itself reports the unrounded end).
        byte_order: ``'I'`` when the file's byte order is the machine's, ``'S'`` (swapped) otherwise.
        endianess: the file's byte order as :class:`GGUFEndian` (gguf-py's spelling).
    """

    #: gguf-py's ``GGUFReader.gguf_scalar_to_np``: the numpy type of each scalar value type.
    gguf_scalar_to_np: dict[ValueType, type[np.generic]] = {
        ValueType.UINT8: np.uint8,
        ValueType.INT8: np.int8,
        ValueType.UINT16: np.uint16,
        ValueType.INT16: np.int16,
        ValueType.UINT32: np.uint32,
        ValueType.INT32: np.int32,
        ValueType.FLOAT32: np.float32,
        ValueType.UINT64: np.uint64,
        ValueType.INT64: np.int64,
        ValueType.FLOAT64: np.float64,
        ValueType.BOOL: np.bool_,
    }

    byte_order: Literal["I", "S"] = "I"
    alignment: int = _DEFAULT_ALIGNMENT

    def __init__(self, path: Union[str, os.PathLike[str]], mode: Literal["r", "r+", "c"] = "r"):
        if mode not in ("r", "r+", "c"):
            raise ValueError(f"mode must be 'r', 'r+' or 'c', not {mode!r}")
        if os.stat(path).st_size == 0:  # numpy cannot map an empty file; the library says why it is no GGUF
            _model.open(b"")
        mapped = np.memmap(path, mode="r")
        model = _model.open(mapped)  # validates; parsed in place (the map is read-only)
        if model.version not in READER_SUPPORTED_VERSIONS:
            raise GGUFError(f"GGUF version {model.version} is not read by gguf-py's reader", "bad_version", 4)
        self.data: np.ndarray = mapped if mode == "r" else np.memmap(path, mode=mode)
        self.byte_order = "I" if model.byte_order == sys.byteorder else "S"
        self.endianess: GGUFEndian = GGUFEndian.BIG if model.byte_order == "big" else GGUFEndian.LITTLE
        self.alignment = model.alignment
        self._layout = layout = _Layout(self.data, self.byte_order, model.byte_order)
        version = layout.get(4, layout.u32)
        counts = layout.get(8, layout.u64, 2)
        self.fields: OrderedDict[str, ReaderField] = OrderedDict(
            [
                ("GGUF.version", ReaderField(4, "GGUF.version", [version], [0], [ValueType.UINT32])),
                ("GGUF.tensor_count", ReaderField(8, "GGUF.tensor_count", [counts[:1]], [0], [ValueType.UINT64])),
                ("GGUF.kv_count", ReaderField(16, "GGUF.kv_count", [counts[1:]], [0], [ValueType.UINT64])),
            ]
        )
        # by the key's bytes: a key that is not UTF-8 (a str with surrogates) has no str lookup
        source = model._source
        offsets = [(key, source.entry_offset(key.encode("utf-8", "surrogateescape"))) for key in model.metadata]
        for key, offset in offsets:
            if key in self.fields:  # a key named like a pseudo-field: gguf-py refuses the file too
                raise GGUFError(f"duplicate key {key!r}", "duplicate_key", offset, key)
            self.fields[key] = _LazyField(offset, key, functools.partial(layout.kv_parts, offset))
        self._last_kv: int | None = offsets[-1][1] if offsets else None
        self._n_tensors = len(model.tensors)

    @functools.cached_property
    def _tensor_infos(self) -> tuple[int, list[ReaderField]]:
        # The tensor infos follow the last key/value: the only value walked to find where they start.
        pos = 24 if self._last_kv is None else self._layout.kv_end(self._last_kv)
        infos = []
        for _ in range(self._n_tensors):
            info = self._layout.tensor_info(pos)
            pos += sum(int(p.nbytes) for p in info.parts)
            infos.append(info)
        return pos, infos

    @functools.cached_property
    def data_offset(self) -> int:
        """The offset of the data section (see the class's attributes); read on first use."""
        end = self._tensor_infos[0]
        return end + (-end % self.alignment)

    @functools.cached_property
    def tensors(self) -> list[ReaderTensor]:
        """Every tensor, in file order (see :class:`ReaderTensor`); read on first use."""
        start = self.data_offset
        return [self._layout.tensor(info, start) for info in self._tensor_infos[1]]

    def get_field(self, key: str) -> ReaderField | None:
        """The field of ``key``, or ``None``."""
        return self.fields.get(key, None)

    def get_tensor(self, idx: int) -> ReaderTensor:
        """The tensor at position ``idx``."""
        return self.tensors[idx]


class QuantError(Exception):
    """A tensor that cannot be quantized to a type: its rows are not whole blocks (gguf-py's
    ``gguf.quants.QuantError``)."""


def quant_shape_to_byte_shape(shape: Sequence[int], quant_type: GGMLType) -> tuple[int, ...]:
    """The shape of ``shape``'s data in bytes: the last axis (a row) in bytes of ``quant_type``.

    Raises:
        ValueError: a row that is not a whole number of blocks.
    """
    block_size, type_size = GGML_QUANT_SIZES[quant_type]
    if shape[-1] % block_size != 0:
        raise ValueError(
            f"Quantized tensor row size ({shape[-1]}) is not a multiple of {quant_type.name} block size ({block_size})"
        )
    return (*shape[:-1], shape[-1] // block_size * type_size)


def quant_shape_from_byte_shape(shape: Sequence[int], quant_type: GGMLType) -> tuple[int, ...]:
    """The shape of the values of data of byte shape ``shape`` (the last axis in bytes of ``quant_type``).

    Raises:
        ValueError: a row that is not a whole number of blocks.
    """
    block_size, type_size = GGML_QUANT_SIZES[quant_type]
    if shape[-1] % type_size != 0:
        raise ValueError(
            f"Quantized tensor bytes per row ({shape[-1]}) is not a multiple of {quant_type.name} type size "
            f"({type_size})"
        )
    return (*shape[:-1], shape[-1] // type_size * block_size)


def quantize(data: np.ndarray, qtype: GGMLType) -> np.ndarray:
    """Quantizes rows (along the last axis) to ``qtype``, bit-exact with ggml, as ``gguf.quants.quantize``.

    F32 and F16 give ``data.astype(float32 / float16)``; every other type a uint8 array of
    ``quant_shape_to_byte_shape(data.shape, qtype)``.

    Raises:
        NotImplementedError: a type without a quantizer (Q8_1, Q8_K, the integer types, F64).
        QuantError: rows that are not whole blocks.
        GGUFError: a type whose quantizer needs importance weights (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS).
    """
    qtype = GGMLType(qtype)
    if qtype == GGMLType.F32:
        return data.astype(np.float32, copy=False)
    if qtype == GGMLType.F16:
        return data.astype(np.float16, copy=False)
    if not qtype.can_quantize:
        raise NotImplementedError(f"Quantization for {qtype.name} is not yet implemented")
    if data.shape[-1] % qtype.block_size != 0:
        raise QuantError(f"Can't quantize tensor with shape {data.shape} to {qtype.name}")
    return _quantize(data, qtype)


def dequantize(data: np.ndarray, qtype: GGMLType) -> np.ndarray:
    """Dequantizes data to float32, as ``gguf.quants.dequantize``.

    F32 data is reinterpreted (``data.view(float32)``), F16 data converted
    (``data.view(float16).astype(float32)``). Any other type takes the blocks' bytes as a uint8 array
    (``ReaderTensor.data``) whose last axis is a row in bytes, and gives float32 of
    ``quant_shape_from_byte_shape(data.shape, qtype)``, dequantized by the library's kernels.

    Unlike gguf-py, typed data in the other byte order (``ReaderTensor.data`` of F32, F16, I16, I32,
    I64 and F64 tensors of a byte-swapped file) is read in its dtype's order, where gguf-py
    reinterprets the swapped bytes. Blocks in uint8 arrays are read as little-endian, as gguf-py does:
    for the blocks of a big-endian file, use :meth:`pygguf.Tensor.numpy`.

    Raises:
        ValueError: rows that are not whole blocks.
    """
    qtype = GGMLType(qtype)
    if qtype == GGMLType.F32:
        return data.astype(np.float32, copy=False) if _is_float(data, 4) else data.view(np.float32)
    if qtype == GGMLType.F16:
        return (data if _is_float(data, 2) else data.view(np.float16)).astype(np.float32)
    order = {">": "big", "<": "little"}.get(data.dtype.byteorder, sys.byteorder)
    raw = np.ascontiguousarray(data).view(np.uint8)
    shape = quant_shape_from_byte_shape(raw.shape, qtype)
    return _dequantize(raw, qtype, byte_order=order).reshape(shape)


def _is_float(data: np.ndarray, size: int) -> bool:
    return data.dtype.kind == "f" and data.dtype.itemsize == size
