#!/usr/bin/env python3
"""Generate include/gguf/text/unicode_tables.hpp: llama.cpp's Unicode data, as compact tables.

The tokenizer must give exactly llama.cpp's token ids, so these tables hold exactly the data of
llama.cpp's src/unicode-data.cpp (made by its scripts/gen-unicode-data.py), not simply "Unicode":

  * category flags: the General_Category of UnicodeData.txt folded into llama.cpp's eight bits (Cn and
    every code point missing from the file: undefined; L*: letter; N*: number; M*: accent mark; P*:
    punctuation; S*: symbol; Z*: separator; C* but Cn, surrogates and private use included: control);
  * whitespace: llama.cpp's fixed list (PropList.txt's White_Space), not a category;
  * lower / upper case: the simple mappings of UnicodeData.txt fields 13 and 12, one code point each;
  * NFD: the first code point of the canonical decomposition of a single code point (llama.cpp maps one
    code point to one code point), for the code points UnicodeData.txt lists;
  * the helper flags llama.cpp's unicode_cpt_flags_array() derives: is_whitespace on the whitespace list,
    is_lowercase on every *target* of the lower-case map, is_uppercase on every target of the upper-case
    map, is_nfd on every target of the NFD map and on U+0000 (the dummy first NFD range {0, 0, 0}).

Versions: llama.cpp's tables are Unicode 15.1 (its generator downloads the "latest" UnicodeData.txt;
they have 15.1's new code points and none of 16.0's). Debian bookworm's package unicode-data, the
default input, is 15.0. The only difference between the two files that reaches these tables is 15.1's
627 new code points, listed in UNICODE_15_1_ADDITIONS below and added when the input is 15.0. Any
other input version is refused. The result is checked against a fingerprint of llama.cpp's data, so a
different outcome fails loudly instead of writing a header.

Usage (python3 standard library only):
  python3 src/generate/unicode_tables.py [UnicodeData.txt] [--output FILE]   write the header
  python3 src/generate/unicode_tables.py [UnicodeData.txt] --check           exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys

MAX_CODEPOINTS = 0x110000
DEFAULT_INPUT = "/usr/share/unicode/UnicodeData.txt"
REPO_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_OUTPUT = os.path.join(REPO_ROOT, "include", "gguf", "text", "unicode_tables.hpp")
COMMAND = "python3 src/generate/unicode_tables.py " + DEFAULT_INPUT

# llama.cpp's unicode_cpt_flags bits (src/unicode.h).
UNDEFINED = 0x0001
NUMBER = 0x0002
LETTER = 0x0004
SEPARATOR = 0x0008
ACCENT_MARK = 0x0010
PUNCTUATION = 0x0020
SYMBOL = 0x0040
CONTROL = 0x0080
WHITESPACE = 0x0100
LOWERCASE = 0x0200
UPPERCASE = 0x0400
NFD = 0x0800

CATEGORY_FLAG = {
    "Cn": UNDEFINED,
    "Cc": CONTROL, "Cf": CONTROL, "Co": CONTROL, "Cs": CONTROL,
    "Ll": LETTER, "Lm": LETTER, "Lo": LETTER, "Lt": LETTER, "Lu": LETTER,
    "Mc": ACCENT_MARK, "Me": ACCENT_MARK, "Mn": ACCENT_MARK,
    "Nd": NUMBER, "Nl": NUMBER, "No": NUMBER,
    "Pc": PUNCTUATION, "Pd": PUNCTUATION, "Pe": PUNCTUATION, "Pf": PUNCTUATION,
    "Pi": PUNCTUATION, "Po": PUNCTUATION, "Ps": PUNCTUATION,
    "Sc": SYMBOL, "Sk": SYMBOL, "Sm": SYMBOL, "So": SYMBOL,
    "Zl": SEPARATOR, "Zp": SEPARATOR, "Zs": SEPARATOR,
}

# llama.cpp's whitespace list: PropList.txt's White_Space, written into its generator.
WHITESPACE_LIST = (list(range(0x0009, 0x000D + 1)) + list(range(0x2000, 0x200A + 1)) +
                   [0x0020, 0x0085, 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])

# Unicode 15.1's new code points (first, last, General_Category). None has a case mapping or a
# decomposition, so categories are all they add.
UNICODE_15_1_ADDITIONS = [
    (0x2FFC, 0x2FFF, "So"),  # IDEOGRAPHIC DESCRIPTION CHARACTER SURROUND FROM RIGHT .. ROTATION
    (0x31EF, 0x31EF, "So"),  # CJK STROKE HXG
    (0x2EBF0, 0x2EE5D, "Lo"),  # CJK Unified Ideographs Extension I
]
# A code point new in each version, to tell the input's version.
NEW_IN_15_0 = 0x11F00  # KAWI SIGN CANDRABINDU
NEW_IN_15_1 = 0x31EF  # CJK STROKE HXG
NEW_IN_16_0 = 0x1C89  # CYRILLIC CAPITAL LETTER TJE

# SHA-256 of llama.cpp's data (see fingerprint()), computed from its src/unicode-data.cpp.
LLAMA_CPP_FINGERPRINT = "fe1ea0598e4a3e873c2f039e3ed1a681e362836128698c2a51ab4048c2e47e37"

# Trie geometry of the flags: code point = [stage-1 index | SHIFT_MID bits | SHIFT_LOW bits].
SHIFT_LOW = 4
SHIFT_MID = 6


class UnicodeData:
    """The fields of UnicodeData.txt these tables use, per code point."""

    def __init__(self) -> None:
        self.category: dict[int, str] = {}
        self.lower: dict[int, int] = {}
        self.upper: dict[int, int] = {}
        self.ccc: dict[int, int] = {}
        self.decomposition: dict[int, list[int]] = {}  # canonical ones only


def read_unicode_data(path: str) -> UnicodeData:
    data = UnicodeData()
    first = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if len(fields) != 15:
                continue
            cp = int(fields[0], 16)
            name = fields[1]
            if name.endswith(", First>"):
                first = cp
                continue
            # A <..., Last> line closes a range that shares the fields of its First line.
            cps = range(first, cp + 1) if name.endswith(", Last>") else (cp,)
            for c in cps:
                data.category[c] = fields[2]
                if fields[3] != "0":
                    data.ccc[c] = int(fields[3])
                if fields[5] and not fields[5].startswith("<"):
                    data.decomposition[c] = [int(x, 16) for x in fields[5].split()]
                if fields[12]:
                    data.upper[c] = int(fields[12], 16)
                if fields[13]:
                    data.lower[c] = int(fields[13], 16)
    return data


def to_llama_version(data: UnicodeData) -> str:
    """Bring the input to llama.cpp's Unicode 15.1, or exit: returns the input's version."""
    if NEW_IN_16_0 in data.category:
        sys.exit("error: the input is Unicode 16.0 or newer; llama.cpp's tables are 15.1 (give a 15.0 or "
                 "15.1 UnicodeData.txt, or update UNICODE_15_1_ADDITIONS and the fingerprint with llama.cpp)")
    if NEW_IN_15_0 not in data.category:
        sys.exit("error: the input is older than Unicode 15.0; llama.cpp's tables are 15.1")
    if NEW_IN_15_1 in data.category:
        for first, last, category in UNICODE_15_1_ADDITIONS:
            for c in range(first, last + 1):
                if data.category.get(c) != category:
                    sys.exit(f"error: U+{c:04X} is not {category} in this Unicode 15.1 input")
        return "15.1"
    for first, last, category in UNICODE_15_1_ADDITIONS:
        for c in range(first, last + 1):
            if c in data.category:
                sys.exit(f"error: U+{c:04X} is already assigned in this Unicode 15.0 input")
            data.category[c] = category
    return "15.0"


HANGUL_S, HANGUL_L, HANGUL_V, HANGUL_T = 0xAC00, 0x1100, 0x1161, 0x11A7
HANGUL_V_COUNT, HANGUL_T_COUNT, HANGUL_S_COUNT = 21, 28, 11172


def nfd_first(data: UnicodeData, cp: int) -> int:
    """The first code point of NFD(cp): full canonical decomposition, then canonical ordering."""

    def decompose(c: int) -> list[int]:
        if HANGUL_S <= c < HANGUL_S + HANGUL_S_COUNT:
            s = c - HANGUL_S
            return [HANGUL_L + s // (HANGUL_V_COUNT * HANGUL_T_COUNT)]  # the leading jamo comes first
        if c in data.decomposition:
            return [x for part in data.decomposition[c] for x in decompose(part)]
        return [c]

    seq = decompose(cp)
    # Canonical ordering: a stable sort of each run of non-starters by combining class.
    changed = True
    while changed:
        changed = False
        for i in range(len(seq) - 1):
            a, b = data.ccc.get(seq[i], 0), data.ccc.get(seq[i + 1], 0)
            if a > b > 0:
                seq[i], seq[i + 1] = seq[i + 1], seq[i]
                changed = True
    return seq[0]


class Tables:
    """llama.cpp's data for every code point: flags (all twelve bits) and the three one-to-one maps."""

    def __init__(self, data: UnicodeData) -> None:
        self.flags = [UNDEFINED] * MAX_CODEPOINTS
        for c, category in data.category.items():
            self.flags[c] = CATEGORY_FLAG[category]
        self.lower = {c: t for c, t in data.lower.items() if t != c}
        self.upper = {c: t for c, t in data.upper.items() if t != c}
        self.nfd = {}
        for c in sorted(data.category):  # llama.cpp decomposes only the code points the file lists
            t = nfd_first(data, c)
            if t != c:
                self.nfd[c] = t
        for c in WHITESPACE_LIST:
            self.flags[c] |= WHITESPACE
        for t in self.lower.values():
            self.flags[t] |= LOWERCASE
        for t in self.upper.values():
            self.flags[t] |= UPPERCASE
        for t in self.nfd.values():
            self.flags[t] |= NFD
        self.flags[0] |= NFD  # llama.cpp's NFD ranges start with a dummy {0, 0, 0}, which marks U+0000


