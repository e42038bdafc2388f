// Issue 27's training check: the digits MLP of the training page
// (demo/train/digits.mjs: 64 → 64 → 10, ReLU, crossEntropy, Adam lr 0.01,
// batch 32) trained for one epoch on 'webgpu' in Chromium (SwiftShader) from
// the same initial weights and the same minibatch order as on the cpu. The
// issue asks for test accuracy within 1 point of the cpu run; the losses of
// the two runs are compared too (the GPU sums in another order, so they drift
// apart by float32 rounding, not more).
//   node --test tests/browser/webgpu-train.test.mjs   (needs `npm run build` and /usr/bin/chromium)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { webgpuPage } from './helpers.mjs';

describe('digits MLP trained on webgpu (SwiftShader)', { timeout: 300000 }, () => {
  const s = webgpuPage({ before, after });

  test('one epoch on webgpu: test accuracy within 1 point of the cpu run, losses alike, nothing leaked', async () => {
    const r = await s.run(async (wt) => {
      const { loadDigits, makeModel } = await import('/demo/train/digits.mjs');
      const bytes = async (f) => new Uint8Array(await (await fetch(`/demo/data/${f}`)).arrayBuffer());
      const data = loadDigits(wt, await bytes('digits-images.npy'), await bytes('digits-labels.npy'));
      wt.manualSeed(0);
      const model = makeModel(wt, 'mlp');
      const order = wt.randperm(data.nTrain);
      const BATCH = 32;

      // One epoch on `device` from copies of the same initial weights; the
      // labels and minibatch indices stay int64 on the cpu (webgpu takes cpu
      // index tensors, range-checked and uploaded as int32).
      async function epoch(device) {
        // to('cpu') of a cpu tensor is the tensor itself: the cpu run trains a
        // clone, so the webgpu run starts from the same weights
        const copy = (t) => (device === 'cpu' ? t.detach().clone() : t.detach().to(device));
        const params = model.params.map((p) => copy(p).requiresGrad_());
        const [w1, b1, w2, b2] = params;
        const forward = (x) => x.mm(w1).add(b1).relu().mm(w2).add(b2);
        const xTrain = copy(data.xTrain), xTest = copy(data.xTest);
        const opt = new wt.optim.Adam(params, { lr: 0.01 });
        const losses = [];
        for (let at = 0; at < data.nTrain; at += BATCH) {
          const m = Math.min(BATCH, data.nTrain - at);
          opt.zeroGrad();
          const loss = wt.tidy(() => {
            const idx = order.narrow(0, at, m);
            const l = wt.crossEntropy(forward(xTrain.indexSelect(0, idx)), data.yTrain.indexSelect(0, idx));
            l.backward();
            return wt.keep(l.detach());
          });
          opt.step();
          losses.push(await loss.itemAsync());
          loss.dispose();
        }
        const logits = wt.noGrad(() => wt.tidy(() => forward(xTest)));
        const host = await logits.toAsync('cpu');
        const correct = Number(host.argmax(1).eq(data.yTest).sum().item());
        const devices = [...params, logits, xTrain].map((t) => t.device);
        for (const t of [...params, logits, host, xTrain, xTest]) t.dispose();
        opt.dispose();
        return { losses, accuracy: correct / data.nTest, devices };
      }

      const cpu = await epoch('cpu');
      const before = wt.memory();
      const gpu = await epoch('webgpu');
      await wt.webgpu.synchronize();
      const afterGpu = wt.memory();
      order.dispose();
      data.dispose();
      for (const p of model.params) p.dispose();
      return { cpu, gpu, tensors: [before.tensors, afterGpu.tensors], webgpuBytes: afterGpu.webgpuBytes };
    });
    assert.equal(r.error, undefined, r.error?.join('\n'));
    assert.ok(r.gpu.devices.every((d) => d === 'webgpu'), `devices ${r.gpu.devices}`);
    assert.equal(r.gpu.losses.length, r.cpu.losses.length);
    assert.ok(r.cpu.accuracy > 0.8, `the cpu run learned (test accuracy ${r.cpu.accuracy})`);
    const points = Math.abs(r.gpu.accuracy - r.cpu.accuracy) * 100;
    assert.ok(points <= 1, `test accuracy: webgpu ${r.gpu.accuracy}, cpu ${r.cpu.accuracy} (${points.toFixed(2)} points apart)`);
    const drift = Math.max(...r.gpu.losses.map((l, i) => Math.abs(l - r.cpu.losses[i]) / Math.max(1, r.cpu.losses[i])));
    assert.ok(drift < 1e-2, `per-step loss drift ${drift}`);
    assert.equal(r.tensors[1], r.tensors[0], 'live tensors after the webgpu epoch');
    assert.equal(r.webgpuBytes, 0, 'webgpu bytes left allocated');
    assert.deepEqual(s.errors, []);
  });

  test('a gradient does not flow back through to(\'webgpu\') into a cpu leaf: refused, nothing kept, training goes on', async () => {
    const r = await s.run(async (wt) => {
      const x = wt.randn([2, 3]).requiresGrad_();
      let message = null;
      try {
        wt.tidy(() => x.to('webgpu').mul(2).sum().backward());
      } catch (e) {
        message = e.message;
      }
      const kept = x.grad;
      // the same tensor moved first, then made to require grad, trains as usual
      const y = x.detach().to('webgpu').requiresGrad_();
      wt.tidy(() => y.mul(2).sum().backward());
      const grad = await y.grad.toArrayAsync();
      x.dispose();
      y.dispose();
      return { message, kept, grad };
    });
    assert.equal(r.error, undefined, r.error?.join('\n'));
    assert.match(r.message, /invalid gradient at index 0 - expected device cpu but got webgpu \(a gradient cannot flow back through to\('webgpu'\)/);
    assert.equal(r.kept, null);
    assert.deepEqual(r.grad, [[2, 2, 2], [2, 2, 2]]);
  });
});
