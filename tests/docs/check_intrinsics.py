#!/usr/bin/env python3
"""Intrinsics and instruction-set conditionals appear only in the ops headers, kernels/simd/ops/.

    python3 tests/docs/check_intrinsics.py [REPO_ROOT]

docs/ARCHITECTURE.md's rule: the kernels call xsimd and the ops, never an intrinsic, and choose code
paths by arch.hpp's predicates (`if constexpr (is_avx512<A>)`), never by the compiler's macros. Every
header under include/gguf/ outside include/gguf/kernels/simd/ops/ is read with its comments and string
literals removed, and these are offenders:

- an intrinsic: x86's `_mm*_`, `_MM_*`, `__m128`/`__m256`/`__m512` types, `__mmask*`, `_cvt*`, the mask
  and bit intrinsics (`_kand_mask16`, `_pdep_u64`, ...), `__builtin_ia32_*`; NEON's `v..._u8`-style
  functions and `int8x16_t`-style types; SVE's types; an intrinsic header (immintrin.h, arm_neon.h, ...);
- an instruction-set conditional: a `#if`/`#elif`/`#ifdef`/`#ifndef` that names an instruction-set or
  target-architecture macro (`__AVX*`, `__SSE*`, `__F16C__`, `__FMA__`, `__BMI*`, `__ARM_NEON`,
  `__ARM_FEATURE_*`, `__aarch64__`, `__x86_64__`, `_M_X64`, `_M_ARM64`, `GGUF_SIMD_AVX512`, ...).

The allowlist (ALLOWED below) is short: kernels/simd/arch.hpp (the instruction-set predicates, which
test the macros so that nothing else has to) and kernels/isa.hpp (the per-instruction-set namespace's
name), whole; and three headers that are not SIMD code, each for a target-architecture test only:
kernels/barriers.hpp (the scalar kernels' optimiser barrier, an empty asm whose register constraint
depends on the CPU), kernels/registry.hpp (whether the target makes x86's negative default NaN) and detail/thread_team.hpp (the processor's spin-wait hint,
`__builtin_ia32_pause`). Exit 0 when no header has an offender, 1 listing each as
include/gguf/FILE:LINE (an allowlisted header that no longer exists is reported, not failed).
"""
import os
import re
import sys

OPS = "kernels/simd/ops/"

# Target-architecture macros (which CPU, not which extension): what the non-SIMD headers may test.
ARCH = {"__x86_64__", "__i386__", "_M_X64", "_M_IX86", "__aarch64__", "_M_ARM64"}

# path under include/gguf -> None (anything) or the set of findings allowed there.
ALLOWED = {
    "kernels/simd/arch.hpp": None,  # the instruction-set predicates: the one test of the macros
    "kernels/isa.hpp": None,  # the name of the per-instruction-set inline namespace
    "kernels/barriers.hpp": ARCH,  # an empty asm's register constraint (scalar code, no SIMD)
    "kernels/registry.hpp": ARCH,  # x86's default NaN sign, for the rows' NaN policy (no SIMD)
    "detail/thread_team.hpp": ARCH | {"__builtin_ia32_pause"},  # the spin-wait hint
}

