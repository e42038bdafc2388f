#!/usr/bin/python3
"""Regenerates tests/c/view_cases.inc: expected sizes, strides, storage
offsets and error messages of weft's views, taken from PyTorch 1.13.

Run by hand only when adding cases (needs torch; the C tests do not):
  /usr/bin/python3 tests/c/gen_view_cases.py > tests/c/view_cases.inc
"""
import re
import torch

INT64_MAX = 2**63 - 1

# name: (storage numel, sizes, strides, offset)
BASES = {
    "B_CONTIG": (24, [2, 3, 4], [12, 4, 1], 0),
    "B_TRANSPOSED": (24, [4, 3, 2], [1, 4, 12], 0),
    "B_SLICED": (120, [2, 5, 2], [30, 6, 2], 31),
    "B_CHANNELS_LAST": (120, [2, 3, 4, 5], [60, 1, 15, 3], 0),
    "B_EXPANDED": (3, [2, 3, 4], [0, 1, 0], 0),
    "B_ZERO": (1, [2, 0, 3], [3, 3, 1], 0),
    "B_SCALAR": (1, [], [], 0),
    "B_VEC": (6, [6], [1], 0),
    "B_MAT": (6, [2, 3], [3, 1], 0),
    "B_ONES": (6, [1, 3, 1, 2], [6, 2, 2, 1], 0),
}


def base(name):
    n, sizes, strides, off = BASES[name]
    return torch.arange(n, dtype=torch.float32).as_strided(sizes, strides, off)


def op_call(t, op, a, b, s):
    f = {
        "OP_VIEW": lambda: t.view(a),
        "OP_RESHAPE": lambda: t.reshape(a),
        "OP_PERMUTE": lambda: t.permute(a),
        "OP_TRANSPOSE": lambda: t.transpose(s[0], s[1]),
        "OP_T": lambda: t.t(),
        "OP_EXPAND": lambda: t.expand(a),
        "OP_SQUEEZE": lambda: t.squeeze(),
        "OP_SQUEEZE_DIM": lambda: t.squeeze(s[0]),
        "OP_UNSQUEEZE": lambda: t.unsqueeze(s[0]),
        "OP_NARROW": lambda: t.narrow(s[0], s[1], s[2]),
        "OP_SLICE": lambda: torch.ops.aten.slice(t, s[0], s[1], s[2], s[3]),
        "OP_SELECT": lambda: t.select(s[0], s[1]),
        "OP_FLATTEN": lambda: t.flatten(s[0], s[1]),
        "OP_UNFLATTEN": lambda: t.unflatten(s[0], a),
        "OP_MOVEDIM": lambda: t.movedim(a, b),
        "OP_AS_STRIDED": lambda: t.as_strided(a, b, s[0]),
    }[op]
    return f()


# (base, op, list a, list b, scalars)
CASES = []


def case(bname, op, a=(), b=(), s=()):
    CASES.append((bname, op, list(a), list(b), list(s)))


ALL_BASES = list(BASES)

for bn in ALL_BASES:
    nd = len(BASES[bn][1])
    numel = 1
    for x in BASES[bn][1]:
        numel *= x
    case(bn, "OP_VIEW", [-1])
    case(bn, "OP_RESHAPE", [-1])
    case(bn, "OP_VIEW", [numel, 1])
    case(bn, "OP_VIEW", [1, -1, 1])
    case(bn, "OP_RESHAPE", [1, numel])
    case(bn, "OP_SQUEEZE")
    case(bn, "OP_FLATTEN", s=[0, -1])
    case(bn, "OP_T")
    for d in range(-nd - 2, nd + 2):
        case(bn, "OP_UNSQUEEZE", s=[d])
        case(bn, "OP_SQUEEZE_DIM", s=[d])
        case(bn, "OP_SELECT", s=[d, 0])
        case(bn, "OP_SELECT", s=[d, -1])
        case(bn, "OP_TRANSPOSE", s=[d, 0])
        case(bn, "OP_FLATTEN", s=[d, -1])
        case(bn, "OP_FLATTEN", s=[0, d])
        case(bn, "OP_NARROW", s=[d, 0, 1])
        case(bn, "OP_SLICE", s=[d, 1, INT64_MAX, 2])
    case(bn, "OP_PERMUTE", list(range(nd))[::-1])
    case(bn, "OP_MOVEDIM", [0], [-1])
    case(bn, "OP_EXPAND", [2] + BASES[bn][1])
    case(bn, "OP_EXPAND", [-1] * nd)
    case(bn, "OP_EXPAND", [1, 1] + [-1] * nd)

