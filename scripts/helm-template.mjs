#!/usr/bin/env node
// Renders deploy/helm/svc-server offline, the way `helm template` does, for the checks of
// `npm run validate:deploy` on machines without the helm binary (it is no Debian package, and no
// well-kept npm package renders charts). It understands the subset of Helm's Go templates the
// chart uses, and refuses anything else (so the chart cannot drift into what this cannot check):
//   {{ .Values.a.b }} {{ .Release.Name }} {{ .Release.Namespace }} {{ .Chart.Name }} {{ .Chart.Version }}
//   {{ .Chart.AppVersion }} {{ $ }} {{ . }}, "strings", numbers, true/false, ( sub-pipelines )
//   {{- … -}} trimming, {{/* comments */}}, if / else if / else / end, with / end, range LIST / end,
//   define / include, and the functions: include, toYaml, nindent, indent, quote, default, b64enc,
//   trunc, trimSuffix, replace, printf (%s %d), not, and, or, eq, ne, empty, required, dict, tpl-free.
// When helm is installed, validate-deploy also runs `helm lint` and `helm template` and compares.
//
// Usage: node scripts/helm-template.mjs [chartDir] [-f values.yaml]... [--set a.b=c]...

import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

// ---------------------------------------------------------------- parsing

/** Text and actions, with `{{-` / `-}}` trimming applied to the neighbouring text. */
function tokenize(source, file) {
  const tokens = [];
  let at = 0;
  while (at < source.length) {
    const open = source.indexOf('{{', at);
    if (open < 0) {
      tokens.push({ type: 'text', value: source.slice(at) });
      break;
    }
    tokens.push({ type: 'text', value: source.slice(at, open) });
    const close = source.indexOf('}}', open);
    if (close < 0) throw new Error(`${file}: unclosed {{`);
    let inner = source.slice(open + 2, close);
    const trimLeft = inner.startsWith('-') && /^-\s/.test(inner);
    const trimRight = inner.endsWith('-') && /\s-$/.test(inner);
    if (trimLeft) inner = inner.slice(1);
    if (trimRight) inner = inner.slice(0, -1);
    if (trimLeft) tokens[tokens.length - 1].value = tokens[tokens.length - 1].value.replace(/\s+$/, '');
    tokens.push({ type: 'action', value: inner.trim(), trimRight, file });
    at = close + 2;
    if (trimRight) {
      const rest = source.slice(at);
      at += rest.length - rest.replace(/^\s+/, '').length;
    }
  }
  return tokens.filter((t) => t.type === 'action' || t.value !== '');
}

/** A tree of text, output actions and blocks (if/with/range/define). */
function parse(tokens) {
  const root = { type: 'list', nodes: [] };
  const stack = [root];
  const defines = {};
  const top = () => stack[stack.length - 1];
  for (const token of tokens) {
    if (token.type === 'text') {
      top().nodes.push(token);
      continue;
    }
    const action = token.value;
    if (action.startsWith('/*')) continue;
    const [keyword] = action.split(/\s+/, 1);
    const rest = action.slice(keyword.length).trim();
    if (keyword === 'if' || keyword === 'with' || keyword === 'range') {
      const node = { type: keyword, branches: [{ cond: rest, nodes: [] }], elseNodes: null, file: token.file };
      top().nodes.push(node);
      stack.push({ type: 'branch', node, nodes: node.branches[0].nodes });
    } else if (keyword === 'define') {
      const name = JSON.parse(rest);
      defines[name] = { type: 'list', nodes: [] };
      stack.push({ type: 'define', nodes: defines[name].nodes });
    } else if (keyword === 'else') {
      const frame = stack.pop();
      if (frame.type !== 'branch') throw new Error(`${token.file}: else outside if`);
      const { node } = frame;
      if (rest.startsWith('if ')) {
        const branch = { cond: rest.slice(3).trim(), nodes: [] };
        node.branches.push(branch);
        stack.push({ type: 'branch', node, nodes: branch.nodes });
      } else {
        node.elseNodes = [];
        stack.push({ type: 'branch', node, nodes: node.elseNodes });
      }
    } else if (keyword === 'end') {
      if (stack.length < 2) throw new Error(`${token.file}: end without a block`);
      stack.pop();
    } else {
      top().nodes.push({ type: 'output', expr: action, file: token.file });
    }
  }
  if (stack.length !== 1) throw new Error(`${tokens[0]?.file ?? 'template'}: a block is not closed`);
  return { root, defines };
}

