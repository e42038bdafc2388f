// The conv2d panel: seed 001's reason for channels_last made visible. One
// convolution runs on the same values twice, once from a contiguous NCHW
// input and once from a channels_last (NHWC in memory) copy; the panel shows
// each input's strides, the algorithm explain() reports for it, the output's
// memory format and the median time, with GFLOP/s.
import { el } from './layout.js';

const nextFrame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));

function median(fn, reps) {
  fn(); // warm-up: first touch of the output, weight packing buffers
  const ts = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    ts.push(performance.now() - t0);
  }
  return ts.sort((a, b) => a - b)[ts.length >> 1];
}

// The plan explain() gives for conv2d(x, w) and a runner for it; the padding
// keeps the spatial size (odd kernels).
export function convCase(x, w, wt, groups) {
  const k = w.shape[2];
  const opts = { padding: (k - 1) >> 1, groups };
  const plan = wt.explain('conv2d', x, w, null, opts);
  return { plan, run: () => wt.conv2d(x, w, null, opts) };
}

function row(label, x, plan, ms, gflops, best) {
  return el('div', { class: `crow${best ? ' best' : ''}` },
    el('span', { class: 'blabel', text: label }),
    el('code', { text: `stride [${x.stride().join(', ')}]` }),
    el('code', { text: plan ? plan.algorithm : '?' }),
    el('span', { class: 'bfig', text: `${ms.toFixed(1)} ms · ${gflops.toFixed(1)} GFLOP/s` }));
}

export function setupConv(ui, wt) {
  if (typeof wt.conv2d !== 'function') {
    ui.out.replaceChildren(el('p', { class: 'help', text: 'wt.conv2d is not in this build.' }));
    ui.button.disabled = true;
    return;
  }
  ui.out.replaceChildren(el('p', { class: 'help',
    text: 'Runs one float32 convolution from an NCHW input and from its channels_last copy (median of 3).' }));
  ui.form.addEventListener('submit', async (e) => {
    e.preventDefault();
    ui.button.disabled = true;
    ui.out.setAttribute('aria-busy', 'true');
    const [n, c, h, wd, cout, k, groups] = ui.shape.value.split(',').map(Number); // the option's value
    const held = [];
    const keep = (t) => (held.push(t), t);
    try {
      const x = keep(wt.rand([n, c, h, wd]));
      const xcl = keep(x.contiguous({ memoryFormat: 'channels_last' }));
      const w = keep(wt.rand([cout, c / groups, k, k]));
      const flops = 2 * n * h * wd * cout * (c / groups) * k * k;
      const rows = [];
      for (const [label, input] of [['NCHW (contiguous)', x], ['channels_last (NHWC)', xcl]]) {
        await nextFrame();
        const { plan, run } = convCase(input, w, wt, groups);
        const y = keep(run());
        const ms = median(() => run().dispose(), 3);
        rows.push({ label, input, plan, ms, gflops: flops / ms / 1e6,
          out: y.isContiguous('channels_last') ? 'channels_last' : 'contiguous' });
      }
      const best = Math.min(...rows.map((r) => r.ms));
      const [a, b] = rows;
      ui.out.replaceChildren(
        el('p', { class: 'help', text: `conv2d([${n}, ${c}, ${h}, ${wd}], weight [${cout}, ${c / groups}, ${k}, ${k}], groups ${groups}); output format follows the input: ${rows.map((r) => r.out).join(' / ')}.` }),
        ...rows.map((r) => row(r.label, r.input, r.plan, r.ms, r.gflops, r.ms === best)),
        el('p', { class: 'help', text: `channels_last is ${(a.ms / b.ms).toFixed(2)}× the speed of NCHW here.` }));
    } catch (err) {
      ui.out.replaceChildren(el('p', { class: 'error-text', text: `${err.name || 'Error'}: ${err.message}` }));
    } finally {
      for (const t of held) t.dispose();
      ui.button.disabled = false;
      ui.out.removeAttribute('aria-busy');
    }
  });
}
