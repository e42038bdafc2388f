// Factories: shapes, dtypes, values, options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, throwsWeft, tracker, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: factories`, async (t) => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, async () => {
      await t.test('empty', () => {
        const a = track(wt.empty([2, 3]));
        assert.deepEqual(a.shape, [2, 3]);
        assert.deepEqual(a.stride(), [3, 1]);
        assert.equal(a.dtype, 'float32');
        assert.equal(a.device, 'cpu');
        assert.equal(a.numel(), 6);
        assert.equal(a.dim(), 2);
        assert.equal(a.elementSize(), 4);
        assert.equal(a.storageOffset(), 0);
        assert.ok(a.isContiguous());
        assert.ok(a.isNonOverlappingAndDense());
        assert.ok(a.dataPtr() > 0);
        assert.equal(a.dataPtr() % 64, 0);
        const b = track(wt.empty(2, 3, 4, 5, { dtype: 'float64', memoryFormat: 'channels_last' }));
        assert.deepEqual(b.stride(), [60, 1, 15, 3]);
        assert.equal(b.dtype, 'float64');
        assert.equal(b.elementSize(), 8);
        assert.deepEqual(track(wt.empty([])).shape, []);
        assert.equal(track(wt.empty([])).numel(), 1);
        assert.equal(track(wt.empty([0, 3])).numel(), 0);
        const m = track(wt.empty([2, 3], { device: 'meta' }));
        assert.equal(m.device, 'meta');
        assert.equal(m.dataPtr(), 0);
        assert.equal(String(m), "tensor(..., device='meta', size=(2, 3))");
      });

      await t.test('emptyStrided and emptyLike', () => {
        const a = track(wt.emptyStrided([2, 3], [1, 2]));
        assert.deepEqual(a.stride(), [1, 2]);
        assert.equal(a.isContiguous(), false);
        const b = track(wt.emptyStrided([2, 3], [1, 2], { dtype: 'int32' }));
        assert.equal(b.dtype, 'int32');
        const c = track(wt.emptyLike(a));
        assert.deepEqual(c.stride(), [1, 2]);
        const d = track(wt.emptyLike(a, { memoryFormat: 'contiguous_format', dtype: 'int8' }));
        assert.deepEqual(d.stride(), [3, 1]);
        assert.equal(d.dtype, 'int8');
      });

      await t.test('zeros, ones, full', () => {
        assert.deepEqual(track(wt.zeros(2, 2)).toArray(), [[0, 0], [0, 0]]);
        assert.deepEqual(track(wt.ones([3], { dtype: 'int32' })).toArray(), [1, 1, 1]);
        assert.deepEqual(track(wt.ones([2], { dtype: 'bool' })).toArray(), [true, true]);
        const f = track(wt.full([2], 2.5));
        assert.equal(f.dtype, 'float32');
        assert.deepEqual(f.toArray(), [2.5, 2.5]);
        assert.equal(track(wt.full([2], 7)).dtype, 'float32'); // numbers never make integers
        assert.equal(track(wt.full([2], 7n)).dtype, 'int64');
        assert.equal(track(wt.full([2], true)).dtype, 'bool');
        assert.equal(track(wt.full([2], 7, { dtype: 'float16' })).dtype, 'float16');
        assert.deepEqual(track(wt.full(3, -1, { dtype: 'float64' })).toArray(), [-1, -1, -1]);
      });

      await t.test('arange', () => {
        const a = track(wt.arange(5));
        assert.equal(a.dtype, 'int64');
        assert.deepEqual(a.toArray(), [0, 1, 2, 3, 4]);
        assert.deepEqual(track(wt.arange(2, 8, 3)).toArray(), [2, 5]);
        const f = track(wt.arange(0, 1, 0.25));
        assert.equal(f.dtype, 'float32');
        assert.deepEqual(f.toArray(), [0, 0.25, 0.5, 0.75]);
        const d = track(wt.arange(4, { dtype: 'float64' }));
        assert.equal(d.dtype, 'float64');
        assert.deepEqual(track(wt.arange(1, 4, { dtype: 'int32' })).toArray(), [1, 2, 3]);
      });

      await t.test('tensor from nested arrays, numbers, TypedArrays', () => {
        const a = track(wt.tensor([[1, 2, 3], [4, 5, 6]]));
        assert.equal(a.dtype, 'float32');
        assert.deepEqual(a.shape, [2, 3]);
        assert.deepEqual(a.toArray(), [[1, 2, 3], [4, 5, 6]]);
        const f = track(wt.tensor([0.5, 1]));
        assert.equal(f.dtype, 'float32');
        assert.deepEqual(f.toArray(), [0.5, 1]);
        const b = track(wt.tensor([true, false]));
        assert.equal(b.dtype, 'bool');
        assert.deepEqual(b.toArray(), [true, false]);
        assert.equal(track(wt.tensor([true, 2])).dtype, 'float32');
        assert.equal(track(wt.tensor([true, 2n])).dtype, 'int64');
        const s = track(wt.tensor(3.5));
        assert.deepEqual(s.shape, []);
        assert.equal(s.item(), 3.5);
        assert.equal(track(wt.tensor(3)).dtype, 'float32');
        assert.equal(track(wt.tensor(3n)).item(), 3);
        const e = track(wt.tensor([]));
        assert.deepEqual(e.shape, [0]);
        assert.equal(e.dtype, 'float32');
        assert.deepEqual(track(wt.tensor([[], []])).shape, [2, 0]);
        const ta = track(wt.tensor(new Int32Array([1, -2, 3])));
        assert.equal(ta.dtype, 'int32');
        assert.deepEqual(ta.toArray(), [1, -2, 3]);
        assert.equal(track(wt.tensor(new Float64Array(2))).dtype, 'float64');
        assert.equal(track(wt.tensor(new Uint8Array(2))).dtype, 'uint8');
        assert.equal(track(wt.tensor(new BigInt64Array(2))).dtype, 'int64');
        assert.deepEqual(track(wt.tensor([new Float32Array([1, 2]), new Float32Array([3, 4])])).toArray(),
          [[1, 2], [3, 4]]);
        const h = track(wt.tensor([1.5, -2, 65504, 1e-8], { dtype: 'float16' }));
        assert.deepEqual(Array.from(h.data()), [1.5, -2, 65504, 0]);
        const bf = track(wt.tensor([1.5, -2, 3.140625], { dtype: 'bfloat16' }));
        assert.deepEqual(Array.from(bf.data()), [1.5, -2, 3.140625]);
        assert.deepEqual(track(wt.tensor([1.7, -1.7], { dtype: 'int32' })).toArray(), [1, -1]);
        assert.deepEqual(track(wt.tensor([0, 2, NaN], { dtype: 'bool' })).toArray(), [false, true, true]);
        assert.deepEqual(track(wt.tensor([2 ** 40, -3], { dtype: 'int64' })).toArray(), [2 ** 40, -3]);
        assert.deepEqual(track(wt.tensor([1, 2], { dtype: 'float64' })).toArray(), [1, 2]);
      });

      await t.test('rand, randn, manualSeed', () => {
        wt.manualSeed(0);
        const a = track(wt.rand(1000));
        const v = a.data();
        assert.ok(v.every((x) => x >= 0 && x < 1));
        wt.manualSeed(0);
        assert.deepEqual(track(wt.rand([1000])).data(), v);
        wt.manualSeed(2n ** 64n - 1n);
        const n = track(wt.randn(2, 3, { dtype: 'float64' }));
        assert.equal(n.dtype, 'float64');
        assert.deepEqual(n.shape, [2, 3]);
        const mean = track(wt.randn(4000)).data().reduce((p, x) => p + x, 0) / 4000;
        assert.ok(Math.abs(mean) < 0.1, `mean ${mean}`);
        // PyTorch 1.13: torch.manual_seed(0); torch.randn(n, dtype=torch.float64), for n = 7 (one
        // normal_distribution per element) and n = 20 (normal_fill: 16 or more elements)
        const want7 = [1.5409961082440433, -0.2934289057609464, -2.1787893820745574, 0.5684312772806678,
          -1.084522342424021, -1.3985953953708767, 0.4033468476292993];
        const want20 = [-2.310411800234176, -0.3732508612577643, -1.0608166785462863, 0.9995093547811761,
          -0.019964750907762653, 0.2102998901016947, 0.17718935139366584, -0.830510051008449, 0.23871805816817063,
          0.7335283685272841, -1.3218818291421377, 1.3148113651971234, -0.6870036940435463, 1.4880743158106724,
          -0.4484158047114511, -0.8910030351707375, 0.6748575435940039, 1.0468653769814655, 0.15429517864658948,
          -0.7498915228391941];
        for (const want of [want7, want20]) {
          wt.manualSeed(0);
          const got = track(wt.randn(want.length, { dtype: 'float64' })).data();
          want.forEach((w, i) => assert.ok(Math.abs(got[i] - w) <= 1e-15 * Math.max(1, Math.abs(w)), `randn(${want.length})[${i}]: ${got[i]} vs ${w}`));
        }
      });

      await t.test('data() types', () => {
        const cases = {
          bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array,
          int64: BigInt64Array, float16: Float32Array, bfloat16: Float32Array, float32: Float32Array,
          float64: Float64Array,
        };
        for (const [dtype, Arr] of Object.entries(cases)) {
          const x = track(wt.ones([2, 2], { dtype }));
          assert.ok(x.data() instanceof Arr, dtype);
          assert.equal(x.data().length, 4);
          assert.equal(x.data()[3], dtype === 'int64' ? 1n : 1, dtype);
        }
      });

      track.disposeAll();
    });
  });
}

