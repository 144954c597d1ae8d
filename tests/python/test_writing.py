"""pygguf writes what the gguf tools write: save gives ggml's layout, edit gguf-edit's bytes, split and merge
gguf-split's, quantize_model gguf-quantize's (and llama.cpp's), facts gguf-info --json's object; a value's
type follows the documented rules; a failure or a cancel (an exception of the progress callback, Ctrl-C)
raises and leaves no file behind.

The tools come from PYGGUF_TOOLS (ctest passes the build's examples folder) or PATH, the oracle from
../shared/oracle; a comparison whose reference is missing is skipped."""

from __future__ import annotations

import filecmp
import json
import math
import shutil
import signal
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import pygguf
from pygguf import GGMLType, GGUFError, ValueType

from support import DATA, ORACLE, RULES, committed_files, tool

TINY = DATA / "model" / "tiny-llama-q4_K_M.gguf"


# ---- helpers -------------------------------------------------------------------------------------------


def run(name: str, *args: object, ok: bool = True) -> subprocess.CompletedProcess:
    """Runs a gguf tool; with ok, it must succeed."""
    p = subprocess.run([str(tool(name))] + [str(a) for a in args], capture_output=True, text=True)
    if ok:
        assert p.returncode == 0, f"{name} failed: {p.stderr}"
    return p


