"""pygguf: GGUF model files from Python, on the gguf C++ library.

Read a model (or a shard set, or a buffer) zero-copy, dequantize its tensors with SIMD kernels, quantize
bit-exactly as ggml does::

    import pygguf
    with pygguf.open("model.gguf") as m:
        print(m.metadata["general.architecture"])
        w = m.tensors["token_embd.weight"].numpy()   # float32, numpy's shape

Render a model's chat template as transformers' ``apply_chat_template`` does::

    with pygguf.open("model.gguf") as m:
        prompt = m.chat_template().render(messages, add_generation_prompt=True)

``pygguf.compat`` is a drop-in for gguf-py's ``GGUFReader`` and ``gguf.quants``.
"""

from __future__ import annotations

import collections.abc

from . import _core
from ._arrays import dequantize, quantize
from ._chat_template import ChatTemplate
from ._errors import GGUFError, TemplateError
from ._model import Metadata, Model, Tensor, Tensors, open
from ._tokenizer import Tokenizer
from ._types import GGMLType, ValueType
from ._writing import edit, facts, merge, quantize_model, save, split

StringArray = _core.StringArray


def _iterate_strings(self: StringArray):  # type: ignore[valid-type]
    """The items in order (decoded in chunks: one call into the core per 4096 items, not per item)."""
    n = len(self)
    for start in range(0, n, 4096):
        yield from self[start : start + 4096]


StringArray.__iter__ = _iterate_strings  # type: ignore[method-assign]
collections.abc.Sequence.register(StringArray)

#: The library's version.
__version__: str = _core.version

__all__ = [
    "ChatTemplate",
    "GGMLType",
    "GGUFError",
    "Metadata",
    "Model",
    "StringArray",
    "TemplateError",
    "Tensor",
    "Tensors",
    "Tokenizer",
    "ValueType",
    "dequantize",
    "edit",
    "facts",
    "merge",
    "open",
    "quantize",
    "quantize_model",
    "save",
    "split",
    "__version__",
]
