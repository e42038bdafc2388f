// A float64 finite-difference gradcheck of every autograd formula (issue 15),
// as torch.autograd.gradcheck does it: the vector-Jacobian product that
// wt.autograd.grad gives for a random output gradient w against central
// differences of sum(f(x) * w). Each entry of GRADCHECK is one line: a name,
// the function, the shapes of its differentiable inputs and options; every
// entry runs on contiguous inputs, on strided (non-contiguous) ones and, when
// an input is 4-D, on channels_last ones. Index, mask and other constant
// arguments live in the function.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, counts, rng, throwsWeft } from './helpers.mjs';

const I = (wt, v) => wt.tensor(v, { dtype: 'int64' });
const B = (wt, v) => wt.tensor(v, { dtype: 'bool' });
const MASK34 = [[true, false, true, false], [false, false, true, true], [true, true, false, false]];

// [name, f(wt, ...inputs), input shapes, options]; options: pos (inputs in
// [0.5, 1.5]; an array: per input), values (fixed values per input, null: random).
const GRADCHECK = [
  // ---- binary, with broadcasting ----
  ['add', (wt, a, b) => wt.add(a, b, { alpha: 0.5 }), [[3, 4], [4]]],
  ['add 4-D', (wt, a, b) => a.add(b), [[2, 3, 2, 2], [3, 1, 1]]],
  ['add_scalar', (wt, a) => a.add(2), [[3, 4]]],
  ['sub', (wt, a, b) => wt.sub(a, b, { alpha: 2 }), [[3, 1], [1, 4]]],
  ['sub_scalar', (wt, a) => a.sub(2), [[5]]],
  ['mul', (wt, a, b) => a.mul(b), [[3, 4], [1, 4]]],
  ['mul_scalar', (wt, a) => a.mul(-1.5), [[3, 4]]],
  ['div', (wt, a, b) => a.div(b), [[3, 4], [4]], { pos: [false, true] }],
  ['div_scalar', (wt, a) => a.div(4), [[3, 4]]],
  ['pow', (wt, a, b) => a.pow(b), [[3, 4], [4]], { pos: [true, false] }],
  ['pow_scalar', (wt, a) => a.pow(2.5), [[3, 4]], { pos: true }],
  ['pow (number base)', (wt, e) => wt.pow(2.5, e), [[3, 4]]],
  ['maximum', (wt, a, b) => wt.maximum(a, b), [[3, 4], [4]]],
  ['minimum', (wt, a, b) => wt.minimum(a, b), [[3, 4], [3, 4]]],
  ['remainder', (wt, a, b) => a.remainder(b), [[3, 4], [4]], { pos: [false, true] }],
  ['remainder_scalar', (wt, a) => a.remainder(0.7), [[3, 4]]],
  ['where', (wt, a, b) => wt.where(B(wt, MASK34), a, b), [[3, 4], [4]]],
  ['clamp', (wt, a) => a.clamp(-0.5, 0.5), [[3, 4]]],
  ['clamp min only', (wt, a) => a.clamp(-0.2, null), [[3, 4]]],
  ['clamp (tensor bounds)', (wt, a, lo, hi) => a.clamp(lo, hi), [[3, 4], [4], [3, 1]]],
  ['clamp_min', (wt, a) => a.clampMin(0.1), [[3, 4]]],
  ['clamp_min (tensor)', (wt, a, m) => a.clampMin(m), [[3, 4], [4]]],
  ['clamp_max', (wt, a) => a.clampMax(0.1), [[3, 4]]],
  ['clamp_max (tensor)', (wt, a, m) => a.clampMax(m), [[3, 4], [3, 1]]],
  // ---- unary ----
  ['neg', (wt, a) => a.neg(), [[3, 4]]],
  ['exp', (wt, a) => a.exp(), [[3, 4]]],
  ['exp2', (wt, a) => a.exp2(), [[3, 4]]],
  ['expm1', (wt, a) => a.expm1(), [[3, 4]]],
  ['log', (wt, a) => a.log(), [[3, 4]], { pos: true }],
  ['log1p', (wt, a) => a.log1p(), [[3, 4]], { pos: true }],
  ['sqrt', (wt, a) => a.sqrt(), [[3, 4]], { pos: true }],
  ['rsqrt', (wt, a) => a.rsqrt(), [[3, 4]], { pos: true }],
  ['reciprocal', (wt, a) => a.reciprocal(), [[3, 4]], { pos: true }],
  ['sin', (wt, a) => a.sin(), [[3, 4]]],
  ['cos', (wt, a) => a.cos(), [[3, 4]]],
  ['tan', (wt, a) => a.tan(), [[3, 4]]],
  ['tanh', (wt, a) => a.tanh(), [[3, 4]]],
  ['sigmoid', (wt, a) => a.sigmoid(), [[2, 3, 2, 2]]],
  ['relu', (wt, a) => a.relu(), [[2, 3, 2, 2]]],
  ['gelu', (wt, a) => a.gelu(), [[3, 4]]],
  ['gelu tanh', (wt, a) => a.gelu({ approximate: 'tanh' }), [[3, 4]]],
  ['erf', (wt, a) => a.erf(), [[3, 4]]],
  ['abs', (wt, a) => a.abs(), [[3, 4]]],
  ['sign', (wt, a) => a.sign(), [[3, 4]]],
  ['floor', (wt, a) => a.floor(), [[3, 4]]],
  ['ceil', (wt, a) => a.ceil(), [[3, 4]]],
  ['round', (wt, a) => a.round(), [[3, 4]]],
  ['trunc', (wt, a) => a.trunc(), [[3, 4]]],
  // ---- views and copies ----
  ['view', (wt, a) => a.view(6, 4), [[2, 3, 4]]],
  ['reshape', (wt, a) => a.reshape(2, 4, 3), [[6, 4]]],
  ['flatten', (wt, a) => a.flatten(), [[2, 3, 2]]],
  ['unflatten', (wt, a) => a.unflatten(1, [2, 2]), [[3, 4]]],
  ['squeeze', (wt, a) => a.squeeze(), [[3, 1, 4]]],
  ['squeeze dim', (wt, a) => a.squeeze(1), [[3, 1, 4]]],
  ['unsqueeze', (wt, a) => a.unsqueeze(1), [[3, 4]]],
  ['permute', (wt, a) => a.permute(2, 0, 3, 1), [[2, 3, 2, 2]]],
  ['movedim', (wt, a) => a.movedim([0, 1], [2, 0]), [[2, 3, 4]]],
  ['transpose', (wt, a) => a.transpose(0, 2), [[2, 3, 4]]],
  ['t', (wt, a) => a.t(), [[3, 4]]],
  ['expand', (wt, a) => a.expand(2, 4, 3), [[1, 3]]],
  ['select', (wt, a) => a.select(1, 2), [[3, 4]]],
  ['slice', (wt, a) => a.slice(1, 1, null, 2), [[3, 4]]],
  ['narrow', (wt, a) => a.narrow(0, 1, 2), [[3, 4]]],
  ['diagonal', (wt, a) => a.diagonal(1, 0, 2), [[3, 2, 4]]],
  ['clone', (wt, a) => a.clone(), [[3, 4]]],
  ['contiguous', (wt, a) => a.contiguous(), [[2, 3, 2, 2]]],
  ['to (copy)', (wt, a) => a.to('float64', { copy: true }), [[3, 4]]],
  // ---- reductions and scans ----
  ['sum', (wt, a) => a.sum(), [[3, 4]]],
  ['sum dim', (wt, a) => a.sum(1), [[2, 3, 2, 2]]],
  ['sum keepdim', (wt, a) => a.sum(-1, { keepdim: true }), [[3, 4]]],
  ['mean', (wt, a) => a.mean(), [[3, 4]]],
  ['mean dims', (wt, a) => a.mean([0, 2]), [[2, 3, 4]]],
  ['amax', (wt, a) => a.amax(0), [[3, 4]]],
  ['amin', (wt, a) => a.amin([0, 2], true), [[2, 3, 4]]],
  ['max', (wt, a) => a.max(), [[3, 4]]],
  ['min', (wt, a) => a.min(), [[3, 4]]],
  ['prod', (wt, a) => a.prod(), [[2, 3]]],
  ['prod one zero', (wt, a) => a.prod(), [[2, 3]], { values: [[0.5, -1.25, 0, 0.75, 1.5, -0.5]] }],
  ['prod dim, zeros', (wt, a) => a.prod(1), [[2, 3]], { values: [[0.5, 0, 0, 0.75, 0, -0.5]] }],
  ['prod dim keepdim', (wt, a) => a.prod(0, true), [[3, 4]]],
  ['cumsum', (wt, a) => a.cumsum(1), [[3, 4]]],
  ['cumprod', (wt, a) => a.cumprod(-1), [[3, 4]]],
  ['cumprod, zeros', (wt, a) => a.cumprod(0), [[4, 2]], { values: [[0.5, 0, 1.5, -0.5, 0, 2, -1.25, 0]] }],
  ['logsumexp', (wt, a) => a.logsumexp(1), [[3, 4]]],
  ['logsumexp dims keepdim', (wt, a) => a.logsumexp([0, 2], true), [[2, 3, 4]]],
  ['var', (wt, a) => a.var(), [[3, 4]]],
  ['var dim', (wt, a) => a.var(1), [[3, 4]]],
  ['var correction 0 keepdim', (wt, a) => a.var([0, 2], { correction: 0, keepdim: true }), [[2, 3, 4]]],
  ['std', (wt, a) => a.std(), [[3, 4]]],
  ['std dim unbiased=false', (wt, a) => a.std(0, false), [[3, 4]]],
  ['var_mean', (wt, a) => { const [v, m] = wt.varMean(a, 1); return v.add(m.mul(2)); }, [[3, 4]]],
  ['std_mean', (wt, a) => { const [s, m] = wt.stdMean(a, [0], { correction: 0 }); return s.mul(m); }, [[3, 4]]],
  ['norm', (wt, a) => a.norm(), [[3, 4]]],
  ['norm 1', (wt, a) => a.norm(1), [[3, 4]]],
  ['norm 3 dim', (wt, a) => a.norm(3, 1), [[3, 4]]],
  ['norm 0.5 dim keepdim', (wt, a) => a.norm(0.5, [0], true), [[3, 4]]],
  ['norm inf', (wt, a) => a.norm(Infinity), [[3, 4]]],
  ['norm -inf dim', (wt, a) => a.norm(-Infinity, 1), [[3, 4]]],
  ['max dim', (wt, a) => a.max(1).values, [[3, 4]]],
  ['min dim keepdim', (wt, a) => a.min(0, true).values, [[2, 3, 2, 2]]],
  ['kthvalue', (wt, a) => a.kthvalue(2, 1).values, [[3, 4]]],
  ['sort', (wt, a) => a.sort(1, true).values, [[3, 4]]],
  ['sort stable', (wt, a) => a.sort({ stable: true, dim: 0 }).values, [[3, 4]]],
  ['topk', (wt, a) => a.topk(2).values, [[3, 4]]],
  ['msort', (wt, a) => a.msort(), [[3, 4]]],
  ['softmax', (wt, a) => wt.softmax(a, 1), [[2, 3, 2, 2]]],
  ['log_softmax', (wt, a) => wt.logSoftmax(a, -1), [[3, 4]]],
  // ---- matrix products ----
  ['mm', (wt, a, b) => a.mm(b), [[3, 4], [4, 2]]],
  ['bmm', (wt, a, b) => a.bmm(b), [[2, 3, 4], [2, 4, 2]]],
  ['addmm', (wt, c, a, b) => wt.addmm(c, a, b, { beta: 0.5, alpha: 2 }), [[2], [3, 4], [4, 2]]],
  ['baddbmm', (wt, c, a, b) => wt.baddbmm(c, a, b, { beta: 0.5, alpha: 2 }), [[3, 1], [2, 3, 4], [2, 4, 1]]],
  ['dot', (wt, a, b) => wt.dot(a, b), [[5], [5]]],
  ['mv', (wt, a, b) => wt.mv(a, b), [[3, 4], [4]]],
  ['outer', (wt, a, b) => wt.outer(a, b), [[3], [4]]],
  ['matmul 1-D x 1-D', (wt, a, b) => a.matmul(b), [[4], [4]]],
  ['matmul 2-D x 1-D', (wt, a, b) => a.matmul(b), [[3, 4], [4]]],
  ['matmul 1-D x 2-D', (wt, a, b) => a.matmul(b), [[4], [4, 2]]],
  ['matmul 3-D x 2-D', (wt, a, b) => a.matmul(b), [[2, 3, 4], [4, 2]]],
  ['matmul broadcast batch', (wt, a, b) => a.matmul(b), [[2, 1, 3, 4], [3, 4, 2]]],
  ['linear', (wt, x, w, b) => wt.linear(x, w, b), [[3, 4], [2, 4], [2]]],
  ['linear no bias', (wt, x, w) => wt.linear(x, w), [[2, 3, 4], [2, 4]]],
  // ---- losses ----
  ['mse_loss', (wt, a, b) => wt.mseLoss(a, b), [[3, 4], [3, 4]]],
  ['nll_loss', (wt, a) => wt.nllLoss(a, I(wt, [0, 3, 1])), [[3, 4]]],
  ['cross_entropy', (wt, a) => wt.crossEntropy(a, I(wt, [2, 0, 1])), [[3, 4]]],
  ['bce_with_logits', (wt, a, t) => wt.binaryCrossEntropyWithLogits(a, t), [[3, 4], [3, 4]], { pos: [false, true] }],
  // ---- indexing ----
  ['index_select', (wt, a) => a.indexSelect(1, I(wt, [3, 0, 3])), [[3, 4]]],
  ['gather', (wt, a) => a.gather(1, I(wt, [[0, 0], [3, 1], [2, 2]])), [[3, 4]]],
  ['scatter (src)', (wt, a, s) => a.scatter(1, I(wt, [[3, 0], [1, 2], [0, 3]]), s), [[3, 4], [3, 2]]],
  ['scatter (value)', (wt, a) => a.scatter(0, I(wt, [[2, 0, 1, 1]]), 0.5), [[3, 4]]],
  ['scatter_add', (wt, a, s) => a.scatterAdd(1, I(wt, [[3, 3], [1, 2], [0, 0]]), s), [[3, 4], [3, 2]]],
  ['take', (wt, a) => a.take(I(wt, [[0, 11], [5, -1]])), [[3, 4]]],
  ['masked_fill (number)', (wt, a) => a.maskedFill(B(wt, MASK34), 0.5), [[3, 4]]],
  ['masked_fill (tensor)', (wt, a, v) => a.maskedFill(B(wt, MASK34[0]), v), [[3, 4], []]],
  ['masked_select (broadcast mask)', (wt, a) => a.maskedSelect(B(wt, MASK34[1])), [[3, 4]]],
  ['index', (wt, a) => wt.index(a, [null, I(wt, [2, 0, 2])]), [[3, 4]]],
  ['index (mask)', (wt, a) => wt.index(a, [B(wt, MASK34)]), [[3, 4]]],
  ['index_put', (wt, a, v) => a.indexPut([I(wt, [0, 2])], v), [[3, 4], [4]]],
  ['index_put accumulate', (wt, a, v) => a.indexPut([I(wt, [0, 0]), I(wt, [1, 1])], v, true), [[3, 4], [2]]],
  // ---- joins (Tensor[] inputs) ----
  ['cat', (wt, a, b, c) => wt.cat([a, b, c], 1), [[3, 2], [3, 1], [3, 3]]],
  ['cat 4-D', (wt, a, b) => wt.cat([a, b], 0), [[1, 3, 2, 2], [2, 3, 2, 2]]],
  ['cat, empty 1-D', (wt, a, b) => wt.cat([a, b], -1), [[2, 2], [0]]],
  ['stack', (wt, a, b) => wt.stack([a, b], -1), [[3, 2], [3, 2]]],
  ['stack 4-D', (wt, a, b) => wt.stack([a, b], 1), [[2, 3, 2, 2], [2, 3, 2, 2]]],
  ['hstack 1-D', (wt, a, b) => wt.hstack([a, b]), [[3], [2]]],
  ['hstack', (wt, a, b) => wt.hstack([a, b]), [[3, 2], [3, 1]]],
  ['vstack', (wt, a, b) => wt.vstack([a, b]), [[3], [2, 3]]],
  ['dstack', (wt, a, b) => wt.dstack([a, b]), [[2, 3], [2, 3, 2]]],
  ['cat of a reused tensor', (wt, a) => wt.cat([a, a.mul(2), a], 0), [[2, 3]]],
  ['split', (wt, a) => { const [p, q] = a.split(2, 1); return p.mul(q); }, [[3, 4]]],
  ['split sizes', (wt, a) => { const [p, q] = a.split([1, 2]); return q.sum(0).add(p.squeeze(0)); }, [[3, 4]]],
  ['chunk', (wt, a) => { const [p, , r] = a.chunk(3, 0); return p.sub(r); }, [[3, 4]]],
  ['unbind', (wt, a) => { const [p, q] = a.unbind(1); return p.mul(q); }, [[3, 2]]],
  ['tensor_split', (wt, a) => { const [p, q] = wt.tensorSplit(a, [1], 1); return q.mul(p); }, [[3, 2]]],
  // multi-output nodes: pieces unused (zeros in their place), used twice, the short last piece
  ['split one piece of three', (wt, a) => a.split(2, 1)[1].exp(), [[3, 5]]],
  ['split piece used twice', (wt, a) => { const [p, , r] = a.split(2, 1); return p.mul(p).add(r.sum()); }, [[3, 5]]],
  ['split_with_sizes', (wt, a) => { const [, q, r] = a.splitWithSizes([1, 2, 1]); return q.sum(0).mul(r); }, [[4, 3]]],
  ['unbind one row of four', (wt, a) => a.unbind(0)[2].sin(), [[4, 3]]],
  ['chunk uneven', (wt, a) => { const [, q, r] = a.chunk(3, 1); return q.sum(1).mul(r.squeeze(1)); }, [[2, 5]]],
  // ---- shape ----
  ['flip', (wt, a) => a.flip(0, 3), [[2, 3, 2, 2]]],
  ['roll', (wt, a) => a.roll([1, -2], [0, 1]), [[3, 4]]],
  ['roll flat', (wt, a) => a.roll(5), [[3, 4]]],
  ['repeat', (wt, a) => a.repeat(2, 1, 3), [[3, 2]]],
  ['tile', (wt, a) => a.tile(2), [[3, 2]]],
  ['repeat_interleave', (wt, a) => a.repeatInterleave(2, 1), [[3, 2]]],
  ['repeat_interleave flat', (wt, a) => a.repeatInterleave(3), [[2, 2]]],
  ['repeat_interleave (tensor)', (wt, a) => a.repeatInterleave(I(wt, [2, 0, 1]), 0), [[3, 2]]],
  ['tril', (wt, a) => a.tril(), [[3, 4]]],
  ['triu', (wt, a) => a.triu(1), [[3, 4]]],
  ['diag of a vector', (wt, a) => a.diag(-1), [[3]]],
  ['diag of a matrix', (wt, a) => a.diag(1), [[3, 4]]],
];

