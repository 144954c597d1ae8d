#!/usr/bin/env python3
"""gguf::tokenizer against llama.cpp's own tokenizer, id for id and byte for byte.

usage: tokenizer_agreement.py TOKENIZE_BATCH SHARED [--random N] [--pre-all] [--only NAME]

For every vocabulary in SHARED/data/vocab, with add_special and parse_special both ways, on a corpus this
script builds (every script and category, special-token strings, whitespace runs, numbers, code, invalid
UTF-8) plus N random strings: llama_tokenize (the oracle, libllama) against tests/tools/tokenize_batch
(the library), and llama_detokenize of the first id list with remove_special and unparse_special both
ways. With --pre-all, each BPE vocabulary again with tokenizer.ggml.pre rewritten to every pre-tokenizer
name llama.cpp knows (a name the oracle refuses must be refused too). Exit 0 when all agree.
"""
import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile

# Every tokenizer.ggml.pre name of llama.cpp's list (llama_vocab::impl::load); the oracle's libllama is
# the judge of which it knows.
PRE_NAMES = [
    "default", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
    "jina-v5-nano", "deepseek-llm", "deepseek-coder", "deepseek-v3", "spark2_5", "youtu", "falcon", "mpt",
    "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
    "mellum", "modern-bert", "jais-2", "jina-v1-en", "jina-v2-code", "roberta-bpe", "refact", "command-r",
    "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "qwen35", "stablelm2", "olmo", "dbrx", "smaug-bpe",
    "poro-chat", "glm4", "chatglm-bpe", "viking", "jais", "tekken", "smollm", "codeshell", "bloom",
    "gpt3-finnish", "exaone", "exaone4", "exaone-moe", "chameleon", "minerva-7b", "megrez", "gpt-4o",
    "llama4", "kanana2", "talkie", "granite-embed-multi-97m", "tiny_aya", "cohere2moe", "superbpe",
    "trillion", "granite-docling", "bailingmoe", "bailingmoe2", "llada-moe", "seed-coder", "hunyuan",
    "hunyuan-dense", "hy_v4", "joyai-llm", "kimi-k2", "ufakzeka", "grok-2", "afmoe", "laguna", "minimax-m2",
    "solar-open", "mellum2", "minicpm5", "gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace",
    "no-such-pre-tokenizer",
]


def dense_corpus(alphabet, n, seed=3):
    """Random texts over a small alphabet (the special-token vocabularies'): every cut of llama.cpp's
    partition order, lstrip/rstrip and parse_special is met, and long runs of one character."""
    rng = random.Random(seed)
    texts = []
    for k in range(n):
        if k % 10 == 9:
            texts.append((rng.choice(alphabet) * rng.randint(50, 400)).encode("utf-8"))
        else:
            texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))).encode("utf-8"))
    return texts