# view / reshape: computeStride on every kind of layout
for bn, shapes in {
    "B_CONTIG": [[4, 6], [2, 12], [24], [2, 3, 2, 2], [2, 1, 12, 1], [6, -1], [-1, 4], [2, -1, -1], [2, 5],
                 [-1, 0], [-2, 12], [5, -1], [2, 3, -3], [], [24, 1, 1, 1]],
    "B_TRANSPOSED": [[4, 6], [12, 2], [4, 3, 2, 1], [1, 4, 3, 2], [4, 3, 1, 2], [24]],
    "B_SLICED": [[10, 2], [2, 10], [2, 5, 2, 1], [20], [4, 5], [2, 5, 1, 2]],
    "B_CHANNELS_LAST": [[2, 3, 20], [2, 3, 4, 5, 1], [6, 20], [2, 60], [120], [2, 3, 2, 2, 5]],
    "B_EXPANDED": [[2, 12], [6, 4], [2, 3, 2, 2], [24], [2, 1, 3, 4], [4, 3, 2]],
    "B_ZERO": [[0], [0, 3], [3, 0], [-1, 3], [2, -1], [0, -1], [6, 0], [2, 0, 3], [1, 0, 1]],
    "B_SCALAR": [[], [1], [1, 1], [-1], [-1, 1], [2]],
    "B_VEC": [[2, 3], [3, 2], [6, 1], [1, 6], [-1, 2], [2, -1, 3]],
    "B_ONES": [[3, 2], [1, 6], [6], [3, 1, 2], [1, 1, 1, 1, 3, 2]],
}.items():
    for sh in shapes:
        case(bn, "OP_VIEW", sh)
        case(bn, "OP_RESHAPE", sh)

# permute / transpose / movedim
for bn, perms in {
    "B_CONTIG": [[2, 0, 1], [-1, 0, 1], [2, 0, -1], [3, 0, 1], [0, 1], [0, 0, 5], [5, 0, 0], [0, 1, 2, 3]],
    "B_CHANNELS_LAST": [[0, 2, 3, 1], [0, 3, 1, 2], [3, 2, 1, 0]],
    "B_SCALAR": [[], [0]],
    "B_ZERO": [[1, 2, 0]],
}.items():
    for p in perms:
        case(bn, "OP_PERMUTE", p)
for bn, pairs in {
    "B_CONTIG": [(0, 1), (-1, 0), (2, 2), (0, 3), (0, -4)],
    "B_SCALAR": [(0, 0), (0, -1), (-1, -1), (0, 1)],
    "B_CHANNELS_LAST": [(1, 3)],
}.items():
    for d0, d1 in pairs:
        case(bn, "OP_TRANSPOSE", s=[d0, d1])
for bn, moves in {
    "B_CONTIG": [([0], [2]), ([0, 1], [2, 0]), ([0, 1], [-1, -3]), ([], []), ([0], [5]), ([0, -3], [1, 2]),
                 ([0, 1], [1, 1]), ([0, 5], [0, 0]), ([0, 0], [5, 1]), ([2, 0], [0, 1])],
    "B_CHANNELS_LAST": [([1], [3]), ([3, 1], [1, 2]), ([-1, 0], [0, -1])],
    "B_SCALAR": [([0], [0]), ([0], [-1]), ([0], [1])],
}.items():
    for src, dst in moves:
        case(bn, "OP_MOVEDIM", src, dst)

