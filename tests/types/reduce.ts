// The reductions' declarations (js/reduce.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { ReductionPlan, Tensor } from 'weft';

async function reductions() {
  const wt = await init();
  const x: Tensor = wt.rand([2, 3, 4]);
  const a: Tensor = wt.sum(x);
  const b: Tensor = wt.sum(x, 1, { keepdim: true, dtype: 'float64' });
  const c: Tensor = x.sum([0, 2]);
  const d: Tensor = x.mean(-1, { keepdim: true });
  const e: Tensor = wt.prod(x, 0, { dtype: 'float64' });
  const f: Tensor = wt.amax(x, [1, 2], { keepdim: false });
  const g: Tensor = x.amin();
  const i: Tensor = wt.argmax(x, 1, { keepdim: true });
  const j: Tensor = x.argmin();
  const m: Tensor = wt.max(x);
  const mo: Tensor = wt.max(x, m, { out: m });
  const mn: Tensor = x.min(m);
  console.log(mo, mn);
  const sm: Tensor = wt.softmax(x, -1);
  const lsm: Tensor = x.logSoftmax(1, { dtype: 'float64' });
  console.log(i, j, m, x.min(), sm, lsm);
  const v: Tensor = wt.var(x, [0, 1], { keepdim: true, correction: 0 });
  const sd: Tensor = x.std(1, { unbiased: false });
  const vo: Tensor = wt.var(x, 1, { correction: 0, out: v });
  console.log(vo);
  console.log(v, sd, x.var());
  // @ts-expect-error softmax needs a dim
  wt.softmax(x);
  // @ts-expect-error argmax takes one dim
  x.argmax([0, 1]);
  const out = wt.empty([0]);
  wt.sum(x, 0, { out });
  const plan = wt.explain('sum', x, [2]);
  const r: ReductionPlan | undefined = plan?.reduction;
  console.log(a, b, c, d, e, f, g, r?.split, r?.accDtype);
  // @ts-expect-error prod takes one dim
  wt.prod(x, [0, 1]);
  // @ts-expect-error keepdim is a boolean
  x.sum(0, { keepdim: 1 });
}

reductions();