def oracle(*args: object) -> subprocess.CompletedProcess:
    """Runs the oracle (ggml's and llama.cpp's own code); skips the test when it cannot run here."""
    if not ORACLE.exists():
        pytest.skip("the oracle (../shared/oracle) is not available")
    p = subprocess.run([sys.executable, str(ORACLE)] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0 and ("setup.sh" in p.stderr or "OSError" in p.stderr or "No such file" in p.stderr):
        pytest.skip(f"the oracle cannot run here: {p.stderr.strip().splitlines()[-1:]}")
    return p


def same_bytes(a: Path, b: Path) -> bool:
    return filecmp.cmp(a, b, shallow=False)


def leftovers(folder: Path) -> list[str]:
    """Temporaries and backups a write may leave (none, ever)."""
    return sorted(p.name for p in folder.iterdir() if "gguf-tmp" in p.name or p.name.endswith(".gguf-backup"))


def metadata_of(path: Path) -> dict:
    """Every key as (type, item type, value as plain Python)."""
    out = {}
    with pygguf.open(path) as m:
        for k in m.metadata:
            v = m.metadata[k]
            if isinstance(v, np.ndarray):
                v = v.tolist()
            elif isinstance(v, pygguf.StringArray):
                v = v.tolist()
            elif isinstance(v, list):
                v = [x.tolist() if isinstance(x, np.ndarray) else x for x in v]
            out[k] = (m.metadata.type(k), m.metadata.item_type(k), v)
    return out


@pytest.fixture(scope="module")
def f32_model(tmp_path_factory) -> Path:
    """The committed tiny llama with every tensor dequantized to float32 (written by pygguf.save): the
    input llama-quantize expects."""
    path = tmp_path_factory.mktemp("f32") / "tiny-llama-f32.gguf"
    with pygguf.open(TINY) as m:
        pygguf.save(path, m.metadata, {name: t.numpy() for name, t in m.tensors.items()})
    return path


@pytest.fixture(scope="module")
def big_model(tmp_path_factory) -> Path:
    """A llama with four float16 matrices of 2048 x 4096: long enough to quantize (0.5 s on one thread)
    that a signal lands in the middle."""
    path = tmp_path_factory.mktemp("big") / "big-f16.gguf"
    rng = np.random.default_rng(7)
    names = ["blk.0.ffn_up.weight", "blk.0.ffn_gate.weight", "blk.1.ffn_up.weight", "blk.1.ffn_gate.weight"]
    tensors = {name: rng.standard_normal((2048, 4096)).astype(np.float16) for name in names}
    with pygguf.open(TINY) as m:
        pygguf.save(path, m.metadata, tensors)
    return path


def write_legacy_imatrix(path: Path, model: Path, dataset: str = "calibration.txt", chunks: int = 10) -> None:
    """An importance matrix in llama-imatrix's legacy .dat format: one positive weight per column of every
    matrix of the model (sums of squares times the call count, as llama-imatrix stores them)."""
    rng = np.random.default_rng(3)
    entries = []
    with pygguf.open(model) as m:
        for name, t in m.tensors.items():
            if len(t.shape) >= 2 and name.endswith(".weight"):
                entries.append((name, (rng.random(t.shape[0], np.float32) + 0.1) * chunks))
    out = struct.pack("<i", len(entries))
    for name, values in entries:
        raw = name.encode()
        out += struct.pack("<i", len(raw)) + raw + struct.pack("<ii", chunks, len(values))
        out += values.astype("<f4").tobytes()
    out += struct.pack("<ii", chunks, len(dataset)) + dataset.encode()
    path.write_bytes(out)


# ---- metadata values: the inference rules ---------------------------------------------------------------

INFERRED = [
    # value, type, item type, read back
    (True, ValueType.BOOL, None, True),
    (7, ValueType.INT32, None, 7),
    (-(2**31), ValueType.INT32, None, -(2**31)),
    (2**31, ValueType.INT64, None, 2**31),
    (-(2**31) - 1, ValueType.INT64, None, -(2**31) - 1),
    (2**63, ValueType.UINT64, None, 2**63),
    (2**64 - 1, ValueType.UINT64, None, 2**64 - 1),
    (0.5, ValueType.FLOAT32, None, 0.5),
    (float("inf"), ValueType.FLOAT32, None, float("inf")),
    ("llama", ValueType.STRING, None, "llama"),
    ("héllo ✓", ValueType.STRING, None, "héllo ✓"),
    (b"raw\xffbytes", ValueType.STRING, None, "raw\udcffbytes"),
    ("\udcff\udcfe", ValueType.STRING, None, "\udcff\udcfe"),  # surrogateescape: the bytes ff fe
    (np.uint32(4096), ValueType.UINT32, None, 4096),
    (np.int8(-3), ValueType.INT8, None, -3),
    (np.float64(0.1), ValueType.FLOAT64, None, 0.1),
    (np.bool_(True), ValueType.BOOL, None, True),
    ([1, 2, 3], ValueType.ARRAY, ValueType.INT32, [1, 2, 3]),
    ([1, 2**40], ValueType.ARRAY, ValueType.INT64, [1, 2**40]),
    ([1, 2**63], ValueType.ARRAY, ValueType.UINT64, [1, 2**63]),
    ([0.5, 1.5], ValueType.ARRAY, ValueType.FLOAT32, [0.5, 1.5]),
    ([True, False], ValueType.ARRAY, ValueType.BOOL, [True, False]),
    (["a", b"b", ""], ValueType.ARRAY, ValueType.STRING, ["a", "b", ""]),
    ([np.uint16(1), np.uint16(2)], ValueType.ARRAY, ValueType.UINT16, [1, 2]),
    (np.array([1, 2], np.uint8), ValueType.ARRAY, ValueType.UINT8, [1, 2]),
    (np.array([1.5, -2], ">f4"), ValueType.ARRAY, ValueType.FLOAT32, [1.5, -2.0]),
    (np.arange(3, dtype=np.int64)[::-1], ValueType.ARRAY, ValueType.INT64, [2, 1, 0]),
    (np.array(["x", "yz"]), ValueType.ARRAY, ValueType.STRING, ["x", "yz"]),
    (np.array([True]), ValueType.ARRAY, ValueType.BOOL, [True]),
    ([[1, 2], [3]], ValueType.ARRAY, ValueType.ARRAY, [[1, 2], [3]]),
]

EXPLICIT = [
    ((ValueType.UINT8, 200), ValueType.UINT8, None, 200),
    ((ValueType.INT16, -5), ValueType.INT16, None, -5),
    ((ValueType.UINT32, 4096), ValueType.UINT32, None, 4096),
    ((ValueType.UINT64, 2**64 - 1), ValueType.UINT64, None, 2**64 - 1),
    ((ValueType.INT64, np.int64(-1)), ValueType.INT64, None, -1),
    ((ValueType.FLOAT64, 0.1), ValueType.FLOAT64, None, 0.1),
    ((ValueType.FLOAT32, 3), ValueType.FLOAT32, None, 3.0),
    ((ValueType.BOOL, 0), ValueType.BOOL, None, False),
    ((ValueType.STRING, "s"), ValueType.STRING, None, "s"),
    ((ValueType.UINT8, [1, 2, 255]), ValueType.ARRAY, ValueType.UINT8, [1, 2, 255]),
    ((ValueType.FLOAT64, np.array([1, 2], np.int32)), ValueType.ARRAY, ValueType.FLOAT64, [1.0, 2.0]),
    ((ValueType.STRING, []), ValueType.ARRAY, ValueType.STRING, []),
    ((ValueType.INT32, []), ValueType.ARRAY, ValueType.INT32, []),
    ((ValueType.BOOL, [1, 0, True]), ValueType.ARRAY, ValueType.BOOL, [True, False, True]),
    ((ValueType.ARRAY, [1, 2]), ValueType.ARRAY, ValueType.INT32, [1, 2]),
    ([(ValueType.UINT8, [1]), (ValueType.UINT8, [])], ValueType.ARRAY, ValueType.ARRAY, [[1], []]),
]


@pytest.mark.parametrize("value, vtype, item, back", INFERRED + EXPLICIT)
def test_value_types(tmp_path, value, vtype, item, back):
    """Each value is written with the documented type and read back as it was given."""
    path = tmp_path / "v.gguf"
    pygguf.save(path, {"k": value})
    got_type, got_item, got = metadata_of(path)["k"]
    assert (got_type, got_item) == (vtype, item)
    assert got == back


REFUSED = [
    (None, TypeError),
    ({}, TypeError),
    ((1, 2), TypeError),
    ([], ValueError),
    ([["a"], []], ValueError),
    ([1, "a"], TypeError),
    ([1, 1.5], TypeError),
    ([1, None], TypeError),
    (2**64, ValueError),
    (-(2**63) - 1, ValueError),
    (1e39, ValueError),  # float32 would make it infinite (gguf-edit refuses it too)
    (1e-50, ValueError),  # ... or 0
    ((ValueType.UINT8, 256), ValueError),
    ((ValueType.UINT8, -1), ValueError),
    ((ValueType.INT32, 1.5), TypeError),
    ((ValueType.BOOL, 2), TypeError),
    ((ValueType.STRING, 5), TypeError),
    ((ValueType.UINT8, [1, 300]), ValueError),
    ((ValueType.ARRAY, 5), TypeError),
    ((ValueType.ARRAY, []), ValueError),
    (np.float16(1), TypeError),
    (np.array([1], np.float16), TypeError),
    (np.zeros((2, 2), np.float32), TypeError),
    ("\ud800", UnicodeEncodeError),  # a lone surrogate that is not an escaped byte
]


@pytest.mark.parametrize("value, error", REFUSED)
def test_values_refused(tmp_path, value, error):
    """A value without a GGUF type raises, naming the key, and writes nothing."""
    with pytest.raises(error) as e:
        pygguf.save(tmp_path / "v.gguf", {"the.key": value})
    if error is not UnicodeEncodeError:
        assert "the.key" in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_nested_list_refused(tmp_path):
    """A list holding itself is refused (64 levels at most), not a crash."""
    a: list = []
    a.append(a)
    with pytest.raises(ValueError, match="64"):
        pygguf.save(tmp_path / "v.gguf", {"k": a})


def test_keys_refused(tmp_path):
    """Keys are non-empty printable ASCII strs (GGUFError from the library, TypeError for a non-str)."""
    for key in ("", "bad\nkey", "é"):
        with pytest.raises(GGUFError) as e:
            pygguf.save(tmp_path / "v.gguf", {key: 1})
        assert e.value.code in ("empty_key", "out_of_range")
    with pytest.raises(TypeError):
        pygguf.save(tmp_path / "v.gguf", {1: 1})
    with pytest.raises(GGUFError) as e:
        pygguf.save(tmp_path / "v.gguf", {"general.alignment": 3})
    assert e.value.code == "bad_alignment"
    assert leftovers(tmp_path) == [] and not (tmp_path / "v.gguf").exists()


def test_values_read_from_a_model_round_trip(tmp_path):
    """String arrays (partial UTF-8 included) and numeric arrays read from a model are written back with
    their bytes and types."""
    for vocab in sorted((DATA / "vocab").glob("*.gguf"))[:4]:
        with pygguf.open(vocab) as m:
            arrays = {k: m.metadata[k] for k in m.metadata if m.metadata.type(k) == ValueType.ARRAY}
            pygguf.save(tmp_path / "copy.gguf", arrays)
            with pygguf.open(tmp_path / "copy.gguf") as c:
                for k, v in arrays.items():
                    assert c.metadata.item_type(k) == m.metadata.item_type(k)
                    if isinstance(v, pygguf.StringArray):
                        assert c.metadata[k].tolist(as_bytes=True) == v.tolist(as_bytes=True)
                    else:
                        assert np.array_equal(c.metadata[k], v)


# ---- save -------------------------------------------------------------------------------------------------


def test_save_round_trip(tmp_path):
    """save then open gives the same metadata, in order, and the same tensors."""
    rng = np.random.default_rng(1)
    q8 = rng.standard_normal((4, 64), np.float32)
    tensors = {
        "f32": rng.standard_normal((3, 5, 64), np.float32),
        "f16": rng.standard_normal((2, 32)).astype(np.float16),
        "f64": rng.standard_normal(16),
        "i8": np.arange(-8, 8, dtype=np.int8),
        "i16": np.arange(32, dtype=np.int16).reshape(2, 16),
        "i32": np.arange(32, dtype=np.int32),
        "i64": np.arange(4, dtype=np.int64),
        "big_endian": np.arange(32, dtype=">f4"),
        "fortran": np.asfortranarray(rng.standard_normal((4, 32), np.float32)),
        "strided": rng.standard_normal((4, 64), np.float32)[:, ::2],
        "scalar": np.array(2.5, np.float32),
        "q8_0": (GGMLType.Q8_0, pygguf.quantize(q8, GGMLType.Q8_0).tobytes(), [64, 4]),
        "bf16": ("bf16", np.zeros(32, np.uint16), (32,)),
    }
    metadata = {"general.architecture": "test", "z.first": 1, "a.second": [1.5], "m.third": "x"}
    path = tmp_path / "m.gguf"
    pygguf.save(path, metadata, tensors)
    with pygguf.open(path) as m:
        assert list(m.metadata) == list(metadata)
        assert list(m.tensors) == list(tensors)
        for name, want in tensors.items():
            t = m.tensors[name]
            if isinstance(want, tuple):
                assert t.type == (GGMLType.from_name(want[0]) if isinstance(want[0], str) else want[0])
                assert list(t.shape) == list(want[2])
                assert bytes(t.raw) == bytes(np.asarray(want[1]).tobytes())
                continue
            want = np.asarray(want)
            assert t.numpy_shape == (want.shape or (1,))
            if want.dtype.kind == "f":
                got = t.numpy(np.float32)
                assert np.array_equal(got, want.astype(np.float32).reshape(got.shape))
            else:
                assert np.array_equal(np.frombuffer(bytes(t.raw), want.dtype.newbyteorder("<")), want.ravel())
        assert m.tensors["f16"].type == GGMLType.F16 and m.tensors["f64"].type == GGMLType.F64
        assert m.tensors["i8"].type == GGMLType.I8 and m.tensors["i64"].type == GGMLType.I64
        assert m.tensors["f32"].shape == (64, 5, 3)


def test_save_refuses_tensors(tmp_path):
    """Tensors without a type, of the wrong size or shape, or with a bad name are refused; nothing is written."""
    cases = [
        ({"u8": np.zeros(4, np.uint8)}, TypeError, None),
        ({"b": np.zeros(4, bool)}, TypeError, None),
        ({"c": np.zeros(4, np.complex64)}, TypeError, None),
        ({"short": (GGMLType.Q8_0, b"\0" * 33, [64])}, GGUFError, "size_mismatch"),
        ({"rows": (GGMLType.Q8_0, b"\0" * 34, [16, 2])}, GGUFError, "bad_row_size"),
        ({"5d": np.zeros((1, 1, 1, 1, 2), np.float32)}, GGUFError, "bad_dimensions"),
        ({"n" * 64: np.zeros(2, np.float32)}, GGUFError, "bad_tensor_name"),
        ({"t": (GGMLType.F32, b"", [0], "extra")}, TypeError, None),
    ]
    for tensors, error, code in cases:
        with pytest.raises(error) as e:
            pygguf.save(tmp_path / "t.gguf", {}, tensors)
        if code:
            assert e.value.code == code
    with pytest.raises(GGUFError) as e:
        pygguf.save(tmp_path / "t.gguf", {}, [("a", np.zeros(2, np.float32)), ("a", np.zeros(2, np.float32))])
    assert e.value.code == "duplicate_tensor" and e.value.key == "a"
    assert list(tmp_path.iterdir()) == []


def test_save_is_ggml_layout(tmp_path):
    """ggml reads what save writes and writes it back byte for byte (gguf_write_to_file: the same layout),
    with and without tensors, and with another alignment."""
    rng = np.random.default_rng(2)
    metadata = {
        "general.architecture": "test",
        "u8": (ValueType.UINT8, 1),
        "i64": (ValueType.INT64, -5),
        "f64": (ValueType.FLOAT64, 0.25),
        "flag": False,
        "names": ["a", "bb", "ccc"],
        "floats": np.array([0.5, 1.5], np.float32),
    }
    tensors = {
        "w": rng.standard_normal((3, 64), np.float32),
        "h": rng.standard_normal((5, 32)).astype(np.float16),
        "q": (GGMLType.Q4_0, pygguf.quantize(rng.standard_normal((2, 64)), GGMLType.Q4_0).tobytes(), [64, 2]),
    }
    for name, md, ts, align in [
        ("tensors", metadata, tensors, None),
        ("none", metadata, {}, None),
        ("aligned", {"general.alignment": (ValueType.UINT32, 64), **metadata}, tensors, None),
        ("aligned-arg", metadata, tensors, 128),
    ]:
        ours, theirs = tmp_path / f"{name}.gguf", tmp_path / f"{name}.ggml.gguf"
        pygguf.save(ours, md, ts, alignment=align)
        p = oracle("rewrite", ours, theirs)
        assert p.returncode == 0, p.stderr
        assert same_bytes(ours, theirs), name
    with pygguf.open(tmp_path / "aligned-arg.gguf") as m:
        assert m.alignment == 128 and list(m.metadata)[-1] == "general.alignment"


def test_save_matches_the_oracle_writer(tmp_path):
    """The same content built with the oracle's independent Python writer, rewritten by ggml, is save's file."""
    if not ORACLE.exists():
        pytest.skip("the oracle is not available")
    sys.path.insert(0, str(ORACLE.parent))
    try:
        import ggml_oracle  # noqa: PLC0415
    finally:
        sys.path.remove(str(ORACLE.parent))
    rng = np.random.default_rng(4)
    w = rng.standard_normal((2, 32), np.float32)
    q = pygguf.quantize(rng.standard_normal((2, 256)), GGMLType.Q6_K).tobytes()
    writer = ggml_oracle.Writer()
    writer.kvs += [
        ("general.architecture", "string", "oracle"),
        ("count", "uint32", 7),
        ("eps", "float32", 1e-5),
        ("tokens", "array", ("string", ["<s>", "</s>"])),
        ("ids", "array", ("int32", [1, -2])),
    ]
    writer.tensors += [("w", 0, [32, 2], w.tobytes()), ("q", int(GGMLType.Q6_K), [256, 2], q)]
    writer.write(str(tmp_path / "oracle.gguf"))
    p = oracle("rewrite", tmp_path / "oracle.gguf", tmp_path / "ggml.gguf")
    assert p.returncode == 0, p.stderr
    pygguf.save(
        tmp_path / "ours.gguf",
        {
            "general.architecture": "oracle",
            "count": (ValueType.UINT32, 7),
            "eps": 1e-5,
            "tokens": ["<s>", "</s>"],
            "ids": [1, -2],
        },
        {"w": w, "q": (GGMLType.Q6_K, q, [256, 2])},
    )
    assert same_bytes(tmp_path / "ours.gguf", tmp_path / "ggml.gguf")


def test_save_big_endian_is_gguf_edit(tmp_path):
    """byte_order="big" writes what gguf-edit --byte-order big makes of the little-endian file."""
    rng = np.random.default_rng(5)
    md = {"general.architecture": "test", "n": (ValueType.UINT16, 3), "xs": [1.5, 2.5]}
    ts = {
        "w": rng.standard_normal((2, 32), np.float32),
        "q": (GGMLType.Q4_K, pygguf.quantize(rng.standard_normal(256), GGMLType.Q4_K).tobytes(), [256]),
    }
    pygguf.save(tmp_path / "le.gguf", md, ts)
    pygguf.save(tmp_path / "be.gguf", md, ts, byte_order="big")
    run("gguf-edit", tmp_path / "le.gguf", "-o", tmp_path / "cli-be.gguf", "--byte-order", "big")
    assert same_bytes(tmp_path / "be.gguf", tmp_path / "cli-be.gguf")
    with pygguf.open(tmp_path / "be.gguf") as m:
        assert m.byte_order == "big"
        assert np.array_equal(m.tensors["w"].numpy(), ts["w"])
        assert m.metadata["xs"].tolist() == [1.5, 2.5]
    with pytest.raises(ValueError):
        pygguf.save(tmp_path / "x.gguf", {}, byte_order="middle")


@pytest.mark.parametrize("path", [p for p in committed_files() if "v1" not in p.name], ids=lambda p: p.name)
def test_save_copies_a_model(tmp_path, path):
    """save(dst, m.metadata, m.tensors) copies a model (types kept, big-endian tensors converted): the file
    gguf-edit writes from it without edits, for a little-endian v3 file; the same content otherwise."""
    try:
        m = pygguf.open(path)
    except GGUFError:
        pytest.skip("a file the library refuses")
    with m:
        out = tmp_path / "copy.gguf"
        pygguf.save(out, m.metadata, m.tensors)
        if m.version == 3 and m.byte_order == "little":
            run("gguf-edit", path, "-o", tmp_path / "cli.gguf")
            assert same_bytes(out, tmp_path / "cli.gguf")
        with pygguf.open(out) as c:
            assert list(c.metadata) == list(m.metadata)
            assert [c.metadata.type(k) for k in c.metadata] == [m.metadata.type(k) for k in m.metadata]
            assert list(c.tensors) == list(m.tensors)
            for name, t in m.tensors.items():
                if t.type in (GGMLType.F32, GGMLType.F16, GGMLType.Q8_0):
                    # (the writer drops trailing dimensions of 1, as ggml's does)
                    assert np.array_equal(c.tensors[name].numpy().ravel(), t.numpy().ravel(), equal_nan=True)


# ---- edit -------------------------------------------------------------------------------------------------

EDITS = dict(
    set={
        "general.name": "edited",
        "pygguf.u32": (ValueType.UINT32, 7),
        "pygguf.f": 0.5,
        "pygguf.words": ["a", "b"],
        "pygguf.ids": (ValueType.INT16, [1, -2]),
    },
    delete=["general.architecture"],
)
CLI_EDITS = [
    "--del", "general.architecture",
    "--set", "general.name=string:edited",
    "--set", "pygguf.u32=uint32:7",
    "--set", "pygguf.f=float32:0.5",
    "--set", 'pygguf.words=array:string:["a","b"]',
    "--set", "pygguf.ids=array:int16:[1,-2]",
]  # fmt: skip


@pytest.mark.parametrize("path", committed_files(), ids=lambda p: p.name)
def test_edit_is_gguf_edit(tmp_path, path):
    """edit writes gguf-edit's bytes for the same edits, for every committed file (v1, v2, big-endian
    included); where gguf-edit refuses the file, edit raises GGUFError."""
    ours, theirs = tmp_path / "ours.gguf", tmp_path / "cli.gguf"
    p = run("gguf-edit", path, "-o", theirs, *CLI_EDITS, ok=False)
    if p.returncode != 0:
        with pytest.raises(GGUFError):
            pygguf.edit(path, ours, **EDITS)
        assert not ours.exists() and leftovers(tmp_path) == []
        return
    pygguf.edit(path, ours, **EDITS)
    assert same_bytes(ours, theirs)
    for order in ("big", "little"):
        pygguf.edit(path, ours, byte_order=order)
        run("gguf-edit", path, "-o", theirs, "--byte-order", order)
        assert same_bytes(ours, theirs), order


@pytest.mark.parametrize(
    "name", ["model/tiny-llama-q4_K_M.gguf", "vocab/ggml-vocab-gpt-2.gguf", "quants/quants-s1.gguf"]
)
def test_edit_is_ggml(tmp_path, name):
    """edit writes what ggml's own writer writes after gguf_set_val_* and gguf_remove_key (the oracle)."""
    src = DATA / name
    p = oracle(
        "rewrite", src, tmp_path / "ggml.gguf",
        "--del", "general.name", "--set", "general.architecture=string:x", "--set", "n=uint64:5",
        "--set", "eps=float64:0.1", "--set", "on=bool:true",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    pygguf.edit(
        src,
        tmp_path / "ours.gguf",
        delete=["general.name"],
        set={
            "general.architecture": "x",
            "n": (ValueType.UINT64, 5),
            "eps": (ValueType.FLOAT64, 0.1),
            "on": True,
        },
    )
    assert same_bytes(tmp_path / "ours.gguf", tmp_path / "ggml.gguf")


def test_edit_order_rename_and_sources(tmp_path):
    """Deletions, then renames (in place), then sets (moved last), as gguf-edit applies --del --rename --set;
    from a path, an open model or a buffer, the same bytes."""
    cli = tmp_path / "cli.gguf"
    run(
        "gguf-edit", TINY, "-o", cli, "--del", "llama.vocab_size", "--rename", "general.name=general.title",
        "--set", "llama.context_length=uint32:2048", "--set", "general.title=string:renamed",
    )  # fmt: skip
    kwargs = dict(
        delete=["llama.vocab_size", "no.such.key"],
        rename={"general.name": "general.title"},
        set={"llama.context_length": (ValueType.UINT32, 2048), "general.title": "renamed"},
    )
    pygguf.edit(TINY, tmp_path / "a.gguf", **kwargs)
    with pygguf.open(TINY) as m:
        pygguf.edit(m, tmp_path / "b.gguf", **kwargs)
    with pygguf.open(TINY.read_bytes()) as m:
        pygguf.edit(m, tmp_path / "c.gguf", **kwargs)
        with pytest.raises(ValueError, match="buffer"):
            pygguf.edit(m, **kwargs)
    for f in ("a", "b", "c"):
        assert same_bytes(tmp_path / f"{f}.gguf", cli), f
    with pytest.raises(GGUFError) as e:
        pygguf.edit(TINY, tmp_path / "d.gguf", rename={"no.such.key": "x"})
    assert e.value.code == "not_found"
    with pytest.raises(GGUFError) as e:
        pygguf.edit(TINY, tmp_path / "d.gguf", rename={"general.name": "general.architecture"})
    assert e.value.code == "duplicate_key"
    assert not (tmp_path / "d.gguf").exists() and leftovers(tmp_path) == []


def test_edit_rewrites_the_file_itself(tmp_path):
    """Without dst the file itself is replaced (a new file renamed over it), as gguf-edit FILE does; a
    symlink stays a link to the rewritten file; an open model keeps reading its old bytes."""
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    shutil.copy(TINY, a)
    shutil.copy(TINY, b)
    link = tmp_path / "link.gguf"
    link.symlink_to(a.name)
    with pygguf.open(a) as m:
        before = m.metadata["general.name"]
        pygguf.edit(link, set={"general.name": "new"})
        assert m.metadata["general.name"] == before  # the old file, still mapped
    run("gguf-edit", b, "--set", "general.name=string:new")
    assert link.is_symlink() and same_bytes(a, b)
    with pygguf.open(a) as m:
        pygguf.edit(m, set={"general.name": "newer"})
    with pygguf.open(a) as m:
        assert m.metadata["general.name"] == "newer"
    assert leftovers(tmp_path) == []


def test_edit_in_place(tmp_path):
    """in_place rewrites only the header, as gguf-edit --in-place: the same bytes; metadata that does not
    fit is refused with the file untouched and no backup left; a pending backup blocks every edit."""
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    shutil.copy(TINY, a)
    shutil.copy(TINY, b)
    pygguf.edit(a, set={"general.name": "short", "k": 1}, in_place=True)
    run("gguf-edit", b, "--set", "general.name=string:short", "--set", "k=int32:1", "--in-place")
    assert same_bytes(a, b) and a.stat().st_size == TINY.stat().st_size
    saved = a.read_bytes()
    with pytest.raises(GGUFError) as e:
        pygguf.edit(a, set={"long": "x" * 10000}, in_place=True)
    assert e.value.code == "out_of_range"
    with pytest.raises(GGUFError) as e:
        pygguf.edit(a, byte_order="big", in_place=True)
    assert e.value.code == "out_of_range"
    assert a.read_bytes() == saved and leftovers(tmp_path) == []
    with pygguf.open(a) as m, pytest.raises(ValueError, match="path"):
        pygguf.edit(m, set={"x": 1}, in_place=True)
    with pytest.raises(ValueError):
        pygguf.edit(a, tmp_path / "c.gguf", in_place=True)
    (tmp_path / "a.gguf.gguf-backup").write_bytes(b"not a backup")
    for kwargs in (dict(in_place=True), dict(dst=tmp_path / "c.gguf"), {}):
        with pytest.raises(GGUFError) as e:
            pygguf.edit(a, set={"x": 1}, **kwargs)
        assert e.value.code == "pending_restore"
    assert a.read_bytes() == saved and not (tmp_path / "c.gguf").exists()


def test_edit_errors(tmp_path):
    """A missing or broken input, an unwritable output: OSError (errno, filename) or GGUFError (code,
    offset), and no file left behind."""
    missing = tmp_path / "missing.gguf"
    with pytest.raises(FileNotFoundError) as e:
        pygguf.edit(missing, tmp_path / "out.gguf")
    assert e.value.filename == str(missing)
    broken = sorted(p for p in RULES.glob("*.gguf") if not p.name.startswith("ok-"))[0]
    with pytest.raises(GGUFError) as e:
        pygguf.edit(broken, tmp_path / "out.gguf")
    assert e.value.code
    with pytest.raises(FileNotFoundError) as e:
        pygguf.edit(TINY, tmp_path / "no" / "dir" / "out.gguf")
    assert e.value.errno == 2
    with pytest.raises(IsADirectoryError):
        pygguf.edit(TINY, tmp_path)
    with pytest.raises(TypeError):
        pygguf.edit(TINY, tmp_path / "out.gguf", delete=[1])
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# ---- split and merge -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, cli",
    [
        (dict(max_tensors=5), ["--split-max-tensors", "5"]),
        (dict(max_tensors=1, no_tensor_first_split=True), ["--split-max-tensors", "1", "--no-tensor-first-split"]),
        (dict(max_size="1M"), ["--split-max-size", "1M"]),
        (dict(), []),
    ],
)
def test_split_is_gguf_split(tmp_path, kwargs, cli):
    """split writes gguf-split's shards byte for byte and returns their paths; merging them back with
    drop_split_keys gives the original file, without it gguf-split --merge's file."""
    (tmp_path / "cli").mkdir()
    run("gguf-split", *cli, TINY, tmp_path / "cli" / "tiny")
    paths = pygguf.split(TINY, tmp_path / "tiny", **kwargs)
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert [Path(p).name for p in paths] == names
    assert [Path(p).parent for p in paths] == [tmp_path] * len(paths)
    for name in names:
        assert same_bytes(tmp_path / name, tmp_path / "cli" / name), name
    assert pygguf.merge(paths[-1], tmp_path / "back.gguf", drop_split_keys=True) == str(tmp_path / "back.gguf")
    assert same_bytes(tmp_path / "back.gguf", TINY)
    pygguf.merge(paths[0], tmp_path / "merged.gguf")
    run("gguf-split", "--merge", paths[0], tmp_path / "cli" / "merged.gguf")
    assert same_bytes(tmp_path / "merged.gguf", tmp_path / "cli" / "merged.gguf")


def test_split_is_llama_cpp(tmp_path):
    """split writes llama.cpp's gguf-split's shards (the oracle: the same ggml calls)."""
    p = oracle("split", TINY, tmp_path / "ggml", "--max-tensors", "4")
    assert p.returncode == 0, p.stderr
    theirs = json.loads(p.stdout)
    ours = pygguf.split(TINY, tmp_path / "ours", max_tensors=4)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert same_bytes(Path(a), Path(b))


def test_split_sources_and_replacement(tmp_path):
    """A model open in Python splits as its file does; a new split replaces the prefix's old set whole;
    a model from a buffer, bad options and a prefix that names a directory are refused."""
    first = pygguf.split(TINY, tmp_path / "m", max_tensors=3)
    assert len(first) == 7
    with pygguf.open(first[3]) as m:  # the whole set, from any shard
        assert len(m.tensors) == 21
        again = pygguf.split(m, tmp_path / "m", max_tensors=10)
    assert len(again) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(p).name for p in again)
    pygguf.split(TINY, tmp_path / "ref", max_tensors=10)
    for a in again:
        assert same_bytes(Path(a), tmp_path / Path(a).name.replace("m-", "ref-"))
    with pygguf.open(TINY.read_bytes()) as m, pytest.raises(ValueError, match="buffer"):
        pygguf.split(m, tmp_path / "x")
    with pytest.raises(ValueError):
        pygguf.split(TINY, tmp_path / "x", max_tensors=2, max_size=100)
    with pytest.raises(ValueError):
        pygguf.split(TINY, tmp_path / "x", max_tensors=0)
    with pytest.raises(ValueError):
        pygguf.split(TINY, tmp_path / "x", max_size="12K")
    with pytest.raises(IsADirectoryError):
        pygguf.split(TINY, tmp_path)
    with pytest.raises(FileNotFoundError):
        pygguf.split(TINY, tmp_path / "no" / "x")
    assert not any(p.name.startswith("x") for p in tmp_path.iterdir()) and leftovers(tmp_path) == []


