#!/usr/bin/env python3
"""Converts a little-endian GGUF v2/v3 file to big-endian, in the same layout, the way gguf-py does it.

usage: make_big_endian.py IN.gguf OUT.gguf

The header is swapped field by field (counts, lengths, types, values, dims, offsets; the magic stays
"GGUF"); tensor data follows gguf-py: f32/f16/bf16/integer elements swapped, and in quantized blocks the
fields ggml-common.h declares as multi-byte numbers (gguf_convert_endian.py swaps d of q4_0/q8_0, d and
dmin of q4_K, d of q6_K, and leaves mxfp4 alone; the same rule extends to every type, see
docs/FORMAT.md). Written for the test data, independently of the C++ library it tests: python3
standard library only.
"""
import struct
import sys

# type id -> (block bytes, [(offset, width, count), ...]): the multi-byte fields of one block
HALF = [(0, 2, 1)]
HALF2 = [(0, 2, 2)]
FIELDS = {
    0: (4, [(0, 4, 1)]), 1: (2, [(0, 2, 1)]), 30: (2, [(0, 2, 1)]),             # f32, f16, bf16
    24: (1, []), 25: (2, [(0, 2, 1)]), 26: (4, [(0, 4, 1)]), 27: (8, [(0, 8, 1)]), 28: (8, [(0, 8, 1)]),
    2: (18, HALF), 3: (20, HALF2), 6: (22, HALF), 7: (24, HALF2), 8: (34, HALF), 9: (36, HALF2),
    10: (84, [(80, 2, 2)]), 11: (110, [(108, 2, 1)]), 12: (144, HALF2), 13: (176, HALF2),
    14: (210, [(208, 2, 1)]), 15: (292, [(0, 4, 1), (260, 2, 16)]),
    16: (66, [(0, 2, 1), (2, 2, 32)]), 17: (74, [(0, 2, 1), (2, 2, 32)]), 18: (98, HALF),
    19: (50, [(0, 2, 1), (34, 2, 8)]), 20: (18, HALF), 21: (110, HALF), 22: (82, HALF),
    23: (136, HALF2), 29: (56, []), 34: (54, [(52, 2, 1)]), 35: (66, [(64, 2, 1)]),
    39: (17, []), 40: (36, []), 41: (18, HALF), 42: (18, HALF),
}
BLOCK = {0: 1, 1: 1, 30: 1, 24: 1, 25: 1, 26: 1, 27: 1, 28: 1, 2: 32, 3: 32, 6: 32, 7: 32, 8: 32, 9: 32,
         10: 256, 11: 256, 12: 256, 13: 256, 14: 256, 15: 256, 16: 256, 17: 256, 18: 256, 19: 256,
         20: 32, 21: 256, 22: 256, 23: 256, 29: 256, 34: 256, 35: 256, 39: 32, 40: 64, 41: 128, 42: 64}
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def convert(data):
    out = bytearray(data)
    assert data[:4] == b"GGUF"
    version = struct.unpack_from("<I", data, 4)[0]
    assert version in (2, 3), "v2/v3 little-endian only"

    def swap(off, width):
        out[off:off + width] = data[off:off + width][::-1]

    swap(4, 4)
    n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
    swap(8, 8)
    swap(16, 8)
    pos = 24

    def value(t, pos):
        if t == 8:  # string: length, bytes
            n = struct.unpack_from("<Q", data, pos)[0]
            swap(pos, 8)
            return pos + 8 + n
        if t == 9:  # array: item type, count, items
            it = struct.unpack_from("<I", data, pos)[0]
            n = struct.unpack_from("<Q", data, pos + 4)[0]
            swap(pos, 4)
            swap(pos + 4, 8)
            pos += 12
            for _ in range(n):
                pos = value(it, pos)
            return pos
        if SCALAR[t] > 1:
            swap(pos, SCALAR[t])
        return pos + SCALAR[t]

    alignment = 32
    for _ in range(n_kv):
        klen = struct.unpack_from("<Q", data, pos)[0]
        swap(pos, 8)
        key = data[pos + 8:pos + 8 + klen]
        pos += 8 + klen
        t = struct.unpack_from("<I", data, pos)[0]
        swap(pos, 4)
        if key == b"general.alignment":
            alignment = struct.unpack_from("<I", data, pos + 4)[0]
        pos = value(t, pos + 4)
    tensors = []
    for _ in range(n_tensors):
        nlen = struct.unpack_from("<Q", data, pos)[0]
        swap(pos, 8)
        pos += 8 + nlen
        n_dims = struct.unpack_from("<I", data, pos)[0]
        swap(pos, 4)
        pos += 4
        ne = struct.unpack_from("<%dQ" % n_dims, data, pos)
        for d in range(n_dims):
            swap(pos + 8 * d, 8)
        pos += 8 * n_dims
        ttype = struct.unpack_from("<I", data, pos)[0]
        swap(pos, 4)
        offset = struct.unpack_from("<Q", data, pos + 4)[0]
        swap(pos + 4, 8)
        pos += 12
        n = 1
        for d in ne:
            n *= d
        tensors.append((ttype, offset, n))
    data_start = (pos + alignment - 1) // alignment * alignment if n_tensors else pos
    for ttype, offset, n in tensors:
        block_bytes, fields = FIELDS[ttype]
        start = data_start + offset
        for b in range(n // BLOCK[ttype]):
            base = start + b * block_bytes
            for off, width, count in fields:
                for k in range(count):
                    swap(base + off + k * width, width)
    return bytes(out)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        data = f.read()
    with open(argv[2], "wb") as f:
        f.write(convert(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
