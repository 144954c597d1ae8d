"""ggml's tensor types and GGUF's metadata value types, as enumerations."""

from __future__ import annotations

import enum

from . import _core

_TRAITS = {row[0]: row[1:] for row in _core.types}  # id -> (name, block_size, type_size, quantized, can_quantize)


class GGMLType(enum.IntEnum):
    """A tensor type, with ggml's ids (``GGML_TYPE_*``); the member names are gguf-py's.

    ``GGMLType.Q4_K.ggml_name`` is ggml's own name, ``"q4_K"``; ``GGMLType.from_name("q4_K")`` goes
    back. Also ``block_size`` (weights per block), ``type_size`` (bytes per block), ``quantized`` and
    ``can_quantize`` (``pygguf.quantize`` writes it).
    """

    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6
    Q5_1 = 7
    Q8_0 = 8
    Q8_1 = 9
    Q2_K = 10
    Q3_K = 11
    Q4_K = 12
    Q5_K = 13
    Q6_K = 14
    Q8_K = 15
    IQ2_XXS = 16
    IQ2_XS = 17
    IQ3_XXS = 18
    IQ1_S = 19
    IQ4_NL = 20
    IQ3_S = 21
    IQ2_S = 22
    IQ4_XS = 23
    I8 = 24
    I16 = 25
    I32 = 26
    I64 = 27
    F64 = 28
    IQ1_M = 29
    BF16 = 30
    TQ1_0 = 34
    TQ2_0 = 35
    MXFP4 = 39
    NVFP4 = 40
    Q1_0 = 41
    Q2_0 = 42

    @property
    def ggml_name(self) -> str:
        """ggml's lower-case name (``ggml_type_name``), e.g. ``"q4_K"``."""
        return _TRAITS[self.value][0]

    @property
    def block_size(self) -> int:
        """Weights per block (1 for the plain types)."""
        return _TRAITS[self.value][1]

    @property
    def type_size(self) -> int:
        """Bytes per block."""
        return _TRAITS[self.value][2]

    @property
    def quantized(self) -> bool:
        """ggml's ``ggml_is_quantized``."""
        return _TRAITS[self.value][3]

    @property
    def can_quantize(self) -> bool:
        """True when ``pygguf.quantize`` can write this type (ggml has a quantizer for it)."""
        return _TRAITS[self.value][4]

    @classmethod
    def from_name(cls, name: str) -> GGMLType:
        """The type of ggml's name (``"q4_K"``) or of a member name (``"Q4_K"``)."""
        for t in cls:
            if t.ggml_name == name or t.name == name:
                return t
        raise ValueError(f"unknown ggml type name: {name!r}")


class ValueType(enum.IntEnum):
    """A metadata value's type, with GGUF's ids (gguf-py's ``GGUFValueType``)."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12
