"""pygguf.compat is a drop-in for gguf-py's reader and quants.

- With gguf-py at hand (see gguf_py.py), ``compat.GGUFReader`` gives, on every committed and shared GGUF
  file gguf-py reads, the fields and tensors gguf-py's ``GGUFReader`` gives: the same names, offsets,
  types, data indices, ``contents()``, and every part the same bytes, dtype (byte order included),
  shape and writeability. ``compat.dequantize`` gives the same float32 bits as
  ``gguf.quants.dequantize`` for every type gguf-py dequantizes (but for a byte-swapped file's F32 and
  F16 arrays, whose swapped bytes gguf-py reinterprets). ``compat.quantize`` gives the same bytes as
  ``gguf.quants.quantize`` but where gguf-py departs from ggml, where it gives ggml's: blocks holding a
  NaN, and blocks of zeros whose first weight is -0.0 (the sign of Q4_0's and Q5_0's scale, of Q4_1's
  and Q5_1's minimum).
- Always: the reader agrees with ``pygguf.open`` on the same file, its parts are views over the file,
  its lazily built fields behave as gguf-py's ``ReaderField`` tuples, it opens a 100k-token vocabulary
  in milliseconds; it refuses malformed files (GGUF v1 included) with ``GGUFError`` and does not crash
  on damaged ones; dequantizing gives ggml's values (the ``*.expected.gguf`` files) and quantizing
  ggml's bytes (``tests/data/quantize/golden-a.gguf``).
"""

from __future__ import annotations

import copy
import os
import pickle
import shutil
import struct
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import gguf_py
import pygguf
from pygguf import compat
from support import SHARED as SHARED_DIR

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SEEDS = ROOT / "tests" / "fuzz" / "seeds"
RULES = SEEDS / "rules"
SHARED = SHARED_DIR / "data"
DEEPSEEK_LLM = SHARED / "vocab" / "ggml-vocab-deepseek-llm.gguf"
GOLDEN = DATA / "quantize" / "golden-a.gguf"

