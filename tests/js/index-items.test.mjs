// x.index(...items) and x.indexPut_ (issue 13): a seeded property test of
// the basic forms (integers, slice strings, null, '...') against a plain JS
// reference over nested arrays, checking values, shapes and that the result
// is a view (no new storage, writes show through); the parse errors; and,
// when the build has index.Tensor, the advanced cases of
// tests/fixtures/index_items.json (PyTorch 1.13's x[items] and x[items] = v).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { weftMessage } from './fixtures-lib.mjs';
import { init, counts, noLeaks, rng, throwsWeft, tracker } from './helpers.mjs';

// Python's slice.indices for a positive step
function sliceRange(n, start, end, step) {
  const clamp = (v, d) => (v === null ? d : v < 0 ? Math.max(0, v + n) : Math.min(v, n));
  const a = clamp(start, 0), b = clamp(end, n);
  const out = [];
  for (let i = a; i < b; i += step) out.push(i);
  return out;
}

function parseSlice(s) {
  const [a, b, c] = s.split(':');
  const num = (v) => (v === undefined || v === '' ? null : Number(v));
  return [num(a), num(b), num(c) ?? 1];
}

// items on a nested array of `ndim` dims, numpy's basic indexing
function reference(a, ndim, items) {
  const used = items.filter((it) => it !== null && it !== '...').length;
  const expanded = items.flatMap((it) => (it === '...' ? Array(ndim - used).fill(':') : [it]));
  const go = (v, rest) => {
    if (rest.length === 0) return v;
    const [it, ...more] = rest;
    if (it === null) return [go(v, more)];
    if (typeof it === 'number') return go(v[it < 0 ? it + v.length : it], more);
    const [s, e, st] = parseSlice(it);
    return sliceRange(v.length, s, e, st).map((i) => go(v[i], more));
  };
  return go(a, expanded);
}

// the shape items give (the same walk as reference, on sizes)
function shapeAfter(shape, items) {
  const used = items.filter((it) => it !== null && it !== '...').length;
  const out = [];
  let d = 0;
  for (const it of items) {
    if (it === null) out.push(1);
    else if (it === '...') for (let k = 0; k < shape.length - used; k++) out.push(shape[d++]);
    else if (typeof it === 'number') d++;
    else {
      const [s, e, st] = parseSlice(it);
      out.push(sliceRange(shape[d++], s, e, st).length);
    }
  }
  return out.concat(shape.slice(d));
}

const flat = (v) => (Array.isArray(v) ? v.flat(Infinity) : [v]);

function randomItems(r, shape) {
  const items = [];
  let dim = 0;
  let ellipsis = false;
  const pick = (n) => Math.floor(r() * n);
  const count = pick(shape.length + 2);
  for (let k = 0; k < count; k++) {
    const roll = r();
    if (roll < 0.12) { items.push(null); continue; }
    if (roll < 0.2 && !ellipsis) {
      ellipsis = true;
      items.push('...');
      continue;
    }
    if (dim >= shape.length) break;
    const n = shape[dim++];
    if (roll < 0.45 && n > 0) items.push(pick(2 * n) - n);
    else {
      const end = (v) => (v === null ? '' : String(v));
      const s = r() < 0.3 ? null : pick(2 * n + 3) - n - 1;
      const e = r() < 0.3 ? null : pick(2 * n + 3) - n - 1;
      const st = r() < 0.5 ? null : 1 + pick(3);
      items.push(st === null ? `${end(s)}:${end(e)}` : `${end(s)}:${end(e)}:${st}`);
    }
  }
  // the ellipsis stands for the dims nothing names
  if (ellipsis && items.filter((it) => it !== null && it !== '...').length > shape.length) items.pop();
  return items;
}

test('x.index(...): random basic items against a nested-array reference (seeded)', async () => {
  const wt = await init({ variant: 'simd' });
  const r = rng(1313);
  await noLeaks(wt, () => {
    for (let trial = 0; trial < 400; trial++) {
      const nd = Math.floor(r() * 4);
      const shape = Array.from({ length: nd }, () => Math.floor(r() * 5));
      const n = shape.reduce((a, b) => a * b, 1);
      const track = tracker();
      const base = track(track(wt.arange(n, { dtype: 'float32' })).view(shape));
      // a transposed layout half the time
      const x = nd >= 2 && r() < 0.5
        ? track(track(track(base.transpose(0, nd - 1)).contiguous()).transpose(0, nd - 1))
        : track(base.view(shape));
      const items = randomItems(r, shape);
      const want = reference(x.toArray(), nd, items);
      const before = counts(wt);
      const y = x.index(...items);
      const what = `shape ${JSON.stringify(shape)} items ${JSON.stringify(items)}`;
      try {
        assert.equal(counts(wt).storages, before.storages, `${what}: not a view`);
        assert.deepEqual(y.shape, shapeAfter(shape, items), what);
        assert.deepEqual(flat(y.toArray()), flat(want), what);
        if (y.numel() > 0) { // writes show through
          y.fill_(-1);
          const seen = x.toArray();
          assert.ok(JSON.stringify(seen).includes('-1'), `${what}: a write did not reach x`);
        }
      } finally {
        y.dispose();
        track.disposeAll();
      }
    }
  });
});

