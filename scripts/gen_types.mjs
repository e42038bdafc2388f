#!/usr/bin/env node
// The TypeScript declarations of the op table: js/optable.d.ts, from every
// schema of src/ops/ops.def (with the elementwise.def it includes, as
// src/ops/gen_elementwise.mjs makes it now). Each operator gets what js/ops.js
// makes of it at init, by the same rules (camel, NOT_METHODS):
//   wt.<camelName>(...)   every operator whose name has no trailing _
//   t.<camelName>(...)    operators with a Tensor self, which t stands for
// Overloads of one name merge: out= ones add { out } to the options; one that
// another accepts in full goes; a shorter one becomes optional parameters.
// Tensor arguments take JS numbers too (Operand), except aliased ones (views,
// in-place and out= tensors). The hand-written API (js/core.js) keeps its own
// declarations (js/weft.d.ts), as it wins at run time.
// Run by scripts/build.sh (npm run build):
//   node scripts/gen_types.mjs           writes js/optable.d.ts when it changed
//   node scripts/gen_types.mjs --check   exits 1 when it is stale
import { fileURLToPath } from 'node:url';

import { camel, namespaced, NOT_METHODS } from '../js/ops.js';
import { cString, generate as generateElementwise, macroCalls, main, parseSchema, read, stripComments }
  from '../src/ops/gen_elementwise.mjs';

const OUT = 'js/optable.d.ts';

