"""Dequantizing and quantizing blocks outside a file."""

from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

from . import _core
from ._types import GGMLType

TypeLike = Union[GGMLType, int, str]


def dequantize(
    raw: Any,
    type: TypeLike,  # noqa: A002 (the issue's name)
    shape: Sequence[int] | None = None,
    *,
    dtype: Any = np.float32,
    out: np.ndarray | None = None,
    threads: int | None = None,
    byte_order: str = "little",
) -> np.ndarray:
    """Dequantizes whole blocks of ``type``.

    Args:
        raw: the blocks' bytes (``bytes``, a uint8 array, any C-contiguous buffer).
        type: a :class:`GGMLType`, its id, or ggml's name (``"q4_K"``).
        shape: the shape in ggml's order (``Tensor.shape``, ``ne0`` first); the result has the reverse,
            numpy's order. One dimension when ``None`` (or an int).
        dtype: ``numpy.float32``, ``numpy.float16`` or ``"bfloat16"`` (uint16 bits).
        out: an array to write into (C-contiguous, writeable, of that dtype in the native byte order,
            and of that size): a ``'>f4'`` array is refused, as the values are native floats.
        threads: how many threads, at least 1 (more than 1024 count as 1024); all cores when ``None``
            (large inputs only).
        byte_order: ``"big"`` for the blocks of a big-endian file. An array of ``raw`` in the
            non-native byte order (``'>f2'`` on a little-endian machine) needs the matching one.
    Raises:
        ValueError: bytes that are not whole blocks, a shape of another size (or a negative
            dimension), an ``out`` that does not fit, a ``threads`` below 1.
        TypeError: a shape or ``threads`` that is not made of integers, an ``out`` that is not an array.
    """
    return _core.dequantize(raw, type, shape, dtype, out, threads, byte_order)


def quantize(array: Any, type: TypeLike, imatrix: Any = None, *, threads: int | None = None) -> np.ndarray:  # noqa: A002
    """Quantizes rows of numbers to ``type``, bit-exact with ggml's ``ggml_quantize_chunk``.

    Args:
        array: numbers (converted to native float32 as numpy converts, any byte order); rows along the
            last axis, whose length must be a whole number of blocks.
        type: the type to write: any ``GGMLType`` whose ``can_quantize`` is true.
        imatrix: importance weights, one per column (an imatrix entry), or ``None``; the IQ1/IQ2 types
            require them, the types that do not use them ignore them, as in ggml.
        threads: how many threads (rows are independent), at least 1 (more than 1024 count as 1024);
            all cores when ``None``.
    Returns:
        a uint8 array of the array's shape with its last axis in bytes (as ``gguf.quants.quantize``).
    Raises:
        GGUFError: a type without a quantizer, a row that is not whole blocks, or a row ggml cannot
            quantize (NaN or infinities for the IQ grid types).
    """
    return _core.quantize(np.asarray(array), type, imatrix, threads)
