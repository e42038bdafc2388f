// The training page: demo/train/digits.mjs's trainer run in short slices
// between animation frames, so the page stays responsive while weft trains;
// a canvas plot of the loss per step and the test accuracy per epoch, and a
// grid of test digits with the model's predictions.
import { init } from '../dist/browser.js';
import { el } from './layout.js';
import { drawDigit, fetchBytes, sharpCanvas, showStatus, startPage } from './panels.js';
import { DigitsTrainer, loadDigits } from './train/digits.mjs';

const $ = (id) => document.getElementById(id);
const SLICE_MS = 40;   // training time per frame
const GRID = 48;       // test digits shown

const state = { wt: null, data: null, trainer: null, running: false, losses: [], accuracies: [], error: null, epochs: 10 };

// ---- plot ----------------------------------------------------------------------

function plot() {
  const { g, w, h } = sharpCanvas($('train-canvas'));
  const pad = { l: 44, r: 44, t: 10, b: 26 };
  const pw = w - pad.l - pad.r, ph = h - pad.t - pad.b;
  const { losses, accuracies, trainer } = state;
  const total = Math.max(losses.length, (trainer?.stepsPerEpoch ?? 1) * state.epochs);
  const maxLoss = Math.max(2.5, ...losses.slice(0, 5));
  const X = (i) => pad.l + (i / Math.max(1, total)) * pw;
  const Yl = (v) => pad.t + ph - Math.min(1, v / maxLoss) * ph;
  const Ya = (v) => pad.t + ph - v * ph;
  g.strokeStyle = '#e1e4ec'; g.fillStyle = '#5d6679'; g.font = '11px system-ui'; g.lineWidth = 1;
  for (let k = 0; k <= 4; k++) {
    const y = pad.t + (k / 4) * ph;
    g.beginPath(); g.moveTo(pad.l, y); g.lineTo(pad.l + pw, y); g.stroke();
    g.textAlign = 'right'; g.fillText((maxLoss * (1 - k / 4)).toFixed(1), pad.l - 6, y + 4);
    g.textAlign = 'left'; g.fillText(`${100 - k * 25}%`, pad.l + pw + 6, y + 4);
  }
  g.textAlign = 'center';
  g.fillText('steps', pad.l + pw / 2, h - 6);
  g.strokeStyle = '#3257d6'; g.lineWidth = 1.5; g.beginPath();
  losses.forEach((v, i) => (i ? g.lineTo(X(i), Yl(v)) : g.moveTo(X(i), Yl(v))));
  g.stroke();
  g.strokeStyle = '#1f7a4d'; g.fillStyle = '#1f7a4d'; g.lineWidth = 2; g.beginPath();
  accuracies.forEach((a, i) => (i ? g.lineTo(X(a.step), Ya(a.value)) : g.moveTo(X(a.step), Ya(a.value))));
  g.stroke();
  for (const a of accuracies) { g.beginPath(); g.arc(X(a.step), Ya(a.value), 2.5, 0, 7); g.fill(); }
}

// ---- digits grid --------------------------------------------------------------------

function buildGrid() {
  const { data } = state;
  const px = Array.from(state.wt.tidy(() => data.testImages.narrow(0, 0, GRID).data()), Number);
  const labels = Array.from(state.wt.tidy(() => data.yTest.narrow(0, 0, GRID).data()), Number);
  $('train-grid').replaceChildren(...labels.map((label, i) => {
    const c = el('canvas', { width: 8, height: 8, 'aria-hidden': 'true' });
    drawDigit(c, px.slice(i * 64, (i + 1) * 64));
    return el('figure', { class: 'digit', 'data-label': label }, c, el('figcaption', { text: '?' }));
  }));
}

function showPredictions() {
  if (!state.trainer) return;
  const pred = state.trainer.predict(GRID);
  [...$('train-grid').children].forEach((f, i) => {
    f.querySelector('figcaption').textContent = String(pred[i]);
    f.dataset.right = String(pred[i] === Number(f.dataset.label));
  });
}