// Every schema of the op table, in registry order (#include "ops/x.def" expanded).
function schemas(generated) {
  const expand = (path) => stripComments(generated.get(path) ?? read(path))
    .replace(/#include\s+"([^"]+\.def)"/g, (_, inc) => expand(`src/${inc}`));
  return macroCalls(expand('src/ops/ops.def'), 'WEFT_OP').map((args) => parseSchema(cString(args[1])));
}

// ---- types: a type is a list of atoms, printed as a union ----

const OPERAND = ['Tensor', 'number', 'boolean', 'bigint'];
const SCALAR = ['number', 'boolean', 'bigint'];
const SIMPLE = {
  float: ['number'], bool: ['boolean'], Scalar: SCALAR, ScalarType: ['DTypeName'],
  MemoryFormat: ['MemoryFormat'], Device: ['Device'], str: ['string'],
};
const isIntList = (a) => a.list && (a.type === 'int' || a.type === 'SymInt');

function atoms(a) {
  let t;
  if (a.type === 'Tensor') t = a.list ? [a.elemOptional ? 'readonly (Tensor | null)[]' : 'readonly Tensor[]'] : a.alias ? ['Tensor'] : OPERAND;
  else if (a.type === 'int' || a.type === 'SymInt') t = !a.list ? ['number'] : a.listSize ? ['number', 'Shape'] : ['Shape'];
  else if (a.type === 'bool' && a.list) t = ['readonly boolean[]'];
  else t = SIMPLE[a.type];
  // an index argument takes an array of integers too (js/traps.js)
  if (a.type === 'Tensor' && !a.list && !a.alias && a.name === 'index') t = [...t, 'IndexArray'];
  if (!t) throw new Error(`${OUT}: no TypeScript type for '${a.text}'`);
  return a.optional ? [...t, 'null'] : t;
}

function render(t) {
  for (const [group, name] of [[OPERAND, 'Operand'], [SCALAR, 'Scalar']]) {
    if (group.every((x) => t.includes(x))) return [name, ...t.filter((x) => !group.includes(x))].join(' | ');
  }
  return t.join(' | ');
}

const within = (a, b) => a.every((x) => b.includes(x));
const sameType = (a, b) => within(a, b) && within(b, a);

// ---- signatures ----

// One overload as a TS signature: positional parameters and the options object
// (kwarg-only arguments). method: without self.
function signature(op, method) {
  const params = [];
  const options = new Map();
  // several out= tensors also go as { out: [a, b] } (js/ops.js bindOuts)
  const outs = op.args.filter((a) => a.kwargOnly && a.write && a.type === 'Tensor' && !a.list);
  if (outs.length > 1) options.set('out', [`readonly [${outs.map(() => 'Tensor').join(', ')}]`]);
  for (const a of op.args) {
    if (method && a.name === 'self') continue;
    if (a.kwargOnly) options.set(camel(a.name), atoms(a));
    else params.push({ name: camel(a.name), type: atoms(a), optional: a.default !== undefined || a.optional, arg: a });
  }
  for (let i = params.length - 1, required = false; i >= 0; i--) {
    required ||= !params[i].optional;
    if (required) params[i].optional = false;
  }
  // view(x, 2, 3): the first int list takes its values as arguments (js/ops.js bind); declared
  // so when it ends the positional arguments
  const first = params.find((p) => isIntList(p.arg));
  if (first && first === params[params.length - 1] && !options.size && !first.arg.listSize) {
    Object.assign(first, { rest: true, type: ['ShapeArgs'] });
  }
  return { params, options, names: [op.name], returns: returnType(op.returns) };
}

// `Tensor`, `Tensor[]`; several tensors as js/ops.js gives them: named ones an object with those names
// (Returns<'values' | 'indices'>, also iterable), unnamed ones a tuple; anything else OpResult.
function returnType(text) {
  const tensor = /^Tensor(\([a-z]!?\))?$/;
  if (tensor.test(text)) return 'Tensor';
  if (/^Tensor(\([a-z]!?\))?\[\]$/.test(text)) return 'Tensor[]';
  const m = /^\((.*)\)$/.exec(text);
  const parts = m ? m[1].split(',').map((p) => p.trim().split(' ')) : [];
  if (!parts.length || !parts.every(([t]) => tensor.test(t))) return 'OpResult';
  if (parts.every((p) => p.length === 2)) return `Returns<${parts.map((p) => `'${camel(p[1])}'`).join(' | ')}>`;
  // three unnamed: convolution_backward's, null where output_mask leaves one undefined
  if (parts.length === 3) return `[${parts.map(() => 'Tensor | null').join(', ')}]`;
  return `[${parts.map(() => 'Tensor').join(', ')}]`;
}

const sameParam = (p, q) => !!p.rest === !!q.rest && p.optional === q.optional;

// b takes every call a takes (same shape, wider or equal types and options).
function covers(b, a) {
  return b.params.length === a.params.length &&
    a.params.every((p, i) => sameParam(p, b.params[i]) && within(p.type, b.params[i].type)) &&
    [...a.options].every(([k, t]) => b.options.has(k) && within(t, b.options.get(k))) && a.returns === b.returns;
}

// a is b without b's last parameters (squeeze(self) and squeeze(self, dim)).
function prefixOf(a, b) {
  return a.params.length < b.params.length && a.returns === b.returns &&
    a.params.every((p, i) => sameParam(p, b.params[i]) && sameType(p.type, b.params[i].type)) &&
    a.options.size === b.options.size && [...a.options].every(([k, t]) => b.options.has(k) && sameType(t, b.options.get(k)));
}

function merge(sigs) {
  let out = [];
  for (const s of sigs) {
    // the same parameters (add.Tensor and add.out): one signature, the options of both
    const same = out.find((o) => o.returns === s.returns && o.params.length === s.params.length &&
      s.params.every((p, i) => sameParam(p, o.params[i]) && sameType(p.type, o.params[i].type)));
    if (!same) {
      out.push({ ...s, options: new Map(s.options), names: [...s.names] });
      continue;
    }
    for (const [k, t] of s.options) same.options.set(k, [...new Set([...(same.options.get(k) ?? []), ...t])]);
    same.names.push(...s.names);
  }
  for (let changed = true; changed;) {
    changed = false;
    for (const a of out) {
      const b = out.find((o) => o !== a && (covers(o, a) || prefixOf(a, o)));
      if (!b) continue;
      if (prefixOf(a, b)) for (const p of b.params.slice(a.params.length)) p.optional = true;
      b.names.push(...a.names);
      out = out.filter((o) => o !== a);
      changed = true;
      break;
    }
  }
  // the widest last (mapped types such as WorkerTensor see the last signature)
  return out.map((s, i) => [s, i]).sort(([a, i], [b, j]) => b.params.length - a.params.length || i - j).map(([s]) => s);
}

function member(name, sigs) {
  const names = [...new Set(sigs.flatMap((s) => s.names))];
  const lines = merge(sigs).map((s) => {
    const ps = s.params.map((p) => `${p.rest ? '...' : ''}${p.name}${p.optional && !p.rest ? '?' : ''}: ${render(p.type)}`);
    if (s.options.size) ps.push(`options?: { ${[...s.options].map(([k, t]) => `${k}?: ${render(t)}`).join('; ')} }`);
    return `  ${name}(${ps.join(', ')}): ${s.returns};`;
  });
  return [`  /** ${names.join(', ')} */`, ...lines].join('\n');
}

// ---- the file ----

export function generate(generated = generateElementwise()) {
  const ops = schemas(generated);
  const byBase = new Map();
  for (const op of ops) {
    if (!byBase.has(op.base)) byBase.set(op.base, []);
    byBase.get(op.base).push(op);
  }
  const functions = [];
  const methods = [];
  const spaces = new Map();
  for (const [base, cands] of byBase) {
    const name = camel(base);
    const ns = namespaced(base);
    if (ns) {
      if (!spaces.has(ns[0])) spaces.set(ns[0], []);
      spaces.get(ns[0]).push(member(ns[1], cands.map((op) => signature(op, false))));
      continue;
    }
    if (!base.endsWith('_')) functions.push(member(name, cands.map((op) => signature(op, false))));
    const withSelf = cands.filter((op) => op.args.some((a) => a.name === 'self' && a.type === 'Tensor' && !a.list));
    if (withSelf.length && !NOT_METHODS.has(base)) methods.push(member(name, withSelf.map((op) => signature(op, true))));
  }
  const names = [...new Set(ops.flatMap((op) => [op.base, op.name]))].map((n) => `'${n}'`);
  const nameLines = [];
  for (let i = 0; i < names.length; i += 8) nameLines.push(`  | ${names.slice(i, i + 8).join(' | ')}`);
  const body = [...functions, ...methods, ...[...spaces.values()].flat()].join('\n');
  const spaceText = [...spaces].map(([ns, members]) => `
/** wt.${ns}.<name>(...): the operators of torch.${ns} (op table names ${ns}_<name>). */
export interface ${ns[0].toUpperCase()}${ns.slice(1)}Functions {
${members.join('\n')}
}
`).join('');
  const used = (t) => new RegExp(`\\b${t}\\b`).test(body);
  const weftTypes = ['Device', 'DTypeName', 'MemoryFormat', 'Shape', 'ShapeArgs', 'Tensor'].filter(used);
  const opsTypes = ['IndexArray', 'OpResult', 'Operand', 'Returns', 'Scalar'].filter(used);
  const text = `// Generated by scripts/gen_types.mjs from the op table (src/ops/ops.def and the
// elementwise.def it includes, made from src/ops/elementwise_table.h); do not edit.
// js/ops.js makes these functions and methods at init from the same registry;
// where js/core.js has one of the name, it wins (js/weft.d.ts: Weft, Tensor).
import type { ${opsTypes.join(', ')} } from './ops.js';
import type { ${weftTypes.join(', ')} } from './weft.js';

/** wt.<name>(...): every operator without a trailing _ (JSDoc: its overloads). */
export interface OpFunctions {
${functions.join('\n')}
}

/** t.<name>(...): every operator with a Tensor self (in place: name_). */
export interface OpMethods {
${methods.join('\n')}
}
${spaceText}
/** The operator names wt.ops.call / schema / table and wt.explain take. */
type Name =
${nameLines.join('\n')};
export type OpName = Name | \`aten::\${Name}\`;
`;
  return new Map([[OUT, text]]);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(() => generate());
}
