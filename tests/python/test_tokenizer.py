"""pygguf.Tokenizer is the C++ library's gguf::tokenizer, which is llama.cpp's tokenizer: on every shared
vocabulary, the ids of a varied corpus (scripts, emoji, whitespace runs, special-token texts, invalid
UTF-8) with all four settings of add_special and parse_special are the C++ library's (tests/tools/
tokenize_batch) and llama.cpp's own (the oracle), and so are the decoded bytes. encode_batch equals
encode on any number of threads; one tokenizer serves many Python threads, with the GIL released while
it works; it outlives its model; vocabularies no tokenizer can use raise GGUFError, never crash."""

from __future__ import annotations

import codecs
import copy
import gc
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import pygguf

from support import ORACLE, ROOT, SHARED, cases

VOCABS = sorted((SHARED / "data" / "vocab").glob("*.gguf"))

# The tokenizer model of each shared vocabulary.
VOCAB_TYPES = {
    "baichuan": "spm", "bert-bge": "wpm", "deepseek-coder": "bpe", "deepseek-llm": "bpe", "falcon": "bpe",
    "gpt-2": "bpe", "gpt-neox": "bpe", "llama-spm": "spm", "mpt": "bpe", "phi-3": "spm", "refact": "bpe",
    "starcoder": "bpe",
}

# (add_special, parse_special) in tokenize_batch's order; (remove_special, unparse_special) likewise.
ENCODE_FLAGS = [(True, False), (False, False), (True, True), (False, True)]
DECODE_FLAGS = [(False, False), (True, False), (False, True), (True, True)]

needs_vocabs = pytest.mark.skipif(not VOCABS, reason=f"no shared vocabularies in {SHARED / 'data' / 'vocab'}")


def vocab_id(path: Path) -> str:
    return path.stem.replace("ggml-vocab-", "")


def vocab(name: str) -> Path:
    path = SHARED / "data" / "vocab" / f"ggml-vocab-{name}.gguf"
    if not path.exists():
        pytest.skip(f"{path} is not there")
    return path


@lru_cache(maxsize=None)
def tokenizer_of(path: Path) -> pygguf.Tokenizer:
    """One tokenizer per vocabulary for the whole run (its model closed at once)."""
    with pygguf.open(path) as m:
        return m.tokenizer


# ---- the corpus --------------------------------------------------------------------------------------

TEXTS = [
    "", " ", "  ", "\n", " \n", "\n\n\n", "\t", "\r\n", "Hello world", " Hello world", "Hello World!",
    "hello, world. how are you?", "I'm sure you're right, they'll say he's done it; we'd've... don't",
    "HE'S SHE'LL WE'VE YOU'D I'M IT'S 'tis 'Twas", "a  b   c    d     e", "   leading and trailing   ",
    "multiple\n\nnewlines\n\n\n\nhere", "tabs\tand\t\ttabs", "carriage\r\nreturn\rmix", "it ' s , ok . yes !",
    "1 12 123 1234 12345 123456 1234567 12345678901234567890", "3.14159 2,718 1,000,000 -42 +7 0x1F 1e-9",
    "Ünïcödé façade naïve résumé Ångström ß ẞ", "Привет, мир! Как дела?", "Γειά σου Κόσμε",
    "مرحبا بالعالم ١٢٣٤", "שלום עולם", "नमस्ते दुनिया, क्षत्रिय", "สวัสดีชาวโลก", "你好，世界！这是一个测试。",
    "日本語のテキスト、カタカナとひらがな。", "한국어 텍스트 안녕하세요", "全角：ＡＢＣ１２３！？",
    "emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ ✨", "math ∑∫√∞ ≤≥≠ ±×÷ ½ ² ³ µ", "currency $€£¥₹ ₿",
    "def f(x):\n    return x ** 2  # square\n", 'int main() { printf("%d\\n", a[i] <= b); }',
    '{"key": [1, 2, {"a": null}], "s": "x\\ty"}', '<html><body class="x">Hi &amp; bye</body></html>',
    "https://example.com/path?query=1&b=2#frag user@example.org", "    indented code\n        more",
    "A" * 300, " " * 100, "\n" * 40, "ab" * 200 + "!", "word " * 100, "😀" * 30, "x\u00a0y\u3000z\u2028w\u2009v",
    "\u200b\u200c\u200d\ufeff zero width", "combining: e\u0301 a\u0308 n\u0303 \u0915\u094d\u0937",
    "Zl\u2028Zp\u2029 control \x01\x07\x1b[0m", "digits ٠١٢ ۰۱۲ ०१२ ０１２ ⅠⅡⅢ ①②③",
    "punctuation ¡¿ «» “” ‘’ – — … ‥ · • ‹›", "CamelCaseWords andSnake_case and kebab-case ALLCAPS MiXeD",
    "Ǆǅǆ ǈǉ ǋǌ ǲǳ", "ｱｲｳｴｵ ㄅㄆㄇ ㄱㄴㄷ 가힣 一龥 ࠀ", "null\x00byte", "é" * 50, " \u2581 already escaped",
]
# Invalid UTF-8, as bytes: lone continuation bytes, truncated sequences, overlong forms, surrogates.
RAW = [b"\xff", b"\xc3", b"\xe2\x82", b"abc\x80def", b"\xc0\xaf", b"\xed\xa0\x80", b"ok\xf0\x9f\x98",
       b"\xf8\x88\x80\x80\x80", b"\xfe\xff", b"caf\xe9 latin-1", b"\x80" * 20]


