import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, browserSkipReason, formatViolations, newConversation, openSignedIn } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;
/** The lazy chunks of KaTeX and Mermaid (apps/web/src/math.ts, diagrams.ts) and what they load. */
const MATH_CHUNK = /\/assets\/(math|katex)-[^/]*\.(js|css)$/;
const DIAGRAMS_CHUNK = /\/assets\/(diagrams|mermaid)[^/]*\.js$/;

/** Math (KaTeX) and diagrams (Mermaid) in chat Markdown (issue 31), drawn under the page's CSP. */
describe('web app in Chromium: math and diagrams in chat Markdown', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const log = () => page.getByRole('log', { name: 'Messages' });
  const lastReply = () => log().locator('.markdown').last();
  const cspViolations = () =>
    page.evaluate(() => (globalThis as unknown as { cspViolations?: string[] }).cspViolations ?? []);

  async function ask(question: string, ...steps: ({ text: string } | { delayMs: number })[]): Promise<void> {
    model.enqueue({ steps });
    await page.getByLabel('Message', { exact: true }).fill(question);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await log().getByText(question).waitFor({ timeout: WAIT });
  }

  async function expectNoViolations(theme: string): Promise<void> {
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `${theme}:\n${formatViolations(violations)}`);
    // Mermaid's own DOMPurify pass parses the style attributes it drew (blocked and reported by
    // the browser, then applied through the CSSOM): only those style-src-attr reports are expected.
    const others = (await cspViolations()).filter((v) => !/^style-src-attr at .*\/assets\/index-/.test(v));
    assert.deepEqual(others, [], `no other Content-Security-Policy violation (${theme})`);
  }

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    ({ browser, page } = await openSignedIn(server));
    // Every violation of the page's policy (a blocked style attribute or <style> element) is kept.
    await page.context().addInitScript(() => {
      const g = globalThis as unknown as {
        cspViolations: string[];
        addEventListener(
          type: string,
          fn: (e: { violatedDirective: string; sample: string; sourceFile: string; lineNumber: number }) => void,
        ): void;
      };
      g.cspViolations = [];
      g.addEventListener('securitypolicyviolation', (e) =>
        g.cspViolations.push(`${e.violatedDirective} at ${e.sourceFile}:${e.lineNumber}: ${e.sample}`),
      );
    });
    await page.reload();
    await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT });
    page.on('request', (r) => requested.push(r.url()));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('a reply without math or diagrams loads neither chunk, and prices stay text', async () => {
    await newConversation(page);
    await ask('What does it cost?', { text: 'It costs $5 and $10 today; write `$x$` for math.' });
    await lastReply().getByText('It costs $5 and $10 today').waitFor({ timeout: WAIT });
    assert.equal(await lastReply().locator('code').textContent(), '$x$');
    assert.equal(await log().locator('.katex, .math').count(), 0);
    assert.deepEqual(
      requested.filter((url) => MATH_CHUNK.test(url) || DIAGRAMS_CHUNK.test(url)),
      [],
    );
  });

  it('inline and display math are drawn by KaTeX (HTML and MathML), in a lazy chunk', async () => {
    const wide = Array.from({ length: 40 }, (_, i) => `x_{${i}}`).join(' + ');
    await ask(
      'Some math?',
      { text: 'Euler: $e^{i\\pi} + 1 = 0$ and \\(a^2 + b^2 = c^2\\), for $5 only.\n\n$$\\int_0^1 x\\,dx' },
      { delayMs: 200 },
      { text: ` = \\frac{1}{2}$$\n\n\\[${wide}\\]\n\nBroken: $\\frac{1}{$ stays source.\n` },
    );
    const reply = lastReply();
    await reply.locator('.katex-display').nth(1).waitFor({ timeout: WAIT });
    assert.equal(await reply.locator('.math:not(.math-display) > .katex').count(), 2);
    assert.ok((await reply.locator('math').count()) >= 4, 'MathML for screen readers');
    assert.match((await reply.locator('.katex-error').textContent()) ?? '', /\\frac\{1\}\{/);
    assert.match((await reply.textContent()) ?? '', /for \$5 only/);
    // KaTeX's fonts load from the app (the CSS is part of the chunk).
    const fontFamily = await reply
      .locator('.katex .mord')
      .first()
      .evaluate(
        (el) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { fontFamily: string } }).getComputedStyle(el)
            .fontFamily,
      );
    assert.match(fontFamily, /KaTeX/);
    assert.ok(requested.some((url) => MATH_CHUNK.test(url)));
    assert.ok(!requested.some((url) => DIAGRAMS_CHUNK.test(url)), 'Mermaid is not loaded for math');
    // KaTeX's inline styles are set through the CSSOM: the page's policy blocks nothing.
    assert.deepEqual(await cspViolations(), []);
  });

  it('a closed mermaid block becomes an SVG with its source behind a toggle; a broken one shows why', async () => {
    await ask(
      'Draw it',
      { text: 'Here:\n\n```mermaid\ngraph TD\n  A[Start] --' },
      { delayMs: 400 },
      { text: '> B[Done]\n```\n\nAnd a broken one:\n\n```mermaid\ngraph TD\n  A --> --> ((\n```\n' },
    );
    const reply = lastReply();
    const picture = reply.locator('.diagram-svg svg');
    await picture.waitFor({ timeout: WAIT });
    assert.match((await picture.textContent()) ?? '', /Start[\s\S]*Done/);
    const source = reply.locator('.diagram').first().getByText('graph TD');
    assert.equal(await source.isVisible(), false);
    await reply.getByText('Diagram source').first().click();
    await source.waitFor({ timeout: WAIT });

    const broken = reply.locator('.diagram').nth(1);
    await broken.getByText('This diagram could not be drawn:').waitFor({ timeout: WAIT });
    assert.match((await broken.locator('.diagram-error-reason').textContent()) ?? '', /\S/);
    assert.equal(await broken.locator('details').getAttribute('open'), '');
    assert.match((await broken.locator('details pre').textContent()) ?? '', /A --> --> \(\(/);
    assert.equal(await reply.locator('.diagram-error').count(), 1, 'only the broken diagram has an error');
    assert.ok(requested.some((url) => DIAGRAMS_CHUNK.test(url)));
  });

  it('axe finds no violation in light and dark, nor the page policy any; 390 px wide scrolls nothing sideways', async () => {
    await expectNoViolations('light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await ask('Dark too', { text: 'Dark: $\\sqrt{2}$\n\n```mermaid\ngraph LR\n  Dark --> Night\n```\n' });
    await lastReply().locator('.diagram-svg svg').waitFor({ timeout: WAIT });
    await expectNoViolations('dark');
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => {
      const root = (
        globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
      ).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    assert.ok(overflow <= 0, `${overflow} px of horizontal page scroll`);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
