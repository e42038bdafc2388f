// The checkpoint page: a dropped or chosen .pt / .safetensors file (a File)
// or an example fetched from the repository's fixtures (a Response) given
// as it is to wt.load or wt.loadSafetensors, shown as tables
// (demo/checkpoint/inspect.mjs), then freed. A refused file shows weft's
// message; so does a failed fetch (a Response that is not ok). A torchvision
// resnet / mobilenet_v2 state dict also becomes a model that classifies
// dropped images (demo/classify/panel.js).
import { init } from '../dist/browser.js';
import { el } from './layout.js';
import { onFileDrop, showStatus, startPage } from './panels.js';
import { offerModel, setupClassifier } from './classify/panel.js';
import { formatBytes, formatOf, inspect, tensorsOf } from './checkpoint/inspect.mjs';

const $ = (id) => document.getElementById(id);
const list = (a) => `[${a.join(', ')}]`;
let wt = null;

function renderSummary(name, format, size, info) {
  const items = [['file', name], ['format', format], ['size', formatBytes(size)], ['tensors', String(info.tensors.length)],
    ['storages', `${info.storages.length} (${formatBytes(info.totalBytes)} of data)`],
    ['elements', info.tensors.filter((t) => !t.same).reduce((n, t) => n + t.numel, 0).toLocaleString('en')]];
  $('summary').replaceChildren(...items.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { id: `summary-${k}`, text: v })]));
  $('summary').hidden = false;
}

function renderTensors(info) {
  const sharedLabels = new Set(info.storages.filter((s) => s.tensors.length > 1).map((s) => s.label));
  const rows = info.tensors.map((t) => el('tr', { class: sharedLabels.has(t.storage) ? 'shared' : null, 'data-name': t.name },
    el('td', { class: 'name', text: t.name + (t.requiresGrad ? ' ∂' : ''), title: t.requiresGrad ? 'requires grad (a Parameter)' : null }),
    el('td', { text: t.dtype }),
    el('td', { class: 'shape', text: list(t.shape) }),
    el('td', { class: 'stride', text: list(t.stride) }),
    el('td', { class: 'offset', text: String(t.offset) }),
    el('td', { class: `layout layout-${t.layout}`, text: t.device === 'meta' ? 'meta' : t.layout }),
    el('td', { class: 'bytes', text: formatBytes(t.bytes) }),
    el('td', { class: 'storage', text: t.storage + (t.same ? ` (= ${t.same})` : '') }),
    el('td', { class: 'values', text: t.values === null ? '…' : t.values.join(', ') + (t.numel > t.values.length ? ', …' : '') })));
  $('tensors').tBodies[0].replaceChildren(...rows);
  $('empty').hidden = rows.length > 0;
  if (!rows.length) $('empty').textContent = 'This file holds no tensors.';
}

function renderLists(info) {
  const shared = info.storages.filter((s) => s.tensors.length > 1);
  $('storages').replaceChildren(...(shared.length ? shared.map((s) => el('li', { 'data-storage': s.label },
    el('strong', { text: s.label }), ` ${s.dtype}, ${s.elements} elements: `, el('code', { text: s.tensors.join(', ') })))
    : [el('li', { class: 'muted', text: 'each tensor has a storage of its own' })]));
  $('values').replaceChildren(...(info.values.length ? info.values.slice(0, 200).map((v) => el('li', {},
    el('code', { text: v.name }), ` = ${v.text}`)) : [el('li', { class: 'muted', text: 'none' })]));
}

function clear() {
  $('tensors').tBodies[0].replaceChildren();
  $('summary').hidden = true;
  $('empty').hidden = false;
  $('empty').textContent = 'Open a file to see its tensors.';
  $('storages').replaceChildren(el('li', { class: 'muted', text: 'none yet' }));
  $('values').replaceChildren(el('li', { class: 'muted', text: 'none yet' }));
}

// source: a File (a Blob) or a fetch Response, handed to wt.load /
// wt.loadSafetensors as it is (they read it and return a Promise); format
// from the file's first bytes, size in bytes.
async function open(source, name, format, size) {
  let value;
  try {
    value = await (format === 'torch.save' ? wt.load(source) : wt.loadSafetensors(source));
  } catch (e) {
    clear();
    offerModel(wt, null, showStatus);
    showStatus(`${name}: ${e.message}`);
    document.body.dataset.loaded = 'error';
    return;
  }
  try {
    const info = inspect(wt, value);
    showStatus(null);
    renderSummary(name, format, size, info);
    renderTensors(info);
    renderLists(info);
    offerModel(wt, value, showStatus); // a torchvision classifier's state dict: classify images with it
    document.body.dataset.loaded = name;
  } finally {
    for (const t of tensorsOf(wt, value)) t.dispose();
  }
}

const sniff = async (blob) => formatOf(new Uint8Array(await blob.slice(0, 2).arrayBuffer()));

async function openFile(file) {
  if (file) await open(file, file.name, await sniff(file), file.size);
}

async function openExample() {
  const url = $('example').value;
  const res = await fetch(url);
  const name = url.split('/').pop();
  // the Response itself goes to wt.load (a clone tells the size); the format from the file's name
  const size = res.ok ? (await res.clone().blob()).size : 0;
  await open(res, name, name.endsWith('.safetensors') ? 'safetensors' : 'torch.save', size);
}

function setupDrop() {
  onFileDrop($('drop'), $('file'), openFile);
  $('example-open').addEventListener('click', openExample);
}

async function main() {
  wt = await startPage(init, showStatus);
  if (!wt) return;
  setupDrop();
  setupClassifier(showStatus);
  window.checkpointDemo = { open, memory: () => wt.memory() };
  document.body.dataset.ready = 'true';
}

main();