INTRINSIC = re.compile(
    r"\b(?:"
    r"_mm(?:256|512)?_\w+|_MM_\w+|__m(?:64|128|256|512)(?:bh|ph|[dhi])?|__mmask\d+"
    r"|_cvt\w+|_k\w+_mask\d+\w*|_(?:load|store)_mask\d+"
    r"|_(?:pdep|pext|bzhi|tzcnt|lzcnt|bextr|blsr|blsi|blsmsk|popcnt)_u\d+|_popcnt\d+|_xgetbv|__rdtsc|_rdtsc"
    r"|__builtin_(?:ia32|neon|aarch64|arm)_\w+"
    r"|v[a-z]+\d*q?(?:_n|_lane|_laneq|_low|_high)?(?:_[usfp](?:8|16|32|64)){1,2}"
    r"|(?:u?int|float|poly|bfloat|mfloat)\d+x\d+(?:x\d)?_t"
    r"|sv(?:u?int|float|bfloat|bool)\w*_t"
    r")\b"
)
INTRINSIC_HEADER = re.compile(
    r"#\s*include\s*[<\"](\w*intrin|arm_neon|arm_sve|arm_fp16|arm_bf16|arm_acle|riscv_vector|wasm_simd128"
    r"|altivec)\.h[>\"]"
)
CONDITIONAL = re.compile(r"#\s*(?:if|elif|ifdef|ifndef|elifdef|elifndef)\b")
ISA_MACRO = re.compile(
    r"\b(?:__(?:AVX|SSE|FMA|BMI|F16C|POPCNT|LZCNT|AES|PCLMUL|SHA|MMX|XOP|ALTIVEC|VSX)\w*"
    r"|__ARM_(?:NEON|FEATURE|ARCH)\w*|__aarch64__|__arm__|_M_ARM64\w*|_M_ARM|__x86_64__|__amd64__|_M_X64"
    r"|_M_AMD64|__i386__|_M_IX86\w*|__riscv\w*|__wasm\w*|__powerpc\w*|__loongarch\w*|GGUF_SIMD_AVX512\w*)\b"
)


def strip_comments_and_strings(text):
    """The text with comments, string and character literals blanked (newlines kept, so lines count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            delim = text[i + 2 : k]
            j = text.find(")" + delim + '"', k)
            j = n if j < 0 else j + len(delim) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # not a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            # an #include's <...> is not a string; "..." includes are kept for INTRINSIC_HEADER
            line_start = text.rfind("\n", 0, i) + 1
            if text[line_start:i].lstrip().startswith("#") and "include" in text[line_start:i]:
                out.append(text[i : j + 1])
            else:
                out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def logical_lines(text):
    """(first line number, line) with backslash continuations joined."""
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        start, line = k + 1, lines[k]
        while line.endswith("\\") and k + 1 < len(lines):
            k += 1
            line = line[:-1] + " " + lines[k]
        yield start, line
        k += 1


def findings(text):
    """(line, token, kind) of every intrinsic and instruction-set conditional in the header's text."""
    for number, line in logical_lines(strip_comments_and_strings(text)):
        stripped = line.lstrip()
        m = INTRINSIC_HEADER.match(stripped)
        if m:
            yield number, m.group(1) + ".h", "intrinsic header"
            continue
        if CONDITIONAL.match(stripped):
            for m in ISA_MACRO.finditer(stripped):
                yield number, m.group(0), "instruction-set conditional"
            continue
        if stripped.startswith("#"):
            continue
        for m in INTRINSIC.finditer(line):
            yield number, m.group(0), "intrinsic"


def main(root):
    inc = os.path.join(root, "include", "gguf")
    offenders = []
    checked = 0
    seen = set()
    for d, _, files in os.walk(inc):
        for f in sorted(files):
            if not f.endswith(".hpp"):
                continue
            rel = os.path.relpath(os.path.join(d, f), inc).replace(os.sep, "/")
            if rel.startswith(OPS):
                continue
            checked += 1
            seen.add(rel)
            allowed = ALLOWED.get(rel, set())
            if rel in ALLOWED and allowed is None:
                continue
            text = open(os.path.join(d, f), encoding="utf-8").read()
            for number, token, kind in findings(text):
                if token not in allowed:
                    offenders.append(f"include/gguf/{rel}:{number}: {kind} {token}")
    stale = sorted(set(ALLOWED) - seen)
    for line in offenders:
        print(line)
    for rel in stale:
        print(f"note: allowlisted but not a header (drop it from ALLOWED): include/gguf/{rel}")
    print(
        f"{checked} headers outside include/gguf/{OPS}, {len(offenders)} intrinsics or instruction-set "
        f"conditionals outside the ops and the allowlist"
    )
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
