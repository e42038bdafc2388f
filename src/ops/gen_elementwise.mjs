#!/usr/bin/env node
// Expands the elementwise op table (src/ops/elementwise_table.h, EW_OPS) into
// the files the preprocessor cannot write, as torchgen does from
// native_functions.yaml:
//   src/ops/elementwise.def          WEFT_OP lines, PyTorch 1.13's schemas
//                                    (format: src/dispatch/opgen.h)
//   src/ops/elementwise_kernels.inc  one CPU/Meta kernel per schema, each a
//                                    call of weft__ew (elementwise.c)
//   include/weft/elementwise.h       the public prototypes of the dispatching
//                                    entry points (weft_add, weft_add_, ...)
// Run by scripts/build.sh (npm run build) before compiling:
//   node src/ops/gen_elementwise.mjs           writes the files that changed
//   node src/ops/gen_elementwise.mjs --check   lists the stale ones, exits 1
//   node src/ops/gen_elementwise.mjs --json    the table with every overload
//                                              (tests/fixtures/gen_ops_fixtures.py)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const TABLE = 'src/ops/elementwise_table.h';
const SELF = 'src/ops/gen_elementwise.mjs';

export const read = (path) => readFileSync(ROOT + path, 'utf8');

// ---- C source scanning ----

// The text without comments (string literals kept as they are).
export function stripComments(text) {
  return text.replace(/"(?:[^"\\\n]|\\.)*"|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (m) => (m[0] === '"' ? m : ' '));
}

// Every call of macro `name` in text: its arguments, split at top-level commas.
export function macroCalls(text, name) {
  const calls = [];
  const re = new RegExp(`\\b${name}\\(`, 'g');
  for (let m; (m = re.exec(text));) {
    const args = [];
    let depth = 0;
    let start = re.lastIndex;
    let i = start;
    for (; i < text.length; i++) {
      const c = text[i];
      if (c === '"') {
        for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      } else if (c === '(') {
        depth++;
      } else if (c === ')' && depth-- === 0) {
        break;
      } else if (c === ',' && depth === 0) {
        args.push(text.slice(start, i).trim());
        start = i + 1;
      }
    }
    args.push(text.slice(start, i).trim());
    calls.push(args);
    re.lastIndex = i + 1;
  }
  return calls;
}

// The value of adjacent C string literals ("a" "b" -> ab); null for anything else (NULL).
export function cString(src) {
  if (!src.startsWith('"')) return null;
  return src.match(/"(?:[^"\\]|\\.)*"/g).map((s) => JSON.parse(s)).join('');
}

// ---- schemas ----

// PyTorch's schema syntax, as far as weft's op tables use it.
export function parseSchema(schema) {
  const m = /^([\w]+)(?:\.(\w+))?\((.*)\) -> (.+)$/.exec(schema);
  if (!m) throw new Error(`cannot parse schema: ${schema}`);
  const [, base, overload = '', inner, ret] = m;
  const args = [];
  let kwargOnly = false;
  for (const part of splitTop(inner)) {
    if (part === '*') {
      kwargOnly = true;
      continue;
    }
    // Tensor?[]: a list of optional elements (elemOptional); int[]?: an optional list
    const a = /^(\w+)(\([a-z](?: -> \*)?!?\))?(\?)?(\[\d*\])?(\?)?(\([a-z]!?\))? (\w+)(?:=(.*))?$/.exec(part);
    if (!a) throw new Error(`cannot parse argument '${part}' of ${schema}`);
    const [, type, alias1, elemOpt, list, optional, alias2, name, dflt] = a;
    const alias = alias1 || alias2 || '';
    args.push({
      text: part, type, name, kwargOnly,
      list: !!list, listSize: list && list.length > 2 ? Number(list.slice(1, -1)) : 0,
      optional: !!optional || (!!elemOpt && !list), elemOptional: !!elemOpt && !!list,
      alias: !!alias, write: alias.includes('!'),
      default: dflt,
    });
  }
  return { schema, base, overload, name: overload ? `${base}.${overload}` : base, args, returns: ret };
}

