"""pygguf facing hostile callers: a buffer is parsed in place only when its bytes cannot change (anything
else is copied, so rewriting it afterwards cannot crash the interpreter); destination arrays must be in
the byte order the values are written in; every integer argument out of its range raises ValueError (or
IndexError for an index) naming it, every non-integer TypeError."""

from __future__ import annotations

import array
import gc
import mmap
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pygguf

from support import DATA

QUANTS = DATA / "quants" / "quants-s1.gguf"
VOCAB = DATA / "vocab" / "ggml-vocab-llama-spm.gguf"
NON_NATIVE = ">" if sys.byteorder == "little" else "<"


def address(buffer) -> int:
    return np.frombuffer(buffer, np.uint8).ctypes.data


def read_in_place(model: pygguf.Model, buffer) -> bool:
    """Whether the model's tensors are views into `buffer`'s own memory (no copy was made)."""
    raw = next(iter(model.tensors.values())).raw
    start = address(buffer)
    return start <= raw.ctypes.data < start + len(memoryview(buffer).cast("B"))


# ---- buffers: parsed in place only when their bytes cannot change -------------------------------------


def in_place_buffers(f):
    data = QUANTS.read_bytes()
    read_only_map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return {
        "bytes": data,
        "memoryview of bytes": memoryview(data)[:],
        "numpy array over bytes": np.frombuffer(data, np.uint8),
        "mmap with ACCESS_READ": read_only_map,
        "memoryview of a read-only mmap": memoryview(read_only_map),
        "numpy.memmap with mode 'r'": np.memmap(QUANTS, mode="r"),
    }


def copied_buffers(f, writable_copy: Path):
    data = QUANTS.read_bytes()
    frozen = np.frombuffer(bytearray(data), np.uint8)
    frozen.flags.writeable = False  # a read-only view: its base stays writable
    owned = np.frombuffer(data, np.uint8).copy()
    owned.flags.writeable = False  # numpy's own memory: the flag can be set back
    writable_copy.write_bytes(data)
    with open(writable_copy, "r+b") as w:
        shared_map = mmap.mmap(w.fileno(), 0, access=mmap.ACCESS_WRITE)
    return {
        "bytearray": bytearray(data),
        "read-only memoryview of a bytearray": memoryview(bytearray(data)).toreadonly(),
        "read-only numpy view of a bytearray": frozen,
        "numpy array owning its memory, writeable=False": owned,
        "array.array": array.array("B", data),
        "mmap with ACCESS_WRITE": shared_map,
        "mmap with ACCESS_COPY": mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY),
        "numpy.memmap with mode 'c'": np.memmap(QUANTS, mode="c"),
    }


def test_buffers_whose_bytes_cannot_change_are_parsed_in_place():
    with open(QUANTS, "rb") as f:
        for name, buffer in in_place_buffers(f).items():
            m = pygguf.open(buffer)
            assert read_in_place(m, buffer), name
            assert np.array_equal(m.tensors["t.q4_K"].numpy(), pygguf.open(QUANTS).tensors["t.q4_K"].numpy()), name
            del m


def test_buffers_someone_can_still_write_are_copied_first(tmp_path: Path):
    with open(QUANTS, "rb") as f:
        for name, buffer in copied_buffers(f, tmp_path / "copy.gguf").items():
            m = pygguf.open(buffer)
            assert not read_in_place(m, buffer), name
            assert len(m.tensors) == len(pygguf.open(QUANTS).tensors), name


def test_a_read_only_mmap_parsed_in_place_cannot_be_closed_under_the_model():
    mapped = np.memmap(QUANTS, mode="r")
    m = pygguf.open(mapped)
    with pytest.raises(BufferError):
        mapped.base.close()  # numpy itself lets it go: the model holds an export of the map
    assert m.tensors["t.q8_0"].numpy().shape == m.tensors["t.q8_0"].numpy_shape
    del m
    gc.collect()
    mapped.base.close()  # free again once the model is gone


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc/self/maps (Linux)")
def test_a_file_is_read_where_the_library_maps_it():
    with pygguf.open(QUANTS) as m:
        at = m.tensors["t.q4_K"].raw.ctypes.data
        for line in Path("/proc/self/maps").read_text().splitlines():
            fields = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if lo <= at < hi:
                assert len(fields) == 6 and os.path.samefile(fields[5], QUANTS)
                break
        else:
            pytest.fail("the tensor's bytes are in no mapping")


REWRITE = """
import struct, sys
import numpy as np
import pygguf

data = bytearray(open(sys.argv[1], "rb").read())
if sys.argv[2] == "memoryview":
    buffer = memoryview(data).toreadonly()
else:
    buffer = np.frombuffer(data, np.uint8).view()
    buffer.flags.writeable = False
m = pygguf.open(buffer)
tokens = m.metadata["tokenizer.ggml.tokens"]
before = tokens.tolist()
key = "tokenizer.ggml.tokens"
first = m.metadata.offset(key) + 8 + len(key) + 4 + 4 + 8  # the first string's length
data[first : first + 8] = struct.pack("<Q", 1 << 28)  # far past the end of the buffer
assert tokens.tolist() == before and tokens[0] == before[0]
data[:] = b"\\xff" * len(data)  # every length and count at its largest
assert tokens.tolist() == before
for key in m.metadata:
    m.metadata[key]
print("unchanged", len(before))
"""