def special_texts(path: Path) -> list[bytes]:
    """The texts of the control and user-defined tokens the file lists (longest first, at most 24)."""
    with pygguf.open(path) as m:
        md = m.metadata
        if "tokenizer.ggml.token_type" not in md:
            return []
        tokens = md["tokenizer.ggml.tokens"].tolist(as_bytes=True)
        types = md["tokenizer.ggml.token_type"]
        found = {t for t, ty in zip(tokens, types) if ty in (3, 4) and t}
    return sorted(found, key=lambda s: (-len(s), s))[:24]


@lru_cache(maxsize=None)
def corpus(path: Path) -> tuple[bytes, ...]:
    """The texts tried on a vocabulary, as bytes: the fixed ones, invalid UTF-8, its special tokens'
    texts alone, inside words, between spaces, twice in a row and cut short, and seeded random mixes."""
    texts = [t.encode("utf-8") for t in TEXTS] + RAW
    specials = special_texts(path)
    for s in specials:
        texts += [s, b"Hello" + s + b"world", b" " + s + b" ", b"a " + s + b"\n" + s + s + b" b", s[:-1] or s]
    rng = random.Random(1)
    pool = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") * 3 + list(" \t\n\r  ") * 4 +
            list("'.,;:!?-_()[]{}<>\"/\\|@#$%^&*+=~`") + list("éüñçÅßøœабвгд中文字漢ひらカタ한국") +
            ["\u0301", "😀", "👍🏽", "\u200d", "\u00a0", "\u3000", "١", "½"])
    for _ in range(60):
        parts = []
        for _ in range(rng.randint(0, 40)):
            r = rng.random()
            if r < 0.03:
                parts.append(rng.choice(RAW[:4]))
            elif specials and r < 0.05:
                parts.append(rng.choice(specials))
            else:
                parts.append(rng.choice(pool).encode("utf-8"))
        texts.append(b"".join(parts))
    return tuple(texts)


# ---- the references ----------------------------------------------------------------------------------


def find_tokenize_batch() -> Path | None:
    """tests/tools/tokenize_batch of a C++ build: $PYGGUF_TOKENIZE_BATCH, else beside the tools of
    $PYGGUF_TOOLS, else in the build tree this pygguf was built in."""
    names = ["tokenize_batch", "tokenize_batch.exe"]
    candidates = []
    if os.environ.get("PYGGUF_TOKENIZE_BATCH"):
        candidates.append(Path(os.environ["PYGGUF_TOKENIZE_BATCH"]))
    if os.environ.get("PYGGUF_TOOLS"):
        tools = Path(os.environ["PYGGUF_TOOLS"])
        candidates += [d / n for d in (tools, tools.parent / "tests") for n in names]
    build = Path(pygguf.__file__).resolve().parents[2]
    candidates += [build / "tests" / n for n in names]
    return next((c for c in candidates if c.is_file()), None)


TOKENIZE_BATCH = find_tokenize_batch()


