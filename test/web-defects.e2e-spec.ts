import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { browserSkipReason, launchChromium } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

const WAIT = 30_000;

/** WCAG contrast of an element's computed text colour on its computed background (both opaque). */
async function contrastOf(locator: Locator): Promise<{ ratio: number; colours: string }> {
  const [color, background] = await locator.evaluate((el) => {
    // Runs in the page (this file is typed without the DOM library).
    type Styles = { getComputedStyle(e: unknown): { color: string; backgroundColor: string } };
    const style = (globalThis as unknown as Styles).getComputedStyle(el);
    return [style.color, style.backgroundColor];
  });
  const luminance = (css: string): number => {
    const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [hi, lo] = [luminance(color), luminance(background)].sort((a, b) => b - a);
  return { ratio: (hi! + 0.05) / (lo! + 0.05), colours: `${color} on ${background}` };
}

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

/** Issue 31 (web app round 3), the High defects and the Medium ones: each test fails on the old behaviour. */
describe('web app in Chromium: issue 31 High and Medium defects', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/files`);
    await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('the assistant’s question is answered only when each question has a choice or text', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.waitForURL(/#\/chat\/[0-9a-f-]{36}$/, { timeout: WAIT });
    const questions = [
      {
        question: 'Which colour?',
        header: 'Colour',
        options: [
          { label: 'Red', description: 'warm' },
          { label: 'Blue', description: 'cool' },
        ],
        multiSelect: false,
      },
      {
        question: 'Which toppings?',
        header: 'Toppings',
        options: [
          { label: 'Nuts', description: '' },
          { label: 'Cream', description: '' },
        ],
        multiSelect: true,
      },
    ];
    model.enqueue(
      { steps: [{ toolCall: { id: 'toolu_q', name: 'AskUserQuestion', input: { questions } } }] },
      { steps: [{ text: 'Noted.' }] },
    );
    await page.getByLabel('Message', { exact: true }).fill('Plan dessert with me');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const card = page.getByRole('form', { name: 'Question from the assistant' });
    const colour = card.getByRole('group', { name: 'Which colour?' });
    const toppings = card.getByRole('group', { name: 'Which toppings?' });
    const submit = card.getByRole('button', { name: 'Answer' });
    await colour.waitFor({ timeout: WAIT });
    assert.equal(await submit.isDisabled(), true, 'nothing answered yet');

    await colour.getByLabel(/Red/).check();
    assert.equal(await submit.isDisabled(), true, 'the second question is still open');
    await toppings.getByLabel('Other answer').fill('   ');
    assert.equal(await submit.isDisabled(), true, 'blank text is no answer');
    await toppings.getByLabel('Nuts').check();
    await toppings.getByLabel('Cream').check();
    assert.equal(await submit.isDisabled(), false);
    await toppings.getByLabel('Nuts').uncheck();
    await toppings.getByLabel('Cream').uncheck();
    assert.equal(await submit.isDisabled(), true, 'all choices taken back');
    await toppings.getByLabel('Cream').check();
    await toppings.getByLabel('Other answer').fill('Mint');
    // Own text replaces the single choice of the first question.
    await colour.getByLabel('Other answer').fill('Teal');
    assert.equal(await colour.getByLabel(/Red/).isChecked(), false);
    await submit.click();
    await page.getByRole('log', { name: 'Messages' }).getByText('Noted.').waitFor({ timeout: WAIT });
    const sent = JSON.stringify(model.requests.at(-1)!.body);
    assert.ok(sent.includes('Teal') && sent.includes('Cream, Mint'), sent.slice(0, 2000));
  });

  it('primary and trash-confirm buttons stay readable on hover, in the light and the dark theme', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.getByLabel('Message', { exact: true }).fill('Not sent');
    const sendButton = page.getByRole('button', { name: 'Send', exact: true });
    for (const theme of ['light', 'dark']) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.mouse.move(0, 0);
      const still = await contrastOf(sendButton);
      assert.ok(still.ratio >= 4.5, `${theme} Send: ${still.colours} (${still.ratio.toFixed(2)})`);
      await sendButton.hover();
      const hovered = await contrastOf(sendButton);
      assert.ok(hovered.ratio >= 4.5, `${theme} hovered Send: ${hovered.colours} (${hovered.ratio.toFixed(2)})`);
      assert.notEqual(hovered.colours, still.colours, `${theme}: hover shows`);
    }
    await page.getByLabel('Message', { exact: true }).fill('');

    await page.getByRole('link', { name: 'Files' }).click();
    await page
      .getByLabel('Upload files')
      .setInputFiles([{ name: 'scratch.txt', mimeType: 'text/plain', buffer: Buffer.from('scratch') }]);
    const tree = page.getByRole('tree', { name: 'Files' });
    await tree.getByRole('button', { name: 'scratch.txt' }).click();
    for (const theme of ['light', 'dark']) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const confirm = page.locator('dialog[open]').getByRole('button', { name: 'Move to trash' });
      await confirm.waitFor({ timeout: WAIT });
      const still = await contrastOf(confirm);
      assert.ok(still.ratio >= 4.5, `${theme} trash confirm: ${still.colours} (${still.ratio.toFixed(2)})`);
      await confirm.hover();
      const hovered = await contrastOf(confirm);
      assert.ok(
        hovered.ratio >= 4.5,
        `${theme} hovered trash confirm: ${hovered.colours} (${hovered.ratio.toFixed(2)})`,
      );
      await page.locator('dialog[open]').getByRole('button', { name: 'Cancel' }).click();
      await page.locator('dialog[open]').waitFor({ state: 'detached', timeout: WAIT });
    }
    await page.getByLabel('Theme').selectOption('system');
  });

  it('the open file follows a rename: the viewer and Delete use the new name', async () => {
    await page.getByRole('link', { name: 'Files' }).click();
    await page
      .getByLabel('Upload files')
      .setInputFiles([{ name: 'todo.md', mimeType: 'text/markdown', buffer: Buffer.from('# To do\n') }]);
    const tree = page.getByRole('tree', { name: 'Files' });
    await tree.getByRole('button', { name: 'todo.md' }).click();
    await page.getByRole('heading', { name: 'todo.md' }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('textbox').fill('done.md');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await page.getByText('Renamed to done.md.').waitFor({ timeout: WAIT });
    await page.getByRole('heading', { name: 'done.md' }).waitFor({ timeout: WAIT });
    await tree.getByRole('button', { name: 'done.md' }).waitFor({ timeout: WAIT });

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByText('Move done.md to the trash?').waitFor({ timeout: WAIT });
    await dialog.getByRole('button', { name: 'Move to trash' }).click();
    await page.getByText('done.md moved to the trash.').waitFor({ timeout: WAIT });
    await tree.getByRole('button', { name: 'done.md' }).waitFor({ state: 'detached', timeout: WAIT });
  });

  it('"Skip to content" shows when focused and moves focus to the main region without changing the route', async () => {
    await page.getByRole('link', { name: 'Spaces' }).click();
    await page.waitForURL(/#\/spaces$/, { timeout: WAIT });
    const skip = page.getByRole('link', { name: 'Skip to content' });
    await skip.focus();
    const box = await skip.boundingBox();
    assert.ok(box && box.y >= 0 && box.width > 20 && box.height > 10, `visible when focused: ${JSON.stringify(box)}`);
    const { ratio, colours } = await contrastOf(skip);
    assert.ok(ratio >= 4.5, `skip link: ${colours}`);
    await page.keyboard.press('Enter');
    await waitFor(async () => (await page.evaluate('document.activeElement?.id')) === 'content', WAIT, 'main focused');
    assert.match(page.url(), /#\/spaces$/);
    await page.getByRole('list', { name: 'Spaces' }).waitFor({ timeout: WAIT });
    await page.keyboard.press('Tab');
    const after = await skip.boundingBox();
    assert.ok(!after || after.y + after.height <= 0, 'hidden again once focus leaves');
  });

  it('Settings shows which model source comes from the environment', async () => {
    await apiClient(server)
      .post('/api/ai-sources/sources', {
        name: 'Added here',
        provider: 'openai',
        apiUrl: 'https://models.example/v1',
        apiKey: 'k',
        model: 'm1',
      })
      .expect(200);
    await page.getByRole('link', { name: 'Settings' }).click();
    const sources = page.getByRole('list', { name: 'Model sources' });
    const named = (name: string) =>
      sources.getByRole('listitem').filter({ has: page.locator('strong').getByText(name, { exact: true }) });
    const seeded = named('anthropic (env)');
    const added = named('Added here');
    await added.waitFor({ timeout: WAIT });
    await seeded.getByText('from the environment', { exact: true }).waitFor({ timeout: WAIT });
    await seeded.getByText(/SVC_AI_\* variables/).waitFor({ timeout: WAIT });
    assert.equal(await added.getByText('from the environment').count(), 0);
  });

  it('Retry sends the failed message once, and a message refused in the browser offers no Retry', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.waitForURL(/#\/chat\/[0-9a-f-]{36}$/, { timeout: WAIT });
    const messages = page.getByRole('log', { name: 'Messages' });
    const retry = page.getByRole('button', { name: 'Retry' });
    /** Waits for the failed turn `n` to end (its model request made, the turn over) and Retry offered. */
    const failedTurn = async (requestsBefore: number) => {
      await waitFor(() => model.requests.length > requestsBefore, WAIT, 'the model was asked');
      await messages.locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
      await retry.waitFor({ timeout: WAIT });
    };
    model.enqueue({ status: 400, error: 'scripted refusal' }, { status: 400, error: 'scripted refusal' });
    let before = model.requests.length;
    await page.getByLabel('Message', { exact: true }).fill('Ping the tea shop');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await failedTurn(before);
    before = model.requests.length;
    await retry.click();
    await failedTurn(before);
    model.enqueue({ steps: [{ text: 'Pong from the shop.' }] });
    await retry.click();
    await messages.getByText('Pong from the shop.').waitFor({ timeout: WAIT });
    await retry.waitFor({ state: 'detached', timeout: WAIT });
    assert.equal(await messages.getByText('Ping the tea shop').count(), 1, 'shown once');
    const sent = JSON.stringify(model.requests.at(-1)!.body);
    assert.equal(sent.split('Ping the tea shop').length - 1, 1, `sent once: ${sent.slice(0, 1500)}`);
    await page.reload();
    await messages.getByText('Pong from the shop.').waitFor({ timeout: WAIT });
    assert.equal(await messages.getByText('Ping the tea shop').count(), 1, 'shown once after a reload');

    // An attachment whose upload fails: the message stays unsent, and no Retry offers the previous one.
    await page.getByLabel('Message', { exact: true }).fill('With a picture');
    const requests = model.requests.length;
    await page.route('**/artifacts/upload?**', (route) =>
      route.fulfill({ status: 507, contentType: 'application/json', body: '{"success":false,"error":"Disk full"}' }),
    );
    await page
      .getByText('Attach file')
      .locator('input')
      .setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('some notes') }]);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText('Upload failed: Disk full').waitFor({ timeout: WAIT });
    await page.unroute('**/artifacts/upload?**');
    assert.equal(await retry.count(), 0, 'no Retry of the previous message');
    assert.equal(await page.getByLabel('Message', { exact: true }).inputValue(), 'With a picture');
    assert.equal(model.requests.length, requests, 'nothing sent');
    await page.getByRole('button', { name: 'Remove notes.txt' }).click();
    await page.getByLabel('Message', { exact: true }).fill('');
  });

  it('unsaved edits ask before another file opens, and Ctrl+S saves', async () => {
    await page.getByRole('link', { name: 'Files' }).click();
    await page.getByLabel('Upload files').setInputFiles([
      { name: 'first.txt', mimeType: 'text/plain', buffer: Buffer.from('one') },
      { name: 'second.txt', mimeType: 'text/plain', buffer: Buffer.from('two') },
    ]);
    const tree = page.getByRole('tree', { name: 'Files' });
    await tree.getByRole('button', { name: 'second.txt' }).waitFor({ timeout: WAIT });
    await tree.getByRole('button', { name: 'first.txt' }).click();
    await page.getByRole('heading', { name: 'first.txt' }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = page.getByLabel('Content of first.txt');
    await editor.fill('one, edited');
    await editor.press('Control+s');
    await page.getByText('Saved.').waitFor({ timeout: WAIT });
    assert.equal(await editor.inputValue(), 'one, edited', 'still editing after Ctrl+S');
    // Saved: opening another file asks nothing.
    await tree.getByRole('button', { name: 'second.txt' }).click();
    await page.getByRole('heading', { name: 'second.txt' }).waitFor({ timeout: WAIT });
    await tree.getByRole('button', { name: 'first.txt' }).click();
    await page.getByText('one, edited').waitFor({ timeout: WAIT });

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await editor.fill('one, edited twice');
    await tree.getByRole('button', { name: 'second.txt' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByText('Discard your unsaved changes to first.txt?').waitFor({ timeout: WAIT });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await editor.inputValue(), 'one, edited twice', 'the edits are kept');
    await page.getByRole('heading', { name: 'first.txt' }).waitFor({ timeout: WAIT });
    await tree.getByRole('button', { name: 'second.txt' }).click();
    await dialog.getByRole('button', { name: 'Discard changes' }).click();
    await page.getByRole('heading', { name: 'second.txt' }).waitFor({ timeout: WAIT });
    await tree.getByRole('button', { name: 'first.txt' }).click();
    await page.getByText('one, edited', { exact: true }).waitFor({ timeout: WAIT });
  });

  it('renaming the open conversation updates its header', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.waitForURL(/#\/chat\/[0-9a-f-]{36}$/, { timeout: WAIT });
    const current = page.locator('li:has(a[aria-current="true"])');
    await current.getByRole('button', { name: /^Rename/ }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('textbox').fill('Holiday plans');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await current.getByRole('link', { name: 'Holiday plans' }).waitFor({ timeout: WAIT });
    await page.getByRole('heading', { level: 2, name: 'Holiday plans' }).waitFor({ timeout: WAIT });
  });

  let appId = '';
  it('a required number setting cleared is refused, not saved as 0', async () => {
    const installed = await apiClient(server).post('/api/apps/import-spec', {
      spaceId: null,
      yamlContent: SPEC,
      userConfig: { max: 100 },
    });
    appId = (installed.body.data as { appId: string }).appId;
    assert.ok(appId, JSON.stringify(installed.body));
    const userConfig = async () =>
      ((await apiClient(server).get(`/api/apps/${appId}`)).body.data as { userConfig: { max?: unknown } }).userConfig;
    await page.goto(`${server.url}/#/apps/${appId}`);
    await page.getByRole('tab', { name: 'Settings' }).click();
    const max = page.getByLabel('Max price');
    await max.fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    assert.equal(await max.inputValue(), '', 'a cleared number stays empty (not 0)');
    const missing = await max.evaluate(
      (el) => (el as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing,
    );
    assert.equal(missing, true, 'refused as required');
    assert.equal((await userConfig()).max, 100, 'nothing saved');
    await max.fill('80');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor({ timeout: WAIT });
    assert.equal((await userConfig()).max, 80);
  });

  it('the activity timeline renders each entry type (not type names and JSON)', async () => {
    assert.ok(appId, 'installed by the test before');
    await page.goto(`${server.url}/#/apps/${appId}`);
    const report = (input: Record<string, unknown>) => ({ steps: [{ toolCall: { name: 'report_to_user', input } }] });
    model.enqueue(report({ type: 'complete', summary: 'Bought 2 kg at 42' }), { steps: [{ text: 'Done.' }] });
    await apiClient(server).post(`/api/apps/${appId}/trigger`, {}).expect(200);
    await page.getByRole('tab', { name: 'Activity' }).click();
    const activity = page.getByRole('region', { name: 'Activity' });
    const complete = activity.locator('li[data-type="run_complete"]');
    await complete.getByText('Run complete').waitFor({ timeout: 60_000 });
    await complete.getByText('Bought 2 kg at 42').waitFor({ timeout: WAIT });
    await complete.getByText('Transcript').click();
    await complete.locator('.msg').first().waitFor({ timeout: WAIT });
    await waitFor(
      async () =>
        ((await apiClient(server).get(`/api/apps/${appId}`)).body.data as { status: string }).status === 'active',
      WAIT,
      'the run ended',
    );
    await apiClient(server).post(`/api/apps/${appId}/pause`, {});
    await apiClient(server).post(`/api/apps/${appId}/trigger`, {});
    const skipped = activity.locator('li[data-type="run_skipped"]');
    await skipped.getByText(/^Skipped: .+/).waitFor({ timeout: WAIT });
    assert.equal(await activity.getByText(/[{}]"/).count(), 0, 'no raw JSON');
    assert.equal(await activity.getByText(/run_complete|run_skipped/).count(), 0, 'no raw type names');
    await apiClient(server).post(`/api/apps/${appId}/resume`, {});
  });

  // Not reproduced on this code (the space is kept in localStorage since the app's first version): a guard.
  it('a new tab opens in the last space used', async () => {
    const created = await apiClient(server).post('/api/spaces', { name: 'Tea room' });
    const spaceId = (created.body.data as { id: string }).id;
    assert.ok(spaceId, JSON.stringify(created.body));
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const open = async () => {
        const tab = await context.newPage();
        await tab.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/files`);
        await tab.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT });
        return tab;
      };
      const first = await open();
      await first.getByLabel('Current space').selectOption({ label: 'Tea room' });
      const second = await open();
      await waitFor(
        async () => (await second.getByLabel('Current space').inputValue()) === spaceId,
        WAIT,
        'the new tab in Tea room',
      );
    } finally {
      await context.close();
    }
  });

  // Last: it locks sign-in from 127.0.0.1 for the rest of this server's life.
  it('a sign-in lockout keeps the session, says for how long live updates pause, and retries then', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.clock.install();
    let sockets = 0;
    await page.routeWebSocket(/\/ws$/, (ws) => {
      sockets += 1;
      ws.connectToServer();
    });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/files`);
    await page.getByText('Live', { exact: true }).waitFor({ timeout: WAIT });

    for (let i = 0; i < 5; i++) {
      await request(server.url).post('/api/remote/login').send({ token: 'Wrong-Passw0rd' });
    }
    assert.equal((await request(server.url).post('/api/remote/login').send({ token: server.password })).status, 429);

    await page.reload();
    await page.getByText('Live updates paused: sign-in is locked for 15 min').waitFor({ timeout: WAIT });
    assert.equal(await page.getByLabel('Access password').count(), 0, 'still signed in');
    assert.equal(await page.evaluate('sessionStorage.getItem("svc-token")'), server.password);
    // Header-token requests are not throttled: the app keeps working.
    await page.getByRole('link', { name: 'Spaces' }).click();
    await page.getByRole('list', { name: 'Spaces' }).getByText('temporary').waitFor({ timeout: WAIT });

    const before = sockets;
    await page.clock.fastForward('15:01');
    await waitFor(() => sockets > before, WAIT, 'a socket after the lock');
    await page.getByText(/Live updates paused: sign-in is locked for \d+ min/).waitFor({ timeout: WAIT });
  });
});