function splitTop(s) {
  const out = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if ('([{'.includes(s[i])) depth++;
    else if (')]}'.includes(s[i])) depth--;
    else if (s[i] === ',' && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (s.trim()) out.push(s.slice(start).trim());
  return out;
}

// ---- the table ----

export function readTable(text = read(TABLE)) {
  const body = /#define EW_OPS\(X\)((?:[^\n]*\\\n)*[^\n]*)/.exec(stripComments(text));
  if (!body) throw new Error(`${TABLE}: no EW_OPS(X)`);
  return macroCalls(body[1].replace(/\\\n/g, ' '), 'X').map(([name, build, dtypes, args, overloads, kname,
    refused, simd]) => {
    const op = { name, build, dtypes, args: cString(args), kname: cString(kname), refused, simd };
    const parts = splitTop(op.args);
    const star = parts.indexOf('*');
    // positional: the Tensor operands and the numbers between or after them
    // (leaky_relu's negative_slope, elu_backward's is_result), in schema order
    op.positional = (star < 0 ? parts : parts.slice(0, star)).map((p) => {
      const [type, n] = p.split(' ');
      if (!n) throw new Error(`${name}: argument '${p}' is not '<type> <name>'`);
      if (type !== 'Tensor' && !PARAM_TYPES.has(type)) throw new Error(`${name}: '${p}' is no Tensor, Scalar or bool`);
      return { text: p, type, name: n.replace(/=.*/, '') };
    });
    op.operands = op.positional.filter((a) => a.type === 'Tensor').map((a) => a.name);
    op.params = op.positional.filter((a) => a.type !== 'Tensor').map((a) => a.name);
    if (op.params.length > 4) throw new Error(`${name}: more than 4 number arguments (ew_params.sp)`);
    op.kwargs = star < 0 ? [] : parts.slice(star + 1);
    op.overloads = cString(overloads).split(/\s+/).map((token) => overload(op, token));
    return op;
  });
}

// The types of positional number arguments (passed to weft__ew as doubles, ew_params.sp).
const PARAM_TYPES = new Set(['Scalar', 'bool', 'float']);

// Operand kinds (T Tensor, S Scalar) an overload name stands for.
const ALL_TENSORS = new Set(['default', 'Tensor', 'Tensor_Tensor', 'self']);
const NAMED_KINDS = { Tensor_Scalar: 'TS', Scalar_Tensor: 'ST', ScalarSelf: 'TST', ScalarOther: 'TTS' };
// ... and the C name's suffix for those kinds
const KIND_SUFFIX = { TS: '_scalar', ST: '_scalar_tensor', TST: '_scalar_self', TTS: '_scalar_other', TSS: '_scalar' };

// One table token (_Scalar, Scalar_out:ST, _Tensor=fill_tensor_) -> its schema and C name.
function overload(op, token) {
  const fail = (why) => {
    throw new Error(`${TABLE}: ${op.name}: overload '${token}': ${why}`);
  };
  const inplace = token.startsWith('_');
  const [spec, cnameGiven] = token.slice(inplace ? 1 : 0).split('=');
  const [ov, kindsGiven] = spec.split(':');
  const out = ov === 'out' || ov.endsWith('_out');
  const stem = ov === 'out' ? 'default' : ov.replace(/_out$/, '');
  const n = op.operands.length;
  const kinds = kindsGiven ?? (ALL_TENSORS.has(stem) ? 'T'.repeat(n)
    : stem === 'Scalar' ? 'T' + 'S'.repeat(n - 1) : NAMED_KINDS[stem]);
  if (!kinds) fail('which operands are Scalars? Say it: <overload>:<T or S per operand>');
  if (kinds.length !== n) fail(`${n} operands, kinds '${kinds}'`);
  if (inplace && kinds[0] !== 'T') fail('in place on a Scalar');
  const suffix = kinds.includes('S') ? KIND_SUFFIX[kinds] : '';
  if (suffix === undefined) fail(`no C name for operand kinds ${kinds}: give one (<overload>=<cname>)`);
  let k = 0;
  const args = op.positional.map((a) => {
    if (a.type !== 'Tensor') return a.text;
    const i = k++;
    return `${kinds[i] === 'S' ? 'Scalar' : inplace && i === 0 ? 'Tensor(a!)' : 'Tensor'} ${a.name}`;
  });
  // kwargs are keyword-only, except beside a Scalar operand (add.Scalar(Tensor self, Scalar other, Scalar alpha=1))
  if (op.kwargs.length) args.push(...(kinds.includes('S') ? [] : ['*']), ...op.kwargs);
  if (out) args.push(...(args.includes('*') ? [] : ['*']), 'Tensor(a!) out');
  const base = op.name.replace(/_$/, '');
  const name = `${base}${inplace ? '_' : ''}${ov === 'default' ? '' : `.${ov}`}`;
  return {
    name, kinds, inplace, out,
    schema: `${name}(${args.join(', ')}) -> ${inplace || out ? 'Tensor(a!)' : 'Tensor'}`,
    cname: cnameGiven ?? `${base}${suffix}${inplace ? '_' : ''}${out ? '_out' : ''}`,
  };
}

// ---- outputs ----

const KIND = { Tensor: 'TENSOR', 'Tensor(a!)': 'MTENSOR', Scalar: 'SCALAR', str: 'STRING', bool: 'BOOL', float: 'DOUBLE' };
const CTYPE = { TENSOR: 'const weft_tensor*', MTENSOR: 'weft_tensor*', SCALAR: 'weft_scalar', STRING: 'const char*',
  BOOL: 'bool', DOUBLE: 'double' };
// a number argument as the double weft__ew reads (ew_params.sp)
const AS_DOUBLE = { SCALAR: (n) => `weft_scalar_to_double(${n})`, BOOL: (n) => `(double)${n}`, DOUBLE: (n) => n };
// weft__ew's parameters besides the operands, and their defaults
const EW_EXTRA = { alpha: 'weft_scalar_int(1)', approximate: 'NULL' };

function cArgs(ov) {
  return parseSchema(ov.schema).args.map((a) => {
    const kind = KIND[a.write ? 'Tensor(a!)' : a.type];
    if (!kind || a.list || a.optional) throw new Error(`${ov.name}: no C kind for '${a.text}'`);
    return { ...a, kind, param: `${CTYPE[kind]} ${a.name}` };
  });
}

function defLine(ov) {
  const kinds = cArgs(ov).map((a) => `(${a.kind}, ${a.name})`).join(', ');
  return `WEFT_OP(${ov.cname}, ${JSON.stringify(ov.schema)}, ${ov.inplace ? 'STATUS' : 'TENSOR'}, ${kinds})`;
}

function kernelLine(op, ov) {
  const args = cArgs(ov);
  const extra = { ...EW_EXTRA };
  const ins = [];
  const sp = [];
  for (const a of args) {
    if (a.name === 'out') continue;
    if (op.params.includes(a.name)) sp.push(AS_DOUBLE[a.kind](a.name));
    else if (a.name in extra) extra[a.name] = a.name;
    else if (op.operands.includes(a.name)) ins.push(a.kind === 'SCALAR' ? `EW_S(${a.name})` : `EW_T(${a.name})`);
    else throw new Error(`${ov.name}: weft__ew takes no '${a.name}'`);
  }
  const mode = ov.inplace ? 'EW_INPLACE' : ov.out ? 'EW_OUT' : 'EW_FUNCTIONAL';
  const dst = ov.inplace ? op.operands[0] : ov.out ? 'out' : 'NULL';
  const call = `weft__ew(EW_${op.name}, ${mode}, ${dst}, ${ins.length}, (ew_in[]){${ins.join(', ')}}, ` +
    `${extra.alpha}, ${extra.approximate}, ${sp.length ? `(const double[4]){${sp.join(', ')}}` : 'NULL'})`;
  const ret = ov.inplace ? 'weft_status' : 'weft_tensor*';
  const body = ov.inplace ? `return weft__ew_status(${call});` : `return ${call};`;
  return `EW_KERNEL(${ov.cname}, ${ret}, (${args.map((a) => a.param).join(', ')}), ${body})`;
}

const HEADER_TOP = `/* Elementwise ops (PyTorch 1.13 semantics): the dispatching entry points
 * of src/ops/elementwise.def. Generated by ${SELF} from
 * ${TABLE}; do not edit.
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

`;
const HEADER_BOTTOM = `
#ifdef __cplusplus
}
#endif
#endif
`;

// path -> content of every file this generator writes.
export function generate(table = readTable()) {
  const rows = table.flatMap((op) => op.overloads.map((ov) => [op, ov]));
  const cnames = rows.map(([, ov]) => ov.cname);
  const dup = cnames.find((c, i) => cnames.indexOf(c) !== i);
  if (dup) throw new Error(`${TABLE}: two overloads are weft_${dup}`);
  const def = `/* The elementwise ops of issue 5, PyTorch 1.13's schemas. Generated by
 * ${SELF} from ${TABLE}; do not edit.
 * Format: src/dispatch/opgen.h. Out variants return the out tensor (a new
 * reference); in-place ones a status. */
${rows.map(([, ov]) => defLine(ov) + '\n').join('')}`;
  const kernels = `/* Generated by ${SELF} from ${TABLE}; do not edit.
 * One kernel per elementwise.def line: EW_KERNEL(cname, return type, (params), body).
 * EW_TABLE_OPS: the number of table lines it was made from. */
EW_TABLE_OPS(${table.length})
${rows.map(([op, ov]) => kernelLine(op, ov) + '\n').join('')}`;
  const header = HEADER_TOP + rows.map(([, ov]) => {
    const params = cArgs(ov).map((a) => a.param).join(', ');
    return `/* ${ov.schema} */\n${ov.inplace ? 'weft_status' : 'weft_tensor*'} weft_${ov.cname}(${params});\n`;
  }).join('') + HEADER_BOTTOM;
  return new Map([
    ['src/ops/elementwise.def', def],
    ['src/ops/elementwise_kernels.inc', kernels],
    ['include/weft/elementwise.h', header],
  ]);
}

// Writes the files whose content changed (check: only lists them). Returns the stale paths.
export function emit(files, { check = false, log = console.log } = {}) {
  const stale = [];
  for (const [path, text] of files) {
    let old = null;
    try {
      old = read(path);
    } catch {
      // a new file
    }
    if (old === text) continue;
    stale.push(path);
    if (!check) {
      writeFileSync(ROOT + path, text);
      log(`generated ${path}`);
    }
  }
  return stale;
}

// The CLI of a generator: write, --check or (given a json producer) --json.
export function main(generateFiles, json) {
  const flag = process.argv[2];
  if (flag === '--json' && json) {
    process.stdout.write(JSON.stringify(json(), null, 1) + '\n');
    return;
  }
  if (flag && flag !== '--check') {
    console.error(`usage: node ${process.argv[1]} [--check${json ? ' | --json' : ''}]`);
    process.exit(2);
  }
  const stale = emit(generateFiles(), { check: flag === '--check' });
  if (flag === '--check' && stale.length) {
    console.error(`stale (npm run build regenerates): ${stale.join(', ')}`);
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(generate, () => readTable().map(({ name, build, dtypes, operands, kwargs, overloads }) => ({
    name, build, dtypes, operands, overloads,
    kwargs: kwargs.map((k) => {
      const { type, name: n, default: dflt } = parseSchema(`x(${k}) -> Tensor`).args[0];
      return { type, name: n, default: dflt };
    }),
  })));
}
