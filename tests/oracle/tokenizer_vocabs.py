"""Small vocabularies of the tokenizer models no file in ../shared has (UGM with a precompiled charsmap,
RWKV, PLaMo-2, the "hybriddna" DNA model), written with the oracle's pure-Python Writer, for
tokenizer_agreement.py to compare the library with llama.cpp on. Each holds the cases its model's code
branches on: user-defined, unused, byte and control tokens, charsmap rewrites of one or more characters,
escapes, scores that tie or differ by little.
"""
import json
import os
import struct
import subprocess
import sys


def xcda(mappings):
    """sentencepiece-style precompiled charsmap: u32 blob size, XCDA units, NUL-terminated replacements.
    Each trie node gets its own 256-unit block, so every probe stays inside the array."""
    trie = {}
    for k, v in mappings.items():
        node = trie
        for b in k.encode():
            node = node.setdefault(b, {})
        node[None] = v
    repl = bytearray(); offs = {}
    for v in mappings.values():
        if v not in offs:
            offs[v] = len(repl); repl += v.encode() + b'\0'
    units = {}
    nblocks = [1]  # block 0 holds the root unit
    def new_block():
        q = nblocks[0] * 256; nblocks[0] += 1; return q
    def place(node, p, label):
        q = new_block()
        leaf = None in node
        assert (p ^ q) < (1 << 21)
        units[p] = ((p ^ q) << 10) | ((1 << 8) if leaf else 0) | label
        if leaf:
            units[q] = (1 << 31) | offs[node[None]]
        for c, child in sorted((c, n) for c, n in node.items() if c is not None):
            place(child, q ^ c, c)
    place(trie, 0, 0)
    size = nblocks[0] * 256
    arr = [units.get(i, 0) for i in range(size)]
    blob = struct.pack('<%dI' % size, *arr)
    return struct.pack('<I', len(blob)) + blob + bytes(repl)

def write(path, model, tokens, scores=None, types=None, extra=()):
    from ggml_oracle import Writer
    w = Writer()
    arch = {'t5': 't5', 'rwkv': 'rwkv6', 'plamo2': 'plamo2', 'bert': 'bert', 'hybriddna': 'llama'}[model]
    w.kvs.append(('general.architecture', 'string', arch))
    w.kvs.append(('general.name', 'string', 'test-' + model))
    w.kvs.append(('tokenizer.ggml.model', 'string', model))
    w.kvs.append(('tokenizer.ggml.tokens', 'array', ('string', tokens)))
    if scores is not None: w.kvs.append(('tokenizer.ggml.scores', 'array', ('float32', scores)))
    if types is not None: w.kvs.append(('tokenizer.ggml.token_type', 'array', ('int32', types)))
    for kv in extra: w.kvs.append(kv)
    w.write(path)

NORMAL, UNKNOWN, CONTROL, USER, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
UGM_MAP = {'Ａ': 'A', 'Ｂ': 'B', 'ｂ': 'b', '０': '0', '\u3000': ' ', '\u2002': ' ', 'ﬁ': 'fi', '①': '1', '…': '...',
           'e\u0301': 'é', 'A\u030a': 'Å', 'ab': 'X', 'abc': 'Y', '\t': ' ', '\n': ' ', '\r\n': ' ', '㍿': 'x y',
           '\u00a0': ' ', 'ǅ': 'Dž', '\u200b': ''}

def ugm_tokens():
    toks = [('<pad>', 0.0, CONTROL), ('</s>', 0.0, CONTROL), ('<unk>', 0.0, UNKNOWN)]
    normal = {'▁': -2.0, '▁the': -3.0, '▁t': -4.0, 'he': -4.0, '▁th': -4.0, 'e': -3.0, 'h': -3.5, 't': -3.5, 'the': -4.5,
              '▁a': -4.0, 'a': -3.0, 'b': -3.0, 'c': -3.0, 'X': -5.0, 'Y': -5.0, 'd': -3.0, '▁hello': -6.0, 'hello': -6.5,
              'hel': -5.0, 'lo': -4.0, 'l': -3.2, 'o': -3.1, '▁world': -6.0, 'w': -4.0, 'r': -4.0, 'é': -4.0, '▁é': -4.5,
              '...': -5.0, '.': -3.0, '1': -3.0, 'fi': -4.0, '▁fi': -4.0, '中': -5.0, '文': -5.0, '中文': -7.0, 'Å': -5.0,
              'A': -4.0, 'B': -4.0, '0': -4.0, 'x': -4.0, 'y': -4.0, 'Dž': -6.0, 'D': -5.0, '\xef': -9.0,
              '\u2581\u2581': -3.0, '😀': -6.0, '\xf0\x9f': -1.0, ',': -3.0, '!': -3.0, 'H': -4.0, 'W': -4.0, 'i': -3.0,
              'ü': -5.0, 's': -3.0, 'n': -3.0, 'ñ': -5.0, 'é!': -2.0}
    for t, s in normal.items(): toks.append((t, s, NORMAL))
    toks += [('<ab>', -1.0, USER), ('@@', -1.0, USER), ('zz', -20.0, UNUSED), ('<0x41>', -1.0, BYTE), ('<extra>', 0.0, CONTROL)]
    return toks

