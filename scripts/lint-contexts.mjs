#!/usr/bin/env node
// The import rules of libs/core (part of `npm run lint`). dependency-cruiser reads the import
// graph (type-only imports included, spec files left out) and checks the rules of
// .dependency-cruiser.mjs; then the contexts, the folders of libs/core/src, must not import
// each other in a circle through any of their files (a folder-level rule dependency-cruiser
// cannot state for folders that hold sub-folders).
//   node scripts/lint-contexts.mjs           the check: prints what is wrong, exit 1 if anything
//   node scripts/lint-contexts.mjs --graph   also prints the context graph (edges, cycles)
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const CORE = 'libs/core/src/';
const showGraph = process.argv.includes('--graph');

const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs');
const cruised = await cruise(
  [CORE],
  { ...options, outputType: 'json' },
  {},
  { tsConfig: extractTSConfig(options.tsConfig.fileName) },
);
const graph = typeof cruised.output === 'string' ? JSON.parse(cruised.output) : cruised.output;

// 1. The rules of .dependency-cruiser.mjs.
const ruleErrors = graph.summary.error;
if (ruleErrors > 0) console.log((await format(graph, { outputType: 'err' })).output);

// 2. No cycle between contexts.
const contextOf = (path) => (path.startsWith(CORE) ? path.slice(CORE.length).split('/')[0] : null);
/** `from -> to` between two contexts, with the file-level imports that make it. */
const edges = new Map();
for (const module of graph.modules) {
  const from = contextOf(module.source);
  if (!from || !module.source.slice(CORE.length).includes('/')) continue;
  for (const dependency of module.dependencies) {
    const to = contextOf(dependency.resolved);
    if (!to || to === from) continue;
    const key = `${from} -> ${to}`;
    if (!edges.has(key)) edges.set(key, []);
    edges.get(key).push(`${module.source} -> ${dependency.resolved}`);
  }
}
const contexts = [...new Set(graph.modules.map((m) => contextOf(m.source)).filter((c) => c && c.length > 0))].sort();
const next = new Map(contexts.map((c) => [c, []]));
for (const key of edges.keys()) {
  const [from, to] = key.split(' -> ');
  next.get(from)?.push(to);
}

// Tarjan's strongly connected components: each component of more than one context is a cycle.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
let counter = 0;
function visit(v) {
  index.set(v, counter);
  low.set(v, counter);
  counter += 1;
  stack.push(v);
  onStack.add(v);
  for (const w of next.get(v) ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) !== index.get(v)) return;
  const component = [];
  let w;
  do {
    w = stack.pop();
    onStack.delete(w);
    component.push(w);
  } while (w !== v);
  if (component.length > 1) cycles.push(component.sort());
}
for (const c of contexts) if (!index.has(c)) visit(c);

for (const cycle of cycles) {
  console.log(`error context-cycle: ${cycle.join(', ')} import each other in a circle:`);
  const inCycle = new Set(cycle);
  for (const [key, imports] of [...edges].sort()) {
    const [from, to] = key.split(' -> ');
    if (!inCycle.has(from) || !inCycle.has(to)) continue;
    const more = imports.length > 1 ? ` (and ${imports.length - 1} more)` : '';
    console.log(`    ${key}: ${imports[0]}${more}`);
  }
  console.log(
    '  Break it with a seam: the lower context offers a port or a registry the higher one registers with,\n' +
      '  or a type both need moves down to libs/core/src/kernel.\n',
  );
}

if (showGraph) {
  console.log(`contexts: ${contexts.length} (${contexts.join(' ')})`);
  console.log(`context edges: ${edges.size}`);
  for (const [key, imports] of [...edges].sort()) console.log(`  ${key} (${imports.length})`);
  const inCycles = cycles.reduce((n, c) => n + c.length, 0);
  console.log(`contexts in cycles: ${inCycles}${cycles.map((c) => ` [${c.join(' ')}]`).join('')}`);
}

const problems = ruleErrors + cycles.length;
console.log(
  problems === 0
    ? `libs/core imports: ${contexts.length} contexts, ${edges.size} context edges, no cycle, no rule broken.`
    : `libs/core imports: ${cycles.length} context cycle(s), ${ruleErrors} rule violation(s).`,
);
process.exitCode = problems === 0 ? 0 : 1;