def test_merge_refusals(tmp_path):
    """merge never overwrites (as gguf-split --merge) and needs a shard of a split model."""
    paths = pygguf.split(TINY, tmp_path / "m", max_tensors=10)
    (tmp_path / "exists.gguf").write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        pygguf.merge(paths[0], tmp_path / "exists.gguf")
    assert (tmp_path / "exists.gguf").read_bytes() == b"keep"
    with pytest.raises(GGUFError) as e:
        pygguf.merge(TINY, tmp_path / "out.gguf")
    assert e.value.code == "not_found" and e.value.key == "split.count"
    with pygguf.open(paths[1]) as m:
        pygguf.merge(m, tmp_path / "from-model.gguf", drop_split_keys=True)
    assert same_bytes(tmp_path / "from-model.gguf", TINY)
    assert not (tmp_path / "out.gguf").exists() and leftovers(tmp_path) == []


# ---- quantize_model ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ftype", ["Q8_0", "Q4_K_M", "q4_0", "IQ4_XS", "7"])
def test_quantize_model_is_gguf_quantize(tmp_path, f32_model, ftype):
    """quantize_model writes gguf-quantize's bytes for the same file type (any thread count)."""
    run("gguf-quantize", "--threads", "1", f32_model, tmp_path / "cli.gguf", ftype)
    pygguf.quantize_model(f32_model, tmp_path / "ours.gguf", ftype if not ftype.isdigit() else int(ftype), threads=2)
    assert same_bytes(tmp_path / "ours.gguf", tmp_path / "cli.gguf")


