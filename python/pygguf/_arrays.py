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
            numpy's order. One dimension when ``None``.
        dtype: ``numpy.float32``, ``numpy.float16`` or ``"bfloat16"`` (uint16 bits).
        out: an array to write into (C-contiguous, writeable, of that dtype and size).
        threads: how many threads; all cores when ``None`` (large inputs only).
        byte_order: ``"big"`` for the blocks of a big-endian file.
    Raises:
        ValueError: bytes that are not whole blocks, or a shape of another size.
    """
    return _core.dequantize(raw, type, shape, dtype, out, threads, byte_order)


def quantize(array: Any, type: TypeLike, imatrix: Any = None, *, threads: int | None = None) -> np.ndarray:  # noqa: A002
    """Quantizes rows of numbers to ``type``, bit-exact with ggml's ``ggml_quantize_chunk``.

    Args:
        array: numbers (converted to float32); rows along the last axis, whose length must be a whole
            number of blocks.
        type: the type to write: any ``GGMLType`` whose ``can_quantize`` is true.
        imatrix: importance weights, one per column (an imatrix entry), or ``None``; the IQ1/IQ2 types
            require them, the types that do not use them ignore them, as in ggml.
        threads: how many threads (rows are independent); all cores when ``None``.
    Returns:
        a uint8 array of the array's shape with its last axis in bytes (as ``gguf.quants.quantize``).
    Raises:
        GGUFError: a type without a quantizer, a row that is not whole blocks, or a row ggml cannot
            quantize (NaN or infinities for the IQ grid types).
    """
    return _core.quantize(np.asarray(array), type, imatrix, threads)
