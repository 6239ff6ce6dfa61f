import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient } from '#testing/api-client.js';
import { browserSkipReason, launchChromium, screenshot } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

describe('web app in Chromium: settings and the Store', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/settings`);
    await page.getByRole('heading', { name: 'Model sources' }).waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('lists the model sources, adds one and switches to it; shows the server version', async () => {
    const list = page.getByRole('list', { name: 'Model sources' });
    await list.getByText('in use').waitFor({ timeout: WAIT });
    await page.getByLabel('Name', { exact: true }).fill('Second account');
    await page.getByLabel('Provider').selectOption('openai');
    await page.getByLabel('API URL').fill(`${model.url}/v1`);
    await page.getByLabel('API key').fill('sk-second');
    await page.getByRole('button', { name: 'Add source' }).click();
    const row = list.locator('li', { hasText: 'Second account' });
    await row.waitFor({ timeout: WAIT });
    await row.getByRole('button', { name: 'Use' }).click();
    await row.getByText('in use').waitFor({ timeout: WAIT });
    const config = (await apiClient(server).get('/api/config')).body.data as {
      aiSources: { currentId: string; sources: Array<{ id: string; name: string; apiKey: string }> };
    };
    const second = config.aiSources.sources.find((s) => s.name === 'Second account')!;
    assert.equal(config.aiSources.currentId, second.id);
    assert.equal(second.apiKey, '***', 'the key is never shown back');
    await page.getByText(/Version \d+\.\d+\.\d+/).waitFor({ timeout: WAIT });
    await screenshot(page, 'settings');
  });

  it('tests a model source and says the result in the status line', async () => {
    const row = page.getByRole('list', { name: 'Model sources' }).locator('li', { hasText: 'Second account' });
    const calls = model.requests.length;
    await row.getByRole('button', { name: 'Test connection' }).click();
    await page
      .getByRole('status')
      .getByText(/Second account: connected \(.+, \d+ ms\)\./)
      .waitFor({ timeout: WAIT });
    assert.ok(model.requests.length > calls, 'a real call reached the model server');
  });

  it('browses the Store and says so when a source cannot be read', async () => {
    await page.getByRole('link', { name: 'Store' }).click();
    await page.getByRole('heading', { name: 'Store' }).waitFor({ timeout: WAIT });
    await page.getByLabel('Search the Store').fill('watch');
    await page
      .getByText(/A source could not be read|Nothing found\./)
      .first()
      .waitFor({ timeout: WAIT });
    await page.getByRole('list', { name: 'Store sources' }).waitFor({ timeout: WAIT });
  });

  it('shows an entry without an icon with a letter avatar, and a picture icon as an image', async () => {
    const other = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const entry = (slug: string, name: string, icon?: string) => ({
      slug,
      name,
      version: '2.1.0',
      author: 'bob',
      description: `${name}: a long description. `.repeat(12),
      type: 'skill',
      path: slug,
      category: 'other',
      tags: [],
      icon,
      registryId: 'test',
    });
    const items = [
      entry('quiet-helper', 'Quiet Helper'),
      entry('pictured', 'Pictured', 'data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg"/%3E'),
      // Another site's picture: the page's CSP (img-src 'self' blob: data:) would block it, so a letter avatar.
      entry('far-away', 'Far Away', 'https://icons.example.test/far-away.png'),
    ];
    await other.route(/\/api\/store\/query$/, (route) =>
      route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({ success: true, data: { items, total: 3, hasMore: false, groups: [], sources: [] } }),
      }),
    );
    await other.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/store`);
    const cards = other.getByRole('list', { name: 'Store entries' }).getByRole('listitem');
    await cards.first().getByRole('button', { name: 'Quiet Helper', exact: true }).waitFor({ timeout: WAIT });
    assert.equal(await cards.count(), 3);
    assert.equal(await cards.first().locator('.store-icon.letter').innerText(), 'Q');
    await cards
      .first()
      .getByText(/^Quiet Helper: a long description/)
      .waitFor({ timeout: WAIT });
    await cards.first().getByText('bob · v2.1.0').waitFor({ timeout: WAIT });
    assert.equal(await cards.nth(1).locator('img.store-icon').count(), 1, 'the picture icon');
    assert.equal(await cards.nth(2).locator('img').count(), 0, "no image the CSP blocks (another site's)");
    assert.equal(await cards.nth(2).locator('.store-icon.letter').innerText(), 'F');
    // Clamped: the long description takes three lines, not twelve.
    const heights = await cards
      .first()
      .locator('.store-card-description')
      .evaluate((p: { clientHeight: number }) => {
        const style = globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } };
        return [p.clientHeight, parseFloat(style.getComputedStyle(p).lineHeight)];
      });
    assert.ok(heights[0] <= heights[1] * 3 + 1, `three lines at most (${heights.join(' / ')})`);
    const overflow = (await other.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    assert.ok(overflow <= 0, `no horizontal scroll at 390 px (${overflow} px too wide)`);
    await other.close();
  });

  it('degrades clearly where the server answers the Store operations with 404', async () => {
    const other = await browser.newPage();
    await other.route(/\/api\/store\//, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html>' }),
    );
    await other.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/store`);
    await other.getByText('This server does not offer the Store yet.').waitFor({ timeout: WAIT });
    await other.close();
  });
});