def test_quantize_model_is_llama_cpp(tmp_path, f32_model):
    """quantize_model writes llama.cpp's llama_model_quantize's bytes (the oracle)."""
    p = oracle("llama-quantize", f32_model, tmp_path / "llama.gguf", "Q4_K_M")
    assert p.returncode == 0, p.stderr
    pygguf.quantize_model(f32_model, tmp_path / "ours.gguf", "Q4_K_M")
    assert same_bytes(tmp_path / "ours.gguf", tmp_path / "llama.gguf")


@pytest.mark.parametrize("ftype", ["Q4_K_M", "IQ2_XS"])
def test_quantize_model_with_imatrix(tmp_path, f32_model, ftype):
    """With an importance matrix (the quantize.imatrix.* keys included), gguf-quantize --imatrix's bytes."""
    imatrix = tmp_path / "imatrix.dat"
    write_legacy_imatrix(imatrix, f32_model)
    run("gguf-quantize", "--imatrix", imatrix, f32_model, tmp_path / "cli.gguf", ftype)
    pygguf.quantize_model(f32_model, tmp_path / "ours.gguf", ftype, imatrix=imatrix)
    assert same_bytes(tmp_path / "ours.gguf", tmp_path / "cli.gguf")
    with pygguf.open(tmp_path / "ours.gguf") as m:
        assert m.metadata["quantize.imatrix.file"] == str(imatrix)
        assert m.metadata["quantize.imatrix.dataset"] == "calibration.txt"