def fingerprint(t: Tables) -> str:
    h = hashlib.sha256()
    h.update(struct.pack("<%dH" % MAX_CODEPOINTS, *t.flags))
    for name, m in (("lower", t.lower), ("upper", t.upper), ("nfd", t.nfd)):
        items = sorted(m.items())
        h.update(name.encode())
        h.update(struct.pack("<I", len(items)))
        for c, target in items:
            h.update(struct.pack("<II", c, target))
    return h.hexdigest()


def build_trie(flags: list[int]):
    """Three stages, each block deduplicated: stage1[cp >> 10] -> stage2 block -> stage3 block -> value."""
    values = sorted(set(flags))
    index = {v: i for i, v in enumerate(values)}
    low, mid = 1 << SHIFT_LOW, 1 << SHIFT_MID
    blocks3: dict[tuple, int] = {}
    stage3_of = []
    for start in range(0, MAX_CODEPOINTS, low):
        block = tuple(index[v] for v in flags[start:start + low])
        stage3_of.append(blocks3.setdefault(block, len(blocks3)))
    blocks2: dict[tuple, int] = {}
    stage1 = []
    for start in range(0, len(stage3_of), mid):
        block = tuple(stage3_of[start:start + mid])
        stage1.append(blocks2.setdefault(block, len(blocks2)))
    stage2 = [x for block in blocks2 for x in block]
    stage3 = [x for block in blocks3 for x in block]
    return values, stage1, stage2, stage3


