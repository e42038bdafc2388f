// Every view method, smoke-tested on metadata and values; views share storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, noLeaks, throwsWeft, tracker, VARIANTS } from './helpers.mjs';

for (const variant of VARIANTS) {
  test(`${variant}: views`, async (t) => {
    const wt = await init({ variant });
    const track = tracker();
    await noLeaks(wt, async () => {
      const x = track(track(wt.arange(24)).view(2, 3, 4));
      const same = (v) => v.dataPtr() - v.storageOffset() * v.elementSize();
      const base = same(x);

      await t.test('asStrided', () => {
        const v = track(x.asStrided([3, 2], [1, 3], 1));
        assert.deepEqual(v.shape, [3, 2]);
        assert.deepEqual(v.stride(), [1, 3]);
        assert.equal(v.storageOffset(), 1);
        assert.deepEqual(v.toArray(), [[1, 4], [2, 5], [3, 6]]);
        assert.equal(same(v), base);
        assert.equal(track(x.asStrided([2], [1])).storageOffset(), 0);
      });

      await t.test('view and reshape, variadic or array', () => {
        assert.deepEqual(track(x.view(6, 4)).shape, [6, 4]);
        assert.deepEqual(track(x.view([6, 4])).shape, [6, 4]);
        assert.deepEqual(track(x.view(-1)).shape, [24]);
        assert.deepEqual(track(x.reshape(4, -1)).shape, [4, 6]);
        const tr = track(x.transpose(0, 2));
        const r = track(tr.reshape([24]));
        assert.notEqual(same(r), base);
        assert.deepEqual(r.toArray().slice(0, 4), [0, 12, 4, 16]);
      });

      await t.test('permute, transpose, t, movedim', () => {
        const p = track(x.permute(2, 0, 1));
        assert.deepEqual(p.shape, [4, 2, 3]);
        assert.deepEqual(p.stride(), [1, 12, 4]);
        assert.deepEqual(track(x.permute([2, 0, 1])).stride(), [1, 12, 4]);
        const tr = track(x.transpose(0, -1));
        assert.deepEqual(tr.shape, [4, 3, 2]);
        assert.deepEqual(tr.stride(), [1, 4, 12]);
        const m = track(track(wt.arange(6)).view(2, 3));
        assert.deepEqual(track(m.t()).toArray(), [[0, 3], [1, 4], [2, 5]]);
        assert.deepEqual(track(x.movedim(0, 2)).shape, [3, 4, 2]);
        assert.deepEqual(track(x.movedim([0, 1], [2, 0])).shape, [3, 4, 2]);
      });

      await t.test('expand, squeeze, unsqueeze', () => {
        const c = track(track(wt.arange(3)).view(3, 1));
        const e = track(c.expand(2, 3, 4));
        assert.deepEqual(e.shape, [2, 3, 4]);
        assert.deepEqual(e.stride(), [0, 1, 0]);
        assert.equal(e.isNonOverlappingAndDense(), false);
        assert.deepEqual(track(c.expand([-1, 2])).toArray(), [[0, 0], [1, 1], [2, 2]]);
        const u = track(x.unsqueeze(1));
        assert.deepEqual(u.shape, [2, 1, 3, 4]);
        assert.deepEqual(track(u.squeeze()).shape, [2, 3, 4]);
        assert.deepEqual(track(u.squeeze(1)).shape, [2, 3, 4]);
        assert.deepEqual(track(u.squeeze(0)).shape, [2, 1, 3, 4]);
        assert.deepEqual(track(x.unsqueeze(-1)).shape, [2, 3, 4, 1]);
      });

      await t.test('narrow, slice, select', () => {
        const n = track(x.narrow(2, 1, 2));
        assert.deepEqual(n.shape, [2, 3, 2]);
        assert.equal(n.storageOffset(), 1);
        const s = track(x.slice(2, 1, null, 2));
        assert.deepEqual(s.shape, [2, 3, 2]);
        assert.deepEqual(s.stride(), [12, 4, 2]);
        assert.deepEqual(track(x.slice(1)).shape, [2, 3, 4]);
        assert.deepEqual(track(x.slice(1, -2)).shape, [2, 2, 4]);
        assert.deepEqual(track(x.slice(0, 0, 100)).shape, [2, 3, 4]);
        const sel = track(x.select(1, 2));
        assert.deepEqual(sel.shape, [2, 4]);
        assert.deepEqual(sel.toArray(), [[8, 9, 10, 11], [20, 21, 22, 23]]);
        assert.equal(track(x.select(0, -1)).storageOffset(), 12);
      });

      await t.test('flatten, unflatten', () => {
        assert.deepEqual(track(x.flatten()).shape, [24]);
        assert.deepEqual(track(x.flatten(1)).shape, [2, 12]);
        assert.deepEqual(track(x.flatten(0, 1)).shape, [6, 4]);
        assert.deepEqual(track(x.unflatten(2, [2, 2])).shape, [2, 3, 2, 2]);
        assert.deepEqual(track(x.unflatten(-1, [-1, 2])).shape, [2, 3, 2, 2]);
      });

      await t.test('contiguous and clone', () => {
        const cl = track(x.contiguous());
        assert.equal(same(cl), base);
        const nchw = track(track(wt.arange(24)).view(1, 2, 3, 4));
        const y = track(nchw.contiguous({ memoryFormat: 'channels_last' }));
        assert.deepEqual(y.stride(), [24, 1, 8, 2]);
        assert.deepEqual(y.toArray(), nchw.toArray());
        assert.equal(y.suggestMemoryFormat(), 'channels_last');
        const c2 = track(y.clone());
        assert.deepEqual(c2.stride(), [24, 1, 8, 2]);
        const c3 = track(y.clone({ memoryFormat: 'contiguous_format' }));
        assert.deepEqual(c3.stride(), [24, 12, 4, 1]);
        assert.notEqual(same(c2), same(y));
      });

      await t.test('views survive their base', () => {
        const b = wt.arange(4);
        const v = track(b.view(2, 2));
        b.dispose();
        assert.deepEqual(v.toArray(), [[0, 1], [2, 3]]);
      });

      await t.test('size, stride with dims', () => {
        assert.equal(x.size(-1), 4);
        assert.equal(x.stride(0), 12);
        throwsWeft(() => x.size(3), 'IndexError', /Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)/);
        throwsWeft(() => x.stride(-4), 'IndexError');
        const s = track(wt.tensor(1));
        throwsWeft(() => s.size(0), 'IndexError', /no dimensions/);
      });

      track.disposeAll();
    });
  });
}

