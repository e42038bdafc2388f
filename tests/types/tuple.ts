// Two-result ops and scans (js/reduce.d.ts, js/optable.d.ts), checked by tsc --noEmit.
import { init, initWorker } from 'weft';
import type { Tensor, ValuesIndices, WorkerTensor } from 'weft';

async function tuples() {
  const wt = await init();
  const x: Tensor = wt.rand([2, 3, 4]);
  const r: ValuesIndices = wt.max(x, 1);
  const v: Tensor = r.values;
  const i: Tensor = r.indices;
  const [v2, i2] = wt.min(x, -1, { keepdim: true });
  const first: Tensor = x.max(0)[0];
  const out = wt.max(x, 2, { keepdim: false, out: [v, i] });
  const all: Tensor = wt.max(x);
  const [var_, mean] = wt.varMean(x, [0, 1], { correction: 0, keepdim: true });
  const [sd, m2]: [Tensor, Tensor] = x.stdMean();
  const c: Tensor = wt.cumsum(x, 1, { dtype: 'float64' });
  const p: Tensor = x.cumprod(-1);
  const ip: Tensor = x.cumsum_(0);
  const ip2: Tensor = x.cumprod_(0);
  console.log(v2, i2, first, out.indices, all, var_, mean, sd, m2, c, p, ip, ip2);
  // @ts-expect-error a tuple has no dtype
  console.log(r.dtype);
  // @ts-expect-error cumsum needs a dim
  wt.cumsum(x);
  // @ts-expect-error out takes two tensors
  wt.max(x, 1, { out: v });
  const ww = await initWorker();
  const xw: WorkerTensor = ww.rand([2, 3]);
  const { values, indices } = await ww.max(xw, 1);
  const wv: WorkerTensor = values;
  const [a, b] = await ww.varMean(xw);
  console.log(wv, indices, a, b);
}

tuples();