# expand
for bn, sizes in {
    "B_CONTIG": [[2, 3, 4], [5, 2, 3, 4], [-1, -1, -1], [1, -1, 3, 4], [4], [2, 4, 4], [-1, 2, 3, 4],
                 [0, 2, 3, 4]],
    "B_ONES": [[5, 3, 7, 2], [2, 5, 3, 4, 2], [1, 1, 3, 1, 2], [-1, -1, -1, -1], [1, 0, 3, 1, 2], [3, 3, 1, 2]],
    "B_SCALAR": [[], [3], [1, 1], [3, 2]],
    "B_ZERO": [[2, 0, 3], [4, 2, 0, 3], [2, 1, 3]],
    "B_MAT": [[4], [2, 4], [1, 2, 3], [3, 1, 2, 3]],
    "B_EXPANDED": [[5, 2, 3, 4], [2, -1, 4]],
}.items():
    for sz in sizes:
        case(bn, "OP_EXPAND", sz)

# narrow / slice / select
for bn, args in {
    "B_VEC": [(0, 5, 2), (0, -2, 2), (0, 6, 0), (0, 7, 0), (0, -6, 6), (0, -7, 1), (0, 2, -1), (0, 0, 7),
              (1, 0, 1), (0, 0, 6)],
    "B_CONTIG": [(1, 1, 2), (-1, 2, 2), (2, 0, 0)],
    "B_ZERO": [(1, 0, 0), (1, 1, 0), (1, -1, 0), (1, 0, -1)],
    "B_SCALAR": [(0, 0, 1)],
    "B_CHANNELS_LAST": [(2, 1, 2), (1, 1, 2)],
}.items():
    for d, st, ln in args:
        case(bn, "OP_NARROW", s=[d, st, ln])
for bn, args in {
    "B_VEC": [(0, -100, 100, 1), (0, -2, INT64_MAX, 1), (0, 4, 2, 1), (0, 1, 6, 4), (0, 1, 6, 2), (0, 7, 9, 2),
              (0, -9, -7, 2), (0, 0, -1, 5), (0, 0, 6, 0), (0, 0, 6, -1), (0, INT64_MAX, INT64_MAX, 1),
              (1, 0, 1, 1)],  # huge steps and INT64_MIN overflow inside PyTorch: tested by hand
    "B_CONTIG": [(1, 1, 3, 1), (-1, 0, 4, 3), (0, 1, 2, 1)],
    "B_SLICED": [(1, 1, INT64_MAX, 2), (2, 1, 2, 1)],
    "B_ZERO": [(1, 0, 1, 1), (0, 1, 5, 1)],
    "B_SCALAR": [(0, 0, 1, 1)],
}.items():
    for d, st, en, step in args:
        case(bn, "OP_SLICE", s=[d, st, en, step])
for bn, args in {
    "B_VEC": [(0, 5), (0, 6), (0, -6), (0, -7)],
    "B_CONTIG": [(1, -1), (3, 0), (1, 3), (2, 3), (0, -2)],
    "B_ZERO": [(1, 0), (-1, 0), (-3, -3), (0, 1)],
    "B_SCALAR": [(0, 0)],
    "B_CHANNELS_LAST": [(1, 2), (3, 4)],
    "B_SLICED": [(0, 1), (1, 4), (2, 1)],
}.items():
    for d, i in args:
        case(bn, "OP_SELECT", s=[d, i])

# squeeze / unsqueeze / flatten / unflatten
for bn in ["B_ONES", "B_ZERO", "B_EXPANDED"]:
    for d in range(-5, 6):
        case(bn, "OP_SQUEEZE_DIM", s=[d])
for bn, args in {
    "B_CONTIG": [(1, 0), (-1, 0), (2, 1)],
    "B_TRANSPOSED": [(1, 2), (0, 1), (0, 2)],
    "B_SLICED": [(0, 1), (1, 2), (0, 2)],
    "B_CHANNELS_LAST": [(2, 3), (1, 2), (0, 1), (1, 3), (0, 3)],
    "B_EXPANDED": [(0, 1), (1, 2), (0, 2)],
    "B_ZERO": [(0, 1), (1, 2), (0, 2)],
    "B_SCALAR": [(0, 0), (-1, -1), (0, -1), (1, 1), (0, 1)],
}.items():
    for st, en in args:
        case(bn, "OP_FLATTEN", s=[st, en])