def rwkv_tokens():
    toks = []
    for b in range(0x20, 0x7f):
        c = chr(b)
        toks.append('\\\\' if c == '\\' else c)
    toks += ['\\n', '\\t', '\\r', '\\x00', '\\x01', '\\x7f', 'the', 'th', ' the', 'hello', ' hello', 'hell', 'world', ' world',
             '\\xe4\\xb8\\xad', '\\xe4', '\\xe6\\x96\\x87', '\\xe6', '\\xc3\\xa9', '\\xc3', '\\xf0\\x9f\\x98\\x80', '\\xf0',
             '\\xff', '\\xG0', '\\q', '\\xAB', 'ab\\', '\\x4', 'ab\\x4', '\\n\\n', '  ', '   ', 'abcdefgh', 'abcd']
    return toks

def plamo2_tokens():
    toks = [('<|plamo:unk|>', 0.0, UNKNOWN), ('<|plamo:bos|>', 0.0, CONTROL), ('<|plamo:eos|>', 0.0, CONTROL),
            ('<|plamo:pad|>', 0.0, CONTROL)]
    toks += [('<0x%02X>' % b, 0.0, BYTE) for b in range(256)]
    normal = {'a': -3.0, 'b': -3.0, 'c': -3.5, 'ab': -4.0, 'abc': -5.5, 'bc': -4.5, 'the': -5.0, ' the': -5.5, ' ': -2.0,
              'h': -3.0, 'e': -2.5, 't': -3.0, 'th': -4.0, 'he': -4.0, 'hello': -7.0, ' hello': -7.5, 'l': -3.0, 'o': -3.0,
              'lo': -4.0, 'llo': -5.0, '世界': -6.0, '世': -5.0, 'é': -4.0, 'é!': -4.5, '!': -2.0, '日本': -6.0, '本': -4.0,
              '  ': -2.5, '\n': -2.0, 'x' * 6: -8.0, 'xx': -3.0, 'ab\u00e9': -6.0, '😀': -6.0, 'A': -3.0, 'B': -3.0,
              'aaa': -1e-5, 'aa': -0.00005, 'big': 3e6}
    for t, s in normal.items(): toks.append((t, s, NORMAL))
    toks.append(('<user>', 0.0, USER))
    return toks

def write_more(out):
    rt = rwkv_tokens()
    write(f'{out}/rwkv-nounk.gguf', 'rwkv', rt, None, [NORMAL] * len(rt))
    write(f'{out}/rwkv-unk.gguf', 'rwkv', rt + ['<unk>'], None, [NORMAL] * len(rt) + [UNKNOWN],
          [('tokenizer.ggml.unknown_token_id', 'uint32', len(rt))])
    pt = plamo2_tokens()
    write(f'{out}/plamo2.gguf', 'plamo2', [t for t, _, _ in pt], [s for _, s, _ in pt], [k for _, _, k in pt])


def dna(out, gpt2_path, oracle_dir):
    """gpt-2's vocabulary and merges plus <dna>, </dna>, <oov> and a few k-mers (with the U+E000 marker)."""
    r = subprocess.run([sys.executable, os.path.join(oracle_dir, "ggml_oracle.py"), "inspect", gpt2_path],
                       capture_output=True, text=True, check=True)
    md = {e["key"]: e["value"] for e in json.loads(r.stdout)["metadata"]}
    toks = list(md["tokenizer.ggml.tokens"]["value"])
    types = list(md["tokenizer.ggml.token_type"]["value"])
    merges = list(md["tokenizer.ggml.merges"]["value"])
    extra = ["<dna>", "</dna>", "<oov>"] + [k + "\ue000" for k in ("ACGTAC", "GTACGT", "AAAAAA", "CCCCCC", "ACGAAA", "TTTTTA")]
    write(os.path.join(out, "hybriddna.gguf"), "hybriddna", toks + extra, None, types + [3, 3, 3] + [1] * 6,
          [("tokenizer.ggml.pre", "string", "gpt-2"), ("tokenizer.ggml.merges", "array", ("string", merges))])


#: The alphabet of the special-token vocabularies' texts: tokens made of it overlap, nest and repeat.
SPECIAL_ALPHABET = "ab<> \n\u2248"


