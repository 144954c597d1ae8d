#!/usr/bin/env python3
"""Write a small copy of a tokenizer-only GGUF file (v2/v3, little-endian, no tensors).

Usage:
  make_small_vocab.py IN.gguf OUT.gguf
  make_small_vocab.py IN_DIR OUT_DIR        # every *.gguf in IN_DIR, same file names

What is kept (python3 standard library only; the file is parsed here, nothing is imported):
  * the header, with the same version word; n_tensors must be 0 (the input is refused otherwise);
  * every metadata key/value, in file order, with the same value type; scalars and strings are
    copied byte for byte (floats are never decoded and re-encoded);
  * arrays of at most LIMIT items are copied byte for byte;
  * a top-level array longer than LIMIT keeps only a subset of its items, in their original order.
    The subset is chosen per array LENGTH: all long arrays of one length in a file (tokens, scores,
    token_type are parallel) keep the same indices, so the copy is still a consistent vocabulary.
    It is: the first HEAD indices, the last TAIL indices and up to EXTRA "interesting" indices
    (see pick_interesting). An array of another length (merges) gets its own subset the same way.
  * scalars that describe the vocabulary (llama.vocab_size, token ids ...) are NOT adjusted: the copy
    is parser test data, not a usable tokenizer.
The file ends right after the last key/value, like the originals: with no tensor infos and no
tensor data there is no alignment padding (ggml reports data_offset == file size for them).

The choice is deterministic: the same input always gives the same bytes.
"""
import math
import os
import struct
import sys

HEAD = 200    # first indices kept
TAIL = 20     # last indices kept
EXTRA = 150   # at most this many more "interesting" indices
LIMIT = HEAD + TAIL + EXTRA  # arrays with more items than this are shortened

T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY, \
    T_UINT64, T_INT64, T_FLOAT64 = range(13)
FIXED_SIZE = {T_UINT8: 1, T_INT8: 1, T_UINT16: 2, T_INT16: 2, T_UINT32: 4, T_INT32: 4,
              T_FLOAT32: 4, T_BOOL: 1, T_UINT64: 8, T_INT64: 8, T_FLOAT64: 8}
INT_FMT = {T_UINT8: "<B", T_INT8: "<b", T_UINT16: "<H", T_INT16: "<h", T_UINT32: "<I",
           T_INT32: "<i", T_BOOL: "<B", T_UINT64: "<Q", T_INT64: "<q"}
FLOAT_FMT = {T_FLOAT32: "<f", T_FLOAT64: "<d"}


