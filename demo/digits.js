// The drawing page: the digits CNN PyTorch trained (demo/data/digits_cnn.pt)
// loaded into its wt.nn twin (demo/digits/model.mjs) and run on what the user
// draws, once per animation frame while a stroke moves. Pointer events cover
// the mouse, pens and touch. The strokes are kept as points in canvas units,
// so the model's 8x8 input is recomputed from them (strokesToPixels) rather
// than read back from the canvas's pixels.
import { init } from '../dist/browser.js';
import { el } from './layout.js';
import { drawDigit, fetchBytes, showStatus, startPage } from './panels.js';
import { classify, loadDigitsCNN, strokesToPixels, testSet } from './digits/model.mjs';

const $ = (id) => document.getElementById(id);
const state = { wt: null, model: null, strokes: [], drawing: null, pending: false, predictions: 0 };

// ---- the model's side ------------------------------------------------------------

function buildBars() {
  $('bars').replaceChildren(...Array.from({ length: 10 }, (_, d) => el('li', { id: `bar-${d}`, 'data-digit': d },
    el('span', { text: String(d) }), el('span', { class: 'bar' }, el('span')), el('span', { class: 'p', text: '—' }))));
}

function showProbs(probs, pred) {
  probs.forEach((p, d) => {
    const li = $(`bar-${d}`);
    li.querySelector('.bar span').style.width = `${(p * 100).toFixed(1)}%`;
    li.querySelector('.p').textContent = p.toFixed(3);
    li.classList.toggle('best', d === pred);
  });
  $('pred').textContent = pred === null ? '–' : String(pred);
  $('pred-p').textContent = pred === null ? '' : `p = ${probs[pred].toFixed(3)}`;
}

function predict() {
  state.pending = false;
  const pixels = pixelsOfStrokes();
  drawDigit($('seen'), pixels);
  if (!state.strokes.length) { showProbs(new Array(10).fill(0), null); return; }
  const t0 = performance.now();
  const { probs, pred } = classify(state.wt, state.model, pixels);
  $('forward-ms').textContent = `${(performance.now() - t0).toFixed(2)} ms`;
  showProbs(probs, pred);
  state.predictions++;
  document.body.dataset.predictions = String(state.predictions);
  document.body.dataset.prediction = String(pred);
}

const schedule = () => {
  if (!state.pending) { state.pending = true; requestAnimationFrame(predict); }
};

// ---- drawing ------------------------------------------------------------------------

const pixelsOfStrokes = () => strokesToPixels(state.strokes, $('pad').width);

function point(ev) {
  const c = $('pad'), r = c.getBoundingClientRect();
  return { x: ((ev.clientX - r.left) * c.width) / r.width, y: ((ev.clientY - r.top) * c.height) / r.height };
}

function paint(a, b) {
  const g = $('pad').getContext('2d');
  g.strokeStyle = '#1b1f2a';
  g.lineWidth = 18;
  g.lineCap = 'round';
  g.lineJoin = 'round';
  g.beginPath();
  g.moveTo(a.x, a.y);
  g.lineTo(b.x, b.y);
  g.stroke();
}

function setupPad() {
  const pad = $('pad');
  pad.addEventListener('pointerdown', (ev) => {
    ev.preventDefault();
    pad.setPointerCapture(ev.pointerId);
    const p = point(ev);
    state.drawing = [p];
    state.strokes.push(state.drawing);
    paint(p, p);
    schedule();
  });
  pad.addEventListener('pointermove', (ev) => {
    if (!state.drawing) return;
    const p = point(ev);
    paint(state.drawing[state.drawing.length - 1], p);
    state.drawing.push(p);
    schedule();
  });
  const end = () => { state.drawing = null; };
  pad.addEventListener('pointerup', end);
  pad.addEventListener('pointercancel', end);
  $('clear').addEventListener('click', clear);
}

function clear() {
  state.strokes = [];
  state.drawing = null;
  const c = $('pad');
  c.getContext('2d').clearRect(0, 0, c.width, c.height);
  predict();
  delete document.body.dataset.prediction;
}

// ---- the model panel --------------------------------------------------------------

function showModel() {
  $('model-repr').textContent = String(state.model);
  const sd = state.model.stateDict(); // detached views of the model's tensors, ours to free
  const rows = Object.entries(sd).map(([name, t]) => el('tr', { 'data-name': name },
    el('td', { text: name }), el('td', { text: t.dtype }), el('td', { class: 'shape', text: `[${t.shape.join(', ')}]` }),
    el('td', { text: t.numel().toLocaleString('en') })));
  for (const t of Object.values(sd)) t.dispose();
  $('state').tBodies[0].replaceChildren(...rows);
}

// The test images through the page's model: PyTorch's logits are in
// demo/data/digits_cnn_logits.json (the browser test compares).
async function testLogits() {
  const { wt, model } = state;
  const [images, labels] = await Promise.all([fetchBytes('data/digits-images.npy'), fetchBytes('data/digits-labels.npy')]);
  const { x, y } = testSet(wt, images, labels);
  try {
    return wt.tidy(() => wt.noGrad(() => {
      const out = model(x);
      const correct = out.argmax(1).eq(y).sum().item();
      return { logits: Array.from(out.data()), correct, total: y.shape[0] };
    }));
  } finally {
    x.dispose();
    y.dispose();
  }
}

async function main() {
  const wt = await startPage(init, showStatus);
  if (!wt) return;
  state.wt = wt;
  try {
    const bytes = await fetchBytes('data/digits_cnn.pt');
    $('pt-size').textContent = `(${(bytes.length / 1024).toFixed(1)} KB)`;
    state.model = loadDigitsCNN(wt, bytes);
  } catch (e) {
    showStatus(`loading the model failed: ${e.message}`);
    document.body.dataset.ready = 'failed';
    return;
  }
  buildBars();
  showModel();
  setupPad();
  clear();
  window.digitsDemo = { state, testLogits, clear, memory: () => wt.memory() };
  document.body.dataset.ready = 'true';
  const { correct, total } = await testLogits();
  $('test-acc').textContent = `${correct}/${total} = ${((100 * correct) / total).toFixed(1)}%`;
}

main();
