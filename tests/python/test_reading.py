"""pygguf reads what the C++ library reads: every committed file, the same metadata values, tensor
infos, bytes and dequantized values; views that outlive their model; refusals as GGUFError."""

from __future__ import annotations

import gc
import json
import math
import mmap
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import pygguf

from support import DATA, ROOT, RULES, SHARED, committed_files, find_tool, refused_files, tool


def reference_dump(path: Path) -> dict:
    """The file as the C++ library's gguf-dump --json gives it, else as ggml's parse (the oracle)."""
    dump = find_tool("gguf-dump")
    if dump:
        out = subprocess.run([str(dump), "--json", str(path)], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)
    oracle = SHARED / "oracle" / "ggml_oracle.py"
    if oracle.exists():
        out = subprocess.run([sys.executable, str(oracle), "inspect", str(path)], capture_output=True, text=True)
        if out.returncode == 0:
            return json.loads(out.stdout)
    pytest.skip("neither gguf-dump (PYGGUF_TOOLS) nor the oracle (../shared) is available to compare with")


def same_value(ours, type_name: str, theirs) -> bool:
    """A pygguf value against the JSON dump's (strings there have invalid UTF-8 replaced by U+FFFD)."""
    if type_name == "string":
        return ours.encode("utf-8", "surrogateescape").decode("utf-8", "replace") == theirs
    if type_name in ("float32", "float64"):
        a, b = float(ours), float(theirs) if theirs is not None else math.nan
        return (math.isnan(a) and math.isnan(b)) or a == b or (type_name == "float32" and np.float32(a) == np.float32(b))
    return ours == theirs


def same_array(ours, spec: dict) -> bool:
    item, values = spec["type"], spec["value"]
    if item == "array":
        return len(ours) == len(values) and all(same_array(o, v) for o, v in zip(ours, values))
    if item == "string":
        return len(ours) == len(values) and all(same_value(o, "string", v) for o, v in zip(ours, values))
    assert isinstance(ours, np.ndarray) and not ours.flags.writeable
    if item in ("float32", "float64"):
        theirs = np.array([math.nan if v is None else v for v in values], dtype=ours.dtype.newbyteorder("="))
        return np.array_equal(ours.astype(theirs.dtype), theirs, equal_nan=True)
    return ours.tolist() == values


@pytest.mark.parametrize("path", committed_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_committed_file_reads_as_the_library_dumps_it(path: Path):
    ref = reference_dump(path)
    with pygguf.open(path) as m:
        assert m.version == ref["version"]
        assert m.alignment == ref["alignment"]
        assert list(m.metadata) == [e["key"] for e in ref["metadata"]]
        for e in ref["metadata"]:
            key, type_name = e["key"], e["type"]
            assert m.metadata.type(key).name.lower() == type_name
            if type_name == "array":
                assert m.metadata.item_type(key).name.lower() == e["value"]["type"]
                assert same_array(m.metadata[key], e["value"]), key
            else:
                assert same_value(m.metadata[key], type_name, e["value"]), key
        assert list(m.tensors) == [t["name"] for t in ref["tensors"]]
        for t, r in zip(m.tensors.values(), ref["tensors"]):
            assert t.type.ggml_name == r["type"]
            # the dump lists ggml_n_dims entries (trailing 1s dropped); pygguf keeps n_dims as stored
            assert list(t.shape[: len(r["shape"])]) == r["shape"] and all(d == 1 for d in t.shape[len(r["shape"]) :])
            assert t.data_offset == r["offset"]
            assert t.n_bytes == r["size"] == t.raw.size
            assert t.offset == ref["data_offset"] + r["offset"]


def same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bits, except that any NaN equals any NaN (ggml's conversions may quiet a signaling NaN)."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    if a.shape != b.shape:
        return False
    both_nan = np.isnan(a) & np.isnan(b)
    return bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | both_nan))


def expected_of(path: Path) -> Path:
    return path.with_name(path.name.replace(".gguf", ".expected.gguf"))