@lru_cache(maxsize=None)
def cxx_results(path: Path) -> tuple[dict, ...]:
    """tokenize_batch's output on the corpus: per text {"t": ids per ENCODE_FLAGS, "d": hex bytes of
    decoding t[0] per DECODE_FLAGS}."""
    texts = corpus(path)
    with tempfile.TemporaryDirectory() as work:
        fn = Path(work) / "texts.hex"
        fn.write_text("".join(t.hex() + "\n" for t in texts))
        r = subprocess.run([str(TOKENIZE_BATCH), str(path), str(fn)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(texts)
    return tuple(json.loads(line) for line in lines)


def oracle_available() -> bool:
    if not ORACLE.exists():
        return False
    r = subprocess.run([sys.executable, str(ORACLE), "tokenize", str(VOCABS[0]), "--text", "x"],
                       capture_output=True, text=True)
    return r.returncode == 0 and json.loads(r.stdout).get("ok", False)


HAS_ORACLE = bool(VOCABS) and oracle_available()


def oracle_tokenize(path: Path, texts: list[bytes], add_special: bool, parse_special: bool) -> dict:
    """llama.cpp's llama_tokenize of each text, and llama_detokenize (no flags) of each list."""
    with tempfile.TemporaryDirectory() as work:
        fn = Path(work) / "texts.json"
        fn.write_text(json.dumps([t.decode("utf-8", "surrogateescape") for t in texts]))
        cmd = [sys.executable, str(ORACLE), "tokenize", str(path), "--texts-json", str(fn), "--detokenize"]
        if not add_special:
            cmd.append("--no-add-special")
        if parse_special:
            cmd.append("--parse-special")
        r = subprocess.run(cmd, capture_output=True, text=True)
    out = json.loads(r.stdout)
    assert out["ok"], out
    return out


# ---- a small GGUF writer, for vocabularies that break rules --------------------------------------------

_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_NAMES = {"uint8": 0, "int8": 1, "uint16": 2, "int16": 3, "uint32": 4, "int32": 5, "float32": 6, "bool": 7,
          "string": 8, "array": 9, "uint64": 10, "int64": 11, "float64": 12}


def _string(s: str | bytes) -> bytes:
    b = s if isinstance(s, bytes) else s.encode("utf-8", "surrogateescape")
    return struct.pack("<Q", len(b)) + b


def _value(t: int, v) -> bytes:
    if t == 8:
        return _string(v)
    if t == 9:
        item, values = v
        item = _NAMES.get(item, item)
        head = struct.pack("<IQ", item, len(values))
        if item == 8:
            return head + b"".join(_string(x) for x in values)
        return head + np.asarray(values, dtype="<" + _FORMATS[item]).tobytes()
    return struct.pack("<" + _FORMATS[t], v)


def gguf_bytes(kvs: list[tuple[str, str | int, object]]) -> bytes:
    """A GGUF v3 file without tensors: kvs are (key, type, value), type a name ("uint32") or id; an
    array's value is (item type, items)."""
    out = [b"GGUF", struct.pack("<IQQ", 3, 0, len(kvs))]
    for k, t, v in kvs:
        t = _NAMES.get(t, t)
        out += [_string(k), struct.pack("<I", t), _value(t, v)]
    return b"".join(out)


def metadata_kvs(path: Path) -> list[tuple[str, int, object]]:
    """A file's metadata as gguf_bytes takes it."""
    kvs = []
    with pygguf.open(path) as m:
        md = m.metadata
        for k in md:
            t = int(md.type(k))
            v = md[k]
            if t == 9:
                item = int(md.item_type(k))
                v = (item, v.tolist(as_bytes=True) if item == 8 else np.array(v))
            kvs.append((k, t, v))
    return kvs


def edited(kvs, set_=(), drop=()):
    """kvs with keys dropped and (key, type, value) set (replacing or appending)."""
    out = [kv for kv in kvs if kv[0] not in drop]
    for key, t, v in set_:
        out = [kv for kv in out if kv[0] != key] + [(key, t, v)]
    return out


def tiny_spm() -> list:
    """A small SPM vocabulary: <unk> <s> </s>, the 256 byte tokens, then pieces by score."""
    pieces = ["\u2581", "a", "b", "c", "\u2581a", "ab", "abc", "\u2581ab", "<tag>"]
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + pieces
    types = [2, 3, 3] + [6] * 256 + [1] * (len(pieces) - 1) + [4]
    scores = [0.0] * (3 + 256) + [-float(i) for i in range(len(pieces))]
    return [("general.architecture", "string", "llama"), ("tokenizer.ggml.model", "string", "llama"),
            ("tokenizer.ggml.tokens", "array", ("string", tokens)),
            ("tokenizer.ggml.scores", "array", ("float32", scores)),
            ("tokenizer.ggml.token_type", "array", ("int32", types)), ("tokenizer.ggml.bos_token_id", "uint32", 1),
            ("tokenizer.ggml.eos_token_id", "uint32", 2), ("tokenizer.ggml.unknown_token_id", "uint32", 0)]


def refusal(kvs) -> pygguf.GGUFError:
    """The GGUFError building the tokenizer of kvs raises."""
    with pygguf.open(gguf_bytes(kvs)) as m, pytest.raises(pygguf.GGUFError) as e:
        _ = m.tokenizer
    return e.value


# ---- agreement with the C++ library and llama.cpp ---------------------------------------------------


@needs_vocabs
def test_there_are_twelve_shared_vocabularies():
    assert sorted(vocab_id(p) for p in VOCABS) == sorted(VOCAB_TYPES)


@needs_vocabs
@pytest.mark.skipif(TOKENIZE_BATCH is None, reason="tokenize_batch (a C++ build's tests) not found")
@pytest.mark.parametrize("path", cases(VOCABS, "shared vocabularies"), ids=vocab_id)
def test_ids_and_bytes_are_the_cxx_librarys(path):
    """Every text, every flag setting: the same ids as gguf::tokenizer::encode, the same bytes as
    decode; str and bytes inputs agree, and so do lists and int32 arrays."""
    tok = tokenizer_of(path)
    texts = corpus(path)
    ref = cxx_results(path)
    for k, (add, parse) in enumerate(ENCODE_FLAGS):
        ours = [tok.encode(t, add_special=add, parse_special=parse) for t in texts]
        bad = [(t, r["t"][k], o) for t, r, o in zip(texts, ref, ours) if r["t"][k] != o]
        assert not bad, f"add_special={add} parse_special={parse}: {len(bad)} differ, first {bad[0]}"
    for t, r in zip(texts, ref):
        try:
            s = t.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for k, (add, parse) in enumerate(ENCODE_FLAGS):
            assert tok.encode(s, add_special=add, parse_special=parse) == r["t"][k], (s, add, parse)
    for k, (remove, unparse) in enumerate(DECODE_FLAGS):
        for t, r in zip(texts, ref):
            ids = r["t"][0]
            got = tok.decode_bytes(ids, remove_special=remove, unparse_special=unparse)
            assert got.hex() == r["d"][k], (t, remove, unparse)
            assert tok.decode_bytes(np.array(ids, dtype=np.int32), remove_special=remove,
                                    unparse_special=unparse) == got
            assert tok.decode(ids, remove_special=remove, unparse_special=unparse) == got.decode("utf-8", "replace")


@needs_vocabs
@pytest.mark.skipif(not HAS_ORACLE, reason="the oracle (llama.cpp's libllama) is not available")
@pytest.mark.parametrize("path", cases(VOCABS, "shared vocabularies"), ids=vocab_id)
@pytest.mark.parametrize("add_special,parse_special", [(True, False), (False, True)])
def test_ids_are_llama_cpps(path, add_special, parse_special):
    """Directly against llama.cpp's llama_tokenize and llama_detokenize, on part of the corpus."""
    tok = tokenizer_of(path)
    texts = list(corpus(path)[::3])
    ref = oracle_tokenize(path, texts, add_special, parse_special)
    for t, ids, hexed in zip(texts, ref["tokens"], ref["text_hex"]):
        assert tok.encode(t, add_special=add_special, parse_special=parse_special) == ids, t
        assert tok.decode_bytes(ids).hex() == hexed, t


@needs_vocabs
@pytest.mark.skipif(TOKENIZE_BATCH is None, reason="tokenize_batch (a C++ build's tests) not found")
@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", "deepseek-llm", "bert-bge"])
def test_a_long_text_is_the_cxx_librarys(name):
    """A text of a megabyte (encoded and decoded with the GIL released) gives the C++ library's ids."""
    path = vocab(name)
    tok = tokenizer_of(path)
    text = long_text(1 << 20)
    with tempfile.TemporaryDirectory() as work:
        fn = Path(work) / "texts.hex"
        fn.write_text(text.hex() + "\n")
        r = subprocess.run([str(TOKENIZE_BATCH), str(path), str(fn)], capture_output=True, text=True, check=True)
    ref = json.loads(r.stdout)
    assert tok.encode(text) == ref["t"][0]
    assert np.array_equal(tok.encode(text, add_special=False, parse_special=True, as_numpy=True), ref["t"][3])
    assert tok.decode_bytes(ref["t"][0]).hex() == ref["d"][0]


def long_text(size: int) -> bytes:
    """About `size` bytes of mixed text: prose in several scripts, code, numbers, whitespace runs."""
    parts = [t.encode("utf-8") for t in TEXTS if len(t) < 200]
    rng = random.Random(7)
    out = bytearray()
    while len(out) < size:
        out += rng.choice(parts) + b" " + str(rng.randint(0, 10**6)).encode() + b" "
    return bytes(out)


# ---- the vocabulary's facts ----------------------------------------------------------------------------


@needs_vocabs
@pytest.mark.parametrize("path", cases(VOCABS, "shared vocabularies"), ids=vocab_id)
def test_vocabulary_facts(path):
    tok = tokenizer_of(path)
    with pygguf.open(path) as m:
        md = m.metadata
        tokens = md["tokenizer.ggml.tokens"]
        assert tok.n_vocab == len(tok) == len(tokens)
        assert tok.vocab_type == VOCAB_TYPES[vocab_id(path)]
        assert tok.model == md["tokenizer.ggml.model"]
        assert tok.pre == md.get("tokenizer.ggml.pre")
        for i in list(range(0, len(tokens), max(1, len(tokens) // 300))) + [len(tokens) - 1]:
            assert tok.token_text(i) == tokens[i]
            assert tok.token_bytes(i) == tokens.raw(i)
            if tokens.raw(i) and tok.find(tokens.raw(i)) is not None:
                assert tok.token_text(tok.find(tokens.raw(i))) == tokens[i]
            assert isinstance(tok.token_attr(i), pygguf.Tokenizer.TokenAttr)
            assert isinstance(tok.token_score(i), float)
        if "tokenizer.ggml.scores" in md:
            scores = md["tokenizer.ggml.scores"]
            assert [tok.token_score(i) for i in range(0, len(tokens), 997)] == list(scores[::997])
        if "tokenizer.ggml.token_type" in md:  # control tokens stay control; byte tokens are bytes
            types = md["tokenizer.ggml.token_type"]
            for i in np.flatnonzero(types == 6)[:50]:
                assert tok.token_attr(int(i)) & pygguf.Tokenizer.TokenAttr.BYTE
    for name in ("bos", "eos", "eot", "eom", "sep", "unk", "pad", "mask", "newline"):
        v = getattr(tok, name)
        assert v is None or (isinstance(v, int) and 0 <= v < tok.n_vocab), (name, v)
    assert tok.eos is None or tok.is_eog(tok.eos)
    assert all(tok.is_eog(i) for i in tok.eog_ids) and tok.eog_ids == sorted(tok.eog_ids)
    assert not tok.is_eog(-1) and not tok.is_eog(tok.n_vocab) and not tok.is_eog(2**80)
    assert tok.find("surely no token has this text \x00\x01") is None
    ids = tok.encode("Hello", add_special=True)
    assert (ids[0] == tok.bos) == tok.add_bos
    assert (ids[-1] == tok.eos) == tok.add_eos
    assert repr(tok).startswith("<pygguf.Tokenizer " + tok.vocab_type)
    assert copy.copy(tok) is tok and copy.deepcopy(tok) is tok


@needs_vocabs
def test_known_tokens():
    gpt2 = tokenizer_of(vocab("gpt-2"))
    assert gpt2.encode("Hello world") == [15496, 995]
    assert gpt2.bos == gpt2.eos == 50256 and gpt2.unk is None and gpt2.newline == 198
    assert gpt2.find("Ġworld") == 995 and gpt2.token_text(995) == "Ġworld"
    assert gpt2.token_to_piece(995) == b" world"
    assert gpt2.encode("<|endoftext|>", parse_special=True, add_special=False) == [50256]
    spm = tokenizer_of(vocab("llama-spm"))
    assert spm.bos == 1 and spm.eos == 2 and spm.unk == 0 and spm.newline == 13
    assert spm.encode("Hello world") == [1, 15043, 3186]
    assert spm.token_to_piece(spm.find("<0x0A>")) == b"\n"
    assert spm.token_to_piece(2) == b"</s>" and spm.token_to_piece(2, special=False) == b""
    assert spm.token_attr(2) & spm.TokenAttr.CONTROL and spm.token_attr(15043) == spm.TokenAttr.NORMAL
    assert spm.decode([15043, 3186]) == "Hello world"  # the space the SPM prefix added goes
    # llama.cpp keeps it after a BOS, even one remove_special drops
    assert spm.decode([1, 15043, 3186, 2], remove_special=True) == " Hello world"
    assert spm.decode([1, 15043, 3186, 2], unparse_special=True) == "<s> Hello world</s>"
    bert = tokenizer_of(vocab("bert-bge"))
    assert bert.encode("Hello world") == [101, 7592, 2088, 102]
    assert bert.sep == 102 and bert.vocab_type == "wpm"


# ---- inputs and outputs -------------------------------------------------------------------------------


@needs_vocabs
def test_text_inputs():
    """str is UTF-8 (with surrogateescape's lone surrogates as bytes); bytes-like objects are raw bytes."""
    tok = tokenizer_of(vocab("gpt-2"))
    raw = "naïve 😀 ".encode() + b"\xff\xc3"
    ids = tok.encode(raw)
    assert tok.encode(raw.decode("utf-8", "surrogateescape")) == ids
    assert tok.encode(bytearray(raw)) == ids == tok.encode(memoryview(raw)) == tok.encode(np.frombuffer(raw, np.uint8))
    assert tok.encode("abc" * 2000) == tok.encode(b"abc" * 2000)  # ASCII str, read in place
    with pytest.raises(UnicodeEncodeError):
        tok.encode("\ud800")  # a lone surrogate that escapes no byte
    for bad in (None, 12, 1.5, ["a"]):
        with pytest.raises(TypeError):
            tok.encode(bad)
    arr = tok.encode("Hello world", as_numpy=True)
    assert arr.dtype == np.int32 and arr.ndim == 1 and arr.tolist() == [15496, 995]
    assert tok.encode("", as_numpy=True).shape == (0,)


@needs_vocabs
def test_decode_to_str():
    """decode replaces bytes that are not UTF-8 by default; surrogateescape keeps them; strict raises."""
    tok = tokenizer_of(vocab("gpt-2"))
    ids = tok.encode("a😀b", add_special=False)
    assert tok.decode(ids) == "a😀b"
    cut = ids[:2]  # the emoji's bytes are split across tokens
    raw = tok.decode_bytes(cut)
    assert raw != raw.decode("utf-8", "replace").encode()
    assert tok.decode(cut) == raw.decode("utf-8", "replace") and "\ufffd" in tok.decode(cut)
    escaped = tok.decode(cut, errors="surrogateescape")
    assert escaped.encode("utf-8", "surrogateescape") == raw
    assert tok.encode(escaped, add_special=False) == tok.encode(raw, add_special=False)
    with pytest.raises(UnicodeDecodeError):
        tok.decode(cut, errors="strict")
    # a stream of ids, piece by piece, through an incremental decoder
    dec = codecs.getincrementaldecoder("utf-8")()
    assert "".join(dec.decode(tok.token_to_piece(i)) for i in ids) + dec.decode(b"", final=True) == "a😀b"


@needs_vocabs
def test_decode_inputs():
    tok = tokenizer_of(vocab("gpt-2"))
    ids = [15496, 995]
    want = b"Hello world"
    for form in (ids, tuple(ids), iter(ids), np.array(ids, np.int64), np.array(ids, np.uint16),
                 np.array(ids, np.int32)[::1], np.array([0, 15496, 0, 995])[1::2], [np.int64(15496), np.int32(995)]):
        assert tok.decode_bytes(form) == want
    assert tok.decode_bytes([]) == b"" and tok.decode([]) == ""
    for bad in (15496, "15496", b"ab", [1.0], [None], np.array([1.0, 2.0]), None):
        with pytest.raises(TypeError):
            tok.decode_bytes(bad)
    with pytest.raises(ValueError):
        tok.decode_bytes(np.array([[1, 2]]))


@needs_vocabs
@pytest.mark.parametrize("bad", [-1, 50257, 2**31, -(2**31) - 1, 2**63, 2**100, -(2**100)])
def test_ids_outside_the_vocabulary(bad):
    """Like the C++ API: an error with code out_of_range (a GGUFError, so a ValueError), never a crash."""
    tok = tokenizer_of(vocab("gpt-2"))
    for call in (lambda: tok.decode_bytes([1, bad]), lambda: tok.decode([bad]), lambda: tok.token_to_piece(bad),
                 lambda: tok.token_text(bad), lambda: tok.token_bytes(bad), lambda: tok.token_attr(bad),
                 lambda: tok.token_score(bad)):
        with pytest.raises(pygguf.GGUFError) as e:
            call()
        assert e.value.code == "out_of_range" and str(bad) in str(e.value)
    if -(2**63) <= bad < 2**64:
        with pytest.raises(pygguf.GGUFError):
            tok.decode_bytes(np.array([5, bad], dtype=np.uint64 if bad >= 2**63 else np.int64))
    assert tok.is_eog(bad) is False
    for call in (lambda: tok.token_to_piece(1.0), lambda: tok.token_text("1"), lambda: tok.is_eog(None)):
        with pytest.raises(TypeError):
            call()


# ---- threads --------------------------------------------------------------------------------------------


@needs_vocabs
@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", "deepseek-llm", "bert-bge"])
def test_encode_batch_is_encode(name):
    path = vocab(name)
    tok = tokenizer_of(path)
    texts = list(corpus(path)) + [long_text(200_000)] + [b""] * 5
    for add, parse in ENCODE_FLAGS:
        want = [tok.encode(t, add_special=add, parse_special=parse) for t in texts]
        for threads in (None, 1, 2, 3, 8, 1000):
            assert tok.encode_batch(texts, add_special=add, parse_special=parse, threads=threads) == want
        arrays = tok.encode_batch(texts, add_special=add, parse_special=parse, threads=2, as_numpy=True)
        assert all(a.dtype == np.int32 for a in arrays) and [a.tolist() for a in arrays] == want
    assert tok.encode_batch(iter(t.decode("utf-8", "surrogateescape") for t in texts), threads=2) == \
        [tok.encode(t) for t in texts]
    assert tok.encode_batch([]) == [] and tok.encode_batch([""]) == [tok.encode("")]
    with pytest.raises(TypeError):
        tok.encode_batch("one text")
    with pytest.raises(TypeError):
        tok.encode_batch(["a", 5])
    for bad in (0, -1):
        with pytest.raises(ValueError):
            tok.encode_batch(["a"], threads=bad)
    with pytest.raises(TypeError):
        tok.encode_batch(["a"], threads=2.0)
    assert tok.encode_batch(["a"], threads=2**70) == [tok.encode("a")]


@needs_vocabs
def test_many_python_threads_share_one_tokenizer():
    tok = tokenizer_of(vocab("deepseek-llm"))
    texts = list(corpus(vocab("deepseek-llm"))) + [long_text(50_000)]
    want = [tok.encode(t, parse_special=True) for t in texts]
    want_bytes = [tok.decode_bytes(ids) for ids in want]
    failures = []

    def work(k: int) -> None:
        try:
            for r in range(3):
                order = list(range(len(texts)))
                random.Random(k * 10 + r).shuffle(order)
                for i in order:
                    assert tok.encode(texts[i], parse_special=True) == want[i]
                    assert tok.decode_bytes(want[i]) == want_bytes[i]
                assert tok.encode_batch(texts, parse_special=True, threads=2) == want
        except BaseException as ex:  # noqa: BLE001 (reported below)
            failures.append(ex)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


@needs_vocabs
@pytest.mark.parametrize("what", ["encode", "encode_batch", "decode"])
def test_the_gil_is_released_for_long_inputs(what):
    """With a switch interval too long to ever force a switch, the main thread can only run while the
    worker is inside the call if the call let go of the GIL: the main thread then sees it unfinished."""
    tok = tokenizer_of(vocab("deepseek-llm"))
    text = long_text(1 << 20)
    ids = tok.encode(text) if what == "decode" else None
    started, finished = threading.Event(), []

    def work() -> None:
        started.set()
        if what == "encode":
            tok.encode(text, as_numpy=True)
        elif what == "encode_batch":
            tok.encode_batch([text], threads=1, as_numpy=True)
        else:
            tok.decode_bytes(ids)
        finished.append(True)

    old = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    try:
        t = threading.Thread(target=work)
        t.start()
        started.wait()  # lets the worker run; it takes the GIL back only inside the call
        unfinished = not finished
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert unfinished


# ---- lifetime ----------------------------------------------------------------------------------------------


@needs_vocabs
def test_the_tokenizer_outlives_its_model():
    path = vocab("llama-spm")
    m = pygguf.open(path)
    tok = m.tokenizer
    assert m.tokenizer is tok  # built once
    want = tok.encode("Hello world")
    assert want[0] == tok.bos
    m.close()
    with pytest.raises(ValueError):
        _ = m.tokenizer
    del m
    gc.collect()
    assert tok.encode("Hello world") == want and tok.decode(want[1:]) == "Hello world"
    # from a buffer, which goes away too
    data = path.read_bytes()
    with pygguf.open(data) as m2:
        tok2 = pygguf.Tokenizer.from_model(m2)
        assert tok2 is not m2.tokenizer  # from_model builds a new one
    del data, m2
    gc.collect()
    assert tok2.encode("Hello world") == want and tok2.token_text(15043) == "▁Hello"


def test_a_tokenizer_comes_from_a_model():
    with pytest.raises(TypeError):
        pygguf.Tokenizer("model.gguf")


@needs_vocabs
def test_from_model_of_a_closed_model():
    m = pygguf.open(vocab("gpt-2"))
    m.close()
    with pytest.raises(ValueError):
        pygguf.Tokenizer.from_model(m)


# ---- vocabularies no tokenizer can use ----------------------------------------------------------------------


def test_a_tiny_vocabulary_written_here_works():
    with pygguf.open(gguf_bytes(tiny_spm())) as m:
        tok = m.tokenizer
    assert tok.vocab_type == "spm" and tok.n_vocab == 3 + 256 + 9
    ids = tok.encode("abc <tag>xyz\n")
    assert ids == [1, 266, 262, 259, 267, 259, 123, 124, 125, 13]  # as llama.cpp: a space prefix after <tag>
    assert tok.find("<tag>") == 267 and tok.find("<0x0A>") == 13
    assert tok.decode_bytes(ids[1:]) == b"abc <tag> xyz\n"


def test_a_text_the_vocabulary_cannot_spell_raises_naming_the_byte():
    """Where llama.cpp aborts (an SPM vocabulary with neither a token for a character nor its byte tokens:
    the reduced Baichuan copy of tests/data has no "\u2581"), GGUFError names the byte and the vocabulary;
    no id list with the text dropped (it once gave [1] for "Hello world")."""
    with pygguf.open(ROOT / "tests" / "data" / "vocab" / "ggml-vocab-baichuan.gguf") as m:
        tok = m.tokenizer
    for call in (lambda: tok.encode("Hello world"), lambda: tok.encode(b"Hello world", as_numpy=True),
                 lambda: tok.encode_batch(["Hello", "world"] * 40, threads=2)):
        with pytest.raises(pygguf.GGUFError, match=r"no byte token .*<0xE2> in Baichuan-7B"):
            call()


@pytest.mark.skipif(not HAS_ORACLE, reason="the oracle (llama.cpp's libllama) is not available")
def test_a_tiny_vocabulary_written_here_is_llama_cpps(tmp_path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(gguf_bytes(tiny_spm()))
    with pygguf.open(path) as m:
        tok = m.tokenizer
    texts = [b"abc <tag>xyz\n", b"<tag>", b"ab<tag> <tag>", b"\xc3\xbf", b"\xff", b"  a  b  ", b""]
    for add, parse in ENCODE_FLAGS:
        ref = oracle_tokenize(path, texts, add, parse)
        assert [tok.encode(t, add_special=add, parse_special=parse) for t in texts] == ref["tokens"]
        assert [tok.decode_bytes(ids).hex() for ids in ref["tokens"]] == ref["text_hex"]


@pytest.mark.parametrize(
    "change,code,key",
    [
        (dict(drop=["tokenizer.ggml.model"]), "not_found", "tokenizer.ggml.model"),
        (dict(drop=["tokenizer.ggml.tokens"]), "not_found", "tokenizer.ggml.tokens"),
        (dict(set_=[("tokenizer.ggml.model", "string", "no-such-model")]), "out_of_range", "tokenizer.ggml.model"),
        (dict(set_=[("tokenizer.ggml.model", "uint32", 1)]), "bad_vocabulary", "tokenizer.ggml.model"),
        (dict(set_=[("tokenizer.ggml.tokens", "array", ("string", []))]), "bad_vocabulary", "tokenizer.ggml.tokens"),
        (dict(set_=[("tokenizer.ggml.tokens", "array", ("int32", [1, 2]))]), "bad_vocabulary", "tokenizer.ggml.tokens"),
        (dict(set_=[("tokenizer.ggml.tokens", "array", ("string", ["<unk>", "a", "a"]))]), "bad_vocabulary",
         "tokenizer.ggml.tokens"),
        (dict(set_=[("tokenizer.ggml.token_type", "array", ("int32", [1, 1]))]), "bad_vocabulary",
         "tokenizer.ggml.token_type"),
        (dict(set_=[("tokenizer.ggml.token_type", "array", ("float32", [1.0] * 268))]), "bad_vocabulary",
         "tokenizer.ggml.token_type"),
        (dict(set_=[("tokenizer.ggml.scores", "array", ("float32", [0.0] * 10))]), "bad_vocabulary",
         "tokenizer.ggml.scores"),
        (dict(set_=[("tokenizer.ggml.scores", "array", ("string", ["x"] * 268))]), "bad_vocabulary",
         "tokenizer.ggml.scores"),
        (dict(drop=["tokenizer.ggml.scores"]), "bad_vocabulary", "tokenizer.ggml.scores"),
        (dict(set_=[("tokenizer.ggml.bos_token_id", "uint32", 268)]), "bad_vocabulary", "tokenizer.ggml.bos_token_id"),
        (dict(set_=[("tokenizer.ggml.eos_token_id", "string", "2")]), "bad_vocabulary", "tokenizer.ggml.eos_token_id"),
        (dict(set_=[("tokenizer.ggml.add_bos_token", "uint8", 1)]), "bad_vocabulary", "tokenizer.ggml.add_bos_token"),
    ],
)
def test_vocabularies_that_break_a_rule(change, code, key):
    """The C++ library's refusals, as GGUFError: its code, and the key (or text) it is about."""
    e = refusal(edited(tiny_spm(), **change))
    assert e.code == code and e.key.startswith(key), str(e)
    assert key in str(e)


@needs_vocabs
@pytest.mark.parametrize(
    "change,code,key",
    [
        (dict(set_=[("tokenizer.ggml.pre", "string", "no-such-pre-tokenizer")]), "out_of_range",
         "no-such-pre-tokenizer"),
        (dict(drop=["tokenizer.ggml.merges"]), "not_found", "tokenizer.ggml.merges"),
        (dict(set_=[("tokenizer.ggml.merges", "array", ("uint8", [1, 2]))]), "bad_vocabulary", "tokenizer.ggml.merges"),
        (dict(set_=[("tokenizer.ggml.eos_token_id", "uint32", 50257)]), "bad_vocabulary",
         "tokenizer.ggml.eos_token_id"),
    ],
)
def test_a_real_vocabulary_edited_to_break_a_rule(change, code, key):
    """gpt-2's vocabulary with one key changed: the C++ library's refusal, as GGUFError."""
    e = refusal(edited(metadata_kvs(vocab("gpt-2")), **change))
    assert e.code == code and e.key.startswith(key), str(e)


def test_a_refusal_quoting_bytes_that_are_not_utf8():
    """A duplicate token whose text is not UTF-8: GGUFError, its text escaped in the message and key."""
    kvs = edited(tiny_spm(), set_=[("tokenizer.ggml.tokens", "array", ("string", [b"<unk>", b"\xf5x", b"\xf5x"])),
                                   ("tokenizer.ggml.scores", "array", ("float32", [0.0] * 3))],
                 drop=["tokenizer.ggml.token_type", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"])
    e = refusal(kvs)
    assert e.code == "bad_vocabulary" and e.key == "tokenizer.ggml.tokens: \\xf5x", str(e)


@needs_vocabs
def test_damaged_vocabularies_never_crash():
    """Random damage to a small SPM and to gpt-2's types, ids and texts: a GGUFError or a tokenizer that
    works (encoding a text it cannot spell, an SPM vocabulary that lost byte tokens, raises GGUFError);
    run in a child process so that a crash fails the test instead of ending the run."""
    code = f"""
import random, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import numpy as np, pygguf, test_tokenizer as T
rng = random.Random(3)
bases = [T.tiny_spm(), T.metadata_kvs(T.vocab("gpt-2"))]
texts = [t for t in T.corpus(T.vocab("gpt-2"))[::4]]
outcomes = {{"refused": 0, "worked": 0}}
for round in range(40):
    kvs = [list(kv) for kv in bases[round % 2]]
    for kv in kvs:
        k, t, v = kv
        if t in (9, "array") and k == "tokenizer.ggml.token_type":
            item, values = v
            values = np.array(values, dtype=np.int32)
            idx = [rng.randrange(len(values)) for _ in range(20)]
            values[idx] = [rng.choice([-3, 0, 1, 2, 3, 4, 5, 6, 7, 99]) for _ in idx]
            kv[2] = (item, values)
        elif t in (9, "array") and k == "tokenizer.ggml.tokens" and rng.random() < 0.5:
            item, values = v
            values = list(values)
            for _ in range(5):
                i = rng.randrange(len(values))
                values[i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))
            kv[2] = (item, values)
        elif k.endswith("_token_id") and rng.random() < 0.5:
            kv[2] = rng.choice([0, 1, 2, 3, 255, 256])
        elif k.startswith("tokenizer.ggml.add_") and rng.random() < 0.5:
            kv[2] = not v
    try:
        with pygguf.open(T.gguf_bytes([tuple(kv) for kv in kvs])) as m:
            tok = m.tokenizer
    except pygguf.GGUFError:
        outcomes["refused"] += 1
        continue
    for t in texts:
        for a, p in T.ENCODE_FLAGS:
            try:
                ids = tok.encode(t, add_special=a, parse_special=p)
            except pygguf.GGUFError as e:
                assert e.code == "bad_vocabulary" and "no byte token" in str(e), str(e)
                continue
            tok.decode_bytes(ids, remove_special=a, unparse_special=p)
            tok.decode_bytes(ids[::-1], unparse_special=True)
    for i in range(0, tok.n_vocab, 97):
        tok.token_to_piece(i); tok.token_to_piece(i, special=False); tok.token_text(i); tok.token_attr(i)
    outcomes["worked"] += 1
print(outcomes)
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(pygguf.__file__).parents[1]),
                                                                    os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    outcomes = eval(r.stdout.strip().splitlines()[-1])  # noqa: S307 (our own child's dict)
    assert outcomes["worked"] > 0 and outcomes["refused"] + outcomes["worked"] == 40