// ---- training ----------------------------------------------------------------------

function options() {
  const num = (id, lo, hi, dflt) => {
    const v = Number($(id).value);
    return Number.isFinite(v) && v >= lo && v <= hi ? v : dflt;
  };
  return { model: $('train-model').value, lr: num('train-lr', 1e-5, 1, 0.01), batch: Math.round(num('train-batch', 1, 1500, 32)), epochs: Math.round(num('train-epochs', 1, 200, 10)) };
}

function reset() {
  stop();
  state.trainer?.dispose();
  state.trainer = null;
  state.losses = [];
  state.accuracies = [];
  for (const id of ['train-loss', 'train-acc', 'test-acc', 'train-speed']) $(id).textContent = '—';
  $('train-epoch').textContent = '0';
  $('train-step-count').textContent = '0';
  for (const f of $('train-grid').children) { f.querySelector('figcaption').textContent = '?'; delete f.dataset.right; }
  document.body.dataset.training = 'idle';
  plot();
}

function start() {
  if (state.running) return;
  showStatus('');
  const o = options();
  if (!state.trainer || state.trainer.epoch >= state.epochs) {
    reset();
    state.trainer = new DigitsTrainer(state.wt, state.data, { ...o, seed: 0 });
  }
  state.epochs = o.epochs;
  state.running = true;
  document.body.dataset.training = 'running';
  $('train-start').disabled = true;
  $('train-stop').disabled = false;
  requestAnimationFrame(loop);
}

function stop(reason = 'stopped') {
  if (state.running) document.body.dataset.training = reason;
  state.running = false;
  $('train-start').disabled = false;
  $('train-stop').disabled = true;
}

// Trains for about SLICE_MS, then draws and hands the frame back.
function loop() {
  if (!state.running) return;
  const t = state.trainer;
  const t0 = performance.now();
  let n = 0;
  try {
    while (performance.now() - t0 < SLICE_MS && t.epoch < state.epochs) {
      const { loss, epochEnd } = t.trainStep();
      state.losses.push(loss);
      n++;
      if (epochEnd) {
        state.accuracies.push({ step: t.step, value: epochEnd.testAccuracy });
        $('train-acc').textContent = `${(epochEnd.trainAccuracy * 100).toFixed(1)}%`;
        $('test-acc').textContent = `${(epochEnd.testAccuracy * 100).toFixed(1)}%`;
        showPredictions();
        break;
      }
    }
  } catch (e) {
    stop('failed');
    showStatus(`training failed: ${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}`);
    return;
  }
  const ms = performance.now() - t0;
  $('train-epoch').textContent = `${t.epoch} / ${state.epochs}`;
  $('train-step-count').textContent = String(t.step);
  $('train-loss').textContent = state.losses.length ? state.losses[state.losses.length - 1].toFixed(4) : '—';
  if (n) $('train-speed').textContent = `${Math.round((n * 1000) / ms)} steps/s`;
  plot();
  if (t.epoch >= state.epochs) { stop('finished'); return; }
  requestAnimationFrame(loop);
}

async function main() {
  const wt = await startPage(init, showStatus);
  if (!wt) return;
  state.wt = wt;
  try {
    const [images, labels] = await Promise.all([fetchBytes('data/digits-images.npy'), fetchBytes('data/digits-labels.npy')]);
    state.data = loadDigits(wt, images, labels);
  } catch (e) {
    showStatus(`loading the digits failed: ${e.message}`);
    document.body.dataset.ready = 'failed';
    return;
  }
  buildGrid();
  $('train-form').addEventListener('submit', (ev) => { ev.preventDefault(); start(); });
  $('train-stop').addEventListener('click', () => stop());
  $('train-reset').addEventListener('click', reset);
  $('train-model').addEventListener('change', reset);
  window.addEventListener('resize', plot);
  window.trainDemo = { state, start, stop, reset };
  reset();
  document.body.dataset.ready = 'true';
}

main();
