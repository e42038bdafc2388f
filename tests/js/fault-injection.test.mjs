// Allocation-failure injection over JS scenarios, the way SQLite tests its
// failure paths: wt._faultInjection.failAllocation(N) makes the Nth weft
// allocation from now fail (tensor data and the tensor and storage structs
// all count). Each scenario runs with N = 1, 2, 3, ... until it completes;
// for every N that fails it must throw a WeftError with code OutOfMemory (no
// other exception, no trap) and leave wt.memory() where it was (no tensor,
// storage, byte or meta byte left, no JS wrapper alive); the completing run
// must give the right values. Runs on the simd-threads and simd variants.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { init, WeftError } from './helpers.mjs';

const close = (a, b) => a.length === b.length && a.every((v, i) => Math.abs(Number(v) - Number(b[i])) <= 1e-5 * (1 + Math.abs(Number(b[i]))));

// Each: setup(wt) -> inputs (made before injection), run(wt, inputs) -> a
// tensor, check(result, inputs) -> true when right.
const SCENARIOS = [
  {
    name: 'factories',
    run: (wt) => wt.tidy(() => wt.zeros([3, 4]).add(wt.arange(0, 4)).add(wt.full([3, 1], 2, { dtype: 'float64' }))),
    check: (r) => r.dtype === 'float64' && close(Array.from(r.data()), Array(3).fill([2, 3, 4, 5]).flat()),
  },
  {
    name: 'elementwise with broadcast and out=',
    setup: (wt) => [wt.arange(0, 6).view([2, 3]), wt.tensor([1, 2, 3], { dtype: 'int32' })],
    run: (wt, [a, b]) => wt.tidy(() => {
      const out = wt.empty([0], { dtype: 'float64' });
      wt.mul(a.add(b, { alpha: 2 }), 3, { out });
      return out;
    }),
    check: (r) => close(Array.from(r.data()), [0, 1, 2, 3, 4, 5].map((v, i) => (v + 2 * (1 + (i % 3))) * 3)),
  },
  {
    name: 'views and contiguous',
    setup: (wt) => [wt.arange(0, 24).view([2, 3, 4])],
    run: (wt, [x]) => wt.tidy(() => x.permute([2, 0, 1]).slice(0, 1, 4).contiguous().to('float16').reshape([-1])),
    check: (r, [x]) => {
      const v = Array.from(x.data());
      const want = [];
      for (let k = 1; k < 4; k++) for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) want.push(v[i * 12 + j * 4 + k]);
      return r.dtype === 'float16' && close(Array.from(r.data()), want);
    },
  },
  {
    name: 'reductions',
    setup: (wt) => [wt.arange(0, 12, { dtype: 'float32' }).view([3, 4])],
    run: (wt, [x]) => wt.tidy(() => x.sum(1).add(x.t().contiguous().amax(0)).add(x.mean())),
    check: (r) => close(Array.from(r.data()), [6 + 3 + 5.5, 22 + 7 + 5.5, 38 + 11 + 5.5]),
  },
  {
    name: 'matmul',
    setup: (wt) => [wt.arange(0, 6, { dtype: 'float32' }).view([2, 3]), wt.arange(0, 12, { dtype: 'float32' }).view([3, 4])],
    run: (wt, [a, b]) => wt.tidy(() => wt.matmul(a, b).add(wt.mm(a, b.contiguous()))),
    check: (r) => close(Array.from(r.data()), [20, 23, 26, 29, 56, 68, 80, 92].map((v) => 2 * v)),
  },
  {
    name: 'tidy with nested scopes and keep',
    setup: (wt) => [wt.ones([4, 4])],
    run: (wt, [x]) => wt.tidy(() => {
      const inner = wt.tidy(() => x.mul(2).sub(1));
      return wt.tidy(() => inner.add(x).sum());
    }),
    check: (r) => close(Array.from(r.data()), [32]),
  },
  {
    name: '.npy load',
    setup: (wt) => [wt.arange(0, 10, { dtype: 'int16' }).view([2, 5]).t()],
    run: (wt, [x]) => wt.tidy(() => wt.fromNpy(x.contiguous().toNpy()).to('float32')),
    check: (r) => close(Array.from(r.data()), [0, 5, 1, 6, 2, 7, 3, 8, 4, 9]),
  },
  {
    name: 'boxed wt.ops.call',
    setup: (wt) => [wt.arange(0, 8).view([2, 4])],
    run: (wt, [x]) => wt.tidy(() => wt.ops.call('add', wt.ops.call('transpose', x, 0, 1), 1, { alpha: 3 })),
    check: (r) => close(Array.from(r.data()), [0, 4, 1, 5, 2, 6, 3, 7].map((v) => v + 3)),
  },
];

function snapshot(wt) {
  const m = wt.memory();
  return { tensors: m.tensors, storages: m.storages, bytesInUse: m.bytesInUse, metaBytes: m.metaBytes, jsTensors: m.jsTensors };
}

// Runs one scenario with N = 1, 2, ... until it completes; returns the number of failures injected.
function exhaust(wt, sc) {
  const fi = wt._faultInjection;
  const inputs = sc.setup ? sc.setup(wt) : [];
  const base = snapshot(wt);
  let failures = 0;
  for (let n = 1; ; n++) {
    assert.ok(n < 2000, `${sc.name}: does not complete`);
    const before = fi.injected();
    let result;
    let error;
    fi.failAllocation(n);
    try {
      result = sc.run(wt, inputs);
    } catch (e) {
      error = e;
    } finally {
      fi.failAllocation(0);
    }
    const injected = fi.injected() - before;
    if (error) {
      assert.ok(error instanceof WeftError, `${sc.name}, N=${n}: ${error?.name}: ${error?.message}`);
      assert.equal(error.code, 'OutOfMemory', `${sc.name}, N=${n}: ${error.message}`);
      assert.equal(injected, 1, `${sc.name}, N=${n}: failed without an injected failure`);
      assert.deepEqual(snapshot(wt), base, `${sc.name}, N=${n}: memory after the failure`);
      failures++;
      continue;
    }
    assert.equal(injected, 0, `${sc.name}, N=${n}: a failure was injected but the call succeeded`);
    assert.ok(sc.check(result, inputs), `${sc.name}: wrong result after ${failures} failures`);
    result.dispose();
    assert.deepEqual(snapshot(wt), base, `${sc.name}: memory after the completing run`);
    // disarmed, the same scenario still gives the right answer
    const again = sc.run(wt, inputs);
    assert.ok(sc.check(again, inputs), `${sc.name}: wrong result after disarming`);
    again.dispose();
    for (const t of inputs) t.dispose();
    return failures;
  }
}

for (const variant of ['simd-threads', 'simd']) {
  test(`${variant}: every allocation of every scenario fails cleanly once`, async () => {
    const wt = await init({ variant });
    let total = 0;
    const per = [];
    for (const sc of SCENARIOS) {
      const k = exhaust(wt, sc);
      assert.ok(k > 0, `${sc.name}: no allocation was failed`);
      per.push(`${sc.name} ${k}`);
      total += k;
    }
    console.log(`fault injection (${variant}): ${total} allocation failures injected (${per.join(', ')})`);
  });
}
