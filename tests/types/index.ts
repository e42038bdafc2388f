// Indexing's declarations (js/index_ops.d.ts and the generated ops), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { IndexItem, Tensor } from 'weft';

async function indexing() {
  const wt = await init();
  const x: Tensor = wt.rand([3, 4, 5]);
  const i: Tensor = wt.tensor([2, 0], { dtype: 'int64' });
  const m: Tensor = x.gt(0.5);
  const items: IndexItem[] = [1, '::2', null, '...', i, [0, 1]];
  const a: Tensor = x.index(1, '1:3', null, '...');
  const b: Tensor = x.index(...items);
  x.indexPut_([m], 0);
  const c: Tensor = x.indexPut_([':', i], wt.ones([2, 5]), { accumulate: true });
  const d: Tensor = wt.nonzero(m);
  const e: Tensor[] = wt.nonzero(m, { asTuple: true });
  const f: Tensor[] = m.nonzero({ asTuple: true });
  const g: Tensor = m.nonzero();
  const h: Tensor[] = wt.where(m);
  const k: Tensor = wt.where(m, x, 0);
  const n: Tensor = wt.indexSelect(x, 1, i);
  const o: Tensor = x.gather(0, wt.zeros([1, 4, 5], { dtype: 'int64' }));
  console.log(a, b, c, d, e, f, g, h, k, n, o);
  // @ts-expect-error accumulate is a boolean
  x.indexPut_([i], 1, { accumulate: 1 });
}
void indexing;