def trie_lookup(trie, cp: int) -> int:
    values, stage1, stage2, stage3 = trie
    b2 = stage1[cp >> (SHIFT_LOW + SHIFT_MID)]
    b3 = stage2[(b2 << SHIFT_MID) | ((cp >> SHIFT_LOW) & ((1 << SHIFT_MID) - 1))]
    return values[stage3[(b3 << SHIFT_LOW) | (cp & ((1 << SHIFT_LOW) - 1))]]


def case_runs(mapping: dict[int, int]):
    """(first, last, delta, stride): cp in [first, last], (cp - first) % stride == 0 maps to cp + delta."""
    runs: list[list[int]] = []
    for c in sorted(mapping):
        delta = mapping[c] - c
        if runs:
            r = runs[-1]
            if r[2] == delta and ((r[0] == r[1] and c - r[1] in (1, 2)) or (r[0] != r[1] and c - r[1] == r[3])):
                r[3] = c - r[1]
                r[1] = c
                continue
        runs.append([c, c, delta, 1])
    return [tuple(r) for r in runs]


def case_lookup(runs, cp: int) -> int:
    lo, hi = 0, len(runs)
    while lo < hi:  # the last run with first <= cp
        m = (lo + hi) // 2
        if runs[m][0] <= cp:
            lo = m + 1
        else:
            hi = m
    if lo:
        first, last, delta, stride = runs[lo - 1]
        if cp <= last and (cp - first) % stride == 0:
            return cp + delta
    return cp


