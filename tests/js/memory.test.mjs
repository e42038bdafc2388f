// tidy(), keep(), the FinalizationRegistry safety net, disposed-tensor errors
// and data() across wasm memory growth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { counts, init, throwsWeft, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: tidy disposes everything but the result`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const y = wt.tidy(() => {
      const a = wt.ones(4, 4);
      const b = a.t();
      a.view(16);
      return b.contiguous();
    });
    assert.equal(wt.memory().tensors, before.tensors + 1);
    assert.deepEqual(y.shape, [4, 4]);
    y.dispose();
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: tidy keeps arrays, objects, Maps of tensors and nests`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    let inner;
    const out = wt.tidy(() => {
      const kept = wt.keep(wt.zeros(2));
      const r = wt.tidy(() => {
        wt.ones(3);
        inner = wt.arange(5);
        return { pair: [inner, wt.zeros(1)], m: new Map([['k', wt.ones(1)]]) };
      });
      assert.equal(inner.isDisposed, false);
      return { r, kept, n: 3, s: 'x' };
    });
    assert.equal(out.n, 3);
    assert.equal(out.r.pair[0], inner);
    for (const t of [out.r.pair[0], out.r.pair[1], out.r.m.get('k'), out.kept]) assert.equal(t.isDisposed, false);
    assert.equal(wt.memory().tensors, before.tensors + 4);
    for (const t of [out.r.pair[0], out.r.pair[1], out.r.m.get('k'), out.kept]) t.dispose();
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: the outer tidy disposes what an inner one returned`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    let leaked;
    wt.tidy(() => {
      leaked = wt.tidy(() => wt.ones(2));
      assert.equal(leaked.isDisposed, false);
    });
    assert.equal(leaked.isDisposed, true);
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: tidy with an async function that does not await`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    const p = wt.tidy(async () => {
      const a = wt.ones(3);
      return a.mul ? a : a.clone();
    });
    assert.equal(wt.memory().tidyScopes, 0, 'scope closed synchronously');
    const later = wt.ones(1); // created after tidy returned: not its business
    const r = await p;
    assert.equal(r.isDisposed, false);
    assert.equal(later.isDisposed, false);
    r.dispose();
    later.dispose();
    assert.deepEqual(counts(wt), before);
    await assert.rejects(wt.tidy(async () => { wt.ones(2); throw new Error('boom'); }), /boom/);
    assert.deepEqual(counts(wt), before);
  });

  test(`${variant}: tidy disposes on throw; disposing a result early is fine`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    assert.throws(() => wt.tidy(() => { wt.ones(5); throw new Error('x'); }), /x/);
    assert.deepEqual(counts(wt), before);
    wt.tidy(() => { const a = wt.ones(2); a.dispose(); a.dispose(); });
    assert.deepEqual(counts(wt), before);
    throwsWeft(() => wt.tidy(3), 'TypeError', /tidy\(\): argument 'fn' must be a function/);
  });

  test(`${variant}: a disposed tensor names the op`, async () => {
    const wt = await init({ variant });
    const x = wt.ones(2, 3);
    x.dispose();
    throwsWeft(() => x.view(6), 'InvalidArgument', /^view: tensor has been disposed$/);
    throwsWeft(() => x.data(), 'InvalidArgument', /^data: tensor has been disposed$/);
    throwsWeft(() => x.contiguous(), 'InvalidArgument', /^contiguous: tensor has been disposed$/);
  });

  test(`${variant}: data() survives wasm memory growth`, async () => {
    const wt = await init({ variant });
    const x = wt.arange(1000, { dtype: 'float32' });
    const d = x.data();
    const heap0 = wt.memory().heapBytes;
    // 64 MB more than the heap had: the memory must grow.
    const big = wt.empty([heap0 / 4 + (16 << 20)], { dtype: 'float32' });
    assert.ok(wt.memory().heapBytes > heap0, 'memory grew');
    assert.equal(d.length, 1000);
    assert.equal(d[999], 999);
    assert.deepEqual(Array.from(x.data()).slice(995), [995, 996, 997, 998, 999]);
    const y = wt.tensor([1.5, 2.5]);
    assert.deepEqual(Array.from(y.data()), [1.5, 2.5]);
    assert.deepEqual(x.view(10, 100).t().contiguous().select(0, 99).toArray().slice(0, 2), [99, 199]);
    // Error messages and names are read from the grown memory too.
    throwsWeft(() => x.view(7), 'ShapeError', /^view: shape '\[7\]' is invalid for input of size 1000$/);
    assert.equal(wt.zeros(2, { dtype: 'half' }).dtype, 'float16');
    for (const t of [x, big, y]) t.dispose();
  });
}

// Forgotten tensors are released when collected: run under --expose-gc.
test('FinalizationRegistry releases forgotten tensors exactly once', async () => {
  const script = fileURLToPath(new URL('./gc-child.mjs', import.meta.url));
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', script], { timeout: 60000 }, (err, stdout, stderr) =>
      (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
  const r = JSON.parse(out);
  for (const v of r) {
    assert.equal(v.afterGc.tensors, v.before.tensors, `${v.variant}: C tensors back to baseline`);
    assert.equal(v.afterGc.bytesInUse, v.before.bytesInUse, `${v.variant}: bytes back to baseline`);
    assert.ok(v.afterGc.collected >= 200, `${v.variant}: collected ${v.afterGc.collected}`);
    assert.equal(v.afterGc.jsTensors, v.before.jsTensors + 1, `${v.variant}: the kept one is live`);
    assert.equal(v.keptOk, true);
  }
});

for (const variant of VARIANTS) {
  test(`${variant}: meta tensors count in metaBytes, not bytesInUse`, async () => {
    const wt = await init({ variant });
    const m0 = wt.memory();
    const meta = wt.empty([1000, 1000], { device: 'meta' });
    const v = meta.view(-1);
    const m1 = wt.memory();
    assert.equal(m1.bytesInUse, m0.bytesInUse, 'nothing allocated for a meta tensor');
    assert.equal(m1.metaBytes, m0.metaBytes + 4e6);
    assert.equal(m1.storages, m0.storages + 1);
    const real = wt.empty([10]);
    assert.equal(wt.memory().bytesInUse, m0.bytesInUse + 40);
    for (const t of [meta, v, real]) t.dispose();
    const m2 = wt.memory();
    assert.equal(m2.bytesInUse, m0.bytesInUse);
    assert.equal(m2.metaBytes, m0.metaBytes);
  });
}
