// The web app's build: Preact through Vite, bundled into dist/web with relative asset URLs
// (it is served at /, under SVC_BASE_PATH and behind proxy prefixes alike). Every emitted file
// also gets .gz and .br siblings, which the server sends to clients that accept them; the
// sizes are printed, with the first screen's gzip total against its 300 KB target.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const outDir = join(here, '../../dist/web');
const FIRST_SCREEN_TARGET = 300 * 1024;
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|map)$/;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

/** Writes .gz/.br siblings and prints the sizes; the first screen is index.html plus what it loads. */
function precompress() {
  return {
    name: 'svc-precompress',
    apply: 'build',
    closeBundle() {
      const rows = [];
      for (const file of walk(outDir)) {
        if (!COMPRESSIBLE.test(file) || file.endsWith('.map')) continue;
        const raw = readFileSync(file);
        const gz = gzipSync(raw, { level: 9 });
        writeFileSync(`${file}.gz`, gz);
        writeFileSync(`${file}.br`, brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        rows.push({ file: relative(outDir, file), raw: raw.length, gzip: gz.length });
      }
      const html = readFileSync(join(outDir, 'index.html'), 'utf8');
      const loaded = new Set(['index.html', ...[...html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((m) => m[1])]);
      const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
      let first = 0;
      for (const row of rows.sort((a, b) => a.file.localeCompare(b.file))) {
        if (loaded.has(row.file)) first += row.gzip;
        process.stdout.write(
          `  ${row.file.padEnd(44)} ${kb(row.raw).padStart(10)}  gzip ${kb(row.gzip).padStart(9)}\n`,
        );
      }
      process.stdout.write(
        `web app first screen: ${kb(first)} gzip (target ${kb(FIRST_SCREEN_TARGET)})` +
          `${first > FIRST_SCREEN_TARGET ? ' OVER TARGET' : ''}\n`,
      );
    },
  };
}

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  resolve: {
    alias: [{ find: /^#contracts\/(.*)\.js$/, replacement: join(here, '../../libs/contracts/src/$1.ts') }],
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // Fonts (KaTeX's) stay files: the page's policy has no data: fonts (font-src falls back to 'self').
    assetsInlineLimit: (file) => (/\.(woff2?|ttf|otf)$/.test(file) ? false : undefined),
  },
  plugins: [precompress()],
});
