import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient } from '#testing/api-client.js';
import { browserSkipReason, launchChromium } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

describe('web app in Chromium: tool approvals in the chat', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;
  let space: { id: string; path: string };

  async function newConversation(): Promise<string> {
    const before = page.url();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.waitForURL((url) => url.toString() !== before && /#\/chat\/[0-9a-f-]{36}$/.test(url.toString()), {
      timeout: WAIT,
    });
    await page.locator('[role=log] .msg').first().waitFor({ state: 'detached', timeout: WAIT });
    await page.getByLabel('Message', { exact: true }).waitFor({ timeout: WAIT });
    return page.url().split('/').pop()!;
  }

  async function send(text: string): Promise<void> {
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
  }

  const writeCall = (id: string, file: string, content: string) => ({
    steps: [{ toolCall: { id, name: 'Write', input: { file_path: file, content } } }],
  });

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    const policy = await apiClient(server).post('/api/config', { approvals: { tools: ['Write'] } });
    assert.equal(policy.status, 200, JSON.stringify(policy.body));
    space = (await apiClient(server).get('/api/spaces/svc')).body.data;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/chat`);
    await page.getByRole('button', { name: 'New conversation', exact: true }).waitFor({ timeout: WAIT });
    await page.getByText('Live').waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('shows the held call with its input; Approve runs it, and the audit says the web app answered', async () => {
    const id = await newConversation();
    model.enqueue(writeCall('toolu_w1', 'from-web.txt', 'approved in the browser'), {
      steps: [{ text: 'The file is written.' }],
    });
    await send('Write the file');
    const card = page.getByRole('group', { name: 'Tool call waiting for approval' });
    await card.waitFor({ timeout: WAIT });
    await card.getByText('Write', { exact: true }).waitFor({ timeout: WAIT });
    await card.getByText('"content": "approved in the browser"').waitFor({ timeout: WAIT });
    assert.equal(existsSync(join(space.path, 'from-web.txt')), false, 'nothing ran before the answer');
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.getByText('The file is written.').waitFor({ timeout: WAIT });
    await card.waitFor({ state: 'detached', timeout: WAIT });
    assert.equal(readFileSync(join(space.path, 'from-web.txt'), 'utf8'), 'approved in the browser');
    const conversation = (await apiClient(server).get(`/api/spaces/${space.id}/conversations/${id}`)).body.data as {
      messages: Array<{ id: string; role: string }>;
    };
    const reply = conversation.messages.filter((m) => m.role === 'assistant').at(-1)!;
    const thoughts = (
      await apiClient(server).get(`/api/spaces/${space.id}/conversations/${id}/messages/${reply.id}/thoughts`)
    ).body.data as Array<{ toolName?: string; approval?: { outcome: string; decidedBy: string } }>;
    const approval = thoughts.find((t) => t.toolName === 'Write')!.approval!;
    assert.deepEqual([approval.outcome, approval.decidedBy], ['approved', 'web']);
  });

  it('Reject with a reason: the model is told why and the step shows the refusal', async () => {
    await newConversation();
    const requestsBefore = model.requests.length;
    model.enqueue(writeCall('toolu_w2', 'never.txt', 'should not exist'), {
      steps: [{ text: 'Fine, I left it alone.' }],
    });
    await send('Write another file');
    const card = page.getByRole('group', { name: 'Tool call waiting for approval' });
    await card.waitFor({ timeout: WAIT });
    await card.getByLabel(/Reason/).fill('not this one');
    await card.getByRole('button', { name: 'Reject', exact: true }).click();
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.getByText('Fine, I left it alone.').waitFor({ timeout: WAIT });
    await card.waitFor({ state: 'detached', timeout: WAIT });
    assert.equal(existsSync(join(space.path, 'never.txt')), false);
    const second = JSON.stringify(model.requests[requestsBefore + 1]!.body);
    assert.ok(second.includes('The user rejected this tool call: not this one'), 'the model got the reason');
    const stored = messages.locator('.msg.assistant', { hasText: 'Fine, I left it alone.' });
    await stored.locator('details', { hasText: 'Tool: Write' }).getByText('(failed)').waitFor({ timeout: WAIT });
  });

  it("a digital human's held run call is shown on its page; Approve there lets the run go on", async () => {
    const install = await apiClient(server).post('/api/apps/install', {
      spaceId: space.id,
      spec: {
        spec_version: '1',
        name: 'Careful Writer',
        version: '1.0.0',
        author: 'web-approvals',
        description: 'Writes reports.',
        type: 'automation',
        system_prompt: 'You write reports.',
        subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
      },
    });
    assert.equal(install.status, 200, JSON.stringify(install.body));
    const appId = install.body.data.appId as string;
    model.enqueue(writeCall('toolu_run1', 'run-report.txt', 'from a run'), {
      steps: [{ toolCall: { name: 'report_to_user', input: { type: 'complete', summary: 'Report written' } } }],
    });
    await page.goto(`${server.url}/#/apps/${appId}`);
    await page.getByRole('heading', { name: 'Careful Writer', level: 1 }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Run now', exact: true }).click();
    const card = page.getByRole('group', { name: 'Tool call waiting for approval' });
    await card.waitFor({ timeout: WAIT });
    await card.getByText('"content": "from a run"').waitFor({ timeout: WAIT });
    await page.getByText('waiting_user').first().waitFor({ timeout: WAIT });
    assert.equal(existsSync(join(space.path, 'run-report.txt')), false, 'nothing ran before the answer');
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await card.waitFor({ state: 'detached', timeout: WAIT });
    const deadline = Date.now() + WAIT;
    while (!existsSync(join(space.path, 'run-report.txt')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(readFileSync(join(space.path, 'run-report.txt'), 'utf8'), 'from a run');
  });
});