test('promoteTypes and canCast', async () => {
  const wt = await init();
  assert.equal(wt.promoteTypes('int64', 'float16'), 'float16');
  assert.equal(wt.promoteTypes('bool', 'uint8'), 'uint8');
  assert.equal(wt.promoteTypes('float16', 'bfloat16'), 'float32');
  assert.equal(wt.promoteTypes('long', 'double'), 'float64');
  assert.equal(wt.canCast('float32', 'int32'), false);
  assert.equal(wt.canCast('int32', 'float32'), true);
  throwsWeft(() => wt.promoteTypes('int64', 'cfloat'), 'TypeError');
});

test('factory errors', async () => {
  const wt = await init();
  await noLeaks(wt, () => {
    throwsWeft(() => wt.empty([-1, 2]), 'InvalidArgument', /negative dimension -1/);
    throwsWeft(() => wt.empty([1.5]), 'TypeError', /must be an array of integers, but found an element of type number at pos 0/);
    throwsWeft(() => wt.zeros([2, NaN]), 'TypeError', /at pos 1/);
    throwsWeft(() => wt.ones(['2']), 'TypeError', /type string/);
    throwsWeft(() => wt.empty(new Array(17).fill(1)), 'InvalidArgument', /number of dimensions 17 must be in \[0, 16\]/);
    throwsWeft(() => wt.empty([2], { dtype: 'float8' }), 'TypeError', /float8/);
    throwsWeft(() => wt.empty([2], { dtype: 7 }), 'TypeError', /dtype/);
    throwsWeft(() => wt.empty([2], { memoryFormat: 'nhwc' }), 'InvalidArgument');
    throwsWeft(() => wt.empty([2, 3], { memoryFormat: 'channels_last' }), 'InvalidArgument', /rank 4/);
    throwsWeft(() => wt.empty([2], { device: 'cuda' }));
    throwsWeft(() => wt.empty([2], { dtpye: 'int8' }), 'TypeError', /unexpected option 'dtpye' \(did you mean dtype\?\)/);
    throwsWeft(() => wt.emptyStrided([2, 3], [1]), 'InvalidArgument', /mismatch in length/);
    throwsWeft(() => wt.emptyStrided([2, 3], [1, -1]), 'InvalidArgument');
    throwsWeft(() => wt.arange(0, 5, 0), 'InvalidArgument', /step must be nonzero/);
    throwsWeft(() => wt.arange(), 'TypeError');
    throwsWeft(() => wt.arange('5'), 'TypeError');
    throwsWeft(() => wt.full([2], 'x'), 'TypeError');
    throwsWeft(() => wt.tensor([[1, 2], [3]]), 'InvalidArgument', /expected sequence of length 2 at dim 1 \(got 1\)/);
    throwsWeft(() => wt.tensor([[1, 2], 3]), 'InvalidArgument', /at dim 1/);
    throwsWeft(() => wt.tensor(['a']), 'TypeError', /expected numbers, bigints or booleans, got a string/);
    throwsWeft(() => wt.tensor(new DataView(new ArrayBuffer(2))), 'TypeError', /DataView/);
    throwsWeft(() => wt.tensor([1], { dtype: 'nope' }), 'TypeError');
    throwsWeft(() => wt.rand([2], { dtype: 'int64' }), 'TypeError', /floating point/);
    throwsWeft(() => wt.manualSeed(1.5), 'TypeError');
  });
});