def nfd_ranges(mapping: dict[int, int]):
    """(first, last, nfd): consecutive code points with the same NFD target, as llama.cpp groups them."""
    ranges: list[list[int]] = []
    for c in sorted(mapping):
        if ranges and ranges[-1][1] == c - 1 and ranges[-1][2] == mapping[c]:
            ranges[-1][1] = c
        else:
            ranges.append([c, c, mapping[c]])
    return [tuple(r) for r in ranges]


def verify(t: Tables, trie, lower_runs, upper_runs, nfd) -> None:
    """The compressed tables give back every code point's data."""
    nfd_of = {}
    for first, last, target in nfd:
        for c in range(first, last + 1):
            nfd_of[c] = target
    for cp in range(MAX_CODEPOINTS):
        assert trie_lookup(trie, cp) == t.flags[cp], hex(cp)
    for runs, m in ((lower_runs, t.lower), (upper_runs, t.upper)):
        for cp in range(MAX_CODEPOINTS):
            assert case_lookup(runs, cp) == m.get(cp, cp), hex(cp)
    assert nfd_of == t.nfd


def wrap(items: list[str], indent: str = "    ", width: int = 120) -> str:
    lines, line = [], indent
    for item in items:
        piece = item + ","
        if len(line) + len(piece) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += piece + " "
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join(lines)


