// The layer check (src/README.md): fails on an include or a call that goes up
// a layer. Two independent views of the same rule:
//   includes  every #include "..." of every file under src/ and include/weft/
//             names a layer (src/<layer>/..., or a public header's layer);
//             it must be the file's own layer or one the file's layer may use
//   symbols   every undefined symbol of a layer's object files (`nm`, from a
//             CMake build directory's per-layer object libraries) that another
//             layer defines must come from a layer this one may use
// Usage: node scripts/check_layers.mjs [build-dir]   (default build/native;
// without object files only the includes are checked, and it says so).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Lowest first. A layer may use the layers listed for it, and nothing else.
export const LAYERS = {
  base: [],
  core: ['base'],
  kernels: ['base', 'core'],
  parallel: ['base'],
  iter: ['base', 'core', 'parallel'],
  dispatch: ['base', 'core'],
  // the JS import bridge of the WebGPU device (buffers, uploads, dispatches): below every operator
  webgpu: ['base', 'core'],
  // the drivers (packing, blocking, threading over kernels): a tier below the
  // operators, so a driver never calls back into an op (or ops' explain), nor the dispatcher
  'ops/cpu': ['base', 'core', 'kernels', 'parallel', 'iter'],
  ops: ['base', 'core', 'kernels', 'parallel', 'iter', 'dispatch', 'webgpu', 'ops/cpu'],
  autograd: ['base', 'core', 'kernels', 'parallel', 'iter', 'dispatch', 'webgpu', 'ops/cpu', 'ops'],
  wasm: ['base', 'core', 'kernels', 'parallel', 'iter', 'dispatch', 'webgpu', 'ops/cpu', 'ops', 'autograd'],
};
// A layer folder nested in another's (src/ops/cpu/ in src/ops/).
const NESTED = Object.keys(LAYERS).filter((l) => l.includes('/'));

// Kernels are leaves on counts and pointers: besides the layer rule they see
// no tensor, no error module and no thread pool (STYLE.md section 7).
export const FORBIDDEN = {
  kernels: {
    includes: ['base/error.h', 'core/internal.h', 'weft/error.h', 'weft/tensor.h', 'weft/parallel.h'],
    symbols: [/^weft__error/, /^weft_tensor_/, /^weft_parallel/, /^weft_last_/],
  },
};

// The layer each public header belongs to.
export const PUBLIC_HEADERS = {
  'error.h': 'base',
  'alloc.h': 'core', 'device.h': 'core', 'dtype.h': 'core', 'storage.h': 'core', 'tensor.h': 'core',
  'parallel.h': 'parallel',
  'iter.h': 'iter',
  'dispatch.h': 'dispatch',
  'copy.h': 'ops', 'elementwise.h': 'ops', 'explain.h': 'ops', 'factory.h': 'ops', 'join.h': 'ops', 'reduce.h': 'ops', 'view.h': 'ops',
  'autograd.h': 'autograd',
  'weft.h': 'wasm', // the umbrella: only the top may include everything
};

const INCLUDE_RE = /^\s*#\s*include\s+"([^"]+)"/;

// The layer an include path names, seen from a file of layer `from`; null for
// a path that names none (a sibling in the same folder, a test or bench file).
export function includeLayer(path, from) {
  const m = /^weft\/([^/]+)$/.exec(path);
  if (m) return PUBLIC_HEADERS[m[1]] ?? 'unknown public header';
  const nested = NESTED.find((l) => path.startsWith(`${l}/`));
  if (nested) return nested;
  const top = path.split('/')[0];
  if (top in LAYERS) return top;
  if (!path.includes('/')) return from; // "vec_sse2.h" next to the includer
  return null;
}

// Violations for one file's text: [{ line, text, why }].
export function checkIncludes(layer, text) {
  const out = [];
  const allowed = new Set([layer, ...LAYERS[layer]]);
  const forbidden = FORBIDDEN[layer]?.includes ?? [];
  text.split('\n').forEach((line, i) => {
    const m = INCLUDE_RE.exec(line);
    if (!m) return;
    const target = includeLayer(m[1], layer);
    if (target === null) return;
    if (!allowed.has(target)) out.push({ line: i + 1, text: m[1], why: `${layer} may not include ${target}` });
    else if (forbidden.includes(m[1])) out.push({ line: i + 1, text: m[1], why: `${layer} may not include ${m[1]}` });
  });
  return out;
}