/** Splits a pipeline or command into words, keeping "strings" and ( groups ) whole. */
function words(text, sep = /\s/) {
  const out = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      current += ch;
      if (ch === '\\') current += text[++i];
      else if (ch === '"') quoted = false;
    } else if (ch === '"') {
      quoted = true;
      current += ch;
    } else if (ch === '(') {
      depth += 1;
      current += ch;
    } else if (ch === ')') {
      depth -= 1;
      current += ch;
    } else if (depth === 0 && sep.test(ch)) {
      if (current.trim() !== '') out.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

// ---------------------------------------------------------------- evaluation

const truthy = (v) =>
  !(v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0)) &&
  !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

const toYaml = (v) => (v === undefined || v === null ? 'null' : stringifyYaml(v, { lineWidth: 0 }).replace(/\n$/, ''));
const indentLines = (n, s) =>
  String(s)
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');

function lookup(path, dot, root) {
  const [first, ...parts] = path.split('.');
  let value = first === '$' ? root : dot;
  const keys = first === '$' || first === '' ? parts : [first, ...parts];
  for (const key of keys.filter((k) => k !== '')) {
    value = value == null ? undefined : value[key];
  }
  return value;
}

class Renderer {
  constructor(defines, root) {
    this.defines = defines;
    this.root = root;
  }

  render(nodes, dot) {
    let out = '';
    for (const node of nodes) {
      if (node.type === 'text') out += node.value;
      else if (node.type === 'output') {
        const value = this.pipeline(node.expr, dot, node.file);
        out += value === undefined || value === null ? '' : String(value);
      } else if (node.type === 'if') {
        const branch = node.branches.find((b) => truthy(this.pipeline(b.cond, dot, node.file)));
        if (branch) out += this.render(branch.nodes, dot);
        else if (node.elseNodes) out += this.render(node.elseNodes, dot);
      } else if (node.type === 'with') {
        const value = this.pipeline(node.branches[0].cond, dot, node.file);
        if (truthy(value)) out += this.render(node.branches[0].nodes, value);
        else if (node.elseNodes) out += this.render(node.elseNodes, dot);
      } else if (node.type === 'range') {
        const value = this.pipeline(node.branches[0].cond, dot, node.file);
        const items = Array.isArray(value) ? value : value && typeof value === 'object' ? Object.values(value) : [];
        if (items.length === 0 && node.elseNodes) out += this.render(node.elseNodes, dot);
        for (const item of items) out += this.render(node.branches[0].nodes, item);
      }
    }
    return out;
  }

  pipeline(expr, dot, file) {
    let value;
    let first = true;
    for (const command of words(expr, /\|/)) {
      const parts = words(command);
      value = first ? this.command(parts, dot, file) : this.command([...parts, { piped: value }], dot, file);
      first = false;
    }
    return value;
  }

  arg(word, dot, file) {
    if (typeof word === 'object') return word.piped;
    if (word.startsWith('"')) return JSON.parse(word);
    if (word.startsWith('(')) return this.pipeline(word.slice(1, -1), dot, file);
    if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word);
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'nil') return null;
    if (word === '.') return dot;
    if (word === '$') return this.root;
    if (word.startsWith('.') || word.startsWith('$.')) return lookup(word, dot, this.root);
    throw new Error(`${file}: cannot read "${word}"`);
  }

  command(parts, dot, file) {
    const [head, ...rawArgs] = parts;
    const fn = typeof head === 'string' ? FUNCTIONS[head] : undefined;
    if (!fn) {
      if (rawArgs.length > 0) throw new Error(`${file}: unknown function "${head}"`);
      return this.arg(head, dot, file);
    }
    const args = rawArgs.map((w) => this.arg(w, dot, file));
    if (head === 'include') {
      const [name, context] = args;
      const define = this.defines[name];
      if (!define) throw new Error(`${file}: include of unknown template "${name}"`);
      return this.render(define.nodes, context);
    }
    return fn(...args);
  }
}

