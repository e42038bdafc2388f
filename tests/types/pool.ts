// The pools' declarations (js/pool.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { PoolPlan, Tensor } from 'weft';

async function pools() {
  const wt = await init();
  const x: Tensor = wt.rand([2, 3, 8, 8]);
  const a: Tensor = wt.maxPool2d(x, 2);
  const b: Tensor = wt.maxPool2d(x, [3, 3], { stride: 2, padding: 1, dilation: 1, ceilMode: true });
  const c: Tensor = x.maxPool2d(2, { stride: null });
  const d: Tensor = wt.avgPool2d(x, 3, { stride: [1, 1], padding: 1, countIncludePad: false, divisorOverride: 4 });
  const e: Tensor = x.avgPool2d([2, 2], { ceilMode: true, out: wt.empty([0]) });
  const f: Tensor = wt.adaptiveAvgPool2d(x, [null, 4]);
  const g: Tensor = x.adaptiveAvgPool2d(1);
  console.log(a, b, c, d, e, f, g);
  // @ts-expect-error avg_pool2d has no dilation
  wt.avgPool2d(x, 2, { dilation: 2 });
  // @ts-expect-error a size is a number or an array
  wt.maxPool2d(x, '2');
  const plan = wt.explain('max_pool2d', x, [2, 2]) as unknown as PoolPlan;
  console.log(plan.path);
}
void pools;
