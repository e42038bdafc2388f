// Run by backend.test.mjs in a fresh process: pretends to be a page that is
// not cross-origin isolated (no SharedArrayBuffer), or an engine without wasm
// SIMD, then prints what init() chose and what it warned.
const mode = process.argv[2];
const warnings = [];
console.warn = (...a) => warnings.push(a.join(' '));
if (mode === 'not-isolated') {
  delete globalThis.SharedArrayBuffer;
  globalThis.crossOriginIsolated = false;
} else if (mode === 'no-simd') {
  const validate = WebAssembly.validate;
  WebAssembly.validate = (bytes) => (bytes.length < 64 ? false : validate(bytes));
}
const { init } = await import('weft');
const wt = await init({ threads: 4 });
const again = await init({ threads: 4 });
const x = wt.arange(6).view(2, 3).t().contiguous();
process.stdout.write(JSON.stringify({
  backend: wt.backend, same: wt === again, warnings, values: x.toArray(),
}));