def corpus(specials, n_random, seed=1):
    """The texts, as bytes."""
    t = [
        "", " ", "  ", "\n", " \n", "\n\n\n", "\t", "\r\n", "Hello world", " Hello world", "Hello World!",
        "hello, world. how are you?", "I'm sure you're right, they'll say he's done it; we'd've... don't",
        "HE'S SHE'LL WE'VE YOU'D I'M IT'S 'tis 'Twas", "a  b   c    d     e", "   leading and trailing   ",
        "multiple\n\nnewlines\n\n\n\nhere", "tabs\tand\t\ttabs", "carriage\r\nreturn\rmix",
        "1 12 123 1234 12345 123456 1234567 12345678901234567890", "3.14159 2,718 1,000,000 -42 +7 0x1F 1e-9",
        "Ünïcödé façade naïve résumé Ångström ß ẞ", "Привет, мир! Как дела?", "Γειά σου Κόσμε",
        "مرحبا بالعالم ١٢٣٤", "שלום עולם", "नमस्ते दुनिया, क्षत्रिय", "สวัสดีชาวโลก", "你好，世界！这是一个测试。",
        "日本語のテキスト、カタカナとひらがな。", "한국어 텍스트 안녕하세요", "全角：ＡＢＣ１２３！？",
        "emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ ✨", "math ∑∫√∞ ≤≥≠ ±×÷ ½ ² ³ µ", "currency $€£¥₹ ₿",
        "def f(x):\n    return x ** 2  # square\n", "int main() { printf(\"%d\\n\", a[i] <= b); }",
        '{"key": [1, 2, {"a": null}], "s": "x\\ty"}', "<html><body class=\"x\">Hi &amp; bye</body></html>",
        "https://example.com/path?query=1&b=2#frag user@example.org", "    indented code\n        more",
        "A" * 300, " " * 100, "\n" * 40, "ab" * 200 + "!", "word " * 100, "😀" * 30, "x\u00a0y\u3000z\u2028w\u2009v",
        "\u200b\u200c\u200d\ufeff zero width", "combining: e\u0301 a\u0308 n\u0303 \u0915\u094d\u0937",
        "Lt: \u01c5 \u01c8 \u1f88 Lm: \u02b0 \u3005 Lo: \u05d0 \u0627", "Zl\u2028Zp\u2029 control \x01\x07\x1b[0m",
        "digits ٠١٢ ۰۱۲ ०१२ ０１２ ⅠⅡⅢ ①②③", "punctuation ¡¿ «» “” ‘’ – — … ‥ · • ‹›", "\u3002\uff0c\u3001\u0964\u06d4\u060c",
        "CamelCaseWords andSnake_case and kebab-case ALLCAPS MiXeD", "Ǆǅǆ ǈǉ ǋǌ ǲǳ", "<sentinel:12> IMGIMGABCZ tokens",
        "ｱｲｳｴｵ ㄅㄆㄇ ㄱㄴㄷ 가힣 一龥 ࠀ", "null\x00byte", "é" * 50,
        "<dna>acgtacgtacGTACGTn</dna> then <dna>AAAAAACCCCCC</dna><dna>TTTTT", "x<dna></dna>y <dna>acg",
        "ＡＢｂ０ ﬁne ① … ㍿ e\u0301 A\u030a ab abc\tthe\r\nhello\u3000world\u2002! ǅ \u200b @@<ab>zz",
        "the hello hell world   \\x \\n \\t ab\\ abcdefgh \u4e2d\u6587 😀 aaa aa big xxxxxx 世界 日本",
    ]
    texts = [s.encode("utf-8") for s in t]
    texts += [b"\xff", b"\xc3", b"\xe2\x82", b"abc\x80def", b"\xc0\xaf", b"\xed\xa0\x80", b"ok\xf0\x9f\x98",
              b"\xf8\x88\x80\x80\x80", b"\xfe\xff", b"caf\xe9 latin-1", b" \xe2\x96\x81 already escaped"]
    for s in specials[:60]:
        texts += [s, b"Hello" + s + b"world", b" " + s + b" ", b"a " + s + b"\n" + s + s + b" b", s[:-1] if len(s) > 1 else s]
    rng = random.Random(seed)
    pool = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") * 3 + list(" \t\n\r  ") * 4 +
            list("'.,;:!?-_()[]{}<>\"/\\|@#$%^&*+=~`") + list("éüñçÅßøœ") + list("абвгд") + list("中文字漢") +
            list("ひらカタ") + list("한국") + list("\u0301\u0308\u0903") + ["😀", "👍🏽", "\u200d", "\u00a0", "\u3000", "١", "½"])
    raw_bytes = [b"\x80", b"\xff", b"\xc3", b"\xe2\x82"]
    for _ in range(n_random):
        parts = []
        for _ in range(rng.randint(0, 40)):
            if rng.random() < 0.03:
                parts.append(rng.choice(raw_bytes))
            elif specials and rng.random() < 0.02:
                parts.append(rng.choice(specials))
            else:
                parts.append(rng.choice(pool).encode("utf-8"))
        texts.append(b"".join(parts))
    return texts


