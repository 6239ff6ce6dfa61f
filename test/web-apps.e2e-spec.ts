import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient } from '#testing/api-client.js';
import { axeViolations, browserSkipReason, formatViolations, launchChromium, screenshot } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';

const WAIT = 30_000;
const SPEC = `name: Price Watcher
version: 1.0.0
author: alice
description: Watches a product price.
type: automation
system_prompt: Check the price, then report.
config_schema:
  - key: product_url
    label: Product page
    type: url
    required: true
  - key: max
    label: Max price
    type: number
    default: 100
  - key: lang
    label: Language
    type: select
    default: en
    options:
      - { label: English, value: en }
      - { label: Chinese, value: zh }
`;

describe('web app in Chromium: digital humans', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    // Notifications: allowed, and recorded instead of shown (headless Chromium shows none).
    await page.context().grantPermissions(['notifications']);
    await page.addInitScript(`
      window.shownNotifications = [];
      window.Notification = class {
        static permission = 'granted';
        static requestPermission() { return Promise.resolve('granted'); }
        constructor(title, options) {
          this.title = title;
          this.body = options?.body;
          this.onclick = null;
          window.shownNotifications.push(this);
        }
        close() {}
      };
    `);
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/apps`);
    await page.getByRole('heading', { name: 'Digital humans' }).waitFor({ timeout: WAIT });
    await page.getByText('Live').waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('installs from a spec file and lists it with its status', async () => {
    await page
      .getByLabel('spec.yaml file')
      .setInputFiles({ name: 'spec.yaml', mimeType: 'text/yaml', buffer: Buffer.from(SPEC) });
    // Its settings are asked for before installing (the product page is required).
    await page.getByLabel('Product page').fill('https://shop.example/first');
    await page.getByRole('button', { name: 'Install', exact: true }).click();
    await page.getByRole('heading', { name: 'Price Watcher', exact: true }).waitFor({ timeout: WAIT });
    const apps = (await apiClient(server).get('/api/apps')).body.data as Array<{
      spec: { name: string };
    }>;
    assert.deepEqual(
      apps.map((a) => a.spec.name),
      ['Price Watcher'],
    );
    await page.getByRole('link', { name: '← Digital humans' }).click();
    const card = page.getByRole('list', { name: 'Installed digital humans' }).getByRole('listitem');
    await card.getByText('active').first().waitFor({ timeout: WAIT });
    await screenshot(page, 'digital-humans');
  });

  it('fills the settings form generated from config_schema', async () => {
    await page.getByRole('link', { name: 'Price Watcher' }).click();
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('Product page').fill('https://shop.example/item');
    assert.equal(await page.getByLabel('Max price').inputValue(), '100');
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor({ timeout: WAIT });
    const apps = (await apiClient(server).get('/api/apps')).body.data as Array<{ userConfig: object }>;
    assert.deepEqual(apps[0]!.userConfig, { product_url: 'https://shop.example/item', max: 100, lang: 'zh' });
    await screenshot(page, 'digital-human-settings');
  });

  it('pauses and resumes, with the status following live', async () => {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByRole('button', { name: 'Resume', exact: true }).waitFor({ timeout: WAIT });
    await page.locator('.badge', { hasText: 'paused' }).first().waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor({ timeout: WAIT });
  });

  it('chats with the digital human', async () => {
    model.enqueue({ steps: [{ text: 'The price is ' }, { text: '**42**.' }] });
    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.getByLabel('Message', { exact: true }).fill('What is the price?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.locator('strong', { hasText: '42' }).waitFor({ timeout: WAIT });
    await messages.getByText('What is the price?').waitFor({ timeout: WAIT });
    await screenshot(page, 'digital-human-chat');
  });

  it('chats in a thread of its own: new thread, listed, its own history', async () => {
    await page.getByRole('tab', { name: 'Chat' }).click();
    const threads = page.getByRole('list', { name: 'Threads' });
    await threads.getByRole('button', { name: 'Main thread' }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'New thread' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('textbox').fill('customer 42');
    await dialog.locator('button[type=submit]').click();
    const messages = page.getByRole('log', { name: 'Messages' });
    await page.getByRole('heading', { name: /customer-42/ }).waitFor({ timeout: WAIT });
    assert.equal(await messages.getByText('What is the price?').count(), 0, 'a new thread has no history');
    model.enqueue({ steps: [{ text: 'Thread reply: **17**.' }] });
    await page.getByLabel('Message', { exact: true }).fill('Hello from the thread');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await messages.locator('strong', { hasText: '17' }).waitFor({ timeout: WAIT });
    await threads.getByRole('button', { name: /customer-42/ }).waitFor({ timeout: WAIT });
    await screenshot(page, 'digital-human-threads');
    // The server keeps the thread apart from the main one.
    const apps = (await apiClient(server).get('/api/apps')).body.data as Array<{ id: string }>;
    const main = (await apiClient(server).get(`/api/apps/${apps[0]!.id}/chat/messages`)).body.data as Array<{
      content: string;
    }>;
    assert.ok(!main.some((m) => m.content.includes('Hello from the thread')));
    // Back to the main thread: its own history.
    await threads.getByRole('button', { name: 'Main thread' }).click();
    await messages.getByText('What is the price?').waitFor({ timeout: WAIT });
    assert.equal(await messages.getByText('Hello from the thread').count(), 0);
  });

  it('answers an escalation in place', async () => {
    const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
    model.enqueue(report({ type: 'escalation', summary: 'Buy the tea at 42?', choices: ['yes', 'no'] }), {
      steps: [{ text: 'Asked.' }],
    });
    await page.getByRole('button', { name: 'Run now' }).click();
    const card = page.getByRole('form', { name: 'Question from the digital human' });
    await card.getByText('Buy the tea at 42?').waitFor({ timeout: 60_000 });
    // Waiting for an answer shows on the nav and in the tab's title, from any screen.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Digital humans (1 waiting for you)' }).waitFor({ timeout: WAIT });
    await waitFor(async () => (await page.title()) === '(1) svc-server', WAIT, 'the title counts the waiting app');
    model.enqueue(report({ type: 'complete', summary: 'Bought it' }), { steps: [{ text: 'Done.' }] });
    await card.getByRole('button', { name: 'yes', exact: true }).click();
    await card.waitFor({ state: 'detached', timeout: WAIT });
    await nav.getByRole('link', { name: 'Digital humans', exact: true }).waitFor({ timeout: WAIT });
    await waitFor(async () => (await page.title()) === 'svc-server', WAIT, 'the title without a count once answered');
    const apps = (await apiClient(server).get('/api/apps')).body.data as Array<{ id: string }>;
    const activity = (await apiClient(server).get(`/api/apps/${apps[0]!.id}/activity`)).body.data as Array<{
      type: string;
      content: { userResponse?: { choice?: string } };
    }>;
    assert.equal(activity.find((a) => a.type === 'escalation')?.content.userResponse?.choice, 'yes');
  });

  it('notifies once per escalation when the switch is on, none while it is off', async () => {
    const shown = async () =>
      (await page.evaluate('window.shownNotifications.map((n) => ({ title: n.title, body: n.body }))')) as Array<{
        title: string;
        body?: string;
      }>;
    assert.deepEqual(await shown(), [], 'the escalation above showed nothing: the switch is off by default');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    const toggle = page.getByRole('switch', { name: 'Notify me when a digital human waits for me' });
    // A browser that refuses: the switch stays off and says why.
    await page.evaluate(`window.Notification.requestPermission = () => Promise.resolve('denied')`);
    await toggle.click();
    await page.getByText('The browser blocks notifications for this site').waitFor({ timeout: WAIT });
    assert.equal(await toggle.isChecked(), false);
    await page.evaluate(`window.Notification.requestPermission = () => Promise.resolve('granted')`);
    await toggle.check();
    await page.getByText('On in this browser').waitFor({ timeout: WAIT });
    await page.goBack();
    const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
    model.enqueue(report({ type: 'escalation', summary: 'Buy the cake at 12?', choices: ['yes', 'no'] }), {
      steps: [{ text: 'Asked.' }],
    });
    await page.getByRole('button', { name: 'Run now' }).click();
    const card = page.getByRole('form', { name: 'Question from the digital human' });
    await card.getByText('Buy the cake at 12?').waitFor({ timeout: 60_000 });
    await waitFor(async () => (await shown()).length > 0, WAIT, 'a notification for the waiting app');
    assert.deepEqual(await shown(), [{ title: 'Price Watcher', body: 'Price Watcher is waiting for you.' }]);
    // Clicking it opens the digital human's page, from anywhere.
    const appUrl = page.url();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.evaluate('window.shownNotifications[0].onclick()');
    await page.waitForURL(appUrl, { timeout: WAIT });
    model.enqueue(report({ type: 'complete', summary: 'Bought it' }), { steps: [{ text: 'Done.' }] });
    await card.getByRole('button', { name: 'no', exact: true }).click();
    await card.waitFor({ state: 'detached', timeout: WAIT });
    assert.equal((await shown()).length, 1, 'the same escalation is never announced again');
    // Off again, from Settings.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await toggle.uncheck();
    await page.getByText('Off.', { exact: true }).waitFor({ timeout: WAIT });
    await page.goBack();
    await page.getByRole('button', { name: 'Run now' }).waitFor({ timeout: WAIT });
  });

  it('runs now and shows the run in the activity timeline', async () => {
    model.enqueue({ steps: [{ text: 'Checked: 42.' }] });
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByText(/Run started\.|Skipped:/).waitFor({ timeout: WAIT });
    await page.getByRole('tab', { name: 'Activity' }).click();
    await page
      .getByRole('region', { name: 'Activity' })
      .locator('.badge', { hasText: /^Run (complete|failed|skipped)$/ })
      .first()
      .waitFor({ timeout: 60_000 });
  });

  it('shows on its page what it needs: a missing MCP server warns and links to Settings → MCP servers', async () => {
    const installed = await apiClient(server).post('/api/apps/install', {
      spaceId: TEMP_SPACE_ID,
      spec: {
        name: 'Issue Helper',
        version: '1.0.0',
        author: 'alice',
        description: 'Sorts the issues.',
        type: 'automation',
        system_prompt: 'Sort the issues.',
        permissions: ['ai-browser'],
        requires: { mcps: [{ id: 'github', reason: 'reads the issues' }] },
      },
    });
    assert.ok(installed.status < 300, JSON.stringify(installed.body));
    const appId = (installed.body.data as { appId: string }).appId;
    const openPage = async () => {
      await page.evaluate("location.hash = '#/store'");
      await page.getByRole('heading', { name: 'Store', exact: true }).waitFor({ timeout: WAIT });
      await page.evaluate(`location.hash = '#/apps/${appId}'`);
      await page.getByRole('heading', { name: 'Issue Helper', level: 1 }).waitFor({ timeout: WAIT });
    };
    await openPage();
    const needs = page.getByRole('list', { name: 'What it needs' });
    const github = needs.getByRole('listitem').filter({ hasText: 'github' });
    await github.getByText('Missing', { exact: true }).waitFor({ timeout: WAIT });
    await page
      .getByRole('note')
      .getByText(/One thing it needs is not available on this server\. What uses it fails until it is available\./)
      .waitFor();
    await needs
      .getByRole('listitem')
      .filter({ hasText: 'AI browser' })
      .getByText('Available', { exact: true })
      .waitFor();
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `the page with its warning:\n${formatViolations(violations)}`);

    // The link leads to the section that fixes it, focused.
    await github.getByRole('link', { name: 'add it in Settings → MCP servers' }).click();
    await page.waitForURL(/#\/settings\/mcp$/, { timeout: WAIT });
    await waitFor(
      async () => (await page.evaluate<string | undefined>('document.activeElement?.id')) === 'mcp-title',
      WAIT,
      'the focus on Settings → MCP servers',
    );

    // Configured (an HTTP server is always allowed), it is available; the browser turned off for it is missing.
    const saved = await apiClient(server).post('/api/config', {
      mcpServers: { GitHub: { url: 'https://mcp.example.test/mcp' } },
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    await apiClient(server).post(`/api/apps/${appId}/permissions/revoke`, { permission: 'ai-browser' });
    await openPage();
    await github.getByText('Available', { exact: true }).waitFor({ timeout: WAIT });
    await github.getByText('(configured in Settings as GitHub)').waitFor();
    const browserNeed = needs.getByRole('listitem').filter({ hasText: 'AI browser' });
    await browserNeed.getByText('Missing', { exact: true }).waitFor();
    await browserNeed.getByText(/turned off for this digital human/).waitFor();
  });
});
