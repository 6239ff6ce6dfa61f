import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { apiClient, okData } from '#testing/api-client.js';
import { browserSkipReason, launchChromium, screenshot } from '#testing/browser.js';
import { ChannelCallbackServer } from '#testing/channel-callback-server.js';
import { ScriptedModelServer, textReply } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;
const SECRET = 'web-channel-s3cret';

const spec = {
  spec_version: '1',
  name: 'Chatty',
  version: '1.0.0',
  author: 'alice',
  description: 'Answers in chat.',
  type: 'automation',
  system_prompt: 'You help the user from their chat app.',
  subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
};

describe('web app in Chromium: a digital human’s channels', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let callback: ChannelCallbackServer;
  let browser: Browser;
  let page: Page;
  let appId = '';
  const get = async <T>(path: string) => okData<T>(await apiClient(server).get(path));
  const post = async <T>(path: string, body: object) => okData<T>(await apiClient(server).post(path, body));
  const section = () => page.getByRole('region', { name: 'Channels' });

  before(async () => {
    model = await ScriptedModelServer.start();
    model.respond(() => textReply('Hello from Chatty, over the hook.'));
    callback = await ChannelCallbackServer.start(SECRET);
    server = await startServer({ env: { ...model.serverEnv(), SVC_CHANNEL_ALLOW: '127.0.0.1' } });
    const spaceId = (await post<{ id: string }>('/api/spaces', { name: 'Channels' })).id;
    appId = (await post<{ appId: string }>('/api/apps/install', { spec, spaceId })).appId;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.addInitScript(`localStorage.setItem('svc-space', ${JSON.stringify(spaceId)})`);
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/apps/${appId}`);
    await page.getByRole('heading', { name: 'Chatty', exact: true }).waitFor({ timeout: WAIT });
    await page.getByText('Live').waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await callback?.close();
    await model?.close();
  });

  it('adds a webhook channel from the provider form: a missing field is named in place; the secret stays write-only', async () => {
    await page.getByRole('tab', { name: 'Channels' }).click();
    await section().getByText('No channel connects this digital human yet.').waitFor({ timeout: WAIT });
    await section().getByText('Add a channel').click();
    const form = section().getByRole('form', { name: 'New channel' });
    await form.getByLabel('Platform', { exact: true }).selectOption({ label: 'Webhook' });
    await form.getByLabel('Channel name', { exact: true }).fill('Support hook');
    const secret = form.getByLabel(/^Signing secret/);
    assert.equal(await secret.getAttribute('type'), 'password', 'a credential is a password input');
    await secret.fill(SECRET);
    await form.getByRole('button', { name: 'Add channel' }).click();
    // The server's refusal is shown beside the field it names.
    const url = form.getByLabel(/^Callback URL/);
    await form.getByText('config.callbackUrl is required').first().waitFor({ timeout: WAIT });
    assert.equal(await url.getAttribute('aria-invalid'), 'true');
    await url.fill(callback.url);
    await form.getByRole('button', { name: 'Add channel' }).click();
    const item = section().getByRole('listitem', { name: 'Support hook', exact: true });
    await item.getByLabel('State: online').waitFor({ timeout: WAIT });
    // The live event can show the new channel before the answer to the form's request, which is
    // when the form is emptied: the status line says that answer came.
    await section().getByRole('status').getByText('Support hook added.').waitFor({ timeout: WAIT });
    assert.equal(await form.getByLabel(/^Signing secret/).inputValue(), '', 'never filled in again');
    const [instance] =
      await get<Array<{ name: string; config: Record<string, unknown> }>>('/api/im-channels/instances');
    assert.deepEqual(instance?.config, { secret: '***', callbackUrl: callback.url });
    // Its editor: the stored secret is not shown, only a hint that it is kept.
    await item.getByRole('button', { name: 'Edit' }).click();
    const edit = item.getByRole('form', { name: 'Edit Support hook' });
    assert.equal(await edit.getByLabel(/^Signing secret/).inputValue(), '');
    assert.equal(await edit.getByLabel(/^Callback URL/).inputValue(), callback.url);
    await edit.getByLabel('Channel name', { exact: true }).fill('Support');
    await edit.getByRole('button', { name: 'Save channel' }).click();
    await section().getByRole('listitem', { name: 'Support', exact: true }).waitFor({ timeout: WAIT });
    const [renamed] = await get<Array<{ name: string; config: Record<string, unknown> }>>('/api/im-channels/instances');
    assert.deepEqual([renamed?.name, renamed?.config], ['Support', { secret: '***', callbackUrl: callback.url }]);
  });

  it('a signed inbound message: its thread and the reply appear live; proactive toggled; every control labelled', async () => {
    const [instance] = await get<Array<{ id: string }>>('/api/im-channels/instances');
    const raw = JSON.stringify({
      messageId: 'web-m1',
      chatId: 'chat-alice',
      chatType: 'direct',
      from: { id: 'u-alice', name: 'Alice' },
      text: 'Hi there, can you hear me?',
    });
    const res = await request(server.url)
      .post(`/hooks/channels/${instance!.id}`)
      .set('Content-Type', 'application/json')
      .set('X-Hub-Signature-256', `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`)
      .send(raw);
    assert.equal(res.status, 200);
    const item = section().getByRole('listitem', { name: 'Support', exact: true });
    const threads = item.getByRole('list', { name: 'Threads of Support' });
    await threads.getByRole('button', { name: 'Alice' }).click({ timeout: WAIT });
    const messages = section().getByRole('list', { name: 'Messages of Alice' });
    await messages.getByText('Hi there, can you hear me?').waitFor({ timeout: WAIT });
    await messages.getByText('Hello from Chatty, over the hook.').waitFor({ timeout: WAIT });
    await callback.until((r) => r.some((x) => x.text === 'Hello from Chatty, over the hook.'), WAIT, 'the reply');

    await threads.getByRole('checkbox', { name: 'Proactive: Alice' }).check();
    await section().getByText('Alice: proactive on.').waitFor({ timeout: WAIT });
    const sessions = await get<Array<{ chatId: string; proactive: boolean }>>(`/api/im-sessions?appId=${appId}`);
    assert.deepEqual(
      sessions.map((s) => [s.chatId, s.proactive]),
      [['chat-alice', true]],
    );

    // Accessibility of the section: every control has a name, no id is used twice.
    const problems = await section().evaluate((root) => {
      const out: string[] = [];
      for (const el of root.querySelectorAll('input, select, textarea, button')) {
        const c = el as unknown as { labels: ArrayLike<unknown> | null; getAttribute(n: string): string | null };
        const named =
          (c.labels !== null && c.labels.length > 0) ||
          c.getAttribute('aria-label') ||
          (el.tagName === 'BUTTON' && (el.textContent ?? '').trim());
        if (!named) out.push(`unnamed ${el.tagName.toLowerCase()}#${el.id}`);
      }
      const ids = [...root.querySelectorAll('[id]')].map((e) => e.id);
      for (const id of new Set(ids)) if (ids.filter((x) => x === id).length > 1) out.push(`duplicate id ${id}`);
      return out;
    });
    assert.deepEqual(problems, []);
    await screenshot(page, 'app-channels');
  });

  it('disable, enable and delete (confirmed)', async () => {
    const item = section().getByRole('listitem', { name: 'Support', exact: true });
    await item.getByRole('button', { name: 'Disable' }).click();
    await item.getByText('disabled', { exact: true }).waitFor({ timeout: WAIT });
    await item.getByLabel('State: offline').waitFor({ timeout: WAIT });
    await item.getByRole('button', { name: 'Enable' }).click();
    await item.getByLabel('State: online').waitFor({ timeout: WAIT });
    await item.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await section().getByText('No channel connects this digital human yet.').waitFor({ timeout: WAIT });
    assert.deepEqual(await get('/api/im-channels/instances'), []);
  });
});