const FUNCTIONS = {
  include: () => undefined, // handled in command()
  toYaml,
  nindent: (n, s) => `\n${indentLines(n, s)}`,
  indent: (n, s) => indentLines(n, s),
  quote: (s) => JSON.stringify(s === undefined || s === null ? '' : String(s)),
  default: (fallback, v) => (truthy(v) ? v : fallback),
  b64enc: (s) => Buffer.from(String(s)).toString('base64'),
  trunc: (n, s) => String(s).slice(0, n),
  trimSuffix: (suffix, s) => (String(s).endsWith(suffix) ? String(s).slice(0, -suffix.length) : String(s)),
  replace: (from, to, s) => String(s).split(from).join(to),
  printf: (format, ...values) => {
    let i = 0;
    return format.replace(/%[sdv]/g, () => String(values[i++]));
  },
  not: (v) => !truthy(v),
  and: (...vs) => vs.reduce((a, b) => (truthy(a) ? b : a)),
  or: (...vs) => vs.find(truthy) ?? vs[vs.length - 1],
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  empty: (v) => !truthy(v),
  required: (message, v) => {
    if (!truthy(v)) throw new Error(message);
    return v;
  },
  dict: (...kv) => Object.fromEntries(Array.from({ length: kv.length / 2 }, (_, i) => [kv[2 * i], kv[2 * i + 1]])),
};

// ---------------------------------------------------------------- chart

function deepMerge(base, over) {
  if (over === null || typeof over !== 'object' || Array.isArray(over)) return over;
  const out = { ...(base && typeof base === 'object' && !Array.isArray(base) ? base : {}) };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(out[k], v);
  return out;
}

function setPath(values, assignment) {
  const eq = assignment.indexOf('=');
  const keys = assignment.slice(0, eq).split('.');
  let raw = assignment.slice(eq + 1);
  let value = raw === 'true' || raw === 'false' ? raw === 'true' : /^-?\d+$/.test(raw) ? Number(raw) : raw;
  const over = {};
  let at = over;
  keys.forEach((k, i) => (at = at[k] = i === keys.length - 1 ? value : {}));
  return deepMerge(values, over);
}

/**
 * Renders the chart as `helm template <release> <chart> -f … --set …` would: the documents of every
 * template in templates/ (files starting with `_` hold definitions only), each with its
 * `# Source:` line, empty documents left out.
 */
export function renderChart(chartDir, { valuesFiles = [], set = [], release = 'svc', namespace = 'default' } = {}) {
  const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'));
  let values = parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) ?? {};
  for (const file of valuesFiles) values = deepMerge(values, parseYaml(readFileSync(file, 'utf8')) ?? {});
  for (const assignment of set) values = setPath(values, assignment);
  const root = {
    Values: values,
    Release: { Name: release, Namespace: namespace, Service: 'Helm', IsInstall: true, IsUpgrade: false },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  const templatesDir = join(chartDir, 'templates');
  const files = readdirSync(templatesDir)
    .filter((f) => /\.(ya?ml|tpl)$/.test(f))
    .sort();
  const defines = {};
  const parsed = [];
  for (const file of files) {
    const { root: tree, defines: found } = parse(tokenize(readFileSync(join(templatesDir, file), 'utf8'), file));
    Object.assign(defines, found);
    if (!basename(file).startsWith('_')) parsed.push({ file, tree });
  }
  const renderer = new Renderer(defines, root);
  const documents = [];
  for (const { file, tree } of parsed) {
    const text = renderer.render(tree.nodes, root);
    for (const doc of text.split(/^---\s*$/m)) {
      if (doc.replace(/#.*$/gm, '').trim() === '') continue;
      documents.push(`---\n# Source: ${chart.name}/templates/${file}\n${doc.replace(/^\n+/, '')}`);
    }
  }
  return { chart, values, yaml: `${documents.join('\n').trimEnd()}\n` };
}

// ---------------------------------------------------------------- CLI

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let chartDir = resolve(fileURLToPath(import.meta.url), '../../deploy/helm/svc-server');
  const valuesFiles = [];
  const set = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-f' || args[i] === '--values') valuesFiles.push(args[++i]);
    else if (args[i] === '--set') set.push(args[++i]);
    else chartDir = resolve(args[i]);
  }
  process.stdout.write(renderChart(chartDir, { valuesFiles, set }).yaml);
}
