#!/usr/bin/env node
// Writes the server's OpenAPI document to a file: starts the built server (embedded mode, a
// temporary data folder), reads GET /api/openapi.json and stops it. The document is built from
// what the running server registered, so this is what a client generator would be given.
//   node scripts/write-openapi.mjs <out.json>      (npm run build first)
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/write-openapi.mjs <out.json>');
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
const { startServer } = await import(join(root, 'dist/libs/testing/src/test-server.js'));
// Embedded mode (no Postgres or Redis needed), without the test-only routes.
process.env.SVC_TEST_MODE = 'embedded';
const server = await startServer({ env: { SVC_TEST_HOOKS: undefined } });
try {
  const res = await fetch(`${server.url}/api/openapi.json`, { headers: { Authorization: `Bearer ${server.password}` } });
  if (res.status !== 200) throw new Error(`GET /api/openapi.json answered ${res.status}`);
  const doc = await res.json();
  mkdirSync(dirname(resolve(out)), { recursive: true });
  writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
  console.log(`wrote ${out}: ${Object.keys(doc.paths).length} paths`);
} finally {
  await server.stop();
}
