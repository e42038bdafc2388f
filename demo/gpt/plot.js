// The GPT page's fine-tuning loss: each step's loss (thin) and its running
// mean over the last 10 steps (thick), against the steps planned.
import { sharpCanvas } from '../panels.js';

export class LossPlot {
  constructor(canvas) { this.canvas = canvas; }

  draw(losses, steps) {
    const { g, w, h } = sharpCanvas(this.canvas);
    const pad = { l: 40, r: 10, t: 8, b: 24 };
    const pw = w - pad.l - pad.r, ph = h - pad.t - pad.b;
    const top = Math.max(1, Math.ceil(Math.max(0, ...losses.slice(0, 10))));
    const X = (i) => pad.l + (i / Math.max(1, steps - 1)) * pw;
    const Y = (v) => pad.t + ph - Math.min(1, v / top) * ph;
    g.strokeStyle = '#e1e4ec'; g.fillStyle = '#5d6679'; g.font = '11px system-ui'; g.lineWidth = 1;
    for (let k = 0; k <= 4; k++) {
      const y = pad.t + (k / 4) * ph;
      g.beginPath(); g.moveTo(pad.l, y); g.lineTo(pad.l + pw, y); g.stroke();
      g.textAlign = 'right'; g.fillText((top * (1 - k / 4)).toFixed(1), pad.l - 6, y + 4);
    }
    g.textAlign = 'center';
    g.fillText(`step (of ${steps})`, pad.l + pw / 2, h - 6);
    this.line(g, losses.map((v, i) => [X(i), Y(v)]), '#9fb3ee', 1);
    const mean = losses.map((_, i) => {
      const win = losses.slice(Math.max(0, i - 9), i + 1);
      return win.reduce((a, b) => a + b, 0) / win.length;
    });
    this.line(g, mean.map((v, i) => [X(i), Y(v)]), '#3257d6', 2);
  }

  line(g, pts, color, width) {
    g.strokeStyle = color; g.lineWidth = width; g.beginPath();
    pts.forEach(([x, y], i) => (i ? g.lineTo(x, y) : g.moveTo(x, y)));
    g.stroke();
  }
}
