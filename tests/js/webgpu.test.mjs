// The webgpu device where there is no WebGPU (Node): initWebGPU rejects and
// says why, the device name exists, allocation is refused before init, the
// dtypes WGSL lacks are refused, and the cpu is untouched (docs/webgpu.md;
// the GPU itself: tests/browser/webgpu.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, WeftError, counts, throwsWeft, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`webgpu in Node (${variant})`, async () => {
    const wt = await init({ variant });
    const before = counts(wt);
    await assert.rejects(wt.initWebGPU(), (e) => {
      assert.ok(e instanceof WeftError);
      assert.equal(e.code, 'NotImplemented');
      assert.match(e.message, /^initWebGPU: no WebGPU here: Node has no WebGPU \(navigator\.gpu is undefined\)/);
      return true;
    });
    assert.equal(wt.backend.webgpu, null);
    assert.equal(wt.webgpu.isAvailable(), false);
    assert.deepEqual(wt.webgpu.memory(), { allocatedBytes: 0, cachedBytes: 0, peakAllocatedBytes: 0, submits: 0, dispatches: 0 });
    await wt.webgpu.synchronize(); // nothing to wait for
    wt.webgpu.emptyCache();

    throwsWeft(() => wt.empty([2, 3], { device: 'webgpu' }), 'NotImplemented',
      /^empty: no WebGPU device: call await wt\.initWebGPU\(\) first/);
    throwsWeft(() => wt.tensor([1.5, 2], { device: 'webgpu' }), 'NotImplemented', /no WebGPU device/);
    const c = wt.tensor([1, 2], { dtype: 'float32' });
    throwsWeft(() => c.to('webgpu'), 'NotImplemented', /no WebGPU device/);
    assert.match(c.toString(), /^tensor\(\[1\., 2\.\]\)$/);
    c.dispose();
    throwsWeft(() => wt.empty([2], { dtype: 'int64', device: 'webgpu' }), 'TypeError',
      /^empty: a webgpu tensor holds float32, int32 or bool; int64 is not available in WGSL \(convert it on the cpu first, e\.g\. x\.to\('int32'\)\)$/);
    throwsWeft(() => wt.zeros([2], { device: 'webgpu' }), 'NotImplemented', /no WebGPU device/);
    throwsWeft(() => wt.eye(2, { device: 'webgpu' }), 'DispatchError', /with arguments from the 'WebGPU' backend/);
    throwsWeft(() => wt.empty([2], { device: 'cuda' }), 'InvalidArgument',
      /Expected one of cpu, meta, webgpu device type at start of device string: cuda/);

    // the async reads serve cpu tensors as well
    const x = wt.tensor([[1, 2], [3, 4]], { dtype: 'float32' });
    assert.deepEqual(await x.toArrayAsync(), [[1, 2], [3, 4]]);
    assert.deepEqual(Array.from(await x.dataAsync()), [1, 2, 3, 4]);
    const s = x.sum();
    assert.equal(await s.itemAsync(), 10);
    s.dispose();
    const y = await x.toAsync('cpu');
    assert.equal(y === x || y.device === 'cpu', true);
    if (y !== x) y.dispose();
    x.dispose();
    assert.equal(wt.memory().webgpuBytes, 0);
    assert.deepEqual(counts(wt), before);
  });
}