def byte_decoder():
    """GPT-2's byte-level encoding backwards: the character of each byte to the byte."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def long_words(tokens, n, seed=5):
    """Long texts without spaces, where a tokenizer may cut words it cannot cache (issue 49): script lines
    run together, and the vocabulary's own token texts run together (every pair of neighbours inside
    tokens met at the joins), as stored and as raw bytes (GPT-2's byte-level characters decoded)."""
    rng = random.Random(seed)
    lines = ["Привет мир", "Γειά σου Κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया क्षत्रिय", "สวัสดีชาวโลกภาษาไทย",
             "你好世界这是一个测试", "日本語のテキストカタカナとひらがな", "한국어텍스트안녕하세요", "😀😃👍🏽👨‍👩‍👧‍👦🇫🇷❤️✨",
             "e\u0301a\u0308n\u0303\u0915\u094d\u0937", "١٢٣٤٥٦٧٨٩٠१२३४५"]
    texts = []
    for _ in range(n):
        texts.append("".join(rng.choice(lines).replace(" ", "") for _ in range(rng.randint(2, 12))).encode("utf-8"))
    dec = byte_decoder()
    plain = [t for t in tokens if t and not t.startswith(b"<0x")]
    for _ in range(n if plain else 0):
        picked = [rng.choice(plain) for _ in range(rng.randint(2, 40))]
        texts.append(b"".join(picked))
        raw = []
        for t in picked:
            u = t.decode("utf-8", "replace")
            raw.append(bytes(dec[c] for c in u) if all(c in dec for c in u) else t.replace("\u2581".encode("utf-8"), b" "))
        texts.append(b"".join(raw))
    return texts


def long_texts(texts, size=100_000, seed=11):
    """Texts longer than the stretches a tokenizer may escape and encode one at a time (32 KiB for SPM and
    BPE): the corpus run together with spaces, and the places a stretch must not end on before a space (a
    U+2581 in the text, a character cut short, a run of spaces) or around a newline (GPT-4o's "/" after
    one, symbols on both sides, a space before it) now and then, and everywhere (so that every place a
    stretch may end is next to one)."""
    rng = random.Random(seed)
    traps = [b"\xe2\x96\x81 x", b"\xe2 x", b"\xf0\x9f x", b"\xe0\xb8 y", b"a    b", b"\xc3 z", " \u0e2a \u4f60".encode("utf-8"),
             b"x\n/y", b".\n.", b"a \nB", b"1\n2", "\u0643 \u0644\n\u0645".encode("utf-8")]
    pool = [t for t in texts if t] or [b"word"]
    out = []
    for share in (0.2, 0.5, 0.95):
        parts, total = [], 0
        while total < size:
            p = rng.choice(traps) if rng.random() < share else rng.choice(pool)
            parts.append(p)
            total += len(p) + 1
        out.append(b" ".join(parts))
    return out


def oracle(shared):
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import ggml_oracle  # noqa: E402
    return ggml_oracle


def specials_of(go, path):
    """The texts of the control and user-defined tokens, from the file (bytes)."""
    r = subprocess.run([sys.executable, os.path.join(go.HERE, "ggml_oracle.py"), "inspect", path],
                       capture_output=True, text=True)
    md = {e["key"]: e["value"] for e in json.loads(r.stdout)["metadata"]}
    toks = md.get("tokenizer.ggml.tokens", {}).get("value", [])
    types = md.get("tokenizer.ggml.token_type", {}).get("value", [])
    out = [t.encode("utf-8") for t, ty in zip(toks, types) if ty in (3, 4) and t]
    return sorted(set(out), key=lambda s: (-len(s), s))


def normal_tokens_of(go, path):
    """The texts of the normal tokens, from the file (bytes)."""
    r = subprocess.run([sys.executable, os.path.join(go.HERE, "ggml_oracle.py"), "inspect", path],
                       capture_output=True, text=True)
    md = {e["key"]: e["value"] for e in json.loads(r.stdout)["metadata"]}
    toks = md.get("tokenizer.ggml.tokens", {}).get("value", [])
    types = md.get("tokenizer.ggml.token_type", {}).get("value", [1] * len(toks))
    return [t.encode("utf-8") for t, ty in zip(toks, types) if ty == 1 and t]


def ours(batch, path, texts, work):
    fn = os.path.join(work, "texts.hex")
    with open(fn, "w") as fh:
        for t in texts:
            fh.write(t.hex() + "\n")
    r = subprocess.run([batch, path, fn], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode != 0:
        return {"error": json.loads(lines[0])["error"] if lines else r.stderr}
    if len(lines) != len(texts):
        return {"error": "tokenize_batch crashed (%d of %d lines): %s" % (len(lines), len(texts), r.stderr[-400:])}
    return [json.loads(x) for x in lines]


def oracle_worker(shared, path, texts_file):
    """Runs in a process of its own (llama.cpp aborts on some vocabularies): every flag setting of
    llama_tokenize, llama_detokenize of the first, as JSON on stdout."""
    go = oracle(shared)
    with open(texts_file) as fh:
        texts = [bytes.fromhex(line.strip()) for line in fh]
    lm = go.Llama()
    try:
        toks = [lm.tokenize(path, texts, a, p) for a, p in ((True, False), (False, False), (True, True), (False, True))]
        dets = [[d.hex() for d in lm.detokenize(path, toks[0], rs, us)]
                for rs, us in ((False, False), (True, False), (False, True), (True, True))]
    except (ValueError, RuntimeError) as ex:
        print(json.dumps({"refused": str(ex)}))
        return 0
    print(json.dumps({"tokens": toks, "text_hex": dets}))
    return 0


def compare(go, batch, path, texts, work, label):
    mine = ours(batch, path, texts, work)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--oracle-worker", go.HERE + "/..", path,
                        os.path.join(work, "texts.hex")], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        # llama.cpp aborted (an assertion on this vocabulary): the library must only not crash
        if isinstance(mine, dict) and "crashed" in mine["error"]:
            return 1, "the library crashed: " + mine["error"]
        why = [ln for ln in r.stderr.splitlines() if "GGML_ASSERT" in ln or "terminate" in ln or "what()" in ln]
        return 0, "llama.cpp aborts on this vocabulary (%s); the library %s" % (
            (why or ["signal %d" % -r.returncode])[0][-90:], "refuses it" if isinstance(mine, dict) else "tokenizes")
    res = json.loads(r.stdout)
    if "refused" in res:
        if isinstance(mine, dict):
            return 0, "both refuse (%s / %s)" % (res["refused"][:60], mine["error"][:60])
        return 1, "llama.cpp refuses (%s) but the library accepts" % res["refused"][:100]
    if isinstance(mine, dict):
        return 1, "the library refuses (%s) but llama.cpp accepts" % mine["error"]
    theirs = res["tokens"]
    bad = 0
    for k, name in enumerate(("add_special", "none", "add+parse_special", "parse_special")):
        for i, t in enumerate(texts):
            if mine[i]["t"][k] != theirs[k][i]:
                bad += 1
                if bad <= 5:
                    print("  %s [%s] text %r:\n    llama.cpp %s\n    library   %s" %
                          (label, name, t[:80], theirs[k][i][:40], mine[i]["t"][k][:40]))
    for k, (rs, us) in enumerate(((False, False), (True, False), (False, True), (True, True))):
        d = [bytes.fromhex(x) for x in res["text_hex"][k]]
        for i, t in enumerate(texts):
            if mine[i]["d"][k] != d[i].hex():
                bad += 1
                if bad <= 8:
                    print("  %s [detokenize remove=%d unparse=%d] text %r:\n    llama.cpp %r\n    library   %r" %
                          (label, rs, us, t[:60], d[i][:80], bytes.fromhex(mine[i]["d"][k])[:80]
                           if mine[i]["d"][k] != "error" else "error"))
    return bad, "%d texts x 4 flag settings + 4 detokenizations" % len(texts)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--oracle-worker":
        return oracle_worker(sys.argv[2], sys.argv[3], sys.argv[4])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("batch")
    ap.add_argument("shared")
    ap.add_argument("--random", type=int, default=300)
    ap.add_argument("--pre-all", action="store_true")
    ap.add_argument("--only", default=None)
    ap.add_argument("--extra", nargs="*", default=[], help="more vocabulary files to compare")
    ap.add_argument("--models", action="store_true",
                    help="also the models no shared file has (UGM, RWKV, PLaMo-2, hybriddna, whitespace, gemma4) and "
                         "BERT's normalizer keys, on vocabularies tokenizer_vocabs.py writes")
    a = ap.parse_args()
    go = oracle(a.shared)
    vocab_dir = os.path.join(a.shared, "data", "vocab")
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        files = sorted(f for f in os.listdir(vocab_dir) if f.endswith(".gguf"))
        for f in files:
            if a.only and a.only not in f:
                continue
            path = os.path.join(vocab_dir, f)
            specials = specials_of(go, path)
            texts = corpus(specials, a.random) + long_words(normal_tokens_of(go, path), a.random // 3)
            texts += long_texts(texts)
            bad, what = compare(go, a.batch, path, texts, work, f)
            failures += bad > 0
            print("%-34s %s: %s" % (f, "ok" if bad == 0 else "%d MISMATCHES" % bad, what), flush=True)
        extra = list(a.extra)
        if a.models:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import tokenizer_vocabs  # noqa: E402
            models = os.path.join(work, "models")
            os.makedirs(models)
            extra += tokenizer_vocabs.write_all(models, a.shared)
            rewrites = [("ggml-vocab-gpt-2.gguf", "whitespace-model.gguf", ["tokenizer.ggml.model=string:whitespace",
                                                                            "tokenizer.ggml.pre=string:whitespace"]),
                        ("ggml-vocab-gpt-2.gguf", "gemma4-model.gguf", ["tokenizer.ggml.model=string:gemma4"])]
            for low in ("true", "false"):
                for strip in ("true", "false"):
                    rewrites.append(("ggml-vocab-bert-bge.gguf", "bert-lower-%s-strip-%s.gguf" % (low, strip),
                                     ["tokenizer.ggml.normalizer.lowercase=bool:" + low,
                                      "tokenizer.ggml.normalizer.strip_accents=bool:" + strip]))
            for src, name, sets in rewrites:
                cmd = [sys.executable, os.path.join(go.HERE, "ggml_oracle.py"), "rewrite", os.path.join(vocab_dir, src),
                       os.path.join(models, name)]
                for kv in sets:
                    cmd += ["--set", kv]
                subprocess.run(cmd, check=True, capture_output=True)
                extra.append(os.path.join(models, name))
        for path in extra:
            texts = corpus(specials_of(go, path), a.random)
            if a.models and os.path.basename(path).startswith("specials-"):
                texts += dense_corpus(tokenizer_vocabs.SPECIAL_ALPHABET, 3 * a.random)
            bad, what = compare(go, a.batch, path, texts, work, os.path.basename(path))
            failures += bad > 0
            print("%-34s %s: %s" % (os.path.basename(path), "ok" if bad == 0 else "%d MISMATCHES" % bad, what), flush=True)
        if a.pre_all:
            # each name on its own files, as many at a time as there are cores (the printing in order)
            def one_pre(job):
                f, src, texts, pre = job
                sub = tempfile.mkdtemp(dir=work)
                dst = os.path.join(sub, "pre.gguf")
                subprocess.run([sys.executable, os.path.join(go.HERE, "ggml_oracle.py"), "rewrite", src, dst,
                                "--set", "tokenizer.ggml.pre=string:" + pre], check=True, capture_output=True)
                return compare(go, a.batch, dst, texts, sub, "%s pre=%s" % (f, pre))

            jobs = []
            for f in files:
                if f not in ("ggml-vocab-gpt-2.gguf", "ggml-vocab-deepseek-llm.gguf") or (a.only and a.only not in f):
                    continue
                texts = corpus([], a.random // 3, seed=7) + long_words(normal_tokens_of(go, os.path.join(vocab_dir, f)), 12)
                texts += long_texts(texts, size=70_000)  # one place to cut each, past the first 32 KiB
                jobs += [(f, os.path.join(vocab_dir, f), texts, pre) for pre in PRE_NAMES]
            with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                for (f, _, _, pre), (bad, what) in zip(jobs, pool.map(one_pre, jobs)):
                    failures += bad > 0
                    print("%-34s pre=%-24s %s: %s" % (f, pre, "ok" if bad == 0 else "%d MISMATCHES" % bad, what),
                          flush=True)
    print("tokenizer agreement: %s" % ("all agree" if failures == 0 else "%d failing" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