def test_quantize_model_options(tmp_path):
    """llama-quantize's options: --allow-requantize, --output-tensor-type, --token-embedding-type,
    --leave-output-tensor, --pure give gguf-quantize's bytes."""
    cases = [
        (dict(), []),
        (dict(output_tensor_type="Q8_0", token_embedding_type=GGMLType.Q6_K),
         ["--output-tensor-type", "q8_0", "--token-embedding-type", "q6_K"]),
        (dict(leave_output_tensor=True, pure=True), ["--leave-output-tensor", "--pure"]),
    ]  # fmt: skip
    for i, (kwargs, cli) in enumerate(cases):
        run("gguf-quantize", "--allow-requantize", *cli, TINY, tmp_path / f"cli{i}.gguf", "Q5_K_M")
        pygguf.quantize_model(TINY, tmp_path / f"ours{i}.gguf", "Q5_K_M", allow_requantize=True, **kwargs)
        assert same_bytes(tmp_path / f"ours{i}.gguf", tmp_path / f"cli{i}.gguf"), cli


def test_quantize_model_from_shards_and_models(tmp_path, f32_model):
    """A split model (by any shard) or a model open in Python quantizes as its file does."""
    pygguf.quantize_model(f32_model, tmp_path / "ref.gguf", "Q6_K")
    shards = pygguf.split(f32_model, tmp_path / "s", max_tensors=4)
    pygguf.quantize_model(shards[2], tmp_path / "from-shards.gguf", "Q6_K")
    with pygguf.open(f32_model) as m:
        pygguf.quantize_model(m, tmp_path / "from-model.gguf", "Q6_K")
    assert same_bytes(tmp_path / "from-shards.gguf", tmp_path / "ref.gguf")
    assert same_bytes(tmp_path / "from-model.gguf", tmp_path / "ref.gguf")


