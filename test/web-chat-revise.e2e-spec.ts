import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient, okData } from '#testing/api-client.js';
import { axeViolations, browserSkipReason, formatViolations, newConversation, openSignedIn } from '#testing/browser.js';
import {
  lastUserTextOf,
  type RecordedModelRequest,
  ScriptedModelServer,
  systemTextOf,
  textOf,
  textReply,
} from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

const WAIT = 30_000;

/** The titling call (libs/core/src/agent/conversation-titles.ts) says so in its system prompt. */
const isTitling = (r: RecordedModelRequest): boolean => systemTextOf(r.body).startsWith('Title this conversation');
/** The conversation as the model saw it in a request: each message as `role: text`. */
const seen = (r: RecordedModelRequest): string[] =>
  (r.body.messages ?? []).map((m) => `${m.role}: ${textOf(m.content)}`);

/**
 * Issue 31's chat leftovers: conversations titled by the model after their first exchange (never
 * one the person renamed), Edit and Regenerate with the retry semantics, a model picker.
 */
describe(
  'web app in Chromium: titles, edit and regenerate, a model per conversation',
  { skip: browserSkipReason() },
  () => {
    let server: TestServer;
    let model: ScriptedModelServer;
    let browser: Browser;
    let page: Page;
    let http: ReturnType<typeof apiClient>;
    let spaceId = '';
    /** Chat replies, numbered, so each reply is told apart. */
    let replies = 0;
    const log = () => page.getByRole('log', { name: 'Messages' });
    const list = () => page.getByRole('list', { name: 'Conversations' });
    const chatRequests = () => model.requests.filter((r) => !isTitling(r));
    const send = async (text: string, reply: RegExp) => {
      await page.getByLabel('Message', { exact: true }).fill(text);
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await log().getByText(reply).waitFor({ timeout: WAIT });
      await log().locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
    };
    const conversation = async (id: string) =>
      okData<{ title: string; modelSourceId?: string; modelId?: string; messages: Array<{ content: string }> }>(
        await http.get(`/api/spaces/${spaceId}/conversations/${id}`),
      );

    before(async () => {
      model = await ScriptedModelServer.start();
      model.respond((request) => {
        if (isTitling(request)) {
          const said = textOf(request.body.messages?.[0]?.content);
          return textReply(said.includes('greet') ? '"Greeting in the shell."' : 'Something else entirely');
        }
        replies += 1;
        return textReply(`Reply ${replies} to ${lastUserTextOf(request.body)}`);
      });
      server = await startServer({ env: model.serverEnv() });
      http = apiClient(server);
      // Keeps the assistant's other switch when titling is turned on in Settings.
      okData(await http.post('/api/config', { assistant: { serviceApi: false } }));
      spaceId = okData<{ id: string }>(await http.get('/api/spaces/svc')).id;
      ({ browser, page } = await openSignedIn(server));
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await model?.close();
    });

    it('titles a conversation from its first exchange, live in the list and header; a renamed one keeps its title', async () => {
      // Titling is a switch in Settings, off by default.
      await page.getByRole('link', { name: 'Settings', exact: true }).click();
      const toggle = page.getByLabel(/^Title new conversations with the model/);
      assert.equal(await toggle.isChecked(), false);
      await toggle.check();
      await page.getByText('New conversations will be titled by the model.').waitFor({ timeout: WAIT });
      assert.deepEqual(okData<{ assistant: unknown }>(await http.get('/api/config')).assistant, {
        serviceApi: false,
        autoTitle: true,
      });
      const settingsViolations = await axeViolations(page);
      assert.equal(settingsViolations.length, 0, formatViolations(settingsViolations));
      await page.getByRole('link', { name: 'Chat', exact: true }).click();
      await page.getByRole('button', { name: 'New conversation', exact: true }).waitFor({ timeout: WAIT });
      const renamedId = await newConversation(page);
      await list()
        .locator('li', { has: page.locator(`a[href$="${renamedId}"]`) })
        .getByRole('button', { name: /^Rename / })
        .click();
      const dialog = page.locator('dialog[open]');
      await dialog.getByRole('textbox').fill('My own title');
      await dialog.locator('button[type=submit]').click();
      await list().getByRole('link', { name: 'My own title' }).waitFor({ timeout: WAIT });
      await send('Tell me about tea', /Reply \d+ to Tell me about tea/);

      const titledId = await newConversation(page);
      await send('How do I greet in the shell?', /Reply \d+ to How do I greet/);
      // No reload: the title arrives with `conversation:updated`.
      await list().getByRole('link', { name: 'Greeting in the shell' }).waitFor({ timeout: WAIT });
      await page.getByRole('heading', { name: 'Greeting in the shell', level: 2 }).waitFor({ timeout: WAIT });
      assert.equal((await conversation(titledId)).title, 'Greeting in the shell');

      // Only the untitled conversation was titled, once, from its first exchange.
      const titling = model.requests.filter(isTitling);
      assert.equal(titling.length, 1);
      assert.match(textOf(titling[0]!.body.messages?.[0]?.content), /How do I greet in the shell\?[\s\S]*Reply \d+ to/);
      assert.equal((await conversation(renamedId)).title, 'My own title');
      await list().getByRole('link', { name: 'My own title' }).waitFor({ timeout: WAIT });

      // A second turn asks nothing more.
      await send('And in Python?', /Reply \d+ to And in Python\?/);
      assert.equal(model.requests.filter(isTitling).length, 1);
      const violations = await axeViolations(page);
      assert.equal(violations.length, 0, formatViolations(violations));
    });

    it('Regenerate replaces the last reply; the model sees the message once, without the old reply', async () => {
      await newConversation(page);
      await send('A poem about cats', /Reply \d+ to A poem about cats/);
      const first = (await log()
        .getByText(/Reply \d+ to A poem about cats/)
        .textContent())!;
      await log().getByRole('button', { name: 'Regenerate' }).click();
      await log()
        .getByText(/Reply \d+ to A poem about cats/)
        .filter({ hasNotText: first })
        .waitFor({ timeout: WAIT });
      await log().locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
      // Once the stored messages are read back, the replaced reply and the first sending are hidden.
      await waitFor(async () => (await log().getByText(first).count()) === 0, WAIT);
      assert.equal(await log().getByText('A poem about cats', { exact: true }).count(), 1);
      const request = chatRequests().at(-1)!;
      assert.deepEqual(seen(request).slice(-1), ['user: A poem about cats']);
      assert.ok(!seen(request).some((m) => m.includes(first)), seen(request).join('\n'));
    });

    it('Edit sends the changed message instead; the model never sees the old one', async () => {
      await log().getByRole('button', { name: 'Edit', exact: true }).click();
      const box = page.getByRole('textbox', { name: 'Edit your message' });
      await page.locator('#edit-message:focus').waitFor({ timeout: WAIT });
      assert.equal(await box.inputValue(), 'A poem about cats');
      await box.fill('A poem about dogs');
      await page.getByRole('button', { name: 'Send edited message' }).click();
      await log()
        .getByText(/Reply \d+ to A poem about dogs/)
        .waitFor({ timeout: WAIT });
      await log().locator('[data-live]').waitFor({ state: 'detached', timeout: WAIT });
      await waitFor(async () => (await log().getByText(/cats/).count()) === 0, WAIT);
      const request = chatRequests().at(-1)!;
      assert.deepEqual(seen(request), ['user: A poem about dogs']);
      const violations = await axeViolations(page);
      assert.equal(violations.length, 0, formatViolations(violations));
    });

    it('a turn that ends before its request is answered ends on screen too (no busy reply left, Edit offered)', async () => {
      // The socket's agent:complete comes first: the request's answer is held until the turn is stored.
      let held = 0;
      let answered: Promise<void> = Promise.resolve();
      await page.route('**/api/agent/message', (route) => {
        held += 1;
        answered = (async () => {
          const response = await route.fetch();
          await waitFor(async () => (await conversation(id)).messages.length === 2, WAIT);
          await route.fulfill({ response });
        })();
        return answered;
      });
      const id = await newConversation(page);
      try {
        await send('Answer quickly', /Reply \d+ to Answer quickly/);
        await answered;
      } finally {
        await page.unroute('**/api/agent/message');
      }
      assert.equal(held, 1);
      await log().getByRole('button', { name: 'Edit', exact: true }).waitFor({ timeout: WAIT });
      assert.equal(await log().getByText('Answer quickly', { exact: true }).count(), 1, 'the message is shown once');
    });

    it('the model picker pins the conversation to a configured model, and back to the default', async () => {
      const config = okData<{ currentId: string; sources: Array<{ id: string; name: string; model: string }> }>(
        await http.post('/api/ai-sources/sources', {
          name: 'Second',
          provider: 'anthropic',
          apiUrl: model.url,
          apiKey: 'sk-second',
          model: 'scripted-large',
        }),
      );
      const second = config.sources.find((s) => s.name === 'Second')!;
      const defaultModel = config.sources.find((s) => s.id === config.currentId)!.model;
      const id = await newConversation(page);
      const picker = page.getByLabel('Model', { exact: true });
      await picker
        .locator('option', { hasText: 'Second · scripted-large' })
        .waitFor({ state: 'attached', timeout: WAIT });
      assert.match((await picker.locator('option:checked').textContent())!, /^Default/);
      await picker.selectOption({ label: 'Second · scripted-large' });
      await waitFor(async () => (await conversation(id)).modelId === 'scripted-large', WAIT);
      const pinned = await conversation(id);
      assert.equal(pinned.modelSourceId, second.id);
      await send('Which model?', /Reply \d+ to Which model\?/);
      assert.equal(chatRequests().at(-1)!.body.model, 'scripted-large');

      // Read again, the picker shows the pin; Default removes it.
      await page.reload();
      await page.getByRole('heading', { level: 2 }).first().waitFor({ timeout: WAIT });
      await waitFor(
        async () => (await picker.locator('option:checked').textContent()) === 'Second · scripted-large',
        WAIT,
      );
      await picker.selectOption({ index: 0 });
      await waitFor(async () => (await conversation(id)).modelId === undefined, WAIT);
      await send('And now?', /Reply \d+ to And now\?/);
      assert.equal(chatRequests().at(-1)!.body.model, defaultModel);
      const violations = await axeViolations(page);
      assert.equal(violations.length, 0, formatViolations(violations));
    });
  },
);
