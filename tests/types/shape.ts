// The shape, fill and random ops' declarations (js/shape.d.ts), checked by tsc --noEmit with example.ts.
import { init } from 'weft';
import type { Tensor } from 'weft';

async function shapes() {
  const wt = await init();
  const x: Tensor = wt.rand([2, 3, 4]);
  const reps = wt.tensor([1, 2, 0], { dtype: 'int64' });
  const out = wt.empty([0]);
  const views: Tensor[] = [
    x.flip(0, 2), x.flip([1]), wt.flip(x, [-1]), x.roll(1), x.roll([1, 2], [0, 1]), wt.roll(x, 3, 2),
    x.repeat(2, 1, 1), x.repeat([1, 2, 3]), x.tile([2]), wt.tile(x, 3),
    x.repeatInterleave(2), x.repeatInterleave(reps, 1), x.repeatInterleave(2, { dim: 0, outputSize: 4 }),
    wt.repeatInterleave(x, 2, 0), wt.repeatInterleave(x, reps, { dim: 1 }), wt.repeatInterleave(reps),
    x.tril(), x.tril(1, { out }), x.triu({ diagonal: -1 }), x.tril({ diagonal: 2 }), x.triu(1), x.tril_(), x.triu_(2),
    wt.tril(x, 1), wt.triu(x, 0, { out }),
    x.diag(), x.diag(1, { out }), wt.diag(x, -1), x.diagonal(), x.diagonal(0, 1, 2), x.diagonal({ dim1: -2, dim2: -1 }),
    wt.diagonal(x, 1),
    x.clamp(0, 1), x.clamp({ max: 0.5 }), x.clamp(reps, null, { out }), x.clamp_(0), x.clamp_({ min: -1 }),
    wt.clamp(x, -1, 1), wt.clamp(x, { min: 0 }), x.clampMin(0), x.clampMax(reps, { out }), x.clampMin_(0),
    x.clampMax_(1), wt.clampMin(x, 0), wt.clampMax(x, 1),
    x.bernoulli(), x.bernoulli(0.5), x.bernoulli_(0.25), x.bernoulli_(x), wt.bernoulli(x, 0.1),
    x.multinomial(2), x.multinomial(3, true, { out: wt.empty([0], { dtype: 'int64' }) }), wt.multinomial(x, 1),
  ];
  const f: Tensor<'float32'> = wt.linspace(0, 1, 5);
  const g: Tensor<'float64'> = wt.logspace(0, 2, 3, 2, { dtype: 'float64' });
  const h: Tensor<'int32'> = wt.eye(2, 3, { dtype: 'int32' });
  const i: Tensor<'float32'> = wt.eye(3);
  const j: Tensor<'int8'> = wt.zerosLike(x, { dtype: 'int8', memoryFormat: 'preserve_format' });
  const k: Tensor = wt.onesLike(x);
  const l: Tensor<'bool'> = wt.onesLike(x, { dtype: 'bool' });
  const m: Tensor<'float64'> = wt.fullLike(x, 2, { dtype: 'float64' });
  const n: Tensor = wt.fullLike(x, 7, { memoryFormat: 'contiguous_format' });
  const o: Tensor = wt.randLike(x);
  const p: Tensor = wt.randnLike(x, { memoryFormat: 'preserve_format' });
  const q: Tensor = wt.randint(10, [2, 2]);
  const r: Tensor = wt.randint(-3, 3, [4], { dtype: 'int32' });
  const s: Tensor = wt.randperm(5, { device: 'meta' });
  for (const t of [...views, f, g, h, i, j, k, l, m, n, o, p, q, r, s, x, reps, out]) t.dispose();
}

void shapes;
