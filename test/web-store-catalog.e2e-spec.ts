import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient } from '#testing/api-client.js';
import { axeViolations, browserSkipReason, formatViolations, launchChromium, screenshot } from '#testing/browser.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CatalogServer,
  REFERENCE_CATALOG,
  referenceCatalogSkip,
  syntheticEntry,
  syntheticSpec,
} from '#testing/catalog-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

const WAIT = 30_000;

/**
 * The Store screen against the real catalog snapshot (served as the built-in source): browse by
 * category, open an entry, fill in its settings form (from config_schema, labels translated for
 * the browser's language) and install it. Skipped with a message when the snapshot is absent.
 */
describe(
  'web app in Chromium: installing from the Store catalog',
  { skip: browserSkipReason() || referenceCatalogSkip() },
  () => {
    let server: TestServer;
    let catalog: CatalogServer;
    let browser: Browser;
    let page: Page;

    before(async () => {
      catalog = await CatalogServer.start(REFERENCE_CATALOG);
      // The real catalog's digital humans need only the AI browser: two more entries name MCP servers,
      // one that a Store entry offers (calc-tools, installed with it) and one that nobody does (github).
      const real = JSON.parse(readFileSync(join(REFERENCE_CATALOG, 'index.json'), 'utf8')) as { apps: unknown[] };
      const needing = (slug: string, name: string, server: string) => {
        catalog.set(
          `items/${slug}/spec.yaml`,
          syntheticSpec(slug, '1.0.0', {
            name,
            permissions: ['ai-browser'],
            requires: { mcps: [{ id: server, reason: `works through ${server}` }] },
          }),
        );
        return syntheticEntry(slug, '1.0.0', { name });
      };
      const extra = [
        needing('issue-sorter', 'Issue Sorter', 'github'),
        needing('sum-keeper', 'Sum Keeper', 'calc-tools'),
        syntheticEntry('calc-tools', '1.0.0', { type: 'mcp', name: 'Calc Tools' }),
      ];
      catalog.set(
        'items/calc-tools/spec.yaml',
        JSON.stringify({
          spec_version: '1',
          name: 'Calc Tools',
          version: '1.0.0',
          author: 'tester',
          description: 'Adds numbers.',
          type: 'mcp',
          mcp_server: { type: 'http', url: 'https://calc.example.test/mcp' },
          store: { slug: 'calc-tools' },
        }),
      );
      catalog.set('index.json', { ...real, apps: [...real.apps, ...extra] });
      server = await startServer({ env: { SVC_STORE_SOURCES: catalog.url } });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
      await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/store`);
      await page.getByRole('heading', { name: 'Store', exact: true }).waitFor({ timeout: WAIT });
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await catalog?.stop();
    });

    it('shows each entry as a card in a grid: icon, name, description, author and version, Install', async () => {
      const entries = page.getByRole('list', { name: 'Store entries' });
      const card = entries.getByRole('listitem').filter({ hasText: 'AI Daily News Digest' });
      await card.getByRole('button', { name: 'AI Daily News Digest', exact: true }).waitFor({ timeout: WAIT });
      await card.getByText(/^Automatically curates the latest AI\/LLM\/Agent news/).waitFor({ timeout: WAIT });
      await card.getByText('openkursar · v1.0.0').waitFor({ timeout: WAIT });
      assert.equal(await card.locator('.store-icon svg').count(), 1, "the catalog's news icon, drawn");
      const columns = () =>
        entries.evaluate(
          (list) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { gridTemplateColumns: string } })
              .getComputedStyle(list)
              .gridTemplateColumns.split(' ')
              .filter(Boolean).length,
        );
      assert.ok((await columns()) >= 3, `several columns on a wide screen (${await columns()})`);
      const clamp = await page.evaluate(
        `getComputedStyle(document.querySelector('.store-card-description')).getPropertyValue('-webkit-line-clamp')`,
      );
      assert.equal(clamp, '3', 'the description is clamped to three lines');
      await screenshot(page, 'store-cards');
      // Readable and named in both themes (axe: contrast, names, list structure).
      for (const theme of ['light', 'dark'] as const) {
        await page.getByLabel('Theme').selectOption(theme);
        await page.locator(`html[data-theme="${theme}"]`).waitFor({ state: 'attached', timeout: WAIT });
        const violations = await axeViolations(page);
        assert.equal(violations.length, 0, `Store cards (${theme}):\n${formatViolations(violations)}`);
      }
      await page.getByLabel('Theme').selectOption('system');
      // The card's own Install opens the settings form; by keyboard too.
      await card.getByRole('button', { name: 'Install AI Daily News Digest…' }).focus();
      await page.keyboard.press('Enter');
      const form = page
        .getByRole('region', { name: 'Store entry' })
        .getByRole('form', { name: 'Install with settings' });
      await form.getByLabel('Topics to Track').waitFor({ timeout: WAIT });
      await form.getByRole('button', { name: 'Cancel' }).click();
      // A phone: one column, nothing wider than the screen.
      await page.setViewportSize({ width: 390, height: 844 });
      await waitFor(async () => (await columns()) === 1, WAIT, 'one column at 390 px');
      const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
      assert.ok(overflow <= 0, `no horizontal scroll at 390 px (${overflow} px too wide)`);
      await screenshot(page, 'store-cards-phone');
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('browses the catalog by category and searches it', async () => {
      const entries = page.getByRole('list', { name: 'Store entries' });
      await entries.getByText('AI Daily News Digest').waitFor({ timeout: WAIT });
      const total = Number((await page.getByText(/^\d+ found$/).innerText()).split(' ')[0]);
      assert.ok(total > 20, `the whole catalog is listed (${total})`);
      await page.getByRole('group', { name: 'Categories' }).getByRole('button', { name: 'Developer tools' }).click();
      await entries.getByText('GitHub PR Reviewer', { exact: false }).first().waitFor({ timeout: WAIT });
      await entries.getByText('AI Daily News Digest').waitFor({ state: 'detached', timeout: WAIT });
      const shown = await entries.locator('li').allInnerTexts();
      assert.ok(
        shown.length > 0 && shown.every((t) => t.includes('Developer tools')),
        'only developer tools are listed',
      );
      await page.getByLabel('Category', { exact: true }).selectOption('');
      await page.getByLabel('Search the Store').fill('daily news digest');
      await entries.locator('li').first().getByText('AI Daily News Digest').waitFor({ timeout: WAIT });
    });

    it('shows what an entry needs before install: the AI browser of the real catalog, available here', async () => {
      await page.getByLabel('Search the Store').fill('HN Daily');
      await page.getByRole('list', { name: 'Store entries' }).getByText('HN Daily Brief').first().click();
      const detail = page.getByRole('region', { name: 'Store entry' });
      await detail.getByRole('heading', { name: 'HN Daily Brief', exact: true }).waitFor({ timeout: WAIT });
      const needs = detail.getByRole('list', { name: 'What it needs' });
      const browserNeed = needs.getByRole('listitem').filter({ hasText: 'AI browser' });
      await browserNeed.getByText('Available', { exact: true }).waitFor({ timeout: WAIT });
      await browserNeed.getByText('(built into this server)').waitFor();
      assert.equal(await detail.getByRole('note').count(), 0, 'nothing missing, no warning');
    });

    it('warns before install about an MCP server nobody offers, links to Settings → MCP servers, and shows the refusal', async () => {
      await page.getByLabel('Search the Store').fill('Issue Sorter');
      await page.getByRole('list', { name: 'Store entries' }).getByText('Issue Sorter').first().click();
      const detail = page.getByRole('region', { name: 'Store entry' });
      await detail.getByRole('heading', { name: 'Issue Sorter', exact: true }).waitFor({ timeout: WAIT });
      await detail.getByRole('button', { name: 'Install…' }).click();
      await detail
        .getByRole('note')
        .getByText(/One thing it needs is not available on this server\. The Store refuses to install it/)
        .waitFor({ timeout: WAIT });
      const needs = detail.getByRole('list', { name: 'What it needs' });
      const github = needs.getByRole('listitem').filter({ hasText: 'github' });
      await github.getByText('Missing', { exact: true }).waitFor();
      await github.getByText(': works through github').waitFor();
      const fix = github.getByRole('link', { name: 'add it in Settings → MCP servers' });
      assert.equal(await fix.getAttribute('href'), '#/settings/mcp');
      await needs
        .getByRole('listitem')
        .filter({ hasText: 'AI browser' })
        .getByText('Available', { exact: true })
        .waitFor();
      for (const theme of ['light', 'dark'] as const) {
        await page.getByLabel('Theme').selectOption(theme);
        await page.locator(`html[data-theme="${theme}"]`).waitFor({ state: 'attached', timeout: WAIT });
        const violations = await axeViolations(page);
        assert.equal(violations.length, 0, `Store entry with a warning (${theme}):\n${formatViolations(violations)}`);
      }
      await page.getByLabel('Theme').selectOption('system');
      await screenshot(page, 'store-needs');
      // A warning, not a block in the page: the server's answer is shown as it said it.
      await detail.getByRole('button', { name: /^Install in / }).click();
      await detail
        .getByRole('status')
        .getByText(/requires the MCP server "github", which is not installed and no enabled Store source provides/)
        .waitFor({ timeout: WAIT });
    });

    it('says when a needed MCP server comes along with the install from the Store', async () => {
      await page.getByLabel('Search the Store').fill('Sum Keeper');
      await page.getByRole('list', { name: 'Store entries' }).getByText('Sum Keeper').first().click();
      const detail = page.getByRole('region', { name: 'Store entry' });
      await detail.getByRole('heading', { name: 'Sum Keeper', exact: true }).waitFor({ timeout: WAIT });
      const calc = detail
        .getByRole('list', { name: 'What it needs' })
        .getByRole('listitem')
        .filter({ hasText: 'calc-tools' });
      await calc.getByText('Comes with it', { exact: true }).waitFor({ timeout: WAIT });
      await calc.getByText('(installed with it from the Store: Calc Tools)').waitFor();
      assert.equal(await detail.getByRole('note').count(), 0, 'nothing missing, no warning');
      await detail.getByRole('button', { name: 'Install…' }).click();
      await detail.getByRole('button', { name: /^Install in / }).click();
      await page.waitForURL(/#\/apps\/[0-9a-f-]{36}$/, { timeout: WAIT });
      // On its page, the server installed with it is available.
      const installed = page
        .getByRole('list', { name: 'What it needs' })
        .getByRole('listitem')
        .filter({ hasText: 'calc-tools' });
      await installed.getByText('Available', { exact: true }).waitFor({ timeout: WAIT });
      await installed.getByText('(installed: Calc Tools)').waitFor();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Store' }).click();
      await page.getByRole('heading', { name: 'Store', exact: true }).waitFor({ timeout: WAIT });
    });

    it('installs an entry with its settings form filled in first', async () => {
      await page.getByRole('list', { name: 'Store entries' }).getByText('AI Daily News Digest').first().click();
      const detail = page.getByRole('region', { name: 'Store entry' });
      await detail.getByRole('heading', { name: 'AI Daily News Digest', exact: true }).waitFor({ timeout: WAIT });
      await detail.getByRole('button', { name: 'Install…' }).click();
      const form = detail.getByRole('form', { name: 'Install with settings' });
      const topics = form.getByLabel('Topics to Track');
      await topics.waitFor({ timeout: WAIT });
      assert.equal(await topics.inputValue(), 'AI, 大模型, Agent, LLM', 'the default is filled in');
      await topics.fill('robots, space');
      await form.getByLabel('Max News Items').fill('3');
      await screenshot(page, 'store-install');
      await form.getByRole('button', { name: /^Install in / }).click();
      await page.waitForURL(/#\/apps\/[0-9a-f-]{36}$/, { timeout: WAIT });
      const appId = page.url().split('/').pop()!;
      await page.getByRole('heading', { name: 'AI Daily News Digest', exact: true }).waitFor({ timeout: WAIT });
      const app = (await apiClient(server).get(`/api/apps/${appId}`)).body.data as {
        userConfig: Record<string, unknown>;
        spec: { name: string };
      };
      assert.equal(app.userConfig.news_topics, 'robots, space');
      assert.equal(app.userConfig.max_news_count, 3);
      assert.equal(app.userConfig.include_commentary, true, 'untouched settings keep their defaults');
      // Back in the Store, its card says it is installed and opens it.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Store' }).click();
      const card = page
        .getByRole('list', { name: 'Store entries' })
        .getByRole('listitem')
        .filter({ hasText: 'AI Daily News Digest' });
      await card.getByText('Installed', { exact: true }).waitFor({ timeout: WAIT });
      assert.equal(await card.getByRole('button', { name: /^Install / }).count(), 0);
      await card.getByRole('link', { name: 'Open AI Daily News Digest' }).click();
      await page.waitForURL(new RegExp(`#/apps/${appId}$`), { timeout: WAIT });
    });
  },
);