#: The types gguf-py quantizes itself (F32 and F16 are conversions).
GGUF_PY_QUANTIZES = ["F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "TQ1_0", "TQ2_0", "MXFP4"]
#: The types gguf-py cannot dequantize (compat can: the library has kernels for every type).
GGUF_PY_CANNOT_DEQUANTIZE = {"Q8_1", "Q8_K", "I8", "I16", "I32", "I64", "F64", "Q1_0", "Q2_0"}


def version_of(path: Path) -> int:
    """The GGUF version word, in the file's byte order."""
    word = path.read_bytes()[4:8]
    little = struct.unpack("<I", word)[0]
    return little if little & 0xFFFF else struct.unpack(">I", word)[0]


def readable_files() -> list[Path]:
    """Every committed and shared GGUF file that the library and gguf-py both read: the test data, the
    fuzz fixtures and ok-* rule seeds, the shared vocabularies and quant fixtures; not GGUF v1."""
    files = sorted(DATA.rglob("*.gguf")) + sorted(RULES.glob("ok-*.gguf")) + sorted((SEEDS / "fixtures").glob("*.gguf"))
    files += sorted(SHARED.glob("*/*.gguf"))
    return [f for f in files if version_of(f) != 1]


def file_id(path: Path) -> str:
    """A test id: the path from the folder holding the repository, or from the shared data's."""
    for base in (ROOT.parent, SHARED_DIR.parent):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return str(path)


FILES = readable_files()


@pytest.fixture(scope="session")
def gguf() -> ModuleType:
    """gguf-py; the tests that compare with it skip, saying why, when it cannot be had."""
    module, where = gguf_py.load()
    if module is None:
        pytest.skip(where)
    return module


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """``("ok", repr(value))`` or ``("raises", exception type name)``: results compared across readers."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", repr(call())
    except Exception as e:  # noqa: BLE001 (the exception is the outcome)
        return "raises", type(e).__name__


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype (byte order included), shape, writeability and bytes."""
    return (a.dtype, a.shape, a.flags.writeable) == (b.dtype, b.shape, b.flags.writeable) and a.tobytes() == b.tobytes()


def contents_calls(field: Any) -> list[Callable[[], Any]]:
    """The ``contents()`` calls compared: the whole value, and for arrays a few items and slices."""
    calls = [field.contents]
    if field.types and field.types[0] == pygguf.ValueType.ARRAY:
        n = len(field.data)
        for index in (0, 1, n // 2, n - 1, -1, n):
            calls.append(lambda i=index: field.contents(i))
        for sl in (slice(1, 5), slice(None, None, -7), slice(n, None)):
            calls.append(lambda s=sl: field.contents(s))
    return calls


# ---- the reader, compared with gguf-py's -------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_reader_matches_gguf_py(gguf: ModuleType, path: Path) -> None:
    ours = compat.GGUFReader(path)
    theirs = gguf.GGUFReader(path)
    assert ours.alignment == theirs.alignment and ours.data_offset == theirs.data_offset
    assert ours.byte_order == theirs.byte_order
    assert int(ours.endianess) == int(theirs.endianess)
    assert same_array(np.asarray(ours.data), np.asarray(theirs.data))

    assert list(ours.fields) == list(theirs.fields)
    for name, theirs_field in theirs.fields.items():
        field = ours.get_field(name)
        assert isinstance(field, compat.ReaderField)
        assert (field.offset, field.name, field.data, field.types) == (
            theirs_field.offset, theirs_field.name, theirs_field.data, theirs_field.types), name
        assert len(field.parts) == len(theirs_field.parts), name
        for k, (a, b) in enumerate(zip(field.parts, theirs_field.parts)):
            assert same_array(a, b), (name, k, a, b)
        for call, theirs_call in zip(contents_calls(field), contents_calls(theirs_field)):
            assert outcome(call) == outcome(theirs_call), name
    assert ours.get_field("no.such.key") is None

    assert len(ours.tensors) == len(theirs.tensors)
    for k, (t, theirs_t) in enumerate(zip(ours.tensors, theirs.tensors)):
        assert t is ours.get_tensor(k)
        assert (t.name, t.tensor_type, t.n_elements, t.n_bytes, t.data_offset) == (
            theirs_t.name, theirs_t.tensor_type, theirs_t.n_elements, theirs_t.n_bytes, theirs_t.data_offset)
        assert t.tensor_type.name == theirs_t.tensor_type.name
        assert same_array(t.shape, theirs_t.shape), t.name
        assert same_array(t.data, theirs_t.data), t.name
        info, theirs_info = t.field, theirs_t.field
        assert (info.offset, info.name, info.data, info.types) == (
            theirs_info.offset, theirs_info.name, theirs_info.data, theirs_info.types)
        assert len(info.parts) == len(theirs_info.parts)
        assert all(same_array(a, b) for a, b in zip(info.parts, theirs_info.parts))


def test_reader_constants_match_gguf_py(gguf: ModuleType) -> None:
    assert {t.name: int(t) for t in compat.GGMLQuantizationType} == {t.name: int(t) for t in gguf.GGMLQuantizationType}
    assert {t.name: int(t) for t in compat.GGUFValueType} == {t.name: int(t) for t in gguf.GGUFValueType}
    assert {t.name: int(t) for t in compat.GGUFEndian} == {t.name: int(t) for t in gguf.GGUFEndian}
    sizes = {int(t): v for t, v in compat.GGML_QUANT_SIZES.items()}
    assert sizes == {int(t): v for t, v in gguf.GGML_QUANT_SIZES.items()}
    assert compat.READER_SUPPORTED_VERSIONS == gguf.gguf_reader.READER_SUPPORTED_VERSIONS
    assert {int(k): v for k, v in compat.GGUFReader.gguf_scalar_to_np.items()} == {
        int(k): v for k, v in gguf.GGUFReader.gguf_scalar_to_np.items()}
    assert compat.ReaderField._fields == gguf.ReaderField._fields
    assert compat.ReaderTensor._fields == gguf.ReaderTensor._fields


# ---- the reader on its own ---------------------------------------------------------------------------


def flatten(value: Any) -> list[Any]:
    """A pygguf array value as ``contents()`` gives it: nested arrays flattened."""
    if isinstance(value, list):
        return [item for inner in value for item in flatten(inner)]
    return value.tolist()


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_reader_agrees_with_pygguf(path: Path) -> None:
    reader = compat.GGUFReader(path)
    with pygguf.open(path) as model:
        assert reader.fields["GGUF.version"].contents() == model.version
        assert reader.fields["GGUF.tensor_count"].contents() == len(model.tensors)
        assert reader.fields["GGUF.kv_count"].contents() == len(model.metadata)
        assert list(reader.fields)[3:] == list(model.metadata)
        for key in model.metadata:
            field = reader.fields[key]
            assert field.offset == model.metadata.offset(key)
            assert field.types[0] == model.metadata.type(key)
            value = model.metadata[key]
            if field.types[0] == pygguf.ValueType.ARRAY:
                assert repr(field.contents()) == repr(flatten(value))  # repr: NaN equals NaN
                if field.types[1:2] != [pygguf.ValueType.ARRAY]:
                    assert len(field.data) == len(value)
            else:
                assert repr(field.contents()) == repr(value)
            for part in field.parts:
                assert (part.size == 0 or np.shares_memory(part, reader.data)) and not part.flags.writeable
        assert [t.name for t in reader.tensors] == list(model.tensors)
        for t in reader.tensors:
            mt = model.tensors[t.name]
            assert (t.tensor_type, tuple(t.shape.tolist()), t.n_elements, t.n_bytes, t.data_offset) == (
                mt.type, mt.shape, mt.n_elements, mt.n_bytes, mt.offset)
            assert t.data.tobytes() == mt.raw.tobytes() and (t.n_bytes == 0 or np.shares_memory(t.data, reader.data))
            assert t.data_offset == reader.data_offset + mt.data_offset


def test_fields_are_gguf_py_tuples() -> None:
    reader = compat.GGUFReader(RULES / "ok-rich-v3.gguf")
    field = reader.fields["tokenizer.ggml.tokens"]
    assert isinstance(field, compat.ReaderField) and isinstance(field, tuple) and len(field) == 5
    parts = field.parts
    assert field.parts is parts and field[2] is parts and len(parts) == 15  # filled once, in place
    offset, name, parts2, data, types = field
    assert (offset, name, parts2, data) == (field.offset, "tokenizer.ggml.tokens", parts, field.data)
    assert types == [pygguf.ValueType.ARRAY, pygguf.ValueType.STRING]
    assert field._asdict()["parts"] is parts
    fresh = compat.GGUFReader(RULES / "ok-rich-v3.gguf").fields["tokenizer.ggml.tokens"]
    assert repr(fresh).startswith("ReaderField(offset=") and "array(" in repr(fresh)  # repr builds it
    assert fresh.contents() == field.contents() == ["<s>", "</s>", "hello", "▁world", ""]
    for other in (copy.copy(field), pickle.loads(pickle.dumps(field)), field._replace(name="x")):
        assert type(other) in (compat.ReaderField, type(field))
        assert other.contents() == field.contents() and len(other.parts) == 15
    assert copy.copy(field) == field
    plain = compat.ReaderField(0, "x", [np.array([7], np.uint32)], [0], [pygguf.ValueType.UINT32])
    assert plain.contents() == 7 and compat.ReaderField(0, "y").contents() is None


def test_reader_is_lazy_and_fast() -> None:
    path = DEEPSEEK_LLM if DEEPSEEK_LLM.exists() else DATA / "vocab" / DEEPSEEK_LLM.name
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        reader = compat.GGUFReader(path)
        best = min(best, time.perf_counter() - start)
    assert best < 0.1, f"{best * 1e3:.1f} ms to open {path.name} (gguf-py builds all of its parts: seconds)"
    tokens = reader.fields["tokenizer.ggml.tokens"]
    assert len(tokens.data) == len(pygguf.open(path).metadata["tokenizer.ggml.tokens"])
    assert len(tokens.parts) == 5 + 2 * len(tokens.data)


def test_reader_modes(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    shutil.copy(RULES / "ok-rich-v3.gguf", path)
    reader = compat.GGUFReader(path)
    field = reader.fields["llama.context_length"]
    with pytest.raises(ValueError):
        field.parts[field.data[0]][0] = 1
    copied = compat.GGUFReader(path, "c").fields["llama.context_length"]
    copied.parts[copied.data[0]][0] = 1
    assert compat.GGUFReader(path).fields["llama.context_length"].contents() == 4096
    edited = compat.GGUFReader(path, "r+")
    edit = edited.fields["llama.context_length"]
    edit.parts[edit.data[0]][0] = 8192  # gguf-py's gguf_set_metadata.py edits a file so
    edited.data.flush()
    del edited, edit
    assert compat.GGUFReader(path).fields["llama.context_length"].contents() == 8192
    with pytest.raises(ValueError):
        compat.GGUFReader(path, "w+")


def refused_files() -> list[Path]:
    """The rule seeds that break one rule each, and the fuzzers' findings."""
    return sorted(p for p in RULES.glob("*.gguf") if not p.name.startswith("ok-")) + sorted(
        (ROOT / "tests" / "fuzz" / "findings").glob("*.gguf"))


@pytest.mark.parametrize("path", refused_files(), ids=lambda p: p.name)
def test_malformed_files_raise_gguf_error(path: Path) -> None:
    with pytest.raises(pygguf.GGUFError):
        compat.GGUFReader(path)


V1_FILES = [DATA / "quants" / "quants-v1.gguf", SEEDS / "fixtures" / "v1-be.gguf", RULES / "ok-rich-v1-be.gguf"]


@pytest.mark.parametrize("path", V1_FILES, ids=lambda p: p.name)
def test_gguf_v1_is_refused(path: Path) -> None:
    with pytest.raises(pygguf.GGUFError) as e:
        compat.GGUFReader(path)
    assert e.value.code == "bad_version"


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(pygguf.GGUFError):
        compat.GGUFReader(tmp_path / "empty.gguf")
    with pytest.raises(FileNotFoundError):
        compat.GGUFReader(tmp_path / "missing.gguf")


DAMAGE_SCRIPT = """
import random, sys, warnings
import pygguf
from pygguf import compat
warnings.simplefilter("ignore")
source, scratch = open(sys.argv[1], "rb").read(), sys.argv[2]
rng = random.Random(7)
variants = [source[:n] for n in range(len(source))]
for _ in range(800):
    b = bytearray(source)
    for _ in range(rng.choice((1, 1, 2, 8))):
        b[rng.randrange(len(b))] = rng.choice((0, 1, 0xFF, rng.randrange(256)))
    variants.append(bytes(b))
opened = 0
for data in variants:
    open(scratch, "wb").write(data)
    try:
        reader = compat.GGUFReader(scratch)
    except pygguf.GGUFError:
        continue
    opened += 1
    for field in reader.fields.values():
        try:
            field.contents()
        except UnicodeDecodeError:  # gguf-py's contents() decodes strictly too
            pass
    for t in reader.tensors:
        compat.dequantize(t.data, t.tensor_type)
print(len(variants), opened)
"""


@pytest.mark.parametrize("name", ["ok-rich-v3.gguf", "ok-rich-v3-be.gguf"])
def test_damaged_files_never_crash(tmp_path: Path, name: str) -> None:
    """Truncated and corrupted copies raise GGUFError or read in full; run in a child interpreter so that
    a crash is a failure."""
    run = subprocess.run([sys.executable, "-c", DAMAGE_SCRIPT, str(RULES / name), str(tmp_path / "d.gguf")],
                         capture_output=True, text=True, timeout=600, env=os.environ)
    assert run.returncode == 0, run.stderr[-3000:]
    n_variants, n_opened = map(int, run.stdout.split())
    assert n_variants > 2000 and 0 < n_opened < n_variants


def gguf_bytes(kvs: list[tuple[bytes, int, bytes]], tensor: bytes | None = None) -> bytes:
    """A little-endian GGUF v3 file: (key, value type, value bytes) each, and optionally one tensor of
    that name, 8 f32 zeros."""
    out = b"GGUF" + struct.pack("<IQQ", 3, tensor is not None, len(kvs))
    for key, vtype, value in kvs:
        out += struct.pack("<Q", len(key)) + key + struct.pack("<I", vtype) + value
    if tensor is not None:
        out += struct.pack("<Q", len(tensor)) + tensor + struct.pack("<IQIQ", 1, 8, 0, 0)
        out += bytes(-len(out) % 32 + 32)
    return out


def test_names_that_are_not_utf8(tmp_path: Path) -> None:
    """gguf-py raises UnicodeDecodeError on such a key or tensor name; compat names them with
    surrogateescape (and reads them from the file, not through the library's str lookups)."""
    path = tmp_path / "k.gguf"
    path.write_bytes(gguf_bytes([(b"bad\xc0key", 4, struct.pack("<I", 7)),
                                 (b"ok", 8, struct.pack("<Q", 2) + b"\xff!")], tensor=b"t\xc0"))
    reader = compat.GGUFReader(path)
    field = reader.fields["bad\udcc0key"]
    assert field.contents() == 7 and bytes(field.parts[1]) == b"bad\xc0key"
    with pytest.raises(UnicodeDecodeError):  # contents() decodes strictly, as gguf-py's
        reader.fields["ok"].contents()
    assert bytes(reader.fields["ok"].parts[-1]) == b"\xff!"
    assert reader.tensors[0].name == "t\udcc0" and reader.tensors[0].data.tolist() == [0.0] * 8


def test_refusal_naming_a_key_that_is_not_utf8(tmp_path: Path) -> None:
    """The error of a malformed file is a GGUFError even when the key it names is not UTF-8."""
    path = tmp_path / "k.gguf"
    path.write_bytes(gguf_bytes([(b"\xc0", 0, b"\x01"), (b"\xc0", 0, b"\x02")]))
    with pytest.raises(pygguf.GGUFError) as e:
        compat.GGUFReader(path)
    assert e.value.code == "duplicate_key"


def test_transformers_style_loading() -> None:
    """transformers' GGUF loader reads values from ``field.parts[i]`` for ``i`` in ``field.data`` with
    ``field.types``, and weights with ``dequantize(tensor.data, tensor.tensor_type)``."""
    path = DATA / "model" / "tiny-llama-q4_K_M.gguf"
    reader = compat.GGUFReader(path)

    def parse(part: np.ndarray, types: list[int]) -> Any:
        kind = types[-1] if types[0] == compat.GGUFValueType.ARRAY else types[0]
        if kind == compat.GGUFValueType.STRING:
            return bytes(part.tolist()).decode()
        if kind in (compat.GGUFValueType.FLOAT32, compat.GGUFValueType.FLOAT64):
            return float(part[0])
        if kind == compat.GGUFValueType.BOOL:
            return bool(part[0])
        return int(part[0])

    with pygguf.open(path) as model:
        for key, field in reader.fields.items():
            if key.startswith("GGUF."):
                continue
            values = [parse(field.parts[i], field.types) for i in field.data]
            expected = model.metadata[key]
            if field.types[0] == compat.GGUFValueType.ARRAY:
                assert values == list(expected.tolist())
            else:
                assert values == [expected]
        for tensor in reader.tensors:
            weights = compat.dequantize(tensor.data, tensor.tensor_type)
            assert weights.dtype == np.float32 and weights.shape == tuple(reversed(tensor.shape.tolist()))
            assert weights.tobytes() == model.tensors[tensor.name].numpy().tobytes()


# ---- dequantize ----------------------------------------------------------------------------------------


def quant_fixtures() -> list[Path]:
    """The files of one tensor per type with a ``.expected.gguf`` twin (ggml's dequantization)."""
    files = sorted(DATA.glob("quants/*.gguf")) + sorted(SHARED.glob("quants/*.gguf"))
    return [f for f in files if not f.name.endswith(".expected.gguf") and version_of(f) != 1]


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-equal float32 arrays, NaN payloads aside (ggml's expected files hold quieted NaNs)."""
    if a.shape != b.shape:
        return False
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return bool((nan_a == nan_b).all()) and a[~nan_a].tobytes() == b[~nan_b].tobytes()


@pytest.mark.parametrize("path", quant_fixtures(), ids=file_id)
def test_dequantize_matches_ggml(path: Path) -> None:
    """Every type, from ``ReaderTensor.data``; in a byte-swapped file only the typed tensors: blocks in
    uint8 arrays are little-endian to ``dequantize`` (as to gguf-py), and this library's big-endian
    files swap the blocks' fields too (``pygguf.Tensor.numpy`` reads them)."""
    expected = {t.name: t.data for t in compat.GGUFReader(path.with_name(path.stem + ".expected.gguf")).tensors}
    reader = compat.GGUFReader(path)
    assert len(reader.tensors) == len(expected) == 35
    checked = 0
    for t in reader.tensors:
        if reader.byte_order == "S" and t.data.dtype.itemsize == 1 and t.tensor_type.type_size > 1:
            continue
        values = compat.dequantize(t.data, t.tensor_type)
        assert values.dtype == np.float32
        assert same_values(values, expected[t.name]), t.name
        checked += 1
    assert checked == (7 if reader.byte_order == "S" else 35)  # F32, F16, I8, I16, I32, I64, F64


@pytest.mark.parametrize("path", quant_fixtures(), ids=file_id)
def test_dequantize_matches_gguf_py(gguf: ModuleType, path: Path) -> None:
    unsupported = set()
    reader = compat.GGUFReader(path)
    for t in reader.tensors:
        ours = compat.dequantize(t.data, t.tensor_type)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gguf-py's NaN arithmetic
            try:
                theirs = gguf.quants.dequantize(t.data, gguf.GGMLQuantizationType(int(t.tensor_type)))
            except NotImplementedError:
                unsupported.add(t.tensor_type.name)
                continue
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, t.name
        if t.data.dtype.byteorder not in "=|":  # gguf-py reinterprets a byte-swapped F32/F16 array's bytes
            assert ours.tobytes() == t.data.astype(np.float32).tobytes(), t.name
        elif reader.byte_order == "S" and t.tensor_type.type_size > 1:
            # a big-endian file's blocks, read as little-endian by both: nonsense whose NaNs' signs may differ
            assert same_values(ours, theirs), t.name
        else:
            assert ours.tobytes() == theirs.tobytes(), t.name  # bit-exact, NaN payloads included
    assert unsupported <= GGUF_PY_CANNOT_DEQUANTIZE


def test_dequantize_shapes_and_errors() -> None:
    raw = np.zeros((2, 3, 2 * 18), np.uint8)
    assert compat.dequantize(raw, compat.GGMLQuantizationType.Q4_0).shape == (2, 3, 64)
    assert compat.dequantize(raw[:, :, :0], compat.GGMLQuantizationType.Q4_0).shape == (2, 3, 0)
    assert compat.dequantize(raw[:, ::2], compat.GGMLQuantizationType.Q4_0).shape == (2, 2, 64)  # not contiguous
    f32 = np.arange(8, dtype=np.float32)
    assert compat.dequantize(f32.view(np.uint8), compat.GGMLQuantizationType.F32).tolist() == f32.tolist()
    assert compat.dequantize(f32.astype(np.float16), compat.GGMLQuantizationType.F16).dtype == np.float32
    with pytest.raises(ValueError):
        compat.dequantize(np.zeros(19, np.uint8), compat.GGMLQuantizationType.Q4_0)
    assert compat.quant_shape_to_byte_shape((3, 64), compat.GGMLQuantizationType.Q4_0) == (3, 36)
    assert compat.quant_shape_from_byte_shape((3, 36), compat.GGMLQuantizationType.Q4_0) == (3, 64)
    with pytest.raises(ValueError):
        compat.quant_shape_to_byte_shape((3, 65), compat.GGMLQuantizationType.Q4_0)
    with pytest.raises(ValueError):
        compat.quant_shape_from_byte_shape((3, 37), compat.GGMLQuantizationType.Q4_0)


# ---- quantize ------------------------------------------------------------------------------------------


def golden_cases() -> list[tuple[str, np.ndarray, Any]]:
    """ggml's own quantization of hostile and ordinary rows without importance weights: (case, f32
    rows, ReaderTensor of ggml's bytes)."""
    tensors = {t.name: t for t in compat.GGUFReader(GOLDEN).tensors}
    return [(name[: -len(".src")], t.data, tensors[name[: -len(".src")] + ".q"])
            for name, t in tensors.items() if name.endswith(".src") and ".u" in name]


def test_quantize_matches_ggml() -> None:
    cases = golden_cases()
    assert {q.tensor_type.name for _, _, q in cases} >= set(GGUF_PY_QUANTIZES)
    for case, src, q in cases:
        ours = compat.quantize(src, q.tensor_type)
        assert ours.dtype == q.data.dtype and ours.shape == q.data.shape, case
        assert ours.tobytes() == q.data.tobytes(), case


#: The byte holding the sign of the scale (Q4_0, Q5_0) or of the minimum (Q4_1, Q5_1) in a block.
SIGN_BYTE = {"Q4_0": 1, "Q5_0": 1, "Q4_1": 3, "Q5_1": 3}


def where_gguf_py_departs_from_ggml(src: np.ndarray, qtype: Any, ggml: np.ndarray, theirs: np.ndarray) -> set[str]:
    """Why gguf-py's blocks differ from ggml's (pygguf's): "nan" (gguf-py's scale turns NaN where ggml's
    comparisons skip NaN weights), "-0 block" (a block of zeros whose first weight is -0.0: ggml's
    scale or minimum is -0.0, gguf-py's +0.0; one sign bit), or "unexplained"."""
    block_size, type_size = compat.GGML_QUANT_SIZES[qtype]
    blocks = src.reshape(-1, block_size)
    a = np.frombuffer(ggml.tobytes(), np.uint8).reshape(-1, type_size)
    b = np.frombuffer(theirs.tobytes(), np.uint8).reshape(-1, type_size)
    found = set()
    for k in np.nonzero((a != b).any(axis=1))[0]:
        diff = a[k] ^ b[k]
        sign = SIGN_BYTE.get(qtype.name)
        if np.isnan(blocks[k]).any():
            found.add("nan")
        elif (sign is not None and not blocks[k].any() and np.signbit(blocks[k][0])
              and np.flatnonzero(diff).tolist() == [sign] and diff[sign] == 0x80 and a[k][sign] & 0x80):
            found.add("-0 block")
        else:
            found.add("unexplained")
    return found


#: Where gguf-py departs from ggml, by type (nowhere for the others).
DEPARTURES = {"Q4_0": {"nan", "-0 block"}, "Q5_0": {"nan", "-0 block"}, "Q4_1": {"nan", "-0 block"},
              "Q5_1": {"nan", "-0 block"}, "TQ1_0": {"nan"}, "TQ2_0": {"nan"}, "MXFP4": {"nan"}}


@pytest.mark.parametrize("name", GGUF_PY_QUANTIZES)
def test_quantize_matches_gguf_py(gguf: ModuleType, name: str) -> None:
    """Bit-identical on ordinary and extreme finite rows and infinities; on ggml's own cases, where NaN
    and signed zeros are, gguf-py departs from ggml only as ``where_gguf_py_departs_from_ggml`` explains
    (pygguf gives ggml's bytes: ``test_quantize_matches_ggml``; the -0.0 blocks checked with the oracle)."""
    qtype = compat.GGMLQuantizationType[name]
    theirs_type = gguf.GGMLQuantizationType[name]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((96, 512)).astype(np.float32)
    x[:32] *= rng.uniform(1e-7, 1e7, (32, 1)).astype(np.float32)  # scales from subnormal to huge
    x[32:48] = np.round(x[32:48] * 4) / 4  # ties
    x[48, :256] = 0.0
    x[49, ::5] = np.inf
    x[50, 7] = -np.finfo(np.float32).max
    x[51] = np.float32(1e-40)
    x[52, :256] = 0.0
    x[52, :256:32] = -0.0  # blocks of zeros whose first weight is -0.0
    departures = set()
    for rows in (x, x[:3, :256], x.reshape(4, 24, 512)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's overflow warnings (F16, and gguf-py on infinities)
            ours = compat.quantize(rows, qtype)
            theirs = gguf.quants.quantize(rows, theirs_type)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        departures |= where_gguf_py_departs_from_ggml(rows, qtype, ours, theirs)
    assert departures <= DEPARTURES.get(name, set()) - {"nan"}
    for case, src, q in golden_cases():
        if q.tensor_type != qtype:
            continue
        ours = compat.quantize(src, qtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gguf-py's NaN arithmetic
            theirs = gguf.quants.quantize(src, theirs_type)
        assert theirs.shape == ours.shape and theirs.dtype == ours.dtype
        departures |= where_gguf_py_departs_from_ggml(src, qtype, ours, theirs)
    assert "unexplained" not in departures
    assert departures <= DEPARTURES.get(name, set())


def test_quantize_shapes_and_errors() -> None:
    x = np.linspace(-1, 1, 2 * 3 * 256, dtype=np.float32).reshape(2, 3, 256)
    assert compat.quantize(x, compat.GGMLQuantizationType.Q4_K).shape == (2, 3, 144)  # beyond gguf-py's types
    assert compat.quantize(x, compat.GGMLQuantizationType.F16).dtype == np.float16
    assert compat.quantize(x, compat.GGMLQuantizationType.F32) is x
    assert compat.quantize(x.astype(np.float64), compat.GGMLQuantizationType.BF16).shape == (2, 3, 512)
    with pytest.raises(compat.QuantError):
        compat.quantize(x[..., :100], compat.GGMLQuantizationType.Q8_0)
    for name in ("Q8_K", "Q8_1", "I32", "F64"):
        with pytest.raises(NotImplementedError):
            compat.quantize(x, compat.GGMLQuantizationType[name])
    with pytest.raises(pygguf.GGUFError):
        compat.quantize(x, compat.GGMLQuantizationType.IQ2_XXS)  # needs importance weights: pygguf.quantize
    q = compat.quantize(x, compat.GGMLQuantizationType.Q8_0)
    back = compat.dequantize(q, compat.GGMLQuantizationType.Q8_0)
    assert back.shape == x.shape and np.abs(back - x).max() < 0.01
