#!/usr/bin/env node
// The API reference, docs/api.md, made from what weft is rather than written
// beside it, so it cannot drift:
//   the running API (await init()): every wt.* function, Tensor method,
//     wt.nn module class, wt.nn.functional, wt.optim, wt.linalg when present,
//     and the weft/models exports, enumerated at run time;
//   the op table (src/ops/*.def, with elementwise.def made from
//     elementwise_table.h): each generated op's PyTorch schemas and family;
//   the TypeScript declarations (js/*.d.ts, js/models/index.d.ts, read with
//     the TypeScript compiler API): signatures, return types, doc comments and
//     the differences from PyTorch they state;
//   docs/examples.json: hand-written examples (run by tests/js/api-docs.test.mjs)
//     and the PyTorch → weft table;
//   a dtype probe: each op whose required arguments are all tensors is called
//     on small tensors of each dtype, and the ones it accepts are listed.
// Run after `npm run build` (scripts/build.sh runs it too):
//   node scripts/gen_api_docs.mjs           writes docs/api.md when it changed
//   node scripts/gen_api_docs.mjs --check   exits 1 when it is stale
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = 'docs/api.md';
const PROBE_DTYPES = ['bool', 'uint8', 'int32', 'int64', 'float32', 'float64'];

const snake = (k) => k.replace(/(?<=[a-z0-9])([A-Z])/g, (_, c) => '_' + c.toLowerCase());
const read = (path) => readFileSync(ROOT + path, 'utf8');
const code = (s) => '`' + s.replace(/`/g, '\\`') + '`';
const cell = (s) => s.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

// ---- the op table: op name -> its .def file (the family) ----

function opFamilies() {
  const family = new Map();
  for (const file of readdirSync(ROOT + 'src/ops').filter((f) => f.endsWith('.def')).sort()) {
    const text = read(`src/ops/${file}`).replace(/\/\*[\s\S]*?\*\//g, '');
    for (const m of text.matchAll(/WEFT_OP\(\s*\w+\s*,\s*"([A-Za-z0-9_]+)/g)) {
      if (!family.has(m[1])) family.set(m[1], file.replace(/\.def$/, '').replace(/^ops$/, 'core'));
    }
  }
  return family;
}

// camelCase JS name -> { base, schemas }, from the registry (wt.ops.list()).
function opsByJsName(wt) {
  const camel = (n) => n.replace(/(?<=.)_([a-z0-9])/g, (_, c) => c.toUpperCase());
  const byName = new Map();
  for (const { name, schema } of wt.ops.list()) {
    const base = name.replace(/^aten::/, '').split('.')[0];
    const js = camel(base);
    if (!byName.has(js)) byName.set(js, { base, schemas: [] });
    byName.get(js).schemas.push(schema.replace(/^aten::/, ''));
  }
  return byName;
}

// ---- the TypeScript declarations ----

// name -> [{ side, container, file, text, type, doc }] over every interface and class member,
// plus top-level exported functions/classes (weft/models).
function declarations() {
  const ts = createRequire(import.meta.url)(ROOT + 'node_modules/typescript');
  const files = readdirSync(ROOT + 'js').filter((f) => f.endsWith('.d.ts')).sort().map((f) => `js/${f}`);
  files.push('js/models/index.d.ts');
  const members = new Map();
  const add = (name, entry) => {
    if (!members.has(name)) members.set(name, []);
    members.get(name).push(entry);
  };
  const docOf = (node) => (node.jsDoc ?? []).map((d) => ts.getTextOfJSDocComment(d.comment) ?? '')
    .join(' ').replace(/\s+/g, ' ').trim();
  for (const file of files) {
    const src = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
    const sigText = (node) => {
      const start = node.getStart(src, false);
      return src.text.slice(start, node.end).replace(/\s+/g, ' ').replace(/;$/, '');
    };
    const visit = (node) => {
      if (ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) {
        const container = node.name?.text ?? '';
        if (ts.isClassDeclaration(node) && node.name) {
          add(container, { container: file, kind: 'class', file, text: '', type: '', doc: docOf(node) });
        }
        for (const m of node.members) {
          const name = ts.isConstructorDeclaration(m) ? 'constructor' : m.name?.getText(src).replace(/^['"]|['"]$/g, '');
          if (!name) continue;
          add(ts.isConstructorDeclaration(m) ? `${container}#constructor` : name, {
            container, kind: 'member', file, text: sigText(m), type: m.type ? m.type.getText(src) : '', doc: docOf(m),
          });
        }
      } else if (ts.isFunctionDeclaration(node) && node.name) {
        add(node.name.text, { container: file, kind: 'function', file, text: sigText(node),
          type: node.type ? node.type.getText(src) : '', doc: docOf(node) });
      }
      ts.forEachChild(node, visit);
    };
    visit(src);
  }
  return members;
}

