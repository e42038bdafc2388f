// Sorting and selecting (js/optable.d.ts, from src/ops/sort.def), checked by tsc --noEmit.
import { init, initWorker } from 'weft';
import type { Tensor, ValuesIndices, WorkerTensor } from 'weft';

async function sorting() {
  const wt = await init();
  const x: Tensor = wt.rand([4, 5]);
  const s: ValuesIndices = x.sort();
  const [sv, si] = wt.sort(x, 0, true);
  const st: Tensor = x.sort({ stable: true, dim: 0, descending: true }).indices;
  const a: Tensor = wt.argsort(x, 1, true);
  const as: Tensor = x.argsort({ stable: true });
  const m: Tensor = x.msort();
  const { values, indices } = x.topk(2, 1, false, true);
  const t2 = wt.topk(x, 1, 0, true, true, { out: [values, indices] });
  const k: Tensor = x.kthvalue(2, 1, true).values;
  const u: Tensor = x.unique();
  const u2 = wt.unique(x, { returnInverse: true, sorted: false });
  const inv: Tensor = u2.inverse;
  const [uv, uc] = x.unique({ returnCounts: true });
  const all = wt.unique(x, { returnInverse: true, returnCounts: true, dim: null });
  const cnt: Tensor = all.counts;
  console.log(s.values, sv, si, st, a, as, m, t2.indices, k, u, inv, uv, uc, cnt);
  // @ts-expect-error no counts unless asked
  console.log(u2.counts);
  // @ts-expect-error topk needs k
  x.topk();
  // @ts-expect-error out takes two tensors
  x.topk(1, { out: values });
  const ww = await initWorker();
  const xw: WorkerTensor = ww.rand([2, 3]);
  const r = await xw.topk(1);
  const wv: WorkerTensor = r.values;
  console.log(wv);
}

sorting();
