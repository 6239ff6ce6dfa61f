/**
 * AI browser benchmark.
 *
 *   npx tsc -p tsconfig.build.json && node dist/bench/browser.js
 *
 * Prints, in one run (BENCH_RUNS times, default 3, and the median of the runs):
 *   - per tool, p50/p99 of the `mcp__ai-browser__*` tool against Playwright doing the same
 *     action directly on a page of its own in the same Chromium build (the reference), and
 *     their ratio at p50 (target ≤ 1.5×);
 *   - pages per GB: resident memory of the engine's Chromium processes (this process's
 *     descendants) with N pages open (default 8), counting the first page too;
 *   - a catalog-style run end to end: navigate, wait for text, run a skill script, snapshot.
 * Pages are served on loopback by the bench itself. Options: BENCH_ITERATIONS (default 30),
 * BENCH_PAGES (default 8), BENCH_RUNS (default 3).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium, type Page } from 'playwright-core';
import type { BrowserScope } from '#core/browser/ai-browser.js';
import { BrowserService } from '#core/browser/browser.service.js';
import type { AppConfig, BrowserSettings } from '#core/config/app-config.js';
import type { AgentTool, ToolContext } from '#core/kernel/tool.js';
import { SystemClock } from '#core/ports/clock.port.js';
import { InMemoryBrowserProfiles } from '#infra/browser/in-memory-browser-profiles.js';
import { PlaywrightBrowserEngine } from '#infra/browser/playwright-browser-engine.js';
import { NodeFileStore } from '#infra/files/node-file-store.js';
import { CHROMIUM_PATH } from '#testing/browser.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 30);
const PAGES = Number(process.env.BENCH_PAGES ?? 8);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

const FORM = `<!doctype html><html><head><title>Bench form</title></head><body>
<h1>Orders</h1>
<label>Name <input id="name" type="text"></label>
<button id="go" onclick="document.getElementById('out').textContent = 'Clicked ' + Date.now()">Go</button>
<p id="out" role="status">Ready</p>
<ul>${Array.from({ length: 60 }, (_, i) => `<li><a href="/item/${i}">Item ${i}</a> <span>price ${i * 3}</span></li>`).join('')}</ul>
</body></html>`;

/** A skill script in the catalog's shape: one async arrow function of `params`. */
const SKILL = `/* bench skill */
async (params) => {
  const links = [...document.querySelectorAll('a')].slice(0, params.limit).map((a) => ({ text: a.textContent, href: a.href }));
  return { success: true, total: links.length, links };
}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timed(n: number, work: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  await work(-1); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await work(i);
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** Resident memory (bytes) of this process's descendants: the Chromium the engine started (the reference is closed by then). */
function descendantsRss(): number {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const isDescendant = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  let total = 0;
  for (const pid of parentOf.keys()) {
    if (!isDescendant(pid)) continue;
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (kb) total += Number(kb) * 1024;
    } catch {
      /* gone meanwhile */
    }
  }
  return total;
}

interface RunFigures {
  tools: Record<string, { tool: { p50: number; p99: number }; direct: { p50: number; p99: number } }>;
  pagesPerGb: number;
  catalogRunMs: number;
}

async function oneRun(base: string, workDir: string): Promise<RunFigures> {
  const settings: BrowserSettings = {
    allow: ['127.0.0.1'],
    block: [],
    executablePath: CHROMIUM_PATH ?? null,
    wsEndpoint: null,
    userAgent: null,
    maxPages: PAGES + 4,
    downloadMaxBytes: 1024 * 1024,
  };
  const profiles = new InMemoryBrowserProfiles();
  const engine = new PlaywrightBrowserEngine(settings, profiles, { log: () => {}, warn: () => {} });
  const service = new BrowserService(
    engine,
    profiles,
    new NodeFileStore({ trashDir: join(workDir, '..', 'trash') }),
    new RecordingEventBus(),
    new SystemClock(),
    { browser: settings } as AppConfig,
  );
  const scope = (key: string): BrowserScope => ({
    key,
    kind: 'run',
    spaceId: 'bench',
    conversationId: null,
    appId: null,
    workDir,
    profile: 'bench',
  });
  const ctx = { signal: new AbortController().signal, toolUseId: 'bench' } as ToolContext;
  const toolsOf =
    (set: AgentTool[]) =>
    async (name: string, input: Record<string, unknown> = {}) => {
      const tool = set.find((t) => t.name === `mcp__ai-browser__${name}`)!;
      const out = await tool.run(input, ctx);
      if (out.isError) throw new Error(`${name}: ${out.output}`);
      return out.output;
    };
  const call = toolsOf(service.tools(scope('run:bench')));

  // The reference: Playwright on its own page of the same Chromium build.
  const direct = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const page: Page = await (await direct.newContext({ viewport: { width: 1280, height: 720 } })).newPage();
  const cdp = await page.context().newCDPSession(page);

  const figures: RunFigures['tools'] = {};
  try {
    await call('browser_navigate', { url: `${base}/form` });
    await page.goto(`${base}/form`);
    const uidOf = (snapshot: string, role: string, name: string) =>
      /uid=(\S+)/.exec(snapshot.split('\n').find((l) => l.includes(` ${role} "${name}"`))!)![1]!;

    figures.navigate = {
      tool: await timed(ITERATIONS, () => call('browser_navigate', { url: `${base}/form` })),
      direct: await timed(ITERATIONS, () => page.goto(`${base}/form`)),
    };
    figures.snapshot = {
      tool: await timed(ITERATIONS, () => call('browser_snapshot')),
      direct: await timed(ITERATIONS, () => cdp.send('Accessibility.getFullAXTree')),
    };
    // Element actions: the tool addresses the uid of the latest snapshot, Playwright a selector.
    const snap = await call('browser_snapshot');
    const button = uidOf(snap, 'button', 'Go');
    const field = uidOf(snap, 'textbox', 'Name');
    figures.click = {
      tool: await timed(ITERATIONS, () => call('browser_click', { uid: button })),
      direct: await timed(ITERATIONS, () => page.click('#go')),
    };
    figures.fill = {
      tool: await timed(ITERATIONS, (i) => call('browser_fill', { uid: field, value: `Customer ${i}` })),
      direct: await timed(ITERATIONS, (i) => page.fill('#name', `Customer ${i}`)),
    };
    figures.evaluate = {
      tool: await timed(ITERATIONS, () =>
        call('browser_evaluate', { function: '() => document.querySelectorAll("li").length' }),
      ),
      direct: await timed(ITERATIONS, () => page.evaluate('document.querySelectorAll("li").length')),
    };
    mkdirSync(join(workDir, '.claude', 'skills', 'bench'), { recursive: true });
    writeFileSync(join(workDir, '.claude', 'skills', 'bench', 'index.js'), SKILL);
    figures.run = {
      tool: await timed(ITERATIONS, () =>
        call('browser_run', { file: '.claude/skills/bench/index.js', params: { limit: 20 } }),
      ),
      // The reference reads the file each time too, as the tool does.
      direct: await timed(ITERATIONS, () =>
        page.evaluate(
          `(${readFileSync(join(workDir, '.claude', 'skills', 'bench', 'index.js'), 'utf8').trim()})(${JSON.stringify({ limit: 20 })})`,
        ),
      ),
    };
    figures.wait_for = {
      tool: await timed(ITERATIONS, () => call('browser_wait_for', { text: 'Item 59' })),
      direct: await timed(ITERATIONS, () => page.getByText('Item 59').waitFor()),
    };
    figures.screenshot = {
      tool: await timed(ITERATIONS, () => call('browser_screenshot', { format: 'jpeg' })),
      direct: await timed(ITERATIONS, () => page.screenshot({ type: 'jpeg', quality: 80 })),
    };
    await direct.close();

    // Pages per GB: the engine's Chromium with PAGES pages of the form open (one run scope each).
    const scopes = Array.from({ length: PAGES }, (_, i) => toolsOf(service.tools(scope(`run:mem-${i}`))));
    for (const open of scopes) await open('browser_navigate', { url: `${base}/form` });
    await new Promise((r) => setTimeout(r, 1_000));
    const rss = descendantsRss();
    const pagesPerGb = rss > 0 ? (PAGES + 1) / (rss / 1024 ** 3) : 0;
    for (let i = 0; i < PAGES; i++) await service.release(`run:mem-${i}`);

    // A catalog-style run: a new scope navigates, waits for text, runs the skill, snapshots, ends.
    const started = performance.now();
    const runTools = toolsOf(service.tools(scope('run:catalog')));
    await runTools('browser_navigate', { url: `${base}/form` });
    await runTools('browser_wait_for', { text: 'Orders', timeout: 10_000 });
    await runTools('browser_run', { file: '.claude/skills/bench/index.js', params: { limit: 10 } });
    await runTools('browser_snapshot');
    await service.turnEnded(scope('run:catalog'));
    await service.release('run:catalog');
    const catalogRunMs = performance.now() - started;
    return { tools: figures, pagesPerGb, catalogRunMs };
  } finally {
    await direct.close().catch(() => undefined);
    await service.onModuleDestroy();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  if (!CHROMIUM_PATH) throw new Error('chromium is not installed (apt-get install chromium)');
  const site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(FORM);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-browser-'));
  const workDir = join(root, 'space');
  mkdirSync(workDir);
  const runs: RunFigures[] = [];
  try {
    for (let r = 0; r < RUNS; r++) {
      runs.push(await oneRun(base, workDir));
      process.stdout.write(`run ${r + 1}/${RUNS} done\n`);
    }
  } finally {
    site.close();
    rmSync(root, { recursive: true, force: true });
  }
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log(`\nAI browser, ${ITERATIONS} calls per tool, median of ${RUNS} runs (p50 / p99)`);
  console.log('tool          | ai-browser tool        | Playwright directly    | ratio at p50');
  const worst: number[] = [];
  for (const name of Object.keys(runs[0]!.tools)) {
    const tool = {
      p50: median(runs.map((r) => r.tools[name]!.tool.p50)),
      p99: median(runs.map((r) => r.tools[name]!.tool.p99)),
    };
    const direct = {
      p50: median(runs.map((r) => r.tools[name]!.direct.p50)),
      p99: median(runs.map((r) => r.tools[name]!.direct.p99)),
    };
    const ratio = tool.p50 / direct.p50;
    worst.push(ratio);
    console.log(
      `${name.padEnd(13)} | ${`${ms(tool.p50)} / ${ms(tool.p99)}`.padEnd(22)} | ${`${ms(direct.p50)} / ${ms(direct.p99)}`.padEnd(22)} | ${ratio.toFixed(2)}×`,
    );
  }
  console.log(`pages per GB of browser RSS (${PAGES} pages open): ${median(runs.map((r) => r.pagesPerGb)).toFixed(1)}`);
  console.log(`catalog-style run (navigate, wait_for, run, snapshot): ${ms(median(runs.map((r) => r.catalogRunMs)))}`);
  const over = Object.keys(runs[0]!.tools).filter((_, i) => worst[i]! > 1.5);
  console.log(
    over.length === 0
      ? 'Target: every tool ≤ 1.5× Playwright at p50: met'
      : `Target: every tool ≤ 1.5× Playwright at p50: NOT met for ${over.join(', ')}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