// layerSymbols: { layer: { defined: Set, undefined: Set } }. Violations:
// [{ layer, symbol, definedIn }].
export function checkSymbols(layerSymbols) {
  const owner = new Map();
  for (const [layer, s] of Object.entries(layerSymbols)) for (const sym of s.defined) owner.set(sym, layer);
  const out = [];
  for (const [layer, s] of Object.entries(layerSymbols)) {
    const allowed = new Set([layer, ...LAYERS[layer]]);
    const forbidden = FORBIDDEN[layer]?.symbols ?? [];
    for (const sym of s.undefined) {
      const def = owner.get(sym);
      if (def !== undefined && !allowed.has(def)) out.push({ layer, symbol: sym, definedIn: def });
      else if (def !== undefined && forbidden.some((re) => re.test(sym))) out.push({ layer, symbol: sym, definedIn: def });
    }
  }
  return out;
}

// skip: nested layer folders, walked as their own layer
function walk(dir, files = [], skip = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (skip.includes(p)) continue;
    if (statSync(p).isDirectory()) walk(p, files);
    else if (/\.(c|h|inc|def)$/.test(name)) files.push(p);
  }
  return files;
}

// Every source file with its layer: src/<layer>/** and include/weft/<h>.
export function sourceFiles(root) {
  const files = [];
  for (const layer of Object.keys(LAYERS)) {
    const dir = join(root, 'src', layer);
    const inner = NESTED.filter((l) => l.startsWith(`${layer}/`)).map((l) => join(root, 'src', l));
    if (existsSync(dir)) for (const f of walk(dir, [], inner)) files.push({ file: f, layer });
  }
  const pub = join(root, 'include', 'weft');
  for (const name of readdirSync(pub)) files.push({ file: join(pub, name), layer: PUBLIC_HEADERS[name] ?? 'wasm' });
  return files;
}

// { layer: { defined, undefined } } from build/CMakeFiles/weft_<layer>*.dir/**.o
// (the kernels' per-ISA libraries count as the kernels layer; the objects of
// a nested layer's folder, weft_ops.dir/src/ops/cpu/, count as that layer).
export function objectSymbols(buildDir) {
  const cm = join(buildDir, 'CMakeFiles');
  if (!existsSync(cm)) return null;
  const result = {};
  for (const dir of readdirSync(cm)) {
    const m = /^weft_([a-z]+?)(?:_[a-z0-9]+)?\.dir$/.exec(dir);
    if (!m || !(m[1] in LAYERS)) continue;
    const objs = walk2(join(cm, dir));
    for (const layer of [m[1], ...NESTED.filter((l) => l.startsWith(`${m[1]}/`))]) {
      const own = objs.filter((o) => layerOfObject(o, m[1]) === layer);
      if (own.length) addSymbols((result[layer] ??= { defined: new Set(), undefined: new Set() }), own);
    }
  }
  return Object.keys(result).length ? result : null;
}

// The nested layer an object file's source path names, else the library's layer.
function layerOfObject(obj, layer) {
  const path = obj.split(sep).join('/');
  return NESTED.find((l) => l.startsWith(`${layer}/`) && path.includes(`/src/${l}/`)) ?? layer;
}

function addSymbols(s, objs) {
  const text = execFileSync('nm', ['-P', ...objs], { encoding: 'utf8', maxBuffer: 64 << 20 });
  for (const line of text.split('\n')) {
    const [name, type] = line.trim().split(/\s+/);
    if (!name || !type || name.endsWith(':')) continue;
    if (type === 'U') s.undefined.add(name);
    else if (/[A-TV-Z]/.test(type)) s.defined.add(name); // global definitions (uppercase; not U, weak 'w')
  }
}

function walk2(dir, files = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk2(p, files);
    else if (name.endsWith('.o')) files.push(p);
  }
  return files;
}

function main() {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const buildDir = process.argv[2] ?? join(root, 'build', 'native');
  let bad = 0;
  const files = sourceFiles(root);
  for (const { file, layer } of files) {
    for (const v of checkIncludes(layer, readFileSync(file, 'utf8'))) {
      console.error(`${relative(root, file).split(sep).join('/')}:${v.line}: #include "${v.text}": ${v.why}`);
      bad++;
    }
  }
  const syms = objectSymbols(buildDir);
  if (syms) {
    for (const v of checkSymbols(syms)) {
      console.error(`${v.layer} uses ${v.symbol}, defined in ${v.definedIn}: ${v.layer} may not call ${v.definedIn}`);
      bad++;
    }
  }
  const what = syms ? `${files.length} files' includes and ${Object.keys(syms).length} layers' symbols`
    : `${files.length} files' includes (no object files in ${buildDir}: symbols not checked)`;
  if (bad) {
    console.error(`check_layers: ${bad} upward dependencies (src/README.md says which layer may use which)`);
    process.exit(1);
  }
  console.log(`check_layers: ${what}: every arrow points down`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