const workerSide = (d) => /^Worker/.test(d.container);
const tensorSide = (d) => /Tensor(Ops|Core|Shortcuts)?$|OpMethods|^Tensor$/.test(d.container) || /TensorOps/.test(d.container);

function decls(members, name, side) {
  return (members.get(name) ?? []).filter((d) => !workerSide(d) && d.kind !== 'class' && side(d))
    // the op table's generated declarations carry only their overload names as comments
    .map((d) => (d.file === 'js/optable.d.ts' ? { ...d, doc: '' } : d));
}

// Sentences of the doc comments that state a difference from PyTorch.
function differences(docs) {
  const out = new Set();
  for (const doc of docs) {
    for (const s of doc.split(/(?<=\.)\s+(?=[A-Z(`])/)) {
      if (/unlike|JS extension|PyTorch 2|Accepted for PyTorch|weft has no|not supported|instead of|differs?\b|(weft|JS|PyTorch) (has|does|takes|gives)( not|n't)?|where PyTorch/i.test(s)) out.add(s.trim());
    }
  }
  return [...out];
}

// ---- the dtype probe ----

function requiredTensorArgs(schema) {
  const args = schema.slice(schema.indexOf('(') + 1, schema.lastIndexOf(')')).split(',').map((a) => a.trim());
  const positional = [];
  for (const a of args) {
    if (a === '*') break;
    if (!a || a.includes('=')) continue;
    positional.push(a);
  }
  if (!positional.length || !positional.every((a) => /^Tensor(\([a-z]\))? \w+$/.test(a))) return null;
  return positional.length;
}

function probeDtypes(wt, name, schemas) {
  if (name.startsWith('_') || /Backward$/.test(name) || !schemas.length) return null;
  const counts = schemas.map(requiredTensorArgs).filter((n) => n && n <= 3);
  if (!counts.length) return null;
  const n = Math.min(...counts);
  const ok = [];
  for (const dtype of PROBE_DTYPES) {
    try {
      wt.tidy(() => {
        const args = Array.from({ length: n }, () => wt.ones([2, 2], { dtype }));
        const r = wt[name](...args);
        return r && typeof r.then === 'function' ? undefined : undefined;
      });
      ok.push(dtype);
    } catch { /* refused */ }
  }
  return ok;
}

// ---- rendering ----

function entry(lines, { title, torch, sigs, returns, doc, diffs, dtypes, schemas, example }) {
  lines.push(`#### ${title}`, '');
  if (torch) lines.push(`- PyTorch: ${torch}`);
  if (schemas?.length) lines.push(`- Schema: ${schemas.map(code).join('; ')}`);
  if (dtypes) lines.push(`- Dtypes: ${dtypes.length ? dtypes.join(', ') : 'none of ' + PROBE_DTYPES.join(', ') + ' alone (see schema)'}`);
  if (returns) lines.push(`- Returns: ${code(returns)}`);
  if (doc) lines.push(`- ${doc}`);
  for (const d of diffs ?? []) lines.push(`- Difference from PyTorch: ${d}`);
  lines.push('');
  if (sigs?.length) lines.push('```ts', ...sigs, '```', '');
  if (example) lines.push('Example:', '', '```js', example.code, `// → ${JSON.stringify(example.expect)}`, '```', '');
}

function family(name, op, fam, members) {
  if (op && fam.has(op.base)) return fam.get(op.base);
  const d = decls(members, name, () => true)[0];
  return d ? d.file.replace(/^js\//, '').replace(/\.d\.ts$/, '') : 'other';
}

function functionsSection(lines, wt, ctx) {
  const names = Object.keys(wt).filter((k) => typeof wt[k] === 'function' && !/^[A-Z]/.test(k)).sort();
  const groups = new Map();
  for (const name of names) {
    const op = ctx.ops.get(name);
    const g = family(name, op, ctx.fam, ctx.members);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(name);
  }
  lines.push('## Functions: `wt.*`', '',
    `${names.length} functions, grouped by the op-table file or declaration file they come from.`, '');
  for (const g of [...groups.keys()].sort()) {
    lines.push(`### ${g}`, '');
    for (const name of groups.get(g)) {
      const op = ctx.ops.get(name);
      const ds = decls(ctx.members, name, (d) => !tensorSide(d));
      const docs = ds.map((d) => d.doc).filter(Boolean);
      entry(lines, {
        title: `wt.${name}`,
        torch: op ? code(`torch.${op.base}`) : torchFromDocs(docs, name in wt.nn.functional && snake(name)),
        schemas: op?.schemas,
        dtypes: op ? probeDtypes(wt, name, op.schemas) : null,
        sigs: [...new Set(ds.map((d) => d.text))],
        returns: [...new Set(ds.map((d) => d.type).filter(Boolean))].join(' / '),
        doc: [...new Set(docs)].join(' '),
        diffs: differences(docs),
        example: ctx.examples[`wt.${name}`],
      });
    }
  }
}

function torchFromDocs(docs, functional) {
  if (functional) return code(`torch.nn.functional.${functional}`);
  const m = docs.join(' ').match(/\btorch(\.[A-Za-z_][\w]*)+/);
  return m ? code(m[0]) : 'no direct counterpart (a JS-side API)';
}

function methodsSection(lines, wt, ctx) {
  const t = wt.ones([1]);
  const names = new Set();
  for (let p = Object.getPrototypeOf(t); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) if (k !== 'constructor') names.add(k);
  }
  t.dispose();
  lines.push('## Tensor methods and properties', '',
    'Methods generated from the op table take the same arguments as `wt.<name>` without the first tensor ' +
    '(`x.add(y)` is `wt.add(x, y)`); a trailing `_` is the in-place form.', '',
    '| JS | PyTorch | declared as | notes |', '|---|---|---|---|');
  for (const name of [...names].sort()) {
    const op = ctx.ops.get(name.replace(/_$/, ''));
    const ds = decls(ctx.members, name, tensorSide);
    const docs = [...new Set(ds.map((d) => d.doc).filter(Boolean))];
    const torch = op ? `Tensor.${op.base}${name.endsWith('_') ? '_' : ''}` : (docs.join(' ').match(/\btorch(\.[A-Za-z_]\w*)+|Tensor\.[A-Za-z_]\w*/)?.[0] ?? '');
    const sig = ds[0]?.text ?? '';
    lines.push(`| ${code('x.' + name)} | ${torch ? code(torch) : ''} | ${sig ? code(cell(sig)) : ''} | ${cell(docs.join(' '))} |`);
  }
  lines.push('');
}

function classEntries(lines, ns, prefix, torchPrefix, ctx, filter = () => true) {
  for (const name of Object.keys(ns).filter((k) => filter(k, ns[k])).sort()) {
    const cls = (ctx.members.get(name) ?? []).find((d) => d.kind === 'class');
    const ctor = ctx.members.get(`${name}#constructor`) ?? [];
    // a class declared as a namespace's constructor property: `readonly SGD: new (...) => Optimizer`
    const prop = ctor.length ? [] : decls(ctx.members, name, (d) => /new \(/.test(d.type));
    const docs = [cls?.doc, ...ctor.map((d) => d.doc), ...prop.map((d) => d.doc)].filter(Boolean);
    const signature = (args) => `new ${prefix}${name}${args}`;
    entry(lines, {
      title: `${prefix}${name}`,
      torch: code(`${torchPrefix}${name}`),
      sigs: [...ctor.map((d) => signature(d.text.replace(/^constructor/, ''))),
        ...prop.map((d) => signature(d.type.replace(/^(abstract )?new /, '')))],
      doc: docs.join(' '),
      diffs: differences(docs),
      example: ctx.examples[`${prefix}${name}`],
    });
  }
}

function namespaceFunctions(lines, ns, prefix, torchOf, ctx) {
  for (const name of Object.keys(ns).filter((k) => typeof ns[k] === 'function' && !/^[A-Z]/.test(k)).sort()) {
    const ds = decls(ctx.members, name, (d) => !tensorSide(d));
    const docs = [...new Set(ds.map((d) => d.doc).filter(Boolean))];
    entry(lines, {
      title: `${prefix}${name}`,
      torch: code(torchOf(name)),
      sigs: [...new Set(ds.map((d) => d.text))],
      returns: [...new Set(ds.map((d) => d.type).filter(Boolean))].join(' / '),
      doc: docs.join(' '),
      diffs: differences(docs),
      example: ctx.examples[`${prefix}${name}`],
    });
  }
}

// Members with no PyTorch counterpart: explicit freeing of wasm memory, the flat parameter list.
const JS_ONLY = new Set(['dispose', 'params']);

// The methods of a runtime class (its prototype chain), documented by one declaration container.
function prototypeTable(lines, cls, container, torchClass, ctx) {
  const names = new Set();
  for (let p = cls.prototype; p && p !== Object.prototype && p !== Function.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) if (k !== 'constructor' && !k.startsWith('_')) names.add(k);
  }
  lines.push('| JS | PyTorch | declared as | notes |', '|---|---|---|---|');
  for (const name of [...names].sort()) {
    const d = (ctx.members.get(name) ?? []).find((m) => m.container === container);
    const torch = JS_ONLY.has(name) ? 'JS only' : code(`${torchClass}.${snake(name)}`);
    lines.push(`| ${code('.' + name)} | ${torch} | ${d ? code(cell(d.text)) : ''} | ${cell(d?.doc ?? '')} |`);
  }
  lines.push('');
}

function pytorchTable(lines, rows) {
  lines.push('## PyTorch → weft', '', 'Every row is run by tests/js/api-docs.test.mjs.', '',
    '| PyTorch | weft | note |', '|---|---|---|');
  for (const r of rows) lines.push(`| ${code(r.torch)} | ${code(r.weft)} | ${cell(r.note ?? '')} |`);
  lines.push('');
}

// The whole reference, from a running wt and the weft/models module.
export function generate(wt, models) {
  const examples = JSON.parse(read('docs/examples.json'));
  const ctx = { ops: opsByJsName(wt), fam: opFamilies(), members: declarations(), examples: {} };
  for (const e of examples.examples) ctx.examples[e.name] = e;
  const lines = ['# weft API reference', '',
    '<!-- Generated by scripts/gen_api_docs.mjs from the op table, the running API, js/*.d.ts and',
    '     docs/examples.json; do not edit. tests/js/api-docs.test.mjs fails when it is stale. -->', '',
    'Everything `await init()` gives you, with its JS signature, the PyTorch 1.13 name it follows, the dtypes ' +
    'it accepts (probed: each op whose required arguments are tensors is called on tensors of ' +
    `${PROBE_DTYPES.join(', ')}), what it returns, examples and the differences from PyTorch its ` +
    'declarations state. Conventions: PyTorch\'s positional order, then one options object with camelCase ' +
    'keys (`dim`, `keepdim`, `dtype`, `out`, ...); tensor arguments take JS numbers too.', '',
    '## Contents', '', '- [PyTorch → weft](#pytorch--weft)', '- [Differences from PyTorch](#differences-from-pytorch)',
    '- [Functions: `wt.*`](#functions-wt)',
    '- [Tensor methods and properties](#tensor-methods-and-properties)', '- [wt.nn modules](#wtnn-modules)',
    '- [wt.nn.functional](#wtnnfunctional)', '- [wt.nn.init and wt.nn.utils](#wtnninit-and-wtnnutils)',
    '- [wt.optim](#wtoptim)', ...('linalg' in wt ? ['- [wt.linalg](#wtlinalg)'] : []),
    '- [weft/models](#weftmodels)', ''];
  pytorchTable(lines, examples.pytorchToWeft);
  lines.push('## Differences from PyTorch', '', ...examples.differences.map((d) => `- ${d}`), '',
    'Differences specific to one function are listed under it.', '');
  functionsSection(lines, wt, ctx);
  methodsSection(lines, wt, ctx);
  lines.push('## wt.nn modules', '', '### Module methods (every module has them)', '');
  prototypeTable(lines, wt.nn.Module, 'Module', 'torch.nn.Module', ctx);
  lines.push('### Module classes', '');
  classEntries(lines, wt.nn, 'wt.nn.', 'torch.nn.', ctx, (k, v) => /^[A-Z]/.test(k) && typeof v === 'function');
  lines.push('## wt.nn.functional', '');
  namespaceFunctions(lines, wt.nn.functional, 'wt.nn.functional.', (n) => `torch.nn.functional.${snake(n)}`, ctx);
  lines.push('## wt.nn.init and wt.nn.utils', '');
  namespaceFunctions(lines, wt.nn.init, 'wt.nn.init.', (n) => `torch.nn.init.${snake(n)}`, ctx);
  namespaceFunctions(lines, wt.nn.utils, 'wt.nn.utils.', (n) => `torch.nn.utils.${snake(n)}`, ctx);
  lines.push('## wt.optim', '', '### Optimizer methods', '');
  prototypeTable(lines, wt.optim.Optimizer, 'Optimizer', 'torch.optim.Optimizer', ctx);
  lines.push('### Optimizers and schedulers', '');
  classEntries(lines, wt.optim, 'wt.optim.', 'torch.optim.', ctx, (k, v) => /^[A-Z]/.test(k) && typeof v === 'function');
  classEntries(lines, wt.optim.lrScheduler, 'wt.optim.lrScheduler.', 'torch.optim.lr_scheduler.', ctx,
    (k, v) => /^[A-Z]/.test(k) && typeof v === 'function');
  if ('linalg' in wt) {
    lines.push('## wt.linalg', '');
    namespaceFunctions(lines, wt.linalg, 'wt.linalg.', (n) => `torch.linalg.${snake(n)}`, ctx);
  }
  lines.push('## weft/models', '', "`import { resnet18, gpt, ... } from 'weft/models'`", '');
  namespaceFunctions(lines, models, 'models.', (n) => `torchvision.models.${snake(n)}`, ctx);
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

export async function generateFromBuild() {
  const { init } = await import('weft');
  const wt = await init({ variant: 'simd' });
  const models = await import('weft/models');
  return generate(wt, models);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await generateFromBuild();
  let old = '';
  try { old = read(OUT); } catch { /* first run */ }
  if (process.argv.includes('--check')) {
    if (old !== text) {
      console.error(`${OUT} is stale: run node scripts/gen_api_docs.mjs`);
      process.exit(1);
    }
  } else if (old !== text) {
    writeFileSync(ROOT + OUT, text);
    console.log(`wrote ${OUT}`);
  }
  process.exit(0);
}
