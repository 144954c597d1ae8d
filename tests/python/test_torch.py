"""Tensor.torch(): the dequantized values as torch tensors, in float32, float16 and bfloat16.

torch is an optional dependency of pygguf; CI installs Debian's python3-torch so that these run. Where
torch is missing they are skipped, saying so.
"""

from __future__ import annotations

import numpy as np
import pytest

import pygguf

from support import DATA

torch = pytest.importorskip("torch", reason="torch is not installed (Debian: python3-torch)")

QUANTS = DATA / "quants" / "quants-s1.gguf"


def test_float32_is_numpys_result_with_the_same_shape():
    with pygguf.open(QUANTS) as q:
        assert len(q.tensors) > 10
        for t in q.tensors.values():
            x = t.torch()
            assert x.dtype == torch.float32
            assert tuple(x.shape) == t.numpy_shape
            want = t.numpy()
            assert np.array_equal(x.numpy().view(np.uint32), want.view(np.uint32)), t.name


def test_float16_and_bfloat16_are_the_float_results_rounded_to_nearest_even():
    with pygguf.open(QUANTS) as q:
        for t in q.tensors.values():
            f32 = t.torch()
            finite = torch.isfinite(f32)
            half = t.torch(torch.float16)
            assert half.dtype == torch.float16 and half.shape == f32.shape
            assert torch.equal(half[finite], f32[finite].to(torch.float16)), t.name  # torch rounds to nearest even
            bf = t.torch(torch.bfloat16)
            assert bf.dtype == torch.bfloat16 and bf.shape == f32.shape
            assert torch.equal(bf[finite].view(torch.int16), f32[finite].to(torch.bfloat16).view(torch.int16)), t.name
            assert np.array_equal(bf.view(torch.int16).numpy().view(np.uint16), t.numpy("bfloat16")), t.name


def test_threads_give_the_same_values():
    with pygguf.open(QUANTS) as q:
        t = q.tensors["t.q4_K"]
        assert torch.equal(t.torch(threads=1), t.torch(threads=4))


def test_a_tensor_outlives_the_model():
    q = pygguf.open(QUANTS)
    t = q.tensors["t.q8_0"]
    want = t.numpy().copy()
    x = t.torch()
    q.close()
    del q, t
    assert np.array_equal(x.numpy(), want)
    x += 1  # its own memory, writable
    assert np.array_equal(x.numpy(), want + 1)


def test_another_dtype_is_refused():
    with pygguf.open(QUANTS) as q:
        t = q.tensors["t.q8_0"]
        with pytest.raises(ValueError, match="dtype must be"):
            t.torch(torch.float64)
        with pytest.raises(ValueError, match="dtype must be"):
            t.torch(torch.int8)
