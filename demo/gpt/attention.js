// The GPT page's attention panel: what attentionProbe (model.mjs) recorded for
// the newest token, drawn two ways: a strip per layer (one row per head, one
// column per cached position, shade = probability / the row's largest) and
// the context's characters shaded by the chosen layer and head (or their mean).
import { el } from '../layout.js';

const CELL_W = 3, CELL_H = 7; // a strip's cell, in canvas pixels
const shade = (v) => `rgba(50, 87, 214, ${v.toFixed(3)})`;
const show = (ch) => (ch === '\n' ? '↵' : ch);

export class AttentionView {
  constructor(probe, vocab, ui) {
    Object.assign(this, { probe, vocab, ui, ids: null, rows: null, length: 0 });
    ui.layer.replaceChildren(...Array.from({ length: probe.nLayer }, (_, l) => el('option', { value: l, text: String(l + 1) })));
    ui.head.replaceChildren(el('option', { value: 'mean', text: 'mean' }),
      ...Array.from({ length: probe.nHead }, (_, h) => el('option', { value: h, text: String(h + 1) })));
    this.canvases = Array.from({ length: probe.nLayer }, (_, l) => {
      const c = el('canvas', { width: 1, height: probe.nHead * CELL_H, 'data-layer': l, title: `layer ${l + 1}: click a row to pick its head` });
      c.addEventListener('click', (ev) => this.pick(l, Math.floor((ev.offsetY / c.clientHeight) * probe.nHead)));
      return el('figure', { class: 'attn-strip' }, el('figcaption', { text: `layer ${l + 1}` }), c);
    });
    ui.grid.replaceChildren(...this.canvases);
    for (const s of [ui.layer, ui.head]) s.addEventListener('change', () => this.redraw());
  }

  pick(layer, head) {
    this.ui.layer.value = String(layer);
    this.ui.head.value = String(Math.max(0, Math.min(this.probe.nHead - 1, head)));
    this.redraw();
  }

  // ids: the writer's ids, the newest last (the cache held the S before it); the
  // probe's rows are kept as they are now (a later forward replaces them)
  show(ids) {
    Object.assign(this, { ids, rows: [...this.probe.rows], length: this.probe.length });
    this.redraw();
  }

  // probabilities [S] of the chosen layer and head (or the heads' mean)
  weights(layer, head) {
    const { rows, length: S } = this;
    const { nHead } = this.probe;
    const row = rows[layer];
    if (head !== 'mean') return row.subarray(head * S, (head + 1) * S);
    const out = new Float32Array(S);
    for (let h = 0; h < nHead; h++) for (let s = 0; s < S; s++) out[s] += row[h * S + s] / nHead;
    return out;
  }

  redraw() {
    const { ids, ui, length: S } = this;
    if (!ids || !S || !this.rows[0]) return;
    const layer = Number(ui.layer.value), head = ui.head.value === 'mean' ? 'mean' : Number(ui.head.value);
    this.canvases.forEach((fig, l) => this.drawStrip(fig.querySelector('canvas'), l, S, l === layer ? head : null));
    const context = ids.slice(Math.max(0, ids.length - 1 - S), ids.length - 1);
    const w = this.weights(layer, head);
    const max = Math.max(...w);
    ui.text.replaceChildren(...context.map((id, s) => el('span', {
      style: `background: ${shade(w[s] / max)}`, title: `position ${s}: ${w[s].toFixed(4)}`,
      text: show(this.vocab.chars[id]),
    })));
    ui.token.textContent = `writing “${show(this.vocab.chars[ids.at(-1)])}” from ${S} cached positions`;
  }

  drawStrip(c, layer, S, chosen) {
    const { nHead } = this.probe;
    const { rows } = this;
    const width = S * CELL_W;
    if (c.width !== width) c.width = width;
    const g = c.getContext('2d');
    g.clearRect(0, 0, c.width, c.height);
    for (let h = 0; h < nHead; h++) {
      const row = rows[layer].subarray(h * S, (h + 1) * S);
      const max = Math.max(...row);
      for (let s = 0; s < S; s++) {
        g.fillStyle = shade(row[s] / max);
        g.fillRect(s * CELL_W, h * CELL_H, CELL_W, CELL_H - 1);
      }
      if (chosen === 'mean' || chosen === h) {
        g.strokeStyle = '#a35a00';
        g.strokeRect(0.5, h * CELL_H + 0.5, width - 1, CELL_H - 2);
      }
    }
  }
}