test('view errors come from C with PyTorch wording, and leak nothing', async () => {
  const wt = await init();
  const base = wt.arange(24);
  const x = base.view(2, 3, 4);
  base.dispose();
  await noLeaks(wt, () => {
    throwsWeft(() => x.view(5, 5), 'ShapeError', /shape '\[5, 5\]' is invalid for input of size 24/);
    throwsWeft(() => x.transpose(0, 3), 'IndexError', /Dimension out of range/);
    throwsWeft(() => x.transpose(0.5, 1), 'TypeError', /argument 'dim0' must be an integer, not the number 0.5/);
    throwsWeft(() => x.permute(0, 1), undefined);
    throwsWeft(() => x.permute(0, 1, NaN), 'TypeError', /pos 2/);
    throwsWeft(() => x.select(0, 2), undefined);
    throwsWeft(() => x.narrow(0, 1, 5), undefined);
    throwsWeft(() => x.slice(0, 0, 2, 0), undefined);
    throwsWeft(() => x.t(), undefined);
    throwsWeft(() => x.expand(3, 3), undefined);
    throwsWeft(() => x.squeeze(3), 'IndexError');
    throwsWeft(() => x.unsqueeze(4), 'IndexError');
    throwsWeft(() => x.flatten(2, 0), undefined);
    throwsWeft(() => x.unflatten(1, [2, 2]), undefined);
    throwsWeft(() => x.movedim([0, 1], [0]), 'InvalidArgument', /same number of dims/);
    throwsWeft(() => x.asStrided([2, 2], [1]), 'InvalidArgument', /mismatch in length/);
    throwsWeft(() => x.asStrided([100], [1]), undefined);
    throwsWeft(() => x.view(new Array(17).fill(1)), 'InvalidArgument', /number of dimensions 17/);
    throwsWeft(() => x.contiguous({ memoryFormat: 'channels_last' }), 'InvalidArgument');
    throwsWeft(() => x.isContiguous('bogus'), 'InvalidArgument');
  });
  x.dispose();
});