@pytest.mark.parametrize("view", ["memoryview", "numpy"])
def test_rewriting_a_read_only_view_of_writable_memory_after_open_changes_nothing(view: str):
    """Issue 47's repro (it crashed the interpreter: it runs in a process of its own)."""
    env = dict(os.environ)
    package = str(Path(pygguf.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package, env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", REWRITE, str(VOCAB), view], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr[-2000:]}"
    assert out.stdout.startswith("unchanged ")


# ---- destination arrays: in the byte order the values are written in -----------------------------------


@pytest.mark.parametrize(("dtype", "out_dtype"), [(np.float32, "f4"), (np.float16, "f2"), ("bfloat16", "u2")])
def test_an_out_array_in_the_other_byte_order_is_refused(dtype, out_dtype: str):
    x = np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)
    q = pygguf.quantize(x, "q8_0")
    with pytest.raises(ValueError, match="native byte order"):
        pygguf.dequantize(q, "q8_0", dtype=dtype, out=np.empty(x.size, NON_NATIVE + out_dtype))
    native = np.empty(x.size, "=" + out_dtype)
    assert pygguf.dequantize(q, "q8_0", dtype=dtype, out=native) is native
    assert np.array_equal(native, pygguf.dequantize(q, "q8_0", dtype=dtype))
    with pygguf.open(QUANTS) as m:
        t = m.tensors["t.q4_K"]
        with pytest.raises(ValueError, match="native byte order"):
            t.numpy(dtype, out=np.empty(t.numpy_shape, NON_NATIVE + out_dtype))
        with pytest.raises(ValueError, match="native byte order"):
            t.rows(0, 1, dtype, out=np.empty((1, t.shape[0]), NON_NATIVE + out_dtype))
    with pytest.raises(TypeError):
        pygguf.dequantize(q, "q8_0", dtype=dtype, out=[0.0] * x.size)


def test_numbers_in_the_other_byte_order_are_converted_as_numpy_converts():
    x = np.random.default_rng(4).standard_normal((4, 256)).astype(np.float32)
    weights = np.random.default_rng(5).random(256).astype(np.float32)
    swapped = x.astype(NON_NATIVE + "f4")
    assert np.array_equal(pygguf.quantize(swapped, "q4_K"), pygguf.quantize(x, "q4_K"))
    assert np.array_equal(
        pygguf.quantize(x, "iq2_xs", weights.astype(NON_NATIVE + "f4")), pygguf.quantize(x, "iq2_xs", weights)
    )


def test_raw_values_in_the_other_byte_order_need_that_byte_order():
    values = np.arange(512, dtype=np.float16)
    swapped = values.astype(NON_NATIVE + "f2")
    other = "big" if sys.byteorder == "little" else "little"
    with pytest.raises(ValueError, match="byte_order"):
        pygguf.dequantize(swapped, "f16", byte_order=sys.byteorder)
    assert np.array_equal(pygguf.dequantize(swapped, "f16", byte_order=other), values.astype(np.float32))


# ---- integer arguments ------------------------------------------------------------------------------------


def test_threads_are_at_least_one_and_any_larger_count_means_as_many_as_useful():
    x = np.random.default_rng(6).standard_normal((8, 256)).astype(np.float32)
    q = pygguf.quantize(x, "q8_0")
    want = pygguf.dequantize(q, "q8_0")
    assert np.array_equal(pygguf.dequantize(q, "q8_0", threads=2**70), want)
    assert np.array_equal(pygguf.quantize(x, "q8_0", threads=2**70), q)
    assert np.array_equal(pygguf.dequantize(q, "q8_0", threads=np.int64(2)), want)
    with pygguf.open(QUANTS) as m:
        t = m.tensors["t.q4_K"]
        assert np.array_equal(t.numpy(threads=2**70), t.numpy())
        for bad in (0, -1, -(2**70)):
            with pytest.raises(ValueError, match="threads must be at least 1"):
                t.numpy(threads=bad)
            with pytest.raises(ValueError, match="threads must be at least 1"):
                pygguf.dequantize(q, "q8_0", threads=bad)
            with pytest.raises(ValueError, match="threads must be at least 1"):
                pygguf.quantize(x, "q8_0", threads=bad)
        with pytest.raises(TypeError, match="threads must be an integer"):
            t.numpy(threads=2.0)


def test_rows_outside_the_tensor_are_an_index_error_however_large():
    with pygguf.open(QUANTS) as m:
        t = m.tensors["t.q4_K"]
        for first, last in ((0, 2**63), (-1, 1), (2**70, 2**71), (1, 0), (0, t.n_rows + 1), (-(2**70), 0)):
            with pytest.raises(IndexError, match=rf"rows\({first}, {last}\) of a tensor of {t.n_rows} rows"):
                t.rows(first, last)
        with pytest.raises(TypeError, match="first must be an integer"):
            t.rows(0.0, 1)
        assert t.rows(np.int64(0), np.uint8(1)).shape == (1, t.shape[0])


def test_indexes_behave_as_a_lists_do():
    with pygguf.open(VOCAB) as m:
        tokens = m.metadata["tokenizer.ggml.tokens"]
        for bad in (2**70, -(2**70), len(tokens), -len(tokens) - 1):
            with pytest.raises(IndexError):
                tokens[bad]
            with pytest.raises(IndexError):
                tokens.raw(bad)
        with pytest.raises(TypeError):
            tokens["0"]
        assert tokens[np.int32(-1)] == tokens[len(tokens) - 1] and tokens[1:3] == [tokens[1], tokens[2]]
        with pytest.raises(IndexError):
            m.tensors.at(2**70)
    with pygguf.open(QUANTS) as m, pytest.raises(TypeError, match="index must be an integer"):
        m.tensors.at(1.5)


def test_parse_limits_are_checked_against_their_types():
    for name, hi in (("max_depth", 2**32 - 1), ("max_string_length", 2**64 - 1), ("max_metadata_bytes", 2**64 - 1)):
        for bad in (-1, hi + 1, 2**70):
            with pytest.raises(ValueError, match=rf"limits\['{name}'\] must be from 0 to {hi}, not {bad}"):
                pygguf.open(QUANTS, limits={name: bad})
        with pytest.raises(TypeError, match=rf"limits\['{name}'\] must be an integer"):
            pygguf.open(QUANTS, limits={name: 1.5})
        assert len(pygguf.open(QUANTS, limits={name: hi}).tensors) > 0


def test_a_shape_is_refused_with_its_true_size():
    q = pygguf.quantize(np.zeros((2, 256), np.float32), "q8_0")
    with pytest.raises(ValueError, match=r"shape \(4294967296, 4294967296\) has 18446744073709551616 elements"):
        pygguf.dequantize(b"", "f32", (2**32, 2**32))  # its product wraps to 0 in 64 bits
    with pytest.raises(ValueError, match=r"shape\[1\] must be from 0 to"):
        pygguf.dequantize(q, "q8_0", (256, 2**70))
    with pytest.raises(ValueError, match=r"shape\[0\] must be from 0 to .*, not -256"):
        pygguf.dequantize(q, "q8_0", (-256, -2))
    with pytest.raises(TypeError, match=r"shape\[0\] must be an integer"):
        pygguf.dequantize(q, "q8_0", (256.0, 2))
    assert pygguf.dequantize(q, "q8_0", 512).shape == (512,)
    assert pygguf.dequantize(b"", "f32", (0, 7)).shape == (7, 0)
    with pytest.raises(ValueError, match="unknown ggml type id: 1180591620717411303424"):
        pygguf.dequantize(q, 2**70)


def test_writing_refuses_integers_outside_their_range(tmp_path: Path):
    out = tmp_path / "out.gguf"
    for alignment in (0, -1, 2**32, 2**70):
        with pytest.raises(ValueError, match="alignment must be from 1 to 4294967295"):
            pygguf.save(out, {}, alignment=alignment)
    with pytest.raises(ValueError, match=r"t: shape\[0\] must be from 0 to 9223372036854775807, not 2361183241434822606848"):
        pygguf.save(out, {}, {"t": ("f32", b"", (2**71,))})
    with pytest.raises(ValueError, match=r"t: shape\[1\] must be at least 0, not -1"):
        pygguf.save(out, {}, {"t": ("f32", b"", (1, -1))})
    with pytest.raises(TypeError, match=r"t: shape\[0\] must be an integer"):
        pygguf.save(out, {}, {"t": ("f32", b"\0" * 4, (1.0,))})
    for kwargs in ({"max_size": 2**64}, {"max_size": "99999999999G"}, {"max_tensors": 2**32}, {"max_tensors": 0}):
        with pytest.raises(ValueError, match="must be"):
            pygguf.split(QUANTS, tmp_path / "s", **kwargs)
    with pytest.raises(ValueError, match="unknown file type id 1180591620717411303424"):
        pygguf.quantize_model(QUANTS, tmp_path / "q.gguf", 2**70)
    with pytest.raises(TypeError, match="ftype must be an integer"):
        pygguf.quantize_model(QUANTS, tmp_path / "q.gguf", 15.0)
    with pytest.raises(ValueError, match="threads must be at least 1"):
        pygguf.quantize_model(QUANTS, tmp_path / "q.gguf", "Q8_0", threads=-(2**70))
    for name in ("context", "ubatch"):
        with pytest.raises(ValueError, match=rf"{name} must be from 1 to 2147483648, not {2**70}"):
            pygguf.facts(QUANTS, **{name: 2**70})
        with pytest.raises(TypeError, match=rf"{name} must be an integer"):
            pygguf.facts(QUANTS, **{name: 512.5})
    assert not any(tmp_path.iterdir())
