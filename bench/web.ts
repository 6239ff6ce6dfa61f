/**
 * Web app first-load benchmark. Build first, then: `node dist/bench/web.js` (needs chromium).
 *
 * Starts the server on the embedded default, then loads the app BENCH_LOADS times (default 10)
 * in a fresh headless Chromium context each (cold cache, signed in with a `?token=` link) over
 * the loopback, and prints the median and worst of: DOMContentLoaded, the load event, and the
 * first screen (the navigation's start until the app's header and the default screen are shown).
 * Also prints the first screen's transferred size (what the page loaded, compressed as sent).
 */
import { browserSkipReason, launchChromium } from '#testing/browser.js';
import { startServer } from '#testing/test-server.js';

const LOADS = Number(process.env.BENCH_LOADS ?? 10);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const skip = browserSkipReason();
  if (skip) {
    console.log(`bench/web skipped: ${skip}`);
    return;
  }
  const server = await startServer();
  const browser = await launchChromium();
  const rows: Array<{ dcl: number; load: number; firstScreen: number; bytes: number }> = [];
  try {
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const page = await context.newPage();
      let bytes = 0;
      page.on('response', async (res) => {
        if (!res.url().startsWith(server.url) || res.url().includes('/api/')) return;
        const sizes = await res
          .request()
          .sizes()
          .catch(() => null);
        if (sizes) bytes += sizes.responseBodySize;
      });
      await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}`, { waitUntil: 'commit' });
      // Polled on every animation frame inside the page: when the default screen first showed.
      const shown = await page.waitForFunction(
        () => {
          const g = globalThis as unknown as {
            document: { querySelector(s: string): unknown };
            performance: { now(): number };
          };
          return (
            Boolean(g.document.querySelector('header.top') && g.document.querySelector('main.screen .panel')) &&
            g.performance.now()
          );
        },
        undefined,
        { polling: 'raf', timeout: 60_000 },
      );
      const firstScreen = (await shown.jsonValue()) as number;
      await page.waitForLoadState('load');
      const nav = (await page.evaluate(
        `(() => { const n = performance.getEntriesByType('navigation')[0]; return { dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd }; })()`,
      )) as { dcl: number; load: number };
      rows.push({ dcl: nav.dcl, load: nav.load, firstScreen, bytes });
      await context.close();
    }
  } finally {
    await browser.close();
    await server.stop();
  }
  const fmt = (key: 'dcl' | 'load' | 'firstScreen'): string => {
    const xs = rows.map((r) => r[key]);
    return `median ${median(xs).toFixed(0)} ms, worst ${Math.max(...xs).toFixed(0)} ms`;
  };
  console.log(`web app first load over the loopback, ${LOADS} cold loads in headless Chromium:`);
  console.log(`  DOMContentLoaded  ${fmt('dcl')}`);
  console.log(`  load event        ${fmt('load')}`);
  console.log(`  first screen      ${fmt('firstScreen')} (header and the default screen shown)`);
  console.log(
    `  transferred       ${(median(rows.map((r) => r.bytes)) / 1024).toFixed(1)} KB (page and assets, compressed as sent)`,
  );
}

await main();