def special_tokens(out, gpt2_path, spm_path, oracle_dir, seed=5):
    """gpt-2's (BPE) and llama-spm's (SPM) vocabularies plus many control and user-defined tokens over a
    small alphabet, so that they overlap, nest and repeat in any text over it: the order in which
    llama.cpp's partition applies them decides every cut. One gpt-2 copy is named "phi-3" (llama.cpp then
    gives every special token rstrip, and </s> too); one holds 60 nested tokens ("\u2248" x 3..62)."""
    import random
    rng = random.Random(seed)
    paths = []

    def base(path):
        r = subprocess.run([sys.executable, os.path.join(oracle_dir, "ggml_oracle.py"), "inspect", path],
                           capture_output=True, text=True, check=True)
        return {e["key"]: e["value"] for e in json.loads(r.stdout)["metadata"]}

    def add(src_md, name, model, pre, extra_tokens, extra_types, general_name):
        toks = list(src_md["tokenizer.ggml.tokens"]["value"])
        types = list(src_md["tokenizer.ggml.token_type"]["value"])
        have = set(toks)
        new = [(t, k) for t, k in zip(extra_tokens, extra_types) if t not in have and not have.add(t)]
        kvs = []
        if "tokenizer.ggml.scores" in src_md:
            scores = list(src_md["tokenizer.ggml.scores"]["value"]) + [0.0] * len(new)
            kvs.append(("tokenizer.ggml.scores", "array", ("float32", scores)))
        if "tokenizer.ggml.merges" in src_md:
            kvs.append(("tokenizer.ggml.merges", "array", ("string", list(src_md["tokenizer.ggml.merges"]["value"]))))
        if pre:
            kvs.append(("tokenizer.ggml.pre", "string", pre))
        from ggml_oracle import Writer
        w = Writer()
        w.kvs.append(("general.architecture", "string", "llama"))
        w.kvs.append(("general.name", "string", general_name))
        w.kvs.append(("tokenizer.ggml.model", "string", model))
        w.kvs.append(("tokenizer.ggml.tokens", "array", ("string", toks + [t for t, _ in new])))
        w.kvs.append(("tokenizer.ggml.token_type", "array", ("int32", types + [k for _, k in new])))
        for kv in kvs:
            w.kvs.append(kv)
        path = os.path.join(out, name)
        w.write(path)
        paths.append(path)

    def random_tokens(n):
        toks = set()
        while len(toks) < n:
            toks.add("".join(rng.choice(SPECIAL_ALPHABET) for _ in range(rng.randint(1, 7))))
        toks = sorted(toks)
        return toks, [rng.choice((CONTROL, USER, USER)) for _ in toks]

    gpt2, spm = base(gpt2_path), base(spm_path)
    toks, types = random_tokens(120)
    add(gpt2, "specials-bpe.gguf", "gpt2", "gpt-2", toks, types, "specials")
    add(gpt2, "specials-phi3.gguf", "gpt2", "gpt-2", toks + ["</s>", "<unk>", "<s>", "<|endoftext|>"],
        types + [CONTROL, CONTROL, CONTROL, CONTROL], "phi-3 specials")
    toks, types = random_tokens(120)
    add(spm, "specials-spm.gguf", "llama", None, toks, types, "specials")
    nested = ["\u2248" * k for k in range(3, 63)]
    add(gpt2, "specials-nested.gguf", "gpt2", "gpt-2", nested, [USER] * len(nested), "nested")
    return paths


def write_all(out, shared):
    """Every vocabulary above into the folder `out`; returns their paths."""
    sys.path.insert(0, os.path.join(shared, "oracle"))
    toks = ugm_tokens()
    cm = list(xcda(UGM_MAP))
    for asp in (False, True):
        for rew in (False, True):
            write(f"{out}/ugm-asp{int(asp)}-rew{int(rew)}.gguf", "t5", [t for t, _, _ in toks], [s for _, s, _ in toks],
                  [k for _, _, k in toks],
                  [("tokenizer.ggml.add_space_prefix", "bool", asp), ("tokenizer.ggml.remove_extra_whitespaces", "bool", rew),
                   ("tokenizer.ggml.precompiled_charsmap", "array", ("uint8", cm))])
    write(f"{out}/ugm-nocm.gguf", "t5", [t for t, _, _ in toks], [s for _, s, _ in toks], [k for _, _, k in toks],
          [("tokenizer.ggml.add_space_prefix", "bool", True)])
    write_more(out)
    dna(out, os.path.join(shared, "data", "vocab", "ggml-vocab-gpt-2.gguf"), os.path.join(shared, "oracle"))
    special_tokens(out, os.path.join(shared, "data", "vocab", "ggml-vocab-gpt-2.gguf"),
                   os.path.join(shared, "data", "vocab", "ggml-vocab-llama-spm.gguf"), os.path.join(shared, "oracle"))
    return sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".gguf"))
