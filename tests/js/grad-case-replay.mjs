// Replays one gradient case of the format of
// tests/fixtures/gen_conv_grad_fixtures.py (conv_grad.json, and the "grads"
// of conv_transpose.json): the op called as JS spells it, its node name and
// result strides, then backward(grad_output) and each input's .grad values
// and strides. Returns the problems found (strings).
import { close } from './helpers.mjs';

function leaf(wt, s) {
  const flat = wt.tensor(Float64Array.from(s.values), { dtype: s.dtype });
  const shaped = flat.reshape(s.size);
  flat.dispose();
  const t = s.cl ? shaped.contiguous({ memoryFormat: 'channels_last' }) : shaped;
  if (t !== shaped) shaped.dispose();
  return t.requiresGrad_(s.requires_grad);
}

function call(wt, c, ins) {
  const { kernelSize, outputSize, ...o } = c.options;
  switch (c.op) {
    case 'conv2d': return wt.conv2d(ins[0], ins[1], ins[2] ?? null, o);
    case 'conv1d': return wt.conv1d(ins[0], ins[1], ins[2] ?? null, o);
    case 'conv_transpose2d': return wt.convTranspose2d(ins[0], ins[1], ins[2] ?? null, o);
    case 'conv_transpose1d': return wt.convTranspose1d(ins[0], ins[1], ins[2] ?? null, o);
    case 'max_pool2d': return wt.maxPool2d(ins[0], kernelSize, o);
    case 'avg_pool2d': return wt.avgPool2d(ins[0], kernelSize, o);
    default: return wt.adaptiveAvgPool2d(ins[0], outputSize);
  }
}

// float32 sums in another order than PyTorch's
const TOL = { float32: 1e-5, float64: 1e-12 };

// names: node names weft gives where PyTorch's differ, by case name
export function gradProblems(wt, c, names = {}) {
  const bad = [];
  wt.tidy(() => {
    const ins = c.inputs.map((s) => (s ? leaf(wt, s) : null));
    const y = call(wt, c, ins);
    const fn = y.gradFn;
    if (fn.name !== (names[c.name] ?? c.grad_fn)) bad.push(`${c.name}: node ${fn.name}`);
    fn.dispose();
    if (JSON.stringify(y.stride()) !== JSON.stringify(c.out_stride)) bad.push(`${c.name}: result strides ${y.stride()}`);
    const go = wt.tensor(Float64Array.from(c.grad_output.values), { dtype: y.dtype }).reshape(c.grad_output.size);
    y.backward(go);
    c.grads.forEach((want, i) => {
      if (!want) return;
      const g = ins[i].grad;
      if (!g) return bad.push(`${c.name}: input ${i} has no grad`);
      if (c.inputs[i].size[1] !== 1 && JSON.stringify(g.stride()) !== JSON.stringify(want.stride))
        bad.push(`${c.name}: input ${i} grad strides ${g.stride()} vs ${want.stride}`);
      const got = g.contiguous().toArray().flat(Infinity);
      const e = TOL[c.inputs[i].dtype];
      const j = want.values.findIndex((v, k) => !close(got[k], v, e));
      if (j >= 0) bad.push(`${c.name}: input ${i} [${j}]: ${got[j]} vs ${want.values[j]}`);
    });
  });
  return bad;
}
