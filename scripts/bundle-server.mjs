#!/usr/bin/env node
// The server as one bundle (docs/development.md, "Building"): dist/apps/server/src/main.js and what
// it imports, the server's own modules and its dependencies, in a few files under dist/server/.
// Node then reads, resolves and compiles ~40 files instead of ~2,000 at each start (the import
// took ~1 s of the main thread's CPU while the embedded database opened beside it;
// docs/performance.md, "Start-up").
//
// What stays outside, loaded from node_modules as before:
//  - a package that finds its own files at run time (`__dirname`, `__filename`, `import.meta.url`,
//    `require.resolve`, a `new Worker`): PGlite's WebAssembly, Playwright, BullMQ's SQL scripts,
//    pino's transports…, found by reading the code a first pass bundles;
//  - every dependency of such a package, so that no package is ever loaded twice (once bundled,
//    once by an outside package), which would split its module state (a package's own nested copy
//    of one, another version, stays bundled with it, as Node would load it for that package only);
//  - what cannot be found (optional peers such as @nestjs/microservices), as without a bundle.
// The server's own workers (the embedded database, the file watcher, searches, document parsing)
// run from their compiled files under dist/, as `import.meta.url` in the server's modules is
// rewritten to their compiled file's place.
//
// Usage: node scripts/bundle-server.mjs [entry out]
//   (bench/startup bundles its bare Nest app the same way: an entry under dist/ and a folder)

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const [entryArg, outArg] = process.argv.slice(2);
const ENTRY = entryArg ? resolve(entryArg) : join(DIST, 'apps', 'server', 'src', 'main.js');
const OUT = outArg ? resolve(outArg) : join(DIST, 'server');
// The folder is emptied first: only ever one under dist/.
if (!OUT.startsWith(DIST + sep)) throw new Error(`the bundle's folder must lie under dist/: ${OUT}`);

/** What in a package's code means it reads its own files, or starts a worker from one, at run time. */
const FILE_LAYOUT = [
  '__dirname',
  '__filename',
  'import.meta.url',
  'import.meta.dirname',
  'import.meta.filename',
  'require.resolve',
  'new Worker(',
];

const packageOf = (id) => /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(id)?.[1].replace('\\', '/');
const bareName = (specifier) => {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
};
const isBare = (specifier) => !/^(?:\.|\/|#|node:|[a-zA-Z]:)/.test(specifier) && !specifier.startsWith('\0');

/** The package and everything it depends on (dependencies, peers, optional), by name. */
function withDependencies(names) {
  const all = new Set();
  const visit = (name) => {
    if (all.has(name)) return;
    all.add(name);
    const manifest = join(ROOT, 'node_modules', name, 'package.json');
    if (!existsSync(manifest)) return;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const dep of Object.keys(pkg[field] ?? {})) visit(dep);
    }
  };
  for (const name of names) visit(name);
  return all;
}

/**
 * The server's modules: `import.meta.url` is their compiled file's, wherever the bundle puts
 * their code (their workers, the web app's folder, the package manifest are found from there).
 * Packages: `createRequire(import.meta.url)(name)` is a plain `require(name)`, which the bundler
 * follows (Nest loads optional peers that way), so the package needs no file of its own for it.
 */
const rewrites = {
  name: 'svc-bundle-rewrites',
  transform(code, id) {
    if (!code.includes('import.meta.url')) return null;
    if (packageOf(id) === undefined) {
      if (!id.startsWith(DIST)) return null;
      const place = JSON.stringify(relative(OUT, id).split('\\').join('/'));
      return code.replaceAll('import.meta.url', `new URL(${place}, import.meta.url).href`);
    }
    return code
      .replace(/const require = createRequire\(import\.meta\.url\);/g, '')
      .replace(/createRequire\(import\.meta\.url\)\(/g, 'require(');
  },
};

/** Logs worth showing: not an optional peer left out (Nest's), nor a dependency's own `eval`. */
const onLog = (level, log, handler) => {
  if (log.code === 'UNRESOLVED_IMPORT' || log.code === 'EVAL' || log.code === 'INEFFECTIVE_DYNAMIC_IMPORT') return;
  handler(level, log);
};

// First pass: which packages need their own files (read from the code as it would be bundled).
const needFiles = new Set();
const survey = await rolldown({
  input: ENTRY,
  platform: 'node',
  external: (specifier) => specifier.startsWith('node:'),
  onLog,
  plugins: [
    rewrites,
    {
      name: 'svc-bundle-survey',
      transform: {
        order: 'post',
        handler(code, id) {
          const name = packageOf(id);
          if (name !== undefined && FILE_LAYOUT.some((marker) => code.includes(marker))) needFiles.add(name);
          return null;
        },
      },
    },
  ],
});
await survey.generate({ format: 'esm' });
await survey.close();
const outside = withDependencies(needFiles);

// Second pass: the bundle, those packages (and the node: modules) imported from outside.
rmSync(OUT, { recursive: true, force: true });
const bundle = await rolldown({
  input: { main: ENTRY },
  platform: 'node',
  external: (specifier) => specifier.startsWith('node:'),
  onLog,
  plugins: [
    rewrites,
    {
      // Outside when the import reaches the package's copy at the top of node_modules, the one
      // Node finds from dist/ too; a package's own nested copy (another version) stays with it.
      name: 'svc-bundle-outside',
      async resolveId(specifier, importer, options) {
        if (!isBare(specifier) || !outside.has(bareName(specifier))) return null;
        const resolved = await this.resolve(specifier, importer, { ...options, skipSelf: true });
        const top = join(ROOT, 'node_modules', bareName(specifier)) + sep;
        if (resolved === null || resolved.external || resolved.id.startsWith(top))
          return { id: specifier, external: true };
        return resolved;
      },
    },
  ],
});
const { output } = await bundle.write({
  dir: OUT,
  format: 'esm',
  // One folder: `import.meta.url` of every chunk is in it (see the rewrite above).
  entryFileNames: '[name].js',
  chunkFileNames: '[name]-[hash].js',
});
await bundle.close();
process.stdout.write(
  `bundle: ${output.length} files in ${relative(ROOT, OUT)}; from node_modules: ${[...needFiles].sort().join(', ')} and their dependencies (${outside.size} packages)\n`,
);
