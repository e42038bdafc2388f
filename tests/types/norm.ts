// norm / all / any / logsumexp declarations (js/reduce.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { Tensor } from 'weft';

async function norms() {
  const wt = await init();
  const x: Tensor = wt.rand([2, 3, 4]);
  const a: Tensor = wt.norm(x);
  const b: Tensor = wt.norm(x, 1, [0, 2], { keepdim: true });
  const c: Tensor = x.norm(Infinity, -1, { dtype: 'float64' });
  const d: Tensor = x.norm('fro', [0, 1]);
  const e: Tensor = x.norm(null, 1, { out: wt.empty([0]) });
  const f: Tensor = wt.all(x);
  const g: Tensor = x.any(1, { keepdim: true });
  const h: Tensor = wt.logsumexp(x, [0, 1]);
  const i: Tensor = x.logsumexp(-1, { keepdim: true });
  console.log(a, b, c, d, e, f, g, h, i);
  // @ts-expect-error all takes one dim
  x.all([0, 1]);
  // @ts-expect-error logsumexp needs a dim
  wt.logsumexp(x);
  // @ts-expect-error p is a number, null or 'fro'
  x.norm('inf');
}

norms();