const numel = (shape) => shape.reduce((a, b) => a * b, 1);

// The values, laid out: strided puts them one element apart in a bigger
// buffer (a non-contiguous view); channels_last permutes a 4-D tensor's memory.
function make(wt, shape, values, layout) {
  return wt.noGrad(() => wt.tidy(() => {
    const c = wt.tensor(Float64Array.from(values), { dtype: 'float64' }).reshape(shape);
    if (layout === 'strided' && shape.length > 0) return wt.stack([c, c.neg()], -1).select(-1, 0);
    if (layout === 'channels_last' && shape.length === 4) return c.contiguous({ memoryFormat: 'channels_last' });
    return c.clone();
  }));
}

function flat(t) {
  return [t.contiguous().toArray()].flat(Infinity);
}

function gradcheck(wt, [name, f, shapes, opts = {}], layout, rand) {
  const pos = (i) => (Array.isArray(opts.pos) ? opts.pos[i] : opts.pos);
  const vals = shapes.map((s, i) => opts.values?.[i] ??
    Array.from({ length: numel(s) }, () => (pos(i) ? 0.5 + rand() : 2 * rand() - 1)));
  const problems = [];
  wt.tidy(() => {
    const ins = shapes.map((s, i) => make(wt, s, vals[i], layout).requiresGrad_());
    const out = f(wt, ...ins);
    const w = wt.tensor(Float64Array.from({ length: numel(out.shape) }, () => 2 * rand() - 1), { dtype: 'float64' })
      .reshape(out.shape);
    const grads = wt.autograd.grad(out, ins, { gradOutputs: w });
    // a second-order check's f takes gradients itself: it runs with recording on
    const mode = opts.secondOrder ? wt.enableGrad : wt.noGrad;
    const objective = (k, j, h) => mode(() => wt.tidy(() => {
      const v = vals[k].slice();
      v[j] += h;
      const moved = shapes.map((s, i) => {
        if (i !== k) return ins[i];
        const m = make(wt, s, v, layout);
        return opts.secondOrder ? m.requiresGrad_() : m;
      });
      return f(wt, ...moved).mul(w).sum().item();
    }));
    const h = 1e-6;
    grads.forEach((g, k) => {
      assert.deepEqual(g.shape, shapes[k], `${name} (${layout}): gradient ${k} shape`);
      assert.equal(g.dtype, 'float64');
      const ana = flat(g);
      for (let j = 0; j < ana.length; j++) {
        const num = (objective(k, j, h) - objective(k, j, -h)) / (2 * h);
        if (Math.abs(num - ana[j]) > 1e-5 * (1 + Math.abs(num))) {
          problems.push(`${name} (${layout}): input ${k} [${j}]: analytic ${ana[j]}, numeric ${num}`);
          break;
        }
      }
    });
  });
  return problems;
}

