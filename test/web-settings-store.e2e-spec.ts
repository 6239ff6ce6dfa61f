import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
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
    const config = (await request(server.url).get('/api/config').set('Authorization', `Bearer ${server.password}`)).body
      .data as { aiSources: { currentId: string; sources: Array<{ id: string; name: string; apiKey: string }> } };
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
