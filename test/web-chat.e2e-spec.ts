import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page, WebSocketRoute } from 'playwright-core';
import { apiClient } from '#testing/api-client.js';
import { browserSkipReason, launchChromium, screenshot } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

describe('web app in Chromium: conversations and chat over the socket', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;
  /** The page's current socket, routed through Playwright so a test can cut it. */
  let socketRoute: WebSocketRoute | null = null;
  let connections = 0;

  async function newConversation(): Promise<string> {
    const before = page.url();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.waitForURL((url) => url.toString() !== before && /#\/chat\/[0-9a-f-]{36}$/.test(url.toString()), {
      timeout: WAIT,
    });
    // The new conversation has replaced the previous one once no message is shown.
    await page.locator('[role=log] .msg').first().waitFor({ state: 'detached', timeout: WAIT });
    await page.getByLabel('Message', { exact: true }).waitFor({ timeout: WAIT });
    return page.url().split('/').pop()!;
  }

  async function send(text: string): Promise<void> {
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
  }

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.routeWebSocket(/\/ws$/, (ws) => {
      connections += 1;
      socketRoute = ws;
      ws.connectToServer();
    });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/chat`);
    await page.getByRole('button', { name: 'New conversation', exact: true }).waitFor({ timeout: WAIT });
    await page.getByText('Live').waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('streams a reply as Markdown with its tool step (input and result) and token usage', async () => {
    await newConversation();
    model.enqueue(
      {
        steps: [
          { thinking: 'Let me look at the files.' },
          { toolCall: { id: 'toolu_glob', name: 'Glob', input: { pattern: '*' } } },
        ],
      },
      {
        steps: [
          { text: 'Here is **the answer**' },
          { delayMs: 100 },
          { text: ':\n\n```js\nconsole.log(1);\n```\n' },
          { usage: { input: 1200, output: 34 } },
        ],
      },
    );
    await send('What is in this space?');
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.locator('strong', { hasText: 'the answer' }).waitFor({ timeout: WAIT });
    await messages.locator('pre code', { hasText: 'console.log(1);' }).waitFor({ timeout: WAIT });
    await page.getByText(/Last turn: [\d,]+ in · [\d,]+ out/).waitFor({ timeout: WAIT });
    // The stored reply replaces the live one; its text stays, and the question is shown once.
    await messages.locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
    await messages.locator('strong', { hasText: 'the answer' }).waitFor({ timeout: WAIT });
    assert.equal(await messages.getByText('What is in this space?').count(), 1);
    // The code block is highlighted (highlight.js classes), and the stored reply shows its own usage.
    await messages.locator('pre code.hljs.language-js .hljs-number', { hasText: '1' }).waitFor({ timeout: WAIT });
    const reply = messages.locator('.msg.assistant', { hasText: 'the answer' });
    await reply
      .locator('.usage')
      .getByText(/[\d,]+ in · [\d,]+ out/)
      .waitFor({ timeout: WAIT });
  });

  it('shows a stored reply’s steps (thinking, tool call with input and result) when the conversation is reopened', async () => {
    const id = await newConversation();
    model.enqueue(
      {
        steps: [
          { thinking: 'Recalling the layout.' },
          { toolCall: { id: 'toolu_past', name: 'Glob', input: { pattern: '*.txt' } } },
        ],
      },
      { steps: [{ text: 'Finished looking.' }] },
    );
    await send('Look once');
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
    await messages.getByText('Finished looking.').waitFor({ timeout: WAIT });
    // Away and back: the conversation is read again from the server.
    await page.evaluate(`location.hash = '#/chat'`);
    await page.getByText('Open a conversation or start a new one.').waitFor({ timeout: WAIT });
    await page.evaluate(`location.hash = '#/chat/${id}'`);
    const stored = messages.locator('.msg.assistant', { hasText: 'Finished looking.' });
    const tool = stored.locator('details', { hasText: 'Tool: Glob' });
    await tool.waitFor({ timeout: WAIT });
    await tool.locator('summary').click();
    await tool.getByText('"pattern": "*.txt"').waitFor({ timeout: WAIT });
    await tool.getByText('(done)').waitFor({ timeout: WAIT });
    const thinking = stored.locator('details', { hasText: 'Thinking' });
    await thinking.locator('summary').click();
    await thinking.getByText('Recalling the layout.').waitFor({ timeout: WAIT });
  });

  it('shows the retry notice while the model is retried, and a failed turn offers Retry', async () => {
    await newConversation();
    model.enqueue({ status: 429, headers: { 'retry-after': '3' } }, { steps: [{ text: 'Recovered after a wait.' }] });
    await send('Are you there?');
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.getByText(/The model did not answer; retrying \(attempt 1 of \d+\)/).waitFor({ timeout: WAIT });
    await messages.getByText('Recovered after a wait.').waitFor({ timeout: WAIT });
    await messages.locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
    assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0, 'no Retry after a success');

    model.enqueue({ status: 400, error: 'scripted refusal' });
    await send('Try something that fails');
    await page.getByRole('alert').waitFor({ timeout: WAIT });
    const retry = page.getByRole('button', { name: 'Retry' });
    await retry.waitFor({ timeout: WAIT });
    model.enqueue({ steps: [{ text: 'The second try worked.' }] });
    await retry.click();
    await messages.getByText('The second try worked.').waitFor({ timeout: WAIT });
    assert.ok(JSON.stringify(model.requests.at(-1)!.body).includes('Try something that fails'));
    await retry.waitFor({ state: 'detached', timeout: WAIT });
  });

  it('opened while a turn runs, shows the text streamed before it was opened (replayed from the event log)', async () => {
    const id = await newConversation();
    model.enqueue({ steps: [{ text: 'First answer.' }] });
    await send('First question');
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.getByText('First answer.').waitFor({ timeout: WAIT });
    await messages.locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
    model.enqueue({
      steps: [{ thinking: 'Planning a long reply.' }, { text: 'Streamed before you came. ' }, { hang: true }],
    });
    await send('Second question');
    await page.locator('[data-live]').getByText('Streamed before you came.').waitFor({ timeout: WAIT });

    const other = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    try {
      await other.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/chat/${id}`);
      const live = other.locator('[data-live]');
      await live.getByText('Streamed before you came.').waitFor({ timeout: WAIT });
      await live.locator('details', { hasText: 'Thinking' }).waitFor({ timeout: WAIT });
      // The earlier turn stays a stored message; the replayed text is there once.
      await other.getByRole('log', { name: 'Messages' }).getByText('First answer.').waitFor({ timeout: WAIT });
      await other.waitForTimeout(1_000);
      assert.equal((await live.locator('.markdown').innerText()).trim(), 'Streamed before you came.');
      await other.getByRole('button', { name: 'Stop', exact: true }).click();
      await other.getByText('Stopped.').waitFor({ timeout: WAIT });
    } finally {
      await other.close();
    }
  });

  it('sends an attached image with the message and shows it in the conversation', async () => {
    await newConversation();
    // A 1×1 PNG.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    await page.getByLabel('Attach file').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png });
    await page.getByRole('list', { name: 'Attached files' }).getByText('dot.png').waitFor({ timeout: WAIT });
    model.enqueue({ steps: [{ text: 'A tiny dot.' }] });
    await send('What is in this picture?');
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.getByText('A tiny dot.').waitFor({ timeout: WAIT });
    await messages.getByRole('img', { name: 'Attached image 1' }).waitFor({ timeout: WAIT });
    assert.ok(JSON.stringify(model.requests.at(-1)!.body).includes(png.toString('base64')), 'the model got the image');
  });

  it('shows the thinking and tool steps while the turn runs', async () => {
    await newConversation();
    model.enqueue(
      {
        steps: [
          { thinking: 'Checking the folder.' },
          { toolCall: { id: 'toolu_g2', name: 'Glob', input: { pattern: '*.md' } } },
        ],
      },
      { steps: [{ text: 'Still ' }, { text: 'working' }, { hang: true }] },
    );
    await send('Look around');
    const live = page.locator('[data-live]');
    await live.getByText('working').waitFor({ timeout: WAIT });
    const tool = live.locator('details', { hasText: 'Tool: Glob' });
    await tool.locator('summary').click();
    await tool.getByText('"pattern": "*.md"').waitFor({ timeout: WAIT });
    await tool.getByText('(done)').waitFor({ timeout: WAIT });
    await live.locator('details', { hasText: 'Thinking' }).locator('summary').click();
    await live.getByText('Checking the folder.').waitFor({ timeout: WAIT });
    await screenshot(page, 'chat');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped.').waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Stop', exact: true }).waitFor({ state: 'detached', timeout: WAIT });
  });

  it('answers the assistant’s question in place', async () => {
    await newConversation();
    const questions = [
      {
        question: 'Which color?',
        header: 'Color',
        options: [
          { label: 'Red', description: 'warm' },
          { label: 'Blue', description: 'cool' },
        ],
        multiSelect: false,
      },
    ];
    model.enqueue(
      { steps: [{ toolCall: { id: 'toolu_q', name: 'AskUserQuestion', input: { questions } } }] },
      { steps: [{ text: 'Blue it is.' }] },
    );
    await send('Pick a color with me');
    const card = page.getByRole('form', { name: 'Question from the assistant' });
    await card.getByText('Which color?').waitFor({ timeout: WAIT });
    await screenshot(page, 'chat-question');
    await card.getByLabel(/Blue/).check();
    await card.getByRole('button', { name: 'Answer' }).click();
    await page.getByRole('log', { name: 'Messages' }).getByText('Blue it is.').waitFor({ timeout: WAIT });
    assert.ok(JSON.stringify(model.requests.at(-1)!.body).includes('Blue'));
  });

  it('loses no text when the socket drops mid-reply: it reconnects and replays from the last seq', async () => {
    await newConversation();
    model.enqueue({
      steps: [
        { text: 'Before the drop. ' },
        { delayMs: 1_500 },
        { text: 'Sent while the socket was down. ' },
        { text: 'Still streaming.' },
        { hang: true },
      ],
    });
    await send('Tell me a long story');
    const live = page.locator('[data-live]');
    await live.getByText('Before the drop.').waitFor({ timeout: WAIT });
    const before = connections;
    await socketRoute!.close();
    await page.getByText('Offline, retrying').waitFor({ timeout: WAIT });
    await page.getByText('Live').waitFor({ timeout: WAIT });
    assert.ok(connections > before, 'reconnected');
    // The turn still runs (the reply hangs), so only the replay can have brought this text.
    await live
      .getByText('Before the drop. Sent while the socket was down. Still streaming.')
      .waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped.').waitFor({ timeout: WAIT });
  });

  it('stars, renames and deletes conversations', async () => {
    await newConversation();
    const list = page.getByRole('list', { name: 'Conversations' });
    await list
      .getByRole('button', { name: /^Rename / })
      .first()
      .click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('textbox').fill('Kept notes');
    await dialog.locator('button[type=submit]').click();
    const renamed = list.getByRole('link', { name: 'Kept notes' });
    await renamed.waitFor({ timeout: WAIT });
    const id = (await renamed.getAttribute('href'))!.split('/').pop()!;
    await list.getByRole('button', { name: 'Star Kept notes' }).click();
    await list.getByRole('button', { name: 'Unstar Kept notes' }).waitFor({ timeout: WAIT });
    const space = (await apiClient(server).get('/api/spaces/svc')).body.data.id as string;
    const stored = (await apiClient(server).get(`/api/spaces/${space}/conversations/${id}`)).body.data;
    assert.equal(stored.title, 'Kept notes');
    assert.equal(stored.starred, true);
    await list.getByRole('button', { name: 'Delete Kept notes' }).click();
    await page.locator('dialog[open] button[type=submit]').click();
    await list.getByRole('link', { name: 'Kept notes' }).waitFor({ state: 'detached', timeout: WAIT });
  });
});