test('gradcheck: every formula against central differences (float64)', async () => {
  const wt = await init();
  const rand = rng(15);
  const before = counts(wt);
  const problems = [];
  for (const entry of GRADCHECK) {
    const layouts = ['contiguous', 'strided'];
    if (entry[2].some((s) => s.length === 4)) layouts.push('channels_last');
    for (const layout of layouts) {
      try {
        problems.push(...gradcheck(wt, entry, layout, rand));
      } catch (e) {
        problems.push(`${entry[0]} (${layout}): ${e.message}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.deepEqual(counts(wt), before);
});

// Second derivatives: the gradient (made with createGraph) is itself gradchecked,
// on contiguous inputs and (layouts: CL) on channels_last ones too.
const CL = ['contiguous', 'channels_last'];
const GRADGRAD = [
  ['cross_entropy', (wt, a) => wt.crossEntropy(a, I(wt, [2, 0, 1])), [[3, 4]]],
  ['nll_loss with weight, sum', (wt, a) => wt.nllLoss(a.logSoftmax(1), I(wt, [1, 1, 3]), wt.tensor([1, 2, 0.5, 3],
    { dtype: 'float64' }), 'sum'), [[3, 4]]],
  ['gelu', (wt, a) => a.gelu().sum(), [[3, 4]]],
  ['logsumexp', (wt, a) => a.logsumexp(1).sum(), [[3, 4]]],
  ['prod', (wt, a) => a.prod(), [[2, 3]]],
  ['norm', (wt, a) => a.norm(), [[3, 4]]],
  ['var', (wt, a) => a.var(1).sum(), [[3, 4]]],
  ['cumsum', (wt, a) => a.cumsum(1).pow(2).sum(), [[3, 4]]],
  ['gather', (wt, a) => a.gather(1, I(wt, [[0, 0], [3, 1], [2, 2]])).pow(3).sum(), [[3, 4]]],
  ['cat', (wt, a, b) => wt.cat([a, b], 0).pow(3).sum(), [[2, 3], [1, 3]]],
  ['split', (wt, a) => { const [p, , r] = a.split(2, 1); return p.pow(3).sum().add(r.mul(p.sum(1, true)).sum()); },
    [[3, 5]]],
  ['split_with_sizes', (wt, a) => a.splitWithSizes([1, 3])[1].pow(3).sum(), [[4, 2]]],
  ['chunk', (wt, a) => { const [p, q] = a.chunk(2); return p.mul(q).sin().sum(); }, [[4, 2]]],
  ['unbind', (wt, a) => { const [p, , r] = a.unbind(1); return p.mul(r).exp().sum(); }, [[3, 3]]],
  // the backward ops recorded in turn (select_backward, convolution_backward, the pools' backward, ...)
  ['select', (wt, a) => a.select(1, 2).pow(3).sum(), [[3, 4]]],
  ['slice', (wt, a) => a.slice(1, 1, null, 2).pow(3).sum(), [[3, 4]]],
  ['narrow', (wt, a) => a.narrow(0, 1, 2).pow(3).sum(), [[3, 4]]],
  ['diagonal', (wt, a) => a.diagonal(1, 0, 2).pow(3).sum(), [[3, 2, 4]]],
  ['diag of a matrix', (wt, a) => a.diag(-1).pow(3).sum(), [[3, 4]]],
  ['unbind of two', (wt, a) => { const [p, q] = a.unbind(1); return p.mul(q).pow(2).sum(); }, [[3, 2]]],
  ['conv2d groups, stride, padding, dilation', (wt, x, w, b) => wt.conv2d(x, w, b, [2, 1], [1, 0], [1, 2], 2)
    .pow(2).sum(), [[2, 4, 5, 6], [6, 2, 3, 2], [6]], { layouts: CL }],
  ['conv2d unbatched', (wt, x, w) => wt.conv2d(x, w, null, 1, 1).pow(2).sum(), [[2, 4, 4], [3, 2, 3, 3]]],
  ["conv2d padding 'same'", (wt, x, w) => wt.conv2d(x, w, null, 1, 'same').pow(2).sum(), [[1, 2, 4, 4], [2, 2, 3, 3]],
    { layouts: CL }],
  ["conv2d padding 'same', even kernel (one side padded more)", (wt, x, w, b) => wt.conv2d(x, w, b, 1, 'same', [2, 1])
    .pow(2).sum(), [[1, 2, 5, 4], [3, 2, 2, 3], [3]], { layouts: CL }],
  ['conv2d then conv2d', (wt, x, w1, w2) => wt.conv2d(wt.conv2d(x, w1).tanh(), w2).sum(),
    [[1, 2, 5, 5], [3, 2, 2, 2], [1, 3, 2, 2]], { layouts: CL }],
  ['conv_transpose2d groups, stride, padding, output_padding, dilation', (wt, x, w, b) => wt.convTranspose2d(x, w, b,
    { stride: [2, 3], padding: [1, 0], outputPadding: [1, 2], groups: 2, dilation: [1, 2] }).pow(2).sum(),
  [[2, 4, 3, 3], [4, 3, 3, 2], [6]], { layouts: CL }],
  ['conv_transpose2d unbatched', (wt, x, w) => wt.convTranspose2d(x, w, null, { stride: 2 }).pow(2).sum(),
    [[2, 3, 3], [2, 3, 2, 2]]],
  ['conv_transpose2d then conv2d', (wt, x, w1, w2) => wt.conv2d(wt.convTranspose2d(x, w1, null, { stride: 2 }).tanh(),
    w2).sum(), [[1, 2, 3, 3], [2, 3, 2, 2], [1, 3, 2, 2]], { layouts: CL }],
  ['conv_transpose1d', (wt, x, w, b) => wt.convTranspose1d(x, w, b, { stride: 2, padding: 1, outputPadding: 1,
    groups: 2, dilation: 2 }).pow(2).sum(), [[2, 4, 5], [4, 3, 3], [6]]],
  ['conv1d stride, padding, dilation, groups', (wt, x, w, b) => wt.conv1d(x, w, b, { stride: 2, padding: 1,
    dilation: 2, groups: 2 }).pow(2).sum(), [[2, 4, 9], [6, 2, 3], [6]]],
  ["conv1d padding 'same', even kernel", (wt, x, w) => wt.conv1d(x, w, null, { padding: 'same' }).pow(2).sum(),
    [[3, 7], [2, 3, 4]]],
  ['adaptive_avg_pool2d to 1 x 1 (global pooling)', (wt, a) => wt.adaptiveAvgPool2d(a, 1).pow(2).sum(), [[2, 3, 4, 3]],
    { layouts: CL }],
  ['max_pool2d', (wt, a) => wt.maxPool2d(a, 3, { stride: 2, padding: 1 }).pow(2).sum(), [[2, 3, 5, 5]], { layouts: CL }],
  ['max_pool2d dilation, ceil_mode', (wt, a) => wt.maxPool2d(a, 2, { dilation: 2, ceilMode: true }).pow(3).sum(),
    [[1, 2, 6, 5]], { layouts: CL }],
  ['avg_pool2d', (wt, a) => wt.avgPool2d(a, 3, { stride: 2, padding: 1, countIncludePad: false }).pow(2).sum(),
    [[2, 3, 5, 5]], { layouts: CL }],
  ['avg_pool2d divisor_override', (wt, a) => wt.avgPool2d(a, 2, { divisorOverride: 3 }).pow(3).sum(), [[2, 4, 4]]],
  ['adaptive_avg_pool2d', (wt, a) => wt.adaptiveAvgPool2d(a, [2, 3]).pow(2).sum(), [[2, 3, 5, 5]], { layouts: CL }],
  // third order: f takes a gradient itself, which the check differentiates twice more
  ['conv2d, third order', (wt, x, w) => {
    const [gx] = wt.autograd.grad(wt.conv2d(x, w, null, 1, 1).pow(3).sum(), [x], { createGraph: true });
    return gx.pow(2).sum();
  }, [[1, 2, 3, 3], [2, 2, 2, 2]], { layouts: CL }],
  ['max_pool2d, third order', (wt, a) => {
    const [g] = wt.autograd.grad(wt.maxPool2d(a, 2).pow(3).sum(), [a], { createGraph: true });
    return g.pow(2).sum();
  }, [[1, 2, 4, 4]]],
  ['select, third order', (wt, a) => {
    const [g] = wt.autograd.grad(a.select(0, 1).pow(4).sum(), [a], { createGraph: true });
    return g.pow(2).sum();
  }, [[3, 4]]],
  // in-place writes to views: CopySlices on the base, AsStridedBackward0 on a view read after the write
  ['in-place on a view (CopySlices)', (wt, a, b) => {
    const c = a.mul(1);
    c.select(0, 1).mul_(b);
    return c.pow(3).sum();
  }, [[3, 4], [4]]],
  ['in-place on a view of a view', (wt, a) => {
    const c = a.mul(1);
    c.narrow(1, 1, 3).select(0, 2).sin_();
    return c.pow(2).sum();
  }, [[3, 4]]],
  ['in-place on a channel (CopySlices)', (wt, a) => {
    const c = a.mul(1);
    c.select(1, 1).tanh_();
    return c.pow(2).sum();
  }, [[2, 3, 2, 2]], { layouts: CL }],
  ['view read after an in-place write (AsStridedBackward0)', (wt, a) => {
    const c = a.mul(1);
    const v = c.narrow(1, 1, 2);
    c.sin_();
    return v.pow(3).sum();
  }, [[3, 4]]],
];

test('gradgradcheck: first derivatives made with createGraph differentiate again', async () => {
  const wt = await init();
  const rand = rng(16);
  const before = counts(wt);
  const problems = [];
  for (const [name, f, shapes, opts] of GRADGRAD) {
    // d/dx of sum(grad_x f * v) for a fixed v, against central differences of it
    const n = shapes.map((s) => s.reduce((a, b) => a * b, 1));
    const v = n.map((k) => Array.from({ length: k }, () => 2 * rand() - 1));
    const g = (wt, ...xs) => {
      const gs = wt.autograd.grad(f(wt, ...xs), xs, { createGraph: true });
      return gs.map((t, i) => t.mul(wt.tensor(Float64Array.from(v[i]), { dtype: 'float64' }).reshape(shapes[i])).sum())
        .reduce((a, b) => a.add(b));
    };
    for (const layout of opts?.layouts ?? ['contiguous']) {
      try {
        problems.push(...gradcheck(wt, [`${name} (second order)`, g, shapes, { ...opts, secondOrder: true }],
          layout, rand));
      } catch (e) {
        problems.push(`${name} (second order, ${layout}): ${e.message}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.deepEqual(counts(wt), before);
});

test('ops with bool or index outputs record nothing; floor_divide is refused', async () => {
  const wt = await init();
  const before = counts(wt);
  wt.tidy(() => {
    const x = wt.tensor([[0.5, -1], [2, 0]], { requiresGrad: true });
    const y = wt.tensor([[1, -1], [0, 0]], { requiresGrad: true });
    const outs = [x.eq(y), x.ne(0), x.lt(y), x.le(1), x.gt(y), x.ge(0), wt.logicalAnd(x, y), wt.logicalOr(x, y),
      wt.logicalXor(x, y), wt.logicalNot(x), x.argmax(), x.argmin(1), x.all(), x.any(0), x.nonzero(), x.argsort(),
      wt.zerosLike(x), wt.onesLike(x), wt.emptyLike(x), wt.fullLike(x, 2), wt.randLike(x), wt.randnLike(x),
      wt.bernoulli(x.sigmoid(), 0.5), wt.multinomial(x.abs().add(0.1), 1)];
    for (const o of outs) {
      assert.equal(o.requiresGrad, false);
      assert.equal(o.gradFn, null);
    }
    const sample = wt.bernoulli(x.sigmoid());
    const fn = sample.gradFn; // holds its node until disposed
    assert.equal(fn.name, 'BernoulliBackward0');
    fn.dispose();
    assert.deepEqual(wt.autograd.grad(sample.sum(), [x])[0].toArray(), [[0, 0], [0, 0]]);
    throwsWeft(() => wt.floorDivide(x, y), 'InvalidArgument', /^the derivative for 'floor_divide' is not implemented\.$/);
  });
  assert.deepEqual(counts(wt), before);
});
