/**
 * Summarizes a V8 heap snapshot (bench/memory's BENCH_HEAP_SNAPSHOT, or any `.heapsnapshot`):
 * `node dist/bench/heap-summary.js <file> [rows]` prints the total self size and the largest
 * groups (objects by constructor, strings, compiled code, arrays…), then the largest strings
 * (module sources, SQL, cached payloads) with their first characters.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: heap-summary <file.heapsnapshot> [rows]');
const rows = Number(rowsArg ?? 30);
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const fields = snap.snapshot.meta.node_fields;
const width = fields.length;
const types = snap.snapshot.meta.node_types[0];
const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
const groups = new Map<string, { size: number; count: number }>();
const strings: Array<[number, string]> = [];
let total = 0;
for (let i = 0; i < snap.nodes.length; i += width) {
  const type = types[snap.nodes[i + iType]!]!;
  const name = snap.strings[snap.nodes[i + iName]!]!;
  const size = snap.nodes[i + iSize]!;
  total += size;
  const key = ['object', 'native', 'closure'].includes(type) ? `${type}: ${name.slice(0, 60)}` : type;
  const g = groups.get(key) ?? { size: 0, count: 0 };
  g.size += size;
  g.count++;
  groups.set(key, g);
  if (type === 'string' && size > 50_000) strings.push([size, name.slice(0, 100).replace(/\s+/g, ' ')]);
}
const mb = (x: number): string => (x / 1048576).toFixed(2);
process.stdout.write(`${file}: ${mb(total)} MB of self size\n  ${'MB'.padStart(8)} ${'count'.padStart(8)}  group\n`);
for (const [key, g] of [...groups].sort((a, b) => b[1].size - a[1].size).slice(0, rows))
  process.stdout.write(`  ${mb(g.size).padStart(8)} ${String(g.count).padStart(8)}  ${key}\n`);
strings.sort((a, b) => b[0] - a[0]);
const big = strings.reduce((s, [size]) => s + size, 0);
process.stdout.write(`\nstrings over 50 KB: ${strings.length}, ${mb(big)} MB; the largest:\n`);
for (const [size, head] of strings.slice(0, 10)) process.stdout.write(`  ${(size / 1024).toFixed(0).padStart(6)} KB  ${head}\n`);