QUANT_FILES = [p for p in sorted((DATA / "quants").glob("*.gguf")) if ".expected" not in p.name and expected_of(p).exists()]


@pytest.mark.parametrize("path", QUANT_FILES, ids=lambda p: p.name)
def test_tensors_dequantize_to_ggmls_values(path: Path):
    """Each tensor's numpy() is bit for bit ggml's dequantization (the .expected.gguf beside it), in
    both byte orders, through the tensor and through pygguf.dequantize."""
    with pygguf.open(path) as q, pygguf.open(expected_of(path)) as e:
        for name, t in q.tensors.items():
            want = e.tensors[name].numpy()
            got = t.numpy()
            assert got.shape == t.numpy_shape == want.shape
            assert same_floats(got, want), name
            loose = pygguf.dequantize(t.raw, t.type, t.shape, byte_order=q.byte_order)
            assert same_floats(loose, want), name
            if t.n_rows > 1:
                rows = t.rows(1, t.n_rows)
                assert same_floats(rows, want.reshape(t.n_rows, t.shape[0])[1:]), name


def test_f16_output_is_the_float_result_rounded_to_nearest_even():
    with pygguf.open(DATA / "quants" / "quants-s1.gguf") as q:
        for t in q.tensors.values():
            f32 = t.numpy()
            f16 = t.numpy(np.float16)
            finite = np.isfinite(f32)
            assert np.array_equal(f16[finite], f32[finite].astype(np.float16)), t.name  # numpy rounds to nearest even


def test_bf16_output_is_the_float_result_rounded_to_nearest_even():
    with pygguf.open(DATA / "quants" / "quants-s1.gguf") as q:
        t = q.tensors["t.q4_K"]
        f32 = t.numpy()
        bits = f32.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        assert np.array_equal(t.numpy("bfloat16"), rounded.reshape(f32.shape))


def test_out_is_filled_and_returned_and_checked():
    with pygguf.open(DATA / "quants" / "quants-s1.gguf") as q:
        t = q.tensors["t.q8_0"]
        out = np.empty(t.numpy_shape, np.float32)
        assert t.numpy(out=out) is out
        assert np.array_equal(out, t.numpy())
        with pytest.raises(ValueError):
            t.numpy(out=np.empty(3, np.float32))
        with pytest.raises(ValueError):
            t.numpy(out=np.empty(t.numpy_shape, np.float64))
        with pytest.raises(ValueError):
            t.numpy(out=np.empty(t.numpy_shape, np.float32)[:, ::-1] if len(t.numpy_shape) > 1 else np.empty(0))


def test_numeric_arrays_are_read_only_views_over_the_file_and_strings_are_lazy():
    with pygguf.open(DATA / "vocab" / "ggml-vocab-llama-spm.gguf") as m:
        scores = m.metadata["tokenizer.ggml.scores"]
        assert scores.dtype == np.dtype("<f4") and not scores.flags.writeable and not scores.flags.owndata
        with pytest.raises(ValueError):
            scores[0] = 1.0
        tokens = m.metadata["tokenizer.ggml.tokens"]
        assert isinstance(tokens, pygguf.StringArray)
        assert len(tokens) == len(scores)
        assert tokens[0] == "<unk>" and tokens[-1] == tokens[len(tokens) - 1]
        assert list(tokens)[:3] == tokens[:3] == tokens.tolist()[:3]
        assert tokens.raw(1) == b"<s>"
        with pytest.raises(IndexError):
            tokens[len(tokens)]


def test_big_endian_arrays_are_views_in_the_files_byte_order():
    with pygguf.open(RULES / "ok-rich-v3-be.gguf") as m:
        assert m.byte_order == "big"
        arrays = [m.metadata[k] for k in m.metadata if isinstance(m.metadata[k], np.ndarray)]
        assert any(a.dtype.byteorder == ">" for a in arrays if a.dtype.itemsize > 1)