for bn, args in {
    "B_CONTIG": [(1, [3]), (1, [3, 1]), (2, [2, 2]), (-1, [2, -1]), (1, [-1, 3]), (1, [1, -1, 1]),
                 (1, [2, 2]), (1, [-1, -1]), (1, [0, -1]), (1, [-2, 3]), (1, []), (3, [1]), (2, [4, 1, 1])],
    "B_TRANSPOSED": [(0, [2, 2]), (2, [2, 1])],
    "B_CHANNELS_LAST": [(2, [2, 2]), (1, [3, 1]), (3, [5, 1])],
    "B_SLICED": [(1, [5, 1]), (2, [1, 2])],
    "B_EXPANDED": [(2, [2, 2]), (0, [1, 2])],
    "B_ZERO": [(1, [5, 0]), (1, [0, -1]), (1, [0, 0]), (0, [2, 1])],
    "B_SCALAR": [(0, [1]), (1, [1])],
}.items():
    for d, sz in args:
        case(bn, "OP_UNFLATTEN", sz, s=[d])

# as_strided against the base's storage (B_CONTIG: 96 bytes)
for bn, args in {
    "B_CONTIG": [([2, 2], [3, 1], 5), ([0, 2], [3, 1], 100), ([0], [1], 24), ([], [], 23), ([], [], 24),
                 ([30], [1], 0), ([2, 3], [1, -1], 0), ([2, 3], [1, 1], -1), ([2, 0], [1, 1], -1),
                 ([2, 3], [-1, 1], -1), ([2, 2], [0, 0], 23), ([3, 4], [8, 1], 4), ([3, 4], [8, 1], 5),
                 ([24], [1], 0)],
    "B_SLICED": [([2], [1], 0), ([120], [1], 0), ([121], [1], 0), ([60], [2], 1)],
}.items():
    for sz, st, off in args:
        case(bn, "OP_AS_STRIDED", sz, st, [off])


def c_list(v):
    return "{" + ", ".join({INT64_MAX: "INT64_MAX", -INT64_MAX - 1: "INT64_MIN"}.get(x, str(x)) for x in v) + "}" if v else "{0}"


LEGACY = {"Bool": "bool", "Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32", "Long": "int64",
          "Half": "float16", "BFloat16": "bfloat16", "Float": "float32", "Double": "float64"}


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def main():
    print("/* Generated by tests/c/gen_view_cases.py from PyTorch %s; do not edit. */" % torch.__version__)
    for bn, op, a, b, s in CASES:
        t = base(bn)
        try:
            r = op_call(t, op, a, b, s)
        except Exception as e:  # noqa: BLE001
            # weft names the op the user called where PyTorch names its sparse path
            msg = str(e).replace("permute(sparse_coo): ", "")
            # and names the dtype where expand prints a legacy type string
            msg = re.sub(r"torch\.(\w+)Tensor\{(\[[^\]]*\])\}",
                         lambda m: LEGACY[m.group(1)] + " tensor of shape " + m.group(2), msg)
            err = c_str(msg)
            sizes, strides, off, copied, chk, contig, cl = [], [], 0, 0, 0.0, 0, 0
        else:
            err = "NULL"
            sizes, strides, off = list(r.shape), list(r.stride()), r.storage_offset()
            copied = int(r.storage().data_ptr() != t.storage().data_ptr())
            # a value checksum over the logical order: sum((i + 1) * x[i]), exact in double
            flat = r.reshape(-1).double()
            chk = float((flat * torch.arange(1, flat.numel() + 1, dtype=torch.float64)).sum())
            contig = int(r.is_contiguous())
            cl = int(r.dim() == 4 and r.is_contiguous(memory_format=torch.channels_last))
        s4 = (s + [0, 0, 0, 0])[:4]
        print("{%s, %s, %s, %d, %s, %d, %s, %d, %s, %s, %d, %d, %r, %d, %d, %s}," % (
            bn, op, c_list(a), len(a), c_list(b), len(b), c_list(s4), len(sizes), c_list(sizes),
            c_list(strides), off, copied, chk, contig, cl, err))


main()
