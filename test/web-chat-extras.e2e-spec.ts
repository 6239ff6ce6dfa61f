import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, browserSkipReason, formatViolations, newConversation, openSignedIn } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

/** What people expect from the best chat apps (issue 31): timestamps, copy, export, shortcuts, search, layout. */
describe('web app in Chromium: chat timestamps, copy, export, shortcuts, search', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;
  let firstId = '';
  const log = () => page.getByRole('log', { name: 'Messages' });
  const clipboard = () =>
    page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    );
  const focusedId = () =>
    page.evaluate(
      () => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id,
    );

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    ({ browser, page } = await openSignedIn(server, { permissions: ['clipboard-read', 'clipboard-write'] }));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('shows each message’s time and copies a message and a code block', async () => {
    firstId = await newConversation(page);
    model.enqueue({ steps: [{ text: 'Run this:\n\n```sh\necho hello\n```\n' }] });
    await page.getByLabel('Message', { exact: true }).fill('How do I greet?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await log().getByText('echo hello').waitFor({ timeout: WAIT });
    // The stored messages are read back when the turn ends: both carry their time.
    await page.waitForFunction(() => true);
    const times = log().locator('time[datetime]');
    await times.nth(1).waitFor({ timeout: WAIT });
    for (const at of await times.evaluateAll((els) =>
      els.map((e) => (e as unknown as { dateTime: string }).dateTime),
    )) {
      assert.ok(Math.abs(Date.parse(at) - Date.now()) < 10 * 60_000, `a recent time: ${at}`);
    }
    assert.match((await times.first().textContent()) ?? '', /\d/);

    await log().getByRole('button', { name: 'Copy your message' }).click();
    assert.equal(await clipboard(), 'How do I greet?');
    await log().getByRole('button', { name: 'Copy reply' }).click();
    assert.match(await clipboard(), /^Run this:\n\n```sh\necho hello\n```/);
    await log().getByRole('button', { name: 'Copy code' }).click();
    assert.equal((await clipboard()).trim(), 'echo hello');
    await log().getByRole('button', { name: 'Copied' }).waitFor({ timeout: WAIT });
  });

  it('exports the conversation as Markdown', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: WAIT }),
      page.getByRole('button', { name: 'Export as Markdown' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /\.md$/);
    const text = await readFile((await download.path())!, 'utf8');
    assert.match(text, /^# New conversation\n/);
    assert.match(text, /## You \(\d{4}-\d\d-\d\dT[^)]+\)\n\nHow do I greet\?/);
    assert.match(text, /## Assistant \([^)]+\)\n\nRun this:\n\n```sh\necho hello\n```/);
  });

  it('keyboard shortcuts: new conversation, focus the message box, search; listed under the list', async () => {
    await page.getByText('Keyboard shortcuts').click();
    await page.getByText('Focus the message box').waitFor({ timeout: WAIT });
    await newConversation(page, () => page.keyboard.press('Control+Shift+O'));
    await page.keyboard.press('Control+K');
    assert.equal(await focusedId(), 'conversation-search');
    await page.keyboard.press('Shift+Escape');
    assert.equal(await focusedId(), 'composer');
  });

  it('searches conversations by title (client-side: the API offers no conversation search)', async () => {
    const list = page.getByRole('list', { name: 'Conversations' });
    const first = list.locator('li', { has: page.locator(`a[href$="${firstId}"]`) });
    await first.getByRole('button', { name: /^Rename / }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('textbox').fill('Greeting in the shell');
    await dialog.locator('button[type=submit]').click();
    await list.getByRole('link', { name: 'Greeting in the shell' }).waitFor({ timeout: WAIT });
    const count = await list.getByRole('listitem').count();
    assert.ok(count >= 2, `${count} conversations`);
    await page.getByLabel('Search conversations').fill('shell');
    await page.waitForFunction(() => true);
    assert.equal(await list.getByRole('listitem').count(), 1);
    await page.getByLabel('Search conversations').fill('nothing like this');
    await page.getByText('No conversation title matches.').waitFor({ timeout: WAIT });
    await page.getByLabel('Search conversations').fill('');
    assert.equal(await list.getByRole('listitem').count(), count);
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, formatViolations(violations));
  });

  it('the message box and Send fit the viewport at 1280×800 and 390×844', async () => {
    await page.getByRole('link', { name: 'Greeting in the shell' }).click();
    await log().getByText('echo hello').waitFor({ timeout: WAIT });
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size);
      await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
      for (const target of [page.getByLabel('Message', { exact: true }), page.getByRole('button', { name: 'Send' })]) {
        const box = (await target.boundingBox())!;
        assert.ok(box.y >= 0 && box.y + box.height <= size.height, `${JSON.stringify(box)} within ${size.height}`);
        assert.ok(box.x >= 0 && box.x + box.width <= size.width, `${JSON.stringify(box)} within ${size.width}`);
      }
    }
    // The conversation's title keeps room of its own beside the header's buttons (it used to
    // shrink to nothing and run under Export as Markdown).
    const title = (await page.getByRole('heading', { level: 2, name: 'Greeting in the shell' }).boundingBox())!;
    const exportButton = (await page.getByRole('button', { name: 'Export as Markdown' }).boundingBox())!;
    const apart =
      title.x + title.width <= exportButton.x ||
      exportButton.x + exportButton.width <= title.x ||
      title.y + title.height <= exportButton.y ||
      exportButton.y + exportButton.height <= title.y;
    assert.ok(apart, `title ${JSON.stringify(title)} clear of Export ${JSON.stringify(exportButton)}`);
    assert.ok(title.width >= 120, `the title is wide enough to read (${title.width} px)`);
    // On a phone the open conversation takes the screen; its list is a link away.
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, formatViolations(violations));
    await page.getByRole('link', { name: '← Conversations' }).click();
    await page.getByRole('list', { name: 'Conversations' }).waitFor({ timeout: WAIT });
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