test('x.index(...) and indexPut_: errors quote the item', async () => {
  const wt = await init({ variant: 'simd' });
  await noLeaks(wt, () => {
    const track = tracker();
    const x = track(track(wt.arange(12, { dtype: 'float32' })).view([3, 4]));
    throwsWeft(() => x.index(5), 'IndexError', /^index 5 is out of bounds for dimension 0 with size 3$/);
    throwsWeft(() => x.index(':', -5), 'IndexError', /index -5 is out of bounds for dimension 1 with size 4/);
    throwsWeft(() => x.index(1, 2, 3), 'IndexError', /too many indices for tensor of dimension 2/);
    throwsWeft(() => x.index('1:x'), 'InvalidArgument', /'1:x'/);
    throwsWeft(() => x.index('::0'), 'InvalidArgument', /slice step cannot be zero \(in '::0'\)/);
    throwsWeft(() => x.index('::-1'), 'InvalidArgument', /step must be greater than zero \(in '::-1'\)/);
    throwsWeft(() => x.index('...', '...'), 'IndexError', /single ellipsis/);
    throwsWeft(() => x.index(1.5), 'IndexError', /index 1.5 is not an integer/);
    throwsWeft(() => x.index({}), 'TypeError', /valid indices/);
    throwsWeft(() => x.index(track(wt.tensor([1], { dtype: 'int32' }))), 'IndexError',
      /tensors used as indices must be long, byte or bool tensors/);
    throwsWeft(() => x.index(track(wt.tensor([true, false], { dtype: 'bool' }))), 'IndexError',
      /The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor \[3, 4\] at index 0/);
    throwsWeft(() => x.indexPut_(['1:x'], 0), 'InvalidArgument', /'1:x'/);
    // basic items in indexPut_: a view written (fill, copy with broadcasting, accumulate)
    x.indexPut_(['1:', '::2'], 0);
    x.indexPut_([0], track(wt.tensor([1, 2, 3, 4], { dtype: 'float32' })), { accumulate: true });
    x.indexPut_([null, '...', 3], track(wt.tensor([7], { dtype: 'float32' })));
    assert.deepEqual(x.toArray(), [[1, 3, 5, 7], [0, 5, 0, 7], [0, 9, 0, 7]]);
    // a bare x.index() is a new view of all of x
    const all = track(x.index());
    assert.notEqual(all, x);
    assert.deepEqual(all.toArray(), x.toArray());
    track.disposeAll();
  });
});

const fixtures = new URL('../fixtures/index_items.json', import.meta.url);

test('advanced items: tests/fixtures/index_items.json (PyTorch 1.13)', async (t) => {
  const wt = await init({ variant: 'simd-threads' });
  if (!wt.ops.list().some((o) => o.name === 'aten::index.Tensor')) {
    t.skip('this build has no index.Tensor');
    return;
  }
  const { cases } = JSON.parse(readFileSync(fixtures, 'utf8'), (k, v) => (k === 'error' && typeof v === 'string' ? weftMessage(v) : v));
  const bad = [];
  await noLeaks(wt, () => {
    for (const c of cases) {
      const track = tracker();
      const tensorOf = (s) => track(track(wt.tensor(s.storage, { dtype: s.dtype })).asStrided(s.size, s.stride, s.offset));
      const item = (it) => (it.tensor ? tensorOf(it.tensor) : it.none ? null : it.value);
      const what = `${c.kind} ${JSON.stringify(c.items).slice(0, 160)}`;
      try {
        const x = tensorOf(c.x);
        const items = c.items.map(item);
        let r;
        try {
          if (c.kind === 'get') r = track(x.index(...items));
          else r = x.indexPut_(items, c.values.tensor ? tensorOf(c.values.tensor) : c.values.value, { accumulate: c.accumulate });
        } catch (e) {
          if (c.expect.error === undefined) bad.push(`${what}: unexpected ${e.message}`);
          else if (!e.message.includes(c.expect.error)) bad.push(`${what}: "${e.message}" lacks "${c.expect.error}"`);
          continue;
        }
        if (c.expect.error !== undefined) { bad.push(`${what}: expected "${c.expect.error}"`); continue; }
        if (JSON.stringify(r.shape) !== JSON.stringify(c.expect.size)) { bad.push(`${what}: shape ${r.shape}, want ${c.expect.size}`); continue; }
        const st = r.stride();
        if (c.kind === 'get' && c.expect.size.some((n, d) => n > 1 && st[d] !== c.expect.stride[d])) {
          bad.push(`${what}: stride ${st}, want ${c.expect.stride}`);
        }
        const got = Array.from(r.data(), Number);
        if (JSON.stringify(got) !== JSON.stringify(c.expect.values)) bad.push(`${what}: values ${got}, want ${c.expect.values}`);
      } finally {
        track.disposeAll();
      }
    }
  });
  t.diagnostic(`${cases.length} cases`);
  if (bad.length) throw new Error(`${bad.length} problem(s):\n  ${bad.slice(0, 30).join('\n  ')}`);
});

test('advanced items fixture file exists', () => assert.ok(existsSync(fixtures)));