class Reader:
    """Bounds-checked little-endian cursor over bytes."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if n > len(self.data) - self.pos:
            raise ValueError("truncated at offset %d (need %d bytes)" % (self.pos, n))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def string(self):
        return self.take(self.u64())


def skip_value(r, t):
    """Advance r over one value of type t; return its raw bytes."""
    start = r.pos
    if t in FIXED_SIZE:
        r.take(FIXED_SIZE[t])
    elif t == T_STRING:
        r.string()
    elif t == T_ARRAY:
        it, n = r.u32(), r.u64()
        for _ in range(n):
            skip_value(r, it)
    else:
        raise ValueError("unknown value type %d at offset %d" % (t, start - 4))
    return r.data[start:r.pos]


class KV:
    """One key/value. For arrays: item type and the raw bytes of every item."""

    def __init__(self, key, vtype, raw=None, item_type=None, items=None):
        self.key, self.vtype, self.raw, self.item_type, self.items = key, vtype, raw, item_type, items


def parse(data):
    r = Reader(data)
    if r.take(4) != b"GGUF":
        raise ValueError("not a GGUF file")
    version = r.u32()
    if version not in (2, 3):
        raise ValueError("only little-endian GGUF v2/v3 is supported (version word %#x)" % version)
    n_tensors, n_kv = r.u64(), r.u64()
    if n_tensors:
        raise ValueError("file has %d tensors; only tensorless (vocab) files are supported" % n_tensors)
    kvs = []
    for _ in range(n_kv):
        key = r.string()
        t = r.u32()
        if t == T_ARRAY:
            it, n = r.u32(), r.u64()
            items = [skip_value(r, it) for _ in range(n)]
            kvs.append(KV(key, t, item_type=it, items=items))
        else:
            kvs.append(KV(key, t, raw=skip_value(r, t)))
    return version, kvs, r.pos


def _evenly(cands, k):
    """k items spread evenly over the sorted list cands (all of them if there are at most k)."""
    if len(cands) <= k:
        return list(cands)
    if k <= 0:
        return []
    if k == 1:
        return [cands[0]]
    return sorted({cands[(i * (len(cands) - 1)) // (k - 1)] for i in range(k)})


def _str_payload(raw):
    return raw[8:]  # drop the u64 length


def _is_valid_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _max_utf8_seq(b):
    """Longest UTF-8 sequence length (1..4) of the characters in b (0 when undecodable)."""
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return max((len(c.encode("utf-8")) for c in s), default=1)


def pick_interesting(arrays, n, base):
    """Indices (not in base) worth keeping for a group of parallel arrays of length n.

    Categories, each with its own quota, filled in this order; candidates inside a category are
    taken evenly spread over the array so that the choice is deterministic and varied:
      string arrays: invalid UTF-8, empty strings, control bytes (< 0x20 or 0x7f), double quotes,
                     single quotes, backslashes, the longest strings (ties: lowest index),
                     non-ASCII by longest UTF-8 sequence (2-, 3- and 4-byte characters);
      integer/bool arrays: first index of every distinct value;
      float arrays: the minimum, the maximum and any NaN/inf.
    The total is capped at EXTRA.
    """
    chosen = []
    seen = set(base)

    def add(cands, quota):
        fresh = [i for i in cands if i not in seen]
        for i in _evenly(fresh, quota):
            if len(chosen) >= EXTRA:
                return
            seen.add(i)
            chosen.append(i)

    strs = [[_str_payload(x) for x in a.items] for a in arrays if a.item_type == T_STRING]
    for s in strs:
        idx = range(n)
        add([i for i in idx if not _is_valid_utf8(s[i])], 20)
        add([i for i in idx if len(s[i]) == 0], 5)
        add([i for i in idx if any(c < 0x20 or c == 0x7f for c in s[i])], 20)
        add([i for i in idx if b'"' in s[i]], 12)
        add([i for i in idx if b"'" in s[i]], 8)
        add([i for i in idx if b"\\" in s[i]], 12)
        longest = [i for i in sorted(idx, key=lambda i: (-len(s[i]), i)) if i not in seen][:6]
        add(sorted(longest), 6)
        non_ascii = [i for i in idx if any(c >= 0x80 for c in s[i])]
        for seq in (2, 3, 4):
            add([i for i in non_ascii if _max_utf8_seq(s[i]) == seq], 15)
    for a in arrays:
        if a.item_type in INT_FMT:
            first = {}
            for i, raw in enumerate(a.items):
                first.setdefault(raw, i)
            add(sorted(first.values()), 16)
        elif a.item_type in FLOAT_FMT:
            fmt = FLOAT_FMT[a.item_type]
            vals = [struct.unpack(fmt, raw)[0] for raw in a.items]
            finite = [i for i in range(n) if math.isfinite(vals[i])]
            add([i for i in range(n) if not math.isfinite(vals[i])], 8)
            if finite:
                add([min(finite, key=lambda i: (vals[i], i))], 1)
                add([max(finite, key=lambda i: (vals[i], -i))], 1)
    return chosen


def keep_indices(arrays, n):
    base = set(range(min(HEAD, n))) | set(range(max(0, n - TAIL), n))
    return sorted(base | set(pick_interesting(arrays, n, base)))


def encode(version, kvs):
    out = [b"GGUF", struct.pack("<IQQ", version, 0, len(kvs))]
    for kv in kvs:
        out.append(struct.pack("<Q", len(kv.key)) + kv.key + struct.pack("<I", kv.vtype))
        if kv.vtype == T_ARRAY:
            out.append(struct.pack("<IQ", kv.item_type, len(kv.items)))
            out.extend(kv.items)
        else:
            out.append(kv.raw)
    return b"".join(out)


def shrink(data):
    """Return (small file bytes, {key: kept indices or None})."""
    version, kvs, end = parse(data)
    if end != len(data):
        # The originals end right after the KV section. Anything after it would be padding for a
        # data section that does not exist; it is not reproduced.
        sys.stderr.write("note: %d trailing bytes after the KV section are dropped\n" % (len(data) - end))
    groups = {}
    for kv in kvs:
        if kv.vtype == T_ARRAY and len(kv.items) > LIMIT:
            groups.setdefault(len(kv.items), []).append(kv)
    kept = {}
    new_kvs = []
    chosen = {n: keep_indices(arrs, n) for n, arrs in groups.items()}
    for kv in kvs:
        if kv.vtype == T_ARRAY and len(kv.items) > LIMIT:
            idx = chosen[len(kv.items)]
            new_kvs.append(KV(kv.key, kv.vtype, item_type=kv.item_type, items=[kv.items[i] for i in idx]))
            kept[kv.key] = idx
        else:
            new_kvs.append(kv)
            kept[kv.key] = None
    out = encode(version, new_kvs)
    verify(data, out, kept)
    return out, kept


def verify(orig, small, kept):
    """Re-parse both files and check the promises made in the module docstring."""
    v0, a, _ = parse(orig)
    v1, b, end = parse(small)
    assert v0 == v1 and end == len(small) and len(a) == len(b)
    for x, y in zip(a, b):
        assert x.key == y.key and x.vtype == y.vtype, x.key
        if x.vtype != T_ARRAY:
            assert x.raw == y.raw, x.key
            continue
        assert x.item_type == y.item_type, x.key
        idx = kept[x.key]
        if idx is None:
            assert x.items == y.items, x.key
        else:
            assert y.items == [x.items[i] for i in idx], x.key
            assert len(y.items) <= LIMIT, x.key


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    src, dst = argv[1], argv[2]
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
        jobs = [(os.path.join(src, f), os.path.join(dst, f))
                for f in sorted(os.listdir(src)) if f.endswith(".gguf")]
    else:
        jobs = [(src, dst)]
    for i, o in jobs:
        with open(i, "rb") as fh:
            data = fh.read()
        small, kept = shrink(data)
        with open(o, "wb") as fh:
            fh.write(small)
        cut = ", ".join("%s %d" % (k.decode(errors="replace"), len(v)) for k, v in kept.items() if v is not None)
        print("%s: %d -> %d bytes (%s)" % (os.path.basename(o), len(data), len(small), cut or "nothing cut"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
