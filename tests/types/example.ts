// A typed tour of the API, checked by tsc --noEmit (tests/js/types.test.mjs).
// It is compiled, never run; @ts-expect-error lines prove the types refuse
// what the runtime refuses.
import { init, initWorker, WeftError } from 'weft';
import type { Backend, DType, MemoryStats, Tensor, Weft, WorkerTensor, WorkerWeft } from 'weft';

async function main(): Promise<void> {
  const wt: Weft = await init({ threads: 'auto' });
  const b: Backend = wt.backend;
  const why: string = b.reason;
  const iso: boolean | null = b.crossOriginIsolated;
  console.log(why, iso, b.variant satisfies 'simd-threads' | 'simd' | 'scalar', wt.buildId);
  await init({ variant: 'scalar', wasmPaths: '/static/weft/' });
  await init({ wasmPaths: { 'weft-simd.wasm': new URL('https://cdn.example/w.wasm') } });
  await init({ variant: 'simd', wasmBinary: new Uint8Array(8) });
  await init({ wasmBinary: { simd: new ArrayBuffer(8), scalar: new Uint8Array(8) } });
  await init({ locateFile: (path, prefix) => prefix + path, threads: 2 });
  // @ts-expect-error: no such variant
  await init({ variant: 'gpu' });

  const x: Tensor = wt.rand([1, 3, 4, 4]);
  const y = x.contiguous({ memoryFormat: 'channels_last' });
  const strides: number[] = y.stride();
  const s0: number = y.stride(0);
  const dtype: DType = y.dtype;
  const v = x.permute(0, 2, 3, 1).reshape([-1]).slice(0, 0, null, 2).unsqueeze(0);
  const values = v.data();
  const bits = wt.ones(2, { dtype: 'float16' }).data({ bits: true });
  const nested = wt.arange(6).view(2, 3).toArray();
  console.log(strides, s0, dtype, values.length, bits.length, nested, String(v));

  const kept = wt.tidy(() => {
    const a = wt.zeros([2, 2], { dtype: 'float64' });
    return { a: a.t(), n: 1 };
  });
  const ta: Tensor = kept.a;
  const p: Promise<Tensor> = wt.tidy(async () => wt.ones(3));
  wt.keep(await p);
  const m: MemoryStats = wt.memory();
  console.log(ta.shape, m.jsTensors, m.collected, m.tidyScopes, m.heapBytes);

  wt.tensor(new Float64Array([1, 2]));
  wt.tensor(new BigUint64Array([1n]));
  wt.tensor(new Uint16Array([0x3c00]), { dtype: 'float16', bits: true });
  wt.tensor([[1, 2], [3, 4]], { dtype: 'int32' });
  wt.tensor([true, false]);
  // @ts-expect-error: a string is not tensor data
  wt.tensor('1, 2');
  const npy: Uint8Array = x.toNpy();
  const back: Tensor = wt.fromNpy(npy);
  wt.fromNpy(npy.buffer);
  back.dispose();
  const workers: number = await wt.threadsReady();
  wt.setNumThreads(workers + 1);
  console.log(wt.getNumThreads(), wt.maxThreads(), wt.promoteTypes('int32', 'float16'), wt.canCast('float32', 'int64'));

  // The op table's functions and methods, declared from it (js/optable.d.ts).
  const sl: Tensor = wt.slice(x, 1, 0, null, 2);
  const ex = wt.expand(wt.ones(3), 2, 3);
  const f64 = wt.to(x, 'float64', { copy: true });
  const st = wt.asStrided(x, [2, 2], [1, 2], 0);
  const un = wt.unflatten(wt.arange(6), 0, [2, 3]);
  const act = x.sigmoid().mul(2).add(x, { alpha: 0.5 }).where(wt.gt(x, 0.5), 0);
  wt.gelu(x, { approximate: 'tanh', out: act });
  x.clone().add_(1, 2).relu_().floorDivide_(3);
  wt.pow(2, x);
  wt.ops.call('aten::add.Tensor', x, x, { alpha: 2 });
  console.log(sl.shape, ex.shape, f64.dtype, st.shape, un.shape, wt.ops.schema('where.ScalarSelf'));
  // @ts-expect-error: no such op
  wt.sigmod(x);
  // @ts-expect-error: no such method
  x.expp();
  // @ts-expect-error: no such operator
  wt.ops.call('aten::sigmod', x);
  // @ts-expect-error: unflatten's sizes are ints
  wt.unflatten(x, 0, 'a');

  try {
    x.view(7);
  } catch (e) {
    if (e instanceof WeftError) console.log(e.code, e.message);
  }

  // Worker mode: the same calls, results through promises.
  const ww: WorkerWeft = await initWorker({ threads: 2 });
  const wx: WorkerTensor = ww.rand([2, 3]);
  const wy = wx.t().contiguous();
  const arr = await wy.toArray();
  const data = await wy.data();
  const shape: number[] = await wy.shape;
  const str: string = await wy.toString();
  const fromArray = ww.tensor(new Float32Array([1, 2]), { transfer: true });
  console.log(arr, data.length, shape, str, (await ww.backend()).variant, await fromArray.toArray());
  ww.tidy((w) => w.ones(2).t());
  const ready = await wx.ready;
  console.log(ready.dtype);
  wx.dispose();

  // Training in the worker: the graph, .grad and the optimizer live there.
  const wp = ww.randn([3, 2], { requiresGrad: true });
  const winput = ww.randn([4, 3]);
  const wopt = new ww.optim.Adam([wp], { lr: 0.01 });
  await wopt.ready;
  for (let i = 0; i < 2; i++) {
    const [wloss, done] = ww.tidy((w) => {
      const l = w.mseLoss(winput.mm(wp), w.zeros([4, 2]));
      return [l, l.backward()] as const;
    });
    await done;
    await wopt.step();
    await wopt.zeroGrad();
    const lv: number | boolean = await wloss.item();
    wloss.dispose();
    console.log(lv);
  }
  const isLeaf: boolean = await wp.isLeaf;
  const needs: boolean = await wp.requiresGrad;
  const wg: WorkerTensor = wp.grad;
  const wgn: WorkerTensor | null = await wp.gradOrNull();
  wp.grad = null;
  const wy2 = wp.mul(2);
  await wy2.retainGrad();
  const retains: boolean = await wy2.retainsGrad;
  const fnName: string | undefined = (await wy2.gradFn)?.name;
  const wyDetached: WorkerTensor = wy2.detach();
  wy2.detach_();
  wp.requiresGrad = true;
  const [wgrad] = await ww.autograd.grad(wp.pow(2).sum(), [wp], { createGraph: true });
  const frozen = ww.noGrad((w) => w.ones(2).mul(wp.sum()));
  const thawed = ww.enableGrad(() => wp.mul(3));
  await ww.setGradEnabled(true);
  const enabled: boolean = await ww.isGradEnabled();
  const closureLoss = await new ww.optim.SGD([wp], { lr: 0.1, momentum: 0.9 }).step(() => wp.sum());
  const ready2: WorkerTensor = ww.ones(2).requiresGrad_();
  await ww.ones(2).requiresGrad_().sum().backward(null, { retainGraph: false });
  new ww.optim.AdamW([wp]).dispose();
  console.log(isLeaf, needs, wg.id, wgn, retains, fnName, wyDetached.id, wgrad?.id, frozen.id, thawed.id,
    enabled, closureLoss.id, ready2.id);
  await ww.terminate();
}

main();
