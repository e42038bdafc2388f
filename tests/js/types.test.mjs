// The TypeScript declarations: tsc --strict over a typed tour of the API
// (tests/types/), with the DOM library and in a Node-only setup (no DOM), and
// the declarations against the running API: every function of wt and method
// of a Tensor is declared, every declared one exists, and the tour uses every
// hand-written declaration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { init } from './helpers.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = `${root}node_modules/typescript/bin/tsc`;
const skip = !existsSync(tsc) && 'typescript not installed';


function runTsc(project) {
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', `${root}tests/types/${project}`], { cwd: root, timeout: 120000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout + stderr }));
  });
}

// tsconfig.node.json: "lib": ["es2022"], "types": ["node"] (no DOM)
const nodeTypes = existsSync(`${root}node_modules/@types/node`) || '@types/node not installed (npm install)';
for (const project of ['tsconfig.json', 'tsconfig.node.json']) {
  test(`tsc --strict -p tests/types/${project}`, { skip: skip || (project.includes('node') && nodeTypes !== true && nodeTypes) }, async () => {
    const r = await runTsc(project);
    assert.equal(r.code, 0, r.out);
  });
}

// The members TypeScript sees on the named types of dist/weft.d.ts, each
// with the interface that declares it.
function declared(typeNames) {
  const ts = createRequire(import.meta.url)(`${root}node_modules/typescript`);
  const probe = `${root}__probe.ts`;
  const text = `import type { ${typeNames.join(', ')} } from './dist/weft.js';\n` +
    typeNames.map((n) => `export declare const v${n}: ${n};`).join('\n');
  const host = ts.createCompilerHost({});
  const read = host.getSourceFile;
  host.getSourceFile = (f, lang) => (f === probe ? ts.createSourceFile(f, text, lang) : read(f, lang));
  const program = ts.createProgram([probe], {
    strict: true, noEmit: true, types: [], lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
  }, host);
  const checker = program.getTypeChecker();
  const out = {};
  for (const stmt of program.getSourceFile(probe).statements) {
    if (!ts.isVariableStatement(stmt)) continue;
    const decl = stmt.declarationList.declarations[0];
    out[decl.name.text.slice(1)] = new Map(checker.getTypeAtLocation(decl).getProperties().map((p) => {
      const parent = p.declarations?.[0]?.parent;
      return [p.name, parent && ts.isInterfaceDeclaration(parent) ? parent.name.text : null];
    }));
  }
  return out;
}

// Own string keys up the prototype chain, Object.prototype excluded; other
// names with a leading _ than the declared ones (private ops, _conv2dFused) are
// test hooks (wt._faultInjection), not API.
function runtimeNames(obj, declaredNames) {
  const names = new Set();
  for (let p = obj; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) {
      // (wt's prototype is a Proxy of Object.prototype's names: js/traps.js)
      if (k !== 'constructor' && !(Object.hasOwn(Object.prototype, k) && p[k] === Object.prototype[k]) && (!k.startsWith('_') || declaredNames.has(k))) names.add(k);
    }
  }
  return names;
}

test('every runtime function and Tensor method is declared, and every declared one exists', { skip }, async () => {
  const wt = await init();
  const d = declared(['Weft', 'Tensor']);
  for (const [type, obj] of [['Weft', wt], ['Tensor', wt.Tensor.prototype]]) {
    const runtime = runtimeNames(obj, d[type]);
    const undeclared = [...runtime].filter((k) => !d[type].has(k));
    assert.deepEqual(undeclared, [], `${type}: at run time but not declared in dist/weft.d.ts`);
    // symbol members (__@iterator@N) by their symbol
    const has = (k) => (k.startsWith('__@iterator') ? typeof obj[Symbol.iterator] === 'function' : runtime.has(k));
    const missing = [...d[type].keys()].filter((k) => !has(k));
    assert.deepEqual(missing, [], `${type}: declared but missing at run time`);
  }
});

test('the typed tour (tests/types/*.ts) uses every hand-written declaration', { skip }, () => {
  const dir = `${root}tests/types/`;
  const tour = readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => readFileSync(dir + f, 'utf8')).join('\n');
  const d = declared(['Weft', 'Tensor']);
  const handWritten = new Set(['WeftCore', 'TensorCore', 'TensorShortcuts', 'ReduceFunctions', 'ReduceTensorOps',
    'IndexingFunctions', 'IndexingTensorOps',
    'OpsApi', 'ShapeFunctions', 'ShapeTensorOps']);
  const unused = [];
  for (const [type, members] of Object.entries(d)) {
    for (const [name, iface] of members) {
      // a symbol's member (__@iterator@N): used by for..of
      const used = name.startsWith('__@iterator') ? /for \(const \w+ of /.test(tour) : new RegExp(`[.\\s]${name}\\b`).test(tour);
      if (handWritten.has(iface) && !used) unused.push(`${type}.${name}`);
    }
  }
  assert.deepEqual(unused, [], 'declarations the typed tour never uses');
});
