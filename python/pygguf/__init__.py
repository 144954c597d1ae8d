"""pygguf: GGUF model files from Python, on the gguf C++ library.

Read a model (or a shard set, or a buffer) zero-copy, dequantize its tensors with SIMD kernels, quantize
bit-exactly as ggml does::

    import pygguf
    with pygguf.open("model.gguf") as m:
        print(m.metadata["general.architecture"])
        w = m.tensors["token_embd.weight"].numpy()   # float32, numpy's shape

``pygguf.compat`` is a drop-in for gguf-py's ``GGUFReader`` and ``gguf.quants``.
"""

from __future__ import annotations

from . import _core
from ._arrays import dequantize, quantize
from ._errors import GGUFError
from ._model import Metadata, Model, Tensor, Tensors, open
from ._types import GGMLType, ValueType

StringArray = _core.StringArray

#: The library's version.
__version__: str = _core.version

__all__ = [
    "GGMLType",
    "GGUFError",
    "Metadata",
    "Model",
    "StringArray",
    "Tensor",
    "Tensors",
    "ValueType",
    "dequantize",
    "open",
    "quantize",
    "__version__",
]