def test_views_outlive_close_and_the_model_object():
    m = pygguf.open(DATA / "quants" / "quants-s1.gguf")
    t = m.tensors["t.q4_0"]
    raw, meta = t.raw, m.metadata
    values = t.numpy()
    m.close()
    assert m.closed
    with pytest.raises(ValueError):
        _ = m.tensors
    del m
    gc.collect()
    # the views and the tensor keep the mapping; reading them is safe
    assert raw.sum() >= 0
    assert np.array_equal(t.numpy(), values)
    assert len(list(meta)) > 0
    with pygguf.open(DATA / "quants" / "quants-s1.gguf") as m2:
        view = m2.tensors["t.f32"].raw
    assert view[:8].tolist() == pygguf.open(DATA / "quants" / "quants-s1.gguf").tensors["t.f32"].raw[:8].tolist()


def test_a_buffer_opens_like_its_file_and_a_writable_one_is_copied_first():
    path = DATA / "quants" / "quants-s1.gguf"
    data = path.read_bytes()
    from_bytes = pygguf.open(data)
    assert from_bytes.paths == []
    assert np.array_equal(from_bytes.tensors["t.q4_K"].numpy(), pygguf.open(path).tensors["t.q4_K"].numpy())
    mutable = bytearray(data)
    m = pygguf.open(mutable)
    before = m.tensors["t.q4_K"].numpy()
    mutable[:] = bytes(len(mutable))  # the caller scribbles over its buffer: the model is unaffected
    assert np.array_equal(m.tensors["t.q4_K"].numpy(), before)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert len(pygguf.open(mm).tensors) == len(from_bytes.tensors)


def test_a_shard_set_opens_as_one_model_from_any_shard(tmp_path: Path):
    src = DATA / "model" / "tiny-llama-q4_K_M.gguf"
    split = tool("gguf-split")
    subprocess.run([str(split), "--split-max-tensors", "3", str(src), str(tmp_path / "m")], check=True, capture_output=True)
    shards = sorted(tmp_path.glob("m-*.gguf"))
    assert len(shards) > 1
    whole = pygguf.open(src)
    for shard in shards:
        with pygguf.open(shard) as m:
            assert [os.path.basename(p) for p in m.paths] == [s.name for s in shards]
            assert list(m.tensors) == list(whole.tensors)
            for name, t in m.tensors.items():
                assert np.array_equal(t.raw, whole.tensors[name].raw)
            assert m.tensors.at(-1).shard == len(shards) - 1


@pytest.mark.parametrize("path", refused_files(), ids=lambda p: p.name)
def test_every_refused_file_raises_gguferror_with_the_librarys_message(path: Path):
    with pytest.raises(pygguf.GGUFError) as caught:
        pygguf.open(path)
    e = caught.value
    assert isinstance(e, ValueError) and e.code and e.code != "success"
    dump = find_tool("gguf-dump")
    if dump:
        out = subprocess.run([str(dump), str(path)], capture_output=True, text=True)
        assert out.returncode == 1
        assert str(e) in out.stderr
    # the same bytes from memory: the same error
    with pytest.raises(pygguf.GGUFError) as again:
        pygguf.open(path.read_bytes())
    assert (again.value.code, again.value.offset) == (e.code, e.offset)


def test_every_prefix_of_a_file_is_refused_cleanly_or_read():
    data = (RULES / "ok-rich-v3.gguf").read_bytes()
    for n in range(len(data)):
        try:
            m = pygguf.open(data[:n])
        except pygguf.GGUFError as e:
            assert e.code in ("truncated", "bad_magic", "bad_version", "out_of_bounds"), (n, e.code)
        else:
            list(m.metadata.items())


def test_os_errors_are_oserror_with_errno_and_path(tmp_path: Path):
    with pytest.raises(FileNotFoundError) as caught:
        pygguf.open(tmp_path / "absent.gguf")
    assert caught.value.errno is not None and caught.value.filename == str(tmp_path / "absent.gguf")
    with pytest.raises(OSError):
        pygguf.open(tmp_path)  # a directory


