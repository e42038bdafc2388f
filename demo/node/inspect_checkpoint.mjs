// What a PyTorch checkpoint (torch.save) or a safetensors file holds: every
// tensor with its dtype, shape, strides, storage offset, layout and bytes,
// the storages tensors share, and the other values. Nothing in the file runs:
// wt.load refuses any global but the tensor and container ones.
//   node demo/node/inspect_checkpoint.mjs [file.pt | file.safetensors]   (after npm run build)
// Without a file it inspects tests/fixtures/pt/checkpoint.pt (a small CNN's
// state dict and its SGD state, saved by PyTorch 1.13).
import { readFileSync } from 'node:fs';
import { init } from 'weft';
import { formatBytes, inspect, loadCheckpoint, tensorsOf } from '../checkpoint/inspect.mjs';

const file = process.argv[2] ?? new URL('../../tests/fixtures/pt/checkpoint.pt', import.meta.url).pathname;
const wt = await init();
const bytes = new Uint8Array(readFileSync(file));
let loaded;
try {
  loaded = loadCheckpoint(wt, bytes);
} catch (e) {
  console.error(`${file}: ${e.name}: ${e.message}`);
  process.exit(1);
}
const { tensors, storages, values, totalBytes } = inspect(wt, loaded.value);
const list = (a) => `[${a.join(', ')}]`;
console.log(`${file}: ${loaded.format}, ${formatBytes(bytes.length)}; ${tensors.length} tensors in ${storages.length} storages ` +
  `(${formatBytes(totalBytes)} of data)\n`);
const head = ['name', 'dtype', 'shape', 'stride', 'offset', 'layout', 'bytes', 'storage'];
const rows = tensors.map((t) => [t.name + (t.requiresGrad ? ' (requires grad)' : ''), t.dtype, list(t.shape), list(t.stride),
  String(t.offset), t.layout, formatBytes(t.bytes), t.storage + (t.same ? ` = ${t.same}` : '')]);
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
const shared = storages.filter((s) => s.tensors.length > 1);
if (shared.length) {
  console.log('\nshared storages:');
  for (const s of shared) console.log(`  ${s.label} (${s.dtype}, ${s.elements} elements): ${s.tensors.join(', ')}`);
}
if (values.length) {
  console.log('\nother values:');
  for (const v of values) console.log(`  ${v.name} = ${v.text}`);
}
for (const t of tensorsOf(wt, loaded.value)) t.dispose();