def test_quantize_model_progress(tmp_path, f32_model):
    """progress(done, total, name) is called once per tensor after it is written, in the output file's
    order, from the calling thread."""
    calls = []
    caller = threading.get_ident()

    def progress(done, total, name):
        assert threading.get_ident() == caller
        calls.append((done, total, name))

    pygguf.quantize_model(f32_model, tmp_path / "q.gguf", "Q4_K_M", progress=progress, threads=2)
    with pygguf.open(tmp_path / "q.gguf") as m:
        names = list(m.tensors)
    assert calls == [(i + 1, len(names), n) for i, n in enumerate(names)]
    with pytest.raises(TypeError):
        pygguf.quantize_model(f32_model, tmp_path / "q2.gguf", "Q8_0", progress="no")


class Stop(Exception):
    pass


def test_quantize_model_cancelled_by_the_callback(tmp_path, f32_model):
    """An exception of the callback stops the work: it propagates, the output is left as it was (absent,
    or the old file), and no temporary remains."""
    seen = []

    def progress(done, total, name):
        seen.append(done)
        if done == 3:
            raise Stop("enough")

    out = tmp_path / "q.gguf"
    with pytest.raises(Stop, match="enough"):
        pygguf.quantize_model(f32_model, out, "Q4_K_M", progress=progress)
    assert seen == [1, 2, 3]
    assert list(tmp_path.iterdir()) == []
    out.write_bytes(b"old")
    with pytest.raises(Stop):
        pygguf.quantize_model(f32_model, out, "Q4_K_M", progress=progress)
    assert out.read_bytes() == b"old" and leftovers(tmp_path) == []


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_quantize_model_cancelled_by_ctrl_c(tmp_path, big_model):
    """A signal whose handler raises (Ctrl-C's KeyboardInterrupt) stops the work while the GIL is released:
    the exception propagates and nothing is left behind; save and split likewise."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(KeyboardInterrupt):
            pygguf.quantize_model(big_model, tmp_path / "q.gguf", "Q4_K_M", threads=1)
        assert list(tmp_path.iterdir()) == []
        with pygguf.open(big_model) as m:
            tensors = {n: t.numpy(np.float16) for n, t in m.tensors.items()}
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            with pytest.raises(KeyboardInterrupt):
                for _ in range(20):  # the signal lands in one of them (most likely the first)
                    pygguf.save(tmp_path / "s.gguf", m.metadata, tensors)
                    (tmp_path / "s.gguf").unlink()
        assert list(tmp_path.iterdir()) == []
        signal.setitimer(signal.ITIMER_REAL, 0.001)
        with pytest.raises(KeyboardInterrupt):
            for _ in range(20):
                for shard in pygguf.split(big_model, tmp_path / "s", max_tensors=1):
                    Path(shard).unlink()
        assert list(tmp_path.iterdir()) == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_quantize_model_releases_the_gil(tmp_path, big_model):
    """Other Python threads run while a model is quantized: the main thread counts about as fast as beside
    a thread that sleeps (were the GIL held through the work, it would hardly count at all)."""
    import time  # noqa: PLC0415

    def rate(target, *args, **kwargs) -> float:
        worker = threading.Thread(target=target, args=args, kwargs=kwargs)
        ticks, start = 0, time.perf_counter()
        worker.start()
        while worker.is_alive():
            ticks += 1
        elapsed = time.perf_counter() - start
        worker.join()
        return ticks / elapsed

    beside_sleep = rate(time.sleep, 0.2)
    beside_quantize = rate(pygguf.quantize_model, big_model, tmp_path / "q.gguf", "Q4_K_M", threads=1)
    assert (tmp_path / "q.gguf").exists()
    assert beside_quantize > 0.15 * beside_sleep, (beside_quantize, beside_sleep)


def test_quantize_model_errors(tmp_path, f32_model):
    """Bad input raises GGUFError (with the tensor), ValueError or OSError, and leaves no file behind."""
    with pytest.raises(GGUFError) as e:
        pygguf.quantize_model(TINY, tmp_path / "q.gguf", "Q8_0")  # already quantized
    assert e.value.code == "type_mismatch"
    with pytest.raises(GGUFError) as e:
        pygguf.quantize_model(f32_model, tmp_path / "q.gguf", "IQ2_XS")  # needs an imatrix
    assert e.value.code == "not_found"
    with pytest.raises(GGUFError) as e:
        pygguf.quantize_model(f32_model, f32_model, "Q8_0")
    assert e.value.code == "out_of_range"
    with pytest.raises(ValueError, match="unknown file type"):
        pygguf.quantize_model(f32_model, tmp_path / "q.gguf", "Q9_X")
    with pytest.raises(ValueError):
        pygguf.quantize_model(f32_model, tmp_path / "q.gguf", 999)
    with pytest.raises(ValueError):
        pygguf.quantize_model(f32_model, tmp_path / "q.gguf", "Q8_0", output_tensor_type="q9")
    with pytest.raises(ValueError):
        pygguf.quantize_model(f32_model, tmp_path / "q.gguf", "Q8_0", threads=0)
    with pytest.raises(FileNotFoundError) as e:
        pygguf.quantize_model(tmp_path / "missing.gguf", tmp_path / "q.gguf", "Q8_0")
    assert e.value.filename == str(tmp_path / "missing.gguf")
    with pytest.raises(FileNotFoundError):
        pygguf.quantize_model(f32_model, tmp_path / "q.gguf", "Q8_0", imatrix=tmp_path / "missing.dat")
    (tmp_path / "bad.dat").write_bytes(b"\1\0\0\0")
    with pytest.raises(GGUFError):
        pygguf.quantize_model(f32_model, tmp_path / "q.gguf", "Q8_0", imatrix=tmp_path / "bad.dat")
    (tmp_path / "bad.dat").unlink()
    with pygguf.open(TINY.read_bytes()) as m, pytest.raises(ValueError, match="buffer"):
        pygguf.quantize_model(m, tmp_path / "q.gguf", "Q8_0")
    assert list(tmp_path.iterdir()) == []


# ---- facts ------------------------------------------------------------------------------------------------


def same_facts(ours: dict, theirs: dict) -> bool:
    """Equal, but for non-finite floats, which the JSON holds as strings."""
    if ours.keys() != theirs.keys():
        return False
    for k, a in ours.items():
        b = theirs[k]
        if isinstance(a, float) and not math.isfinite(a):
            if str(a) != b:
                return False
        elif isinstance(a, dict):
            if not same_facts(a, b):
                return False
        elif a != b:
            return False
    return True


@pytest.mark.parametrize("path", committed_files(), ids=lambda p: p.name)
def test_facts_is_gguf_info(path):
    """facts gives the object gguf-info --json prints, for every committed file; where gguf-info refuses
    the file, facts raises GGUFError."""
    p = run("gguf-info", "--json", path, ok=False)
    if p.returncode != 0:
        with pytest.raises(GGUFError):
            pygguf.facts(path)
        return
    theirs = json.loads(p.stdout)
    ours = pygguf.facts(str(path))
    assert same_facts(ours, theirs)
    assert list(ours) == list(theirs)  # and in the same order
    with pygguf.open(path) as m:
        assert same_facts(pygguf.facts(m), theirs)


def test_facts_of_shards_and_options(tmp_path):
    """Shard sets (by any shard), models open in Python, buffers, and the memory options give gguf-info's."""
    shards = pygguf.split(TINY, tmp_path / "s", max_tensors=8)
    for shard in shards:
        theirs = json.loads(run("gguf-info", "--json", shard).stdout)
        assert pygguf.facts(shard) == theirs and theirs["shards"] == 3
    options = [
        (dict(context=1000), ["--ctx", "1000"]),
        (dict(cache_type="q8_0"), ["--cache-type", "q8_0"]),
        (dict(cache_type="q8_0", cache_type_v="f32"), ["--cache-type", "q8_0", "--cache-type-v", "f32"]),
        (dict(cache_type_k="bf16", swa_full=True, ubatch=64),
         ["--cache-type-k", "bf16", "--swa-full", "--ubatch", "64"]),
    ]  # fmt: skip
    for kwargs, cli in options:
        assert pygguf.facts(TINY, **kwargs) == json.loads(run("gguf-info", "--json", TINY, *cli).stdout)
    with pygguf.open(TINY.read_bytes()) as m:
        buffered = pygguf.facts(m)
    assert buffered["file"] is None and buffered["n_params"] == pygguf.facts(TINY)["n_params"]
    with pytest.raises(ValueError):
        pygguf.facts(TINY, cache_type="q8_K")
    with pytest.raises(ValueError):
        pygguf.facts(TINY, context=0)
    with pytest.raises(FileNotFoundError):
        pygguf.facts(tmp_path / "missing.gguf")