def test_limits_are_passed_to_the_parser():
    path = DATA / "vocab" / "ggml-vocab-gpt-2.gguf"
    with pytest.raises(pygguf.GGUFError) as caught:
        pygguf.open(path, limits={"max_array_length": 100})  # it has 273 tokens
    assert caught.value.code == "limit_exceeded"
    with pytest.raises(TypeError):
        pygguf.open(path, limits={"no_such_limit": 1})


def test_threads_read_one_model_at_once():
    m = pygguf.open(DATA / "quants" / "quants-s1.gguf")
    want = {name: t.numpy() for name, t in m.tensors.items()}
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                for name, t in m.tensors.items():
                    assert np.array_equal(t.numpy(threads=1).view(np.uint32), want[name].view(np.uint32))
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors


def test_types_match_ggml():
    assert pygguf.GGMLType.Q4_K == 12 and pygguf.GGMLType.Q4_K.ggml_name == "q4_K"
    assert pygguf.GGMLType.from_name("q4_K") is pygguf.GGMLType.Q4_K
    assert (pygguf.GGMLType.Q4_K.block_size, pygguf.GGMLType.Q4_K.type_size) == (256, 144)
    assert pygguf.GGMLType.Q4_K.can_quantize and not pygguf.GGMLType.Q8_K.can_quantize
    ids = sorted(int(t) for t in pygguf.GGMLType)
    assert ids == sorted(row[0] for row in pygguf._core.types)


def test_quantize_then_dequantize_round_trips_within_the_types_error():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 512)).astype(np.float32)
    for t in (pygguf.GGMLType.Q8_0, pygguf.GGMLType.Q4_K, pygguf.GGMLType.Q6_K):
        q = pygguf.quantize(x, t)
        assert q.dtype == np.uint8 and q.shape == (8, 512 // t.block_size * t.type_size)
        back = pygguf.dequantize(q, t, (512, 8))
        assert back.shape == x.shape
        assert np.sqrt(np.mean((back - x) ** 2)) < {8: 0.01, 12: 0.1, 14: 0.05}[int(t)]
    with pytest.raises(pygguf.GGUFError):
        pygguf.quantize(x[:, :100], pygguf.GGMLType.Q4_K)  # not whole blocks
    with pytest.raises(pygguf.GGUFError):
        pygguf.quantize(x, pygguf.GGMLType.Q8_K)  # ggml has no quantizer for it either


def test_new_arrays_start_on_a_cache_line_and_a_copy_at_its_sources_offset():
    """Dequantized arrays start on a 64-byte boundary (a vector store never straddles two lines, and a
    large output can be streamed); an f32 tensor's, a copy, at its bytes' offset in a line instead."""
    with pygguf.open(DATA / "quants" / "quants-s1.gguf") as q:
        for t in q.tensors.values():
            x = t.numpy()
            assert x.flags.writeable and x.flags.c_contiguous
            if t.type == pygguf.GGMLType.F32:
                assert x.ctypes.data % 64 == t.raw.ctypes.data % 64, t.name
                assert np.array_equal(x.view(np.uint8).reshape(-1), t.raw), t.name
            else:
                assert x.ctypes.data % 64 == 0, t.name
    big = np.arange(1 << 16, dtype=np.float32)
    raw = big.view(np.uint8)[4:-60]  # an offset no numpy array has
    y = pygguf.dequantize(raw, "f32")
    assert y.ctypes.data % 64 == raw.ctypes.data % 64
    assert np.array_equal(y.view(np.uint8), raw)
    z = pygguf.dequantize(pygguf.quantize(big.reshape(-1, 256), "q8_0"), "q8_0")
    assert z.ctypes.data % 64 == 0 and z.flags.writeable
    del big, raw
    z[:] = 1  # its own memory
