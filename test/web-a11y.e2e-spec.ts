import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient } from '#testing/api-client.js';
import { axeViolations, browserSkipReason, formatViolations, launchChromium } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

const SPEC = `name: Tea Buyer
version: 1.0.0
author: alice
description: Buys tea.
type: automation
system_prompt: Check the price, then report.
config_schema:
  - key: max
    label: Max price
    type: number
    required: true
    default: 100
`;

/** axe-core on every screen, light and dark: 0 violations (issue 31, Accessibility). */
describe('web app in Chromium: axe-core finds no violations on any screen', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;
  let conversationId = '';
  let appId = '';

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const imported = await apiClient(server).post('/api/apps/import-spec', {
      spaceId: null,
      yamlContent: SPEC,
      userConfig: { max: 100 },
    });
    assert.equal(imported.status < 300, true, JSON.stringify(imported.body));
    appId = imported.body.appId as string;
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  async function expectNoViolations(screen: string): Promise<void> {
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `${screen}:\n${formatViolations(violations)}`);
  }

  async function setTheme(theme: 'light' | 'dark'): Promise<void> {
    await page.getByLabel('Theme').selectOption(theme);
    await page.locator(`html[data-theme="${theme}"]`).waitFor({ state: 'attached', timeout: WAIT });
  }

  it('sign-in screen', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${server.url}/`);
      await page.getByLabel('Access password').waitFor({ timeout: WAIT });
      await expectNoViolations(`sign-in (${scheme})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/files`);
    await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT });
  });

  it('Files, with a folder, files and an open file', async () => {
    await page.getByLabel('Upload files').setInputFiles([
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\n\nSome *text*.\n') },
      { name: 'todo.txt', mimeType: 'text/plain', buffer: Buffer.from('buy tea\n') },
    ]);
    const tree = page.getByRole('tree', { name: 'Files' });
    await tree.getByText('notes.md').click();
    // A new file is opened and its tree item takes the focus.
    await page.getByRole('button', { name: 'New file', exact: true }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('textbox').fill('fresh.md');
    await dialog.locator('button[type=submit]').click();
    await page.getByRole('heading', { name: 'fresh.md', level: 2 }).waitFor({ timeout: WAIT });
    await page.locator('[role=tree] [data-path$="/fresh.md"]:focus').waitFor({ timeout: WAIT });
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor({ timeout: WAIT });
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(theme);
      await expectNoViolations(`Files (${theme})`);
    }
  });

  it('Chat, with a reply holding a code block', async () => {
    await setTheme('light');
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.waitForURL(/#\/chat\/[0-9a-f-]{36}$/, { timeout: WAIT });
    // The message box takes the focus: one can type at once.
    await page.locator('#composer:focus').waitFor({ timeout: WAIT });
    conversationId = page.url().split('/').pop()!;
    model.enqueue({ steps: [{ text: 'Here:\n\n```js\nconsole.log(1);\n```\n' }] });
    await page.getByLabel('Message', { exact: true }).fill('Show code');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('log', { name: 'Messages' }).getByText('console').waitFor({ timeout: WAIT });
    await page.getByRole('heading', { level: 1 }).first().waitFor({ timeout: WAIT });
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(theme);
      await expectNoViolations(`Chat (${theme})`);
    }
    assert.ok(conversationId);
  });

  it('Digital humans: the list and a digital human’s page with its tabs', async () => {
    await setTheme('light');
    await page.getByRole('link', { name: 'Digital humans' }).click();
    await page.getByRole('link', { name: 'Tea Buyer' }).waitFor({ timeout: WAIT });
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(theme);
      await expectNoViolations(`Digital humans (${theme})`);
    }
    await page.getByRole('link', { name: 'Tea Buyer' }).click();
    await page.getByRole('heading', { name: 'Tea Buyer', exact: true }).waitFor({ timeout: WAIT });
    assert.match(page.url(), new RegExp(appId));
    // Tabs: arrow keys move and show the tab (wrapping), Home/End; the tab's panel is labelled by it.
    const tabs = page.getByRole('tablist', { name: 'Sections' });
    await tabs.getByRole('tab', { name: 'Chat' }).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await tabs.getByRole('tab', { name: 'Activity' }).getAttribute('aria-selected'), 'true');
    await page.getByRole('tabpanel', { name: 'Activity' }).waitFor({ timeout: WAIT });
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.getByRole('tabpanel', { name: 'Settings' }).waitFor({ timeout: WAIT });
    await page.keyboard.press('Home');
    await page.getByRole('tabpanel', { name: 'Chat' }).waitFor({ timeout: WAIT });
    assert.equal(
      await page.evaluate(
        () => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id,
      ),
      'tab-chat',
    );
    await page.keyboard.press('End');
    await page.getByRole('tabpanel', { name: 'Settings' }).waitFor({ timeout: WAIT });
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(theme);
      await expectNoViolations(`Digital human page (${theme})`);
    }
  });

  for (const [label, heading] of [
    ['Store', 'Store'],
    ['Settings', 'Model sources'],
    ['Spaces', 'Spaces'],
    ['Teams', 'Teams'],
  ] as const) {
    it(`${label}`, async () => {
      await setTheme('light');
      await page.getByRole('link', { name: label, exact: true }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor({ timeout: WAIT });
      await page.waitForLoadState('networkidle');
      for (const theme of ['light', 'dark'] as const) {
        await setTheme(theme);
        await expectNoViolations(`${label} (${theme})`);
      }
    });
  }
});