def render(t: Tables, trie, lower_runs, upper_runs, nfd) -> str:
    values, stage1, stage2, stage3 = trie
    assert len(values) <= 256 and max(stage1) < 256 and max(stage2) < 65536 and max(stage3) < 256
    ascii_flags = t.flags[:128]
    out = []
    out.append(f"""\
// Generated by src/generate/unicode_tables.py: do not edit. Regenerate with
//   {COMMAND}
// and check that this file is current with `python3 src/generate/unicode_tables.py --check`.
//
// llama.cpp's Unicode data (its src/unicode-data.cpp, from scripts/gen-unicode-data.py), as compact
// tables: Unicode 15.1. The input, Debian's UnicodeData.txt, is 15.0: the generator adds 15.1's 627 new
// code points (U+2FFC..U+2FFF and U+31EF, symbols; U+2EBF0..U+2EE5D, CJK Extension I letters), the only
// difference between the two that reaches these tables, and checks the result against a fingerprint of
// llama.cpp's data. gguf/text/unicode.hpp reads these tables; use it, not them.

#ifndef GGUF_TEXT_UNICODE_TABLES_HPP
#define GGUF_TEXT_UNICODE_TABLES_HPP

#include <cstdint>

#include "gguf/version.hpp"

GGUF_BEGIN_NAMESPACE
namespace text::unicode_data {{

// clang-format off

/// The flags of U+0000..U+007F (llama.cpp's unicode_cpt_flags bits), for the ASCII fast path.
inline constexpr std::uint16_t ascii_flags[128] = {{
{wrap(["0x%04X" % v for v in ascii_flags])}
}};

/// The trie of the flags: a code point's flags are
/// `flag_values[stage3[(stage2[(stage1[cp >> 10] << 6) | ((cp >> 4) & 63)] << 4) | (cp & 15)]]`.
inline constexpr unsigned shift_low = {SHIFT_LOW};
/// Bits of the code point the second stage takes (see shift_low).
inline constexpr unsigned shift_mid = {SHIFT_MID};

/// The {len(values)} distinct flag sets.
inline constexpr std::uint16_t flag_values[{len(values)}] = {{
{wrap(["0x%04X" % v for v in values])}
}};

/// Stage 1: a stage-2 block for each 1024 code points.
inline constexpr std::uint8_t stage1[{len(stage1)}] = {{
{wrap([str(v) for v in stage1])}
}};

/// Stage 2: {len(stage2) >> SHIFT_MID} blocks of 64, a stage-3 block for each 16 code points.
inline constexpr std::uint16_t stage2[{len(stage2)}] = {{
{wrap([str(v) for v in stage2])}
}};

/// Stage 3: {len(stage3) >> SHIFT_LOW} blocks of 16, an index into flag_values for each code point.
inline constexpr std::uint8_t stage3[{len(stage3)}] = {{
{wrap([str(v) for v in stage3])}
}};

/// Code points first..last, every stride-th from first, map to code point + delta.
struct case_run {{
  std::uint32_t first;  ///< first code point of the run
  std::uint32_t last;   ///< last code point of the run (mapped: (last - first) % stride == 0)
  std::int32_t delta;   ///< mapped code point minus code point
  std::uint32_t stride; ///< 1: every code point of the run; 2: every other one
}};

/// The simple lower-case mapping (UnicodeData.txt field 13), sorted by first: {len(t.lower)} code points.
inline constexpr case_run lower_runs[{len(lower_runs)}] = {{
{wrap(["{0x%X, 0x%X, %d, %d}" % r for r in lower_runs])}
}};

/// The simple upper-case mapping (UnicodeData.txt field 12), sorted by first: {len(t.upper)} code points.
inline constexpr case_run upper_runs[{len(upper_runs)}] = {{
{wrap(["{0x%X, 0x%X, %d, %d}" % r for r in upper_runs])}
}};

/// Code points first..last all have the NFD first code point nfd.
struct nfd_range {{
  std::uint32_t first;  ///< first code point of the range
  std::uint32_t last;   ///< last code point of the range
  std::uint32_t nfd;    ///< the first code point of their canonical decomposition
}};

/// The NFD map, sorted by first: {len(t.nfd)} code points (llama.cpp's unicode_ranges_nfd without its
/// dummy first range {{0, 0, 0}}).
inline constexpr nfd_range nfd_ranges[{len(nfd)}] = {{
{wrap(["{0x%X, 0x%X, 0x%X}" % r for r in nfd])}
}};

// clang-format on

}}  // namespace text::unicode_data
GGUF_END_NAMESPACE

#endif  // GGUF_TEXT_UNICODE_TABLES_HPP
""")
    return "".join(out)


def generate(input_path: str) -> str:
    data = read_unicode_data(input_path)
    to_llama_version(data)
    t = Tables(data)
    got = fingerprint(t)
    if got != LLAMA_CPP_FINGERPRINT:
        sys.exit(f"error: the data differs from llama.cpp's (fingerprint {got}); nothing written")
    trie = build_trie(t.flags)
    lower_runs, upper_runs = case_runs(t.lower), case_runs(t.upper)
    nfd = nfd_ranges(t.nfd)
    verify(t, trie, lower_runs, upper_runs, nfd)
    return render(t, trie, lower_runs, upper_runs, nfd)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", nargs="?", default=DEFAULT_INPUT, help="UnicodeData.txt (15.0 or 15.1)")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="the header to write or check")
    parser.add_argument("--check", action="store_true", help="compare with the header instead of writing it")
    args = parser.parse_args()
    if not os.path.exists(args.input):
        sys.exit(f"error: {args.input} not found (Debian: apt-get install unicode-data)")
    text = generate(args.input)
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            print(f"{args.output} is not current: regenerate it with {COMMAND}", file=sys.stderr)
            return 1
        print(f"{args.output} is current")
        return 0
    with open(args.output, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {args.output} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
