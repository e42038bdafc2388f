// Joining and splitting (issue 13): every case of tests/fixtures/join.json
// (PyTorch 1.13, made by tests/fixtures/gen_join_fixtures.py) on each wasm
// variant, twice: through the JS calling forms (wt.cat(list, dim, { out }),
// wt.stack, wt.hstack/vstack/dstack, x.split(sizeOrSizes, dim),
// x.splitWithSizes, x.chunk, x.unbind, wt.tensorSplit(x, sectionsOrIndices,
// dim): typed entry points) and through wt.ops.call (the boxed stack).
// dtype, shape, the strides of dims longer than 1 (so the memory format) and
// values must match exactly; split results must be views at PyTorch's
// storage offsets, sharing the input's memory; errors are WeftErrors with
// PyTorch's message; out= returns the out tensor; nothing leaks. Then threads
// 1 vs 3 give identical bytes, explain's path, and the large-list forms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadFixture } from './fixtures-lib.mjs';
import { init, WeftError, counts, noLeaks, VARIANTS } from './helpers.mjs';

const { cases } = loadFixture('join.json');
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const ELEM = { bool: 1, uint8: 1, int8: 1, int16: 2, int32: 4, int64: 8, float16: 2, bfloat16: 2, float32: 4, float64: 8 };

// The JS call for case c with its arguments made: [self/list, ...rest].
function jsCall(wt, op, a) {
  const [name, overload] = op.split('.');
  const outOpt = overload === 'out' ? [{ out: a[a.length - 1] }] : [];
  const pos = overload === 'out' ? a.slice(0, -1) : a;
  switch (name) {
    case 'cat': return wt.cat(...pos, ...outOpt);
    case 'stack': return wt.stack(...pos, ...outOpt);
    case 'hstack': return wt.hstack(...pos, ...outOpt);
    case 'vstack': return wt.vstack(...pos, ...outOpt);
    case 'dstack': return wt.dstack(...pos, ...outOpt);
    case 'split': return pos[0].split(pos[1], pos[2]);
    case 'split_with_sizes': return pos[0].splitWithSizes(pos[1], pos[2]);
    case 'chunk': return pos[0].chunk(pos[1], pos[2]);
    case 'unbind': return pos[0].unbind(pos[1]);
    case 'tensor_split': return wt.tensorSplit(pos[0], pos[1], pos[2]);
    default: throw new Error(`no JS form for ${op}`);
  }
}

function checkTensor(t, w, bad, what, base) {
  if (t.dtype !== w.dtype) return bad.push(`${what}: dtype ${t.dtype}, want ${w.dtype}`);
  if (JSON.stringify(t.shape) !== JSON.stringify(w.size)) return bad.push(`${what}: shape ${t.shape}, want ${w.size}`);
  const st = t.stride();
  if (w.size.some((n, d) => n > 1 && st[d] !== w.stride[d])) bad.push(`${what}: stride ${st}, want ${w.stride}`);
  const v = t.toArray({ bigint: true });
  const got = (Array.isArray(v) ? v.flat(Infinity) : [v]).map(Number);
  const i = w.values.findIndex((x, j) => !Object.is(got[j], num(x)) && got[j] !== num(x));
  if (i >= 0) bad.push(`${what}: value[${i}] ${got[i]}, want ${w.values[i]}`);
  if (base) { // a view: PyTorch's storage offset, in the input's memory
    if (t.storageOffset() !== w.offset) bad.push(`${what}: storage offset ${t.storageOffset()}, want ${w.offset}`);
    else if (t.dataPtr() !== base.dataPtr() + w.offset * ELEM[w.dtype]) bad.push(`${what}: not a view of the input`);
  }
}

function problems(wt, c, boxed) {
  const made = [];
  const bases = [];
  const tensor = (s) => {
    const base = wt.tensor(s.storage.map(num), { dtype: s.dtype });
    const t = base.asStrided(s.size, s.stride, s.offset);
    made.push(base, t);
    bases.push(base);
    return t;
  };
  const arg = (a) => (a.tensors ? a.tensors.map((x) => tensor(x.tensor)) : a.tensor ? tensor(a.tensor)
    : a.list ? a.list : a.scalar);
  const before = counts(wt);
  const bad = [];
  let r;
  try {
    const a = c.args.map(arg);
    const isOut = c.op.endsWith('.out');
    try {
      r = boxed ? wt.ops.call(c.op, ...(isOut ? [...a.slice(0, -1), { out: a[a.length - 1] }] : a)) : jsCall(wt, c.op, a);
    } catch (e) {
      if (c.expect.error === undefined) bad.push(`unexpected ${e.name}: ${e.message}`);
      else if (!(e instanceof WeftError)) bad.push(`threw ${e.name}, not a WeftError: ${e.message}`);
      else if (!e.message.includes(c.expect.error)) bad.push(`message "${e.message}" lacks "${c.expect.error}"`);
    }
    if (r && c.expect.error !== undefined) bad.push(`expected "${c.expect.error}", got a result`);
    if (r && c.expect.error === undefined) {
      if (isOut && r !== a[a.length - 1]) bad.push('did not return its out tensor');
      if (c.expect.list) {
        if (!Array.isArray(r) || r.length !== c.expect.list.length) bad.push(`${r.length} pieces, want ${c.expect.list.length}`);
        else r.forEach((t, i) => checkTensor(t, c.expect.list[i], bad, `piece ${i}`, bases[0]));
      } else {
        checkTensor(r, c.expect, bad, 'result', null);
      }
    }
  } finally {
    for (const t of Array.isArray(r) ? r : r ? [r] : []) if (!made.includes(t)) t.dispose();
    for (const t of made) t.dispose();
  }
  const after = counts(wt);
  if (JSON.stringify(after) !== JSON.stringify(before)) bad.push(`leak: ${JSON.stringify(after)} was ${JSON.stringify(before)}`);
  return bad.map((b) => `${boxed ? 'ops.call' : 'js'} ${c.op} ${JSON.stringify(c.args).slice(0, 160)}: ${b}`);
}

for (const variant of VARIANTS) {
  test(`${variant}: join.json cases (${cases.length}), JS forms and ops.call`, async () => {
    const wt = await init({ variant });
    const bad = [];
    for (const c of cases) for (const boxed of [false, true]) bad.push(...problems(wt, c, boxed));
    assert.deepEqual(bad.slice(0, 20), []);
  });
}

test('threads: cat and stack give the same bytes at 1 and 3 threads', async () => {
  const wt = await init({ variant: 'simd-threads' });
  await noLeaks(wt, () => {
    const a = wt.randn([300, 700]);
    const b = wt.randn([300, 500]);
    const at = a.t();
    const run = () => [wt.cat([a, a], 0), wt.cat([a, b], 1), wt.stack([a, a, a], 1), wt.cat([at, at], 1)];
    wt.setNumThreads(1);
    const one = run();
    wt.setNumThreads(3);
    const three = run();
    one.forEach((t, i) => assert.deepEqual(t.data(), three[i].data()));
    for (const t of [...one, ...three, a, b, at]) t.dispose();
  });
});

test('explain: contiguous inputs take the block path, others the copy path', async () => {
  const wt = await init({ variant: 'simd' });
  const a = wt.ones([4, 3]);
  const p = wt.explain('cat', [a, a], 1);
  assert.equal(p.path, 'blocks');
  assert.equal(p.kind, 'cat');
  const t = a.t();
  const q = wt.explain('cat', [t, a.t()], 0);
  assert.notEqual(q?.path, 'blocks');
  t.dispose();
  a.dispose();
});
