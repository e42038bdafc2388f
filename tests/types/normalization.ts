// The normalizations' declarations (js/norm.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { BatchNormOptions, Tensor } from 'weft';

async function normalizations() {
  const wt = await init();
  const x: Tensor = wt.rand([2, 3, 4, 4]);
  const rm = wt.zeros([3]), rv = wt.ones([3]), w = wt.ones([3]), b = wt.zeros([3]);
  const opts: BatchNormOptions = { training: true, momentum: 0.1, eps: 1e-5 };
  const a: Tensor = wt.batchNorm(x, rm, rv, w, b, opts);
  const c: Tensor = wt.batchNorm(x, rm, rv);
  const d: Tensor = wt.batchNorm(x, null, null, null, null, true, 0.1);
  const e: Tensor = wt.layerNorm(x, [4, 4], null, null, { eps: 1e-6 });
  const f: Tensor = wt.layerNorm(x, 4);
  const g: Tensor = wt.groupNorm(x, 3, w, b, { eps: 1e-5 });
  console.log(a, c, d, e, f, g);
  // @ts-expect-error training is a boolean
  wt.batchNorm(x, rm, rv, w, b, { training: 'yes' });
  // @ts-expect-error numGroups is a number
  wt.groupNorm(x, [3]);
}
void normalizations;
