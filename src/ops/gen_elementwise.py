#!/usr/bin/env python3
"""Generates the elementwise op table (issue 5), like torchgen does from
native_functions.yaml. Any python3; no torch needed. Run from the repo root:
    python3 src/ops/gen_elementwise.py
Writes
    src/ops/elementwise.def          WEFT_OP lines (format: src/dispatch/opgen.h)
    src/ops/elementwise_kernels.inc  one CPU/Meta kernel per line of the table,
                                     each a call of weft__ew (elementwise.c)
    include/weft/elementwise.h       the public prototypes of the dispatching
                                     entry points (weft_add, weft_add_, ...)
The schemas are PyTorch 1.13's, verbatim.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

TS = "Tensor self, Tensor other"
BIN = {
    # op: [(overload, args-after-self...)]; A = alpha
    "add": "TA SA _TA _SA outA Scalar_outA",
    "sub": "TA SA _TA _SA outA Scalar_outA",
    "mul": "T S _T _S out Scalar_out",
    "div": "T S _T _S out Scalar_out",
    "floor_divide": "default S _T _S out",
    "remainder": "T S _T _S Tensor_out Scalar_out Scalar_Tensor",
    "pow": "",  # below
    "maximum": "default out",
    "minimum": "default out",
    "eq": "T S _T _S Tensor_out Scalar_out",
    "ne": "T S _T _S Tensor_out Scalar_out",
    "lt": "T S _T _S Tensor_out Scalar_out",
    "le": "T S _T _S Tensor_out Scalar_out",
    "gt": "T S _T _S Tensor_out Scalar_out",
    "ge": "T S _T _S Tensor_out Scalar_out",
    "logical_and": "default _default out",
    "logical_or": "default _default out",
    "logical_xor": "default _default out",
    "bitwise_and": "T S _T _S Tensor_out Scalar_out Scalar_Tensor",
    "bitwise_or": "T S _T _S Tensor_out Scalar_out Scalar_Tensor",
    "bitwise_xor": "T S _T _S Tensor_out Scalar_out Scalar_Tensor",
}
UNARY = ["neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan",
         "tanh", "sigmoid", "relu", "gelu", "erf", "floor", "ceil", "round", "trunc", "reciprocal",
         "logical_not"]

ALPHA = "Scalar alpha=1"
OUT = "Tensor(a!) out"


def binary_schemas(op, spec):
    rows = []  # (schema, cname)
    for s in spec.split():
        alpha = s.endswith("A") and s not in ("default",)
        s = s[:-1] if alpha else s
        al = ", *, " + ALPHA if alpha else ""
        al_s = ", " + ALPHA if alpha else ""
        if s == "T":
            rows.append((f"{op}.Tensor({TS}{al}) -> Tensor", op))
        elif s == "default":
            rows.append((f"{op}({TS}) -> Tensor", op))
        elif s == "S":
            rows.append((f"{op}.Scalar(Tensor self, Scalar other{al_s}) -> Tensor", op + "_scalar"))
        elif s == "_T":
            rows.append((f"{op}_.Tensor(Tensor(a!) self, Tensor other{al}) -> Tensor(a!)", op + "_"))
        elif s == "_default":
            rows.append((f"{op}_(Tensor(a!) self, Tensor other) -> Tensor(a!)", op + "_"))
        elif s == "_S":
            rows.append((f"{op}_.Scalar(Tensor(a!) self, Scalar other{al_s}) -> Tensor(a!)", op + "_scalar_"))
        elif s in ("out", "Tensor_out"):
            kw = f", *, {ALPHA}, {OUT}" if alpha else f", *, {OUT}"
            rows.append((f"{op}.{s}({TS}{kw}) -> Tensor(a!)", op + "_out"))
        elif s == "Scalar_out":
            kw = f", {ALPHA}, *, {OUT}" if alpha else f", *, {OUT}"
            rows.append((f"{op}.Scalar_out(Tensor self, Scalar other{kw}) -> Tensor(a!)", op + "_scalar_out"))
        elif s == "Scalar_Tensor":
            rows.append((f"{op}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", op + "_scalar_tensor"))
        else:
            raise ValueError(s)
    return rows


def all_schemas():
    rows = []
    for op, spec in BIN.items():
        if op == "pow":
            rows += [
                ("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", "pow"),
                ("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", "pow_scalar"),
                ("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", "pow_scalar_tensor"),
                ("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", "pow_"),
                ("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", "pow_scalar_"),
                ("pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)", "pow_out"),
                ("pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)",
                 "pow_scalar_out"),
                ("pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
                 "pow_scalar_tensor_out"),
            ]
        else:
            rows += binary_schemas(op, spec)
    for op in UNARY:
        kw = ', *, str approximate="none"' if op == "gelu" else ""
        rows.append((f"{op}(Tensor self{kw}) -> Tensor", op))
        rows.append((f"{op}_(Tensor(a!) self{kw}) -> Tensor(a!)", op + "_"))
        out_kw = ', *, str approximate="none", ' + OUT if op == "gelu" else ", *, " + OUT
        rows.append((f"{op}.out(Tensor self{out_kw}) -> Tensor(a!)", op + "_out"))
    rows += [
        ("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", "where"),
        ("where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor", "where_scalar_self"),
        ("where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor", "where_scalar_other"),
        ("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor", "where_scalar"),
        ("where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
         "where_out"),
        # fill_.Scalar is ops.def's fill_ (weft_fill_(self, double)); elementwise.c registers its kernel
        ("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", "fill_tensor_"),
        ("zero_(Tensor(a!) self) -> Tensor(a!)", "zero_"),
    ]
    return rows


def parse_args(schema):
    inner = schema[schema.index("(") + 1:schema.index(") ->")]
    out = []
    for a in inner.split(","):
        a = a.strip()
        if a == "*":
            continue
        ty, name = a.split("=")[0].split()
        out.append((ty, name))
    return out


KIND = {"Tensor": "TENSOR", "Tensor(a!)": "MTENSOR", "Scalar": "SCALAR", "str": "STRING"}
CTYPE = {"TENSOR": "const weft_tensor*", "MTENSOR": "weft_tensor*", "SCALAR": "weft_scalar",
         "STRING": "const char*"}


def ew_op_id(schema):
    name = schema.split("(")[0].split(".")[0].rstrip("_")
    return "EW_" + name.upper()


def kernel(schema, cname):
    args = parse_args(schema)
    mode = "EW_INPLACE" if "(a!) self" in schema else "EW_OUT" if "(a!) out" in schema else "EW_FUNCTIONAL"
    ret = "weft_status" if mode == "EW_INPLACE" else "weft_tensor*"
    params = ", ".join(f"{CTYPE[KIND[t]]} {n}" for t, n in args)
    ins, dst, alpha, approx = [], "NULL", "weft_scalar_int(1)", "NULL"
    for t, n in args:
        if n == "out":
            dst = "out"
        elif n == "alpha":
            alpha = "alpha"
        elif n == "approximate":
            approx = "approximate"
        elif t == "Scalar":
            ins.append(f"EW_S({n})")
        else:
            ins.append(f"EW_T({n})")
            if t == "Tensor(a!)":
                dst = n
    call = (f"weft__ew({ew_op_id(schema)}, {mode}, {dst}, {len(ins)}, (ew_in[]){{{', '.join(ins)}}}, "
            f"{alpha}, {approx})")
    if mode == "EW_INPLACE":
        body = f"return weft__ew_status({call});"
    else:
        body = f"return {call};"
    return f"EW_KERNEL({cname}, {ret}, ({params}), {body})"


def wefop(schema, cname):
    args = parse_args(schema)
    ret = "STATUS" if "(a!) self" in schema else "TENSOR"
    kinds = ", ".join(f"({KIND[t]}, {n})" for t, n in args)
    esc = schema.replace('"', '\\"')
    return f'WEFT_OP({cname}, "{esc}", {ret}, {kinds})'


def main():
    rows = all_schemas()
    names = [c for _, c in rows]
    assert len(names) == len(set(names)), "duplicate cname"
    with open(os.path.join(HERE, "elementwise.def"), "w") as f:
        f.write("/* The elementwise ops of issue 5, PyTorch 1.13's schemas. Generated by\n"
                " * src/ops/gen_elementwise.py; do not edit. Format: src/dispatch/opgen.h.\n"
                " * Out variants return the out tensor (a new reference); in-place ones a status. */\n")
        for s, c in rows:
            f.write(wefop(s, c) + "\n")
    with open(os.path.join(HERE, "elementwise_kernels.inc"), "w") as f:
        f.write("/* Generated by src/ops/gen_elementwise.py; do not edit. One kernel per\n"
                " * elementwise.def line: EW_KERNEL(cname, return type, (params), body). */\n")
        for s, c in rows:
            f.write(kernel(s, c) + "\n")
    root = os.path.dirname(os.path.dirname(HERE))
    with open(os.path.join(root, "include", "weft", "elementwise.h"), "w") as f:
        f.write(HEADER_TOP)
        for s, c in rows:
            args = parse_args(s)
            ret = "weft_status" if "(a!) self" in s else "weft_tensor*"
            params = ", ".join(f"{CTYPE[KIND[t]]} {n}" for t, n in args)
            f.write(f"/* {s} */\n{ret} weft_{c}({params});\n")
        f.write(HEADER_BOTTOM)
    print(len(rows), "ops")


HEADER_TOP = """/* Elementwise ops (PyTorch 1.13 semantics): the dispatching entry points
 * of src/ops/elementwise.def. Generated by src/ops/gen_elementwise.py; do
 * not edit.
 *
 * Functional forms return a new tensor; in-place forms (name_) return a
 * status and mutate self; out forms (name_out) write into out (resized when
 * its shape differs) and return a new reference to it. NULL / a status with
 * weft_last_error() on failure. Python numbers are weft_scalar
 * (weft_scalar_int / _double / _bool), promoted as PyTorch's wrapped numbers.
 * gelu's approximate is "none" or "tanh". fill_.Scalar is weft_fill_
 * (weft/tensor.h). */
#ifndef WEFT_ELEMENTWISE_H
#define WEFT_ELEMENTWISE_H

#include "weft/dispatch.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

"""
HEADER_BOTTOM = """
#ifdef __cplusplus
}
#endif
#endif
"""


if __name__ == "__main__":
    main()
