import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AgentHarness } from '#testing/agent-harness.js';
import { chromiumSkipReason } from '#testing/browser.js';
import type { RecordedModelRequest, ScriptedReply } from '#testing/scripted-model-server.js';
import { waitFor } from '#testing/wait.js';

/**
 * A digital human's run with the AI browser, through the real server and a scripted model, in
 * both modes: a person signs in to a site in the space's profile (a sign-in session), and the
 * next run is signed in there; the run navigates, snapshots, fills a form, runs its bundled
 * skill in the page and reports what it read. Another space's profile does not have the
 * sign-in. Pages are served on loopback by the test (allowed by SVC_BROWSER_ALLOW).
 */
const skip = chromiumSkipReason();

function site(req: IncomingMessage, res: ServerResponse): void {
  const html = (title: string, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(`<!doctype html><title>${title}</title><body>${body}</body>`);
  };
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/sign-in')
    return html('Signed in', '<p>You are signed in</p>', { 'set-cookie': 'sid=opaque-7; Path=/' });
  if (path === '/account') {
    const signedIn = /sid=opaque-7/.test(req.headers.cookie ?? '');
    return html('Account', signedIn ? '<h1>Welcome back, Ada</h1>' : '<h1>Please sign in</h1>');
  }
  return html(
    'Order form',
    `<label>Customer <input id="customer"></label><button onclick="document.title='Sent ' + document.getElementById('customer').value">Send</button>`,
  );
}

const SKILL = `/* Reads the form: what a catalog skill does with the page's DOM. */
async (params) => ({ success: true, customer: document.getElementById('customer').value, tag: params.tag })`;

type Block = { type?: string; name?: string; id?: string; tool_use_id?: string; content?: unknown };
const blocksOf = (req: RecordedModelRequest): Block[] =>
  ((req.body.messages ?? []) as Array<{ content: unknown }>).flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Block[]) : [],
  );
const textOf = (b: Block): string =>
  typeof b.content === 'string'
    ? b.content
    : ((b.content as Array<{ text?: string }> | undefined) ?? []).map((c) => c.text ?? '').join('');

describe('a digital human run with the AI browser', { skip }, () => {
  const h = new AgentHarness();
  let web: Server;
  let base = '';
  let packageDir = '';

  before(async () => {
    web = createServer(site);
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    packageDir = mkdtempSync(join(tmpdir(), 'svc-browser-pkg-'));
    mkdirSync(join(packageDir, 'skills', 'read-form'), { recursive: true });
    writeFileSync(join(packageDir, 'skills', 'read-form', 'index.js'), SKILL);
    writeFileSync(
      join(packageDir, 'skills', 'read-form', 'SKILL.md'),
      '---\nname: read-form\ndescription: Reads the order form\n---\nRun with browser_run.\n',
    );
    writeFileSync(
      join(packageDir, 'spec.yaml'),
      [
        'spec_version: "1"',
        'name: Order clerk',
        'version: "1.0.0"',
        'author: tests',
        'description: Fills orders on the shop site',
        'type: automation',
        'system_prompt: Check the account, fill the order form, read it with .claude/skills/read-form/index.js, report.',
        'permissions: [ai-browser]',
        'requires:',
        '  mcps:',
        '    - id: ai-browser',
        '  skills:',
        '    - id: read-form',
        '      bundled: true',
        '      files: [SKILL.md, index.js]',
        'browser_login:',
        `  - url: "${base}/account"`,
        '    label: Shop',
        '',
      ].join('\n'),
    );
    await h.start({ SVC_BROWSER_ALLOW: '127.0.0.1' });
  });

  after(async () => {
    await h.stop();
    await new Promise<void>((resolve) => web.close(() => resolve()));
    rmSync(packageDir, { recursive: true, force: true });
  });

  /** The run's script: each step looks at what came back so far (uids from the latest snapshot). */
  function scriptRun(): void {
    h.model.respond((req) => {
      const blocks = blocksOf(req);
      const used = blocks.filter((b) => b.type === 'tool_use').map((b) => b.name);
      const results = blocks.filter((b) => b.type === 'tool_result').map(textOf);
      const call = (name: string, input: Record<string, unknown>): ScriptedReply => ({
        steps: [{ toolCall: { name: `mcp__ai-browser__${name}`, input } }],
      });
      switch (used.length) {
        case 0:
          return call('browser_navigate', { url: `${base}/account` });
        case 1:
          return call('browser_snapshot', {});
        case 2:
          return call('browser_navigate', { url: `${base}/order` });
        case 3:
          return call('browser_snapshot', {});
        case 4: {
          const uid = /uid=(\S+) textbox "Customer"/.exec(results.at(-1) ?? '')?.[1] ?? 'missing';
          return call('browser_fill', { uid, value: 'Ada Lovelace' });
        }
        case 5:
          return call('browser_run', { file: '.claude/skills/read-form/index.js', params: { tag: 'order-1' } });
        default:
          if (used.includes('report_to_user')) return { steps: [{ text: 'Done.' }] };
          return {
            steps: [
              {
                toolCall: {
                  name: 'report_to_user',
                  input: { type: 'complete', summary: results.slice(1).join('\n---\n').slice(0, 4000) },
                },
              },
            ],
          };
      }
    });
  }

  it("a sign-in saved in the space's profile is what the next run sees; the run fills, runs its skill, reports", async () => {
    const space = h.okData<{ id: string }>(await h.api.post('/api/spaces', { name: 'Shop' }));
    const other = h.okData<{ id: string }>(await h.api.post('/api/spaces', { name: 'Elsewhere' }));
    const { appId } = h.okData<{ appId: string }>(
      await h.api.post('/api/store/import-dhpkg', { filePath: packageDir, spaceId: space.id }),
    );
    assert.deepEqual(
      (await h.api.get(`/api/apps/${appId}/browser-login`)).body.data.map((s: { signedIn: boolean }) => s.signedIn),
      [false],
    );

    // The person signs in: the site sets its cookie when the sign-in page loads.
    const { viewId } = h.okData<{ viewId: string }>(
      await h.api.post('/api/browser/login-sessions', { spaceId: space.id, url: `${base}/sign-in` }),
    );
    assert.deepEqual(h.okData(await h.api.post(`/api/browser/login-sessions/${viewId}/finish`)), { saved: true });
    assert.deepEqual(
      (await h.api.get(`/api/apps/${appId}/browser-login`)).body.data.map((s: { signedIn: boolean }) => s.signedIn),
      [true],
    );

    scriptRun();
    const before = h.model.requests.length;
    const started = h.okData<{ outcome: string; runId: string }>(await h.api.post(`/api/apps/${appId}/trigger`));
    assert.equal(started.outcome, 'started');
    await waitFor(
      async () => h.okData<{ runningCount: number }>(await h.api.get(`/api/apps/${appId}/state`)).runningCount === 0,
      60_000,
      'the run ends',
    );
    const state = h.okData<{ lastStatus: string; lastError: string | null }>(
      await h.api.get(`/api/apps/${appId}/state`),
    );
    assert.equal(state.lastStatus, 'ok', String(state.lastError));
    const last = h.model.requests.at(-1)!;
    const results = blocksOf(last)
      .filter((b) => b.type === 'tool_result')
      .map(textOf);
    assert.match(results[0]!, /^Created page: Account - http:\/\/127\.0\.0\.1/);
    assert.match(results[1]!, /heading "Welcome back, Ada"/, 'the run is signed in');
    assert.equal(results[2], `Navigated to: ${base}/order`);
    assert.match(results[3]!, /textbox "Customer"/);
    assert.equal(results[4], 'Successfully filled the element.');
    assert.equal(
      results[5],
      'Script executed successfully.\n```json\n' +
        JSON.stringify({ success: true, customer: 'Ada Lovelace', tag: 'order-1' }, null, 2) +
        '\n```',
    );
    assert.ok(h.model.requests.length > before);
    // The run's pages close with it (right after its last turn is recorded).
    await waitFor(
      async () => h.okData<unknown[]>(await h.api.get(`/api/browser/pages?spaceId=${space.id}`)).length === 0,
      15_000,
      "the run's pages close",
    );

    // Another space's profile has no sign-in: its chat, with the browser opened, sees "Please sign in".
    const conv = h.okData<{ id: string }>(await h.api.post(`/api/spaces/${other.id}/conversations`, { title: 'x' }));
    h.model.respond((req) => {
      const used = blocksOf(req).filter((b) => b.type === 'tool_use').length;
      if (used === 0)
        return {
          steps: [{ toolCall: { name: 'mcp__ai-browser__browser_navigate', input: { url: `${base}/account` } } }],
        };
      if (used === 1) return { steps: [{ toolCall: { name: 'mcp__ai-browser__browser_snapshot', input: {} } }] };
      return { steps: [{ text: 'Looked.' }] };
    });
    await h.turn(conv.id, () =>
      h.api.post('/api/agent/message', {
        spaceId: other.id,
        conversationId: conv.id,
        message: 'Check my account',
        aiBrowserEnabled: true,
      }),
    );
    // The chat's own last request (found by its message: the model server is every turn's), not
    // whatever reached the model last.
    const chatRequest = h.model.requests.filter((r) => JSON.stringify(r.body.messages).includes('Check my account'));
    const seen = blocksOf(chatRequest.at(-1)!)
      .filter((b) => b.type === 'tool_result')
      .map(textOf);
    assert.equal(seen.length, 2, `the chat's navigation and snapshot: ${JSON.stringify(seen)}`);
    assert.match(seen[1]!, /heading "Please sign in"/);
    // A chat's page stays for its next turn: listed, active, owned by the conversation.
    const pages = h.okData<Array<{ conversationId: string; active: boolean; owned: boolean; title: string }>>(
      await h.api.get(`/api/browser/pages?conversationId=${conv.id}`),
    );
    assert.deepEqual(
      pages.map((p) => [p.conversationId, p.active, p.owned, p.title]),
      [[conv.id, true, true, 'Account']],
    );
    const toolsets = h.okData<Array<{ id: string; open: boolean }>>(
      await h.api.post('/api/agent/toolsets/list', { spaceId: other.id, conversationId: conv.id }),
    );
    assert.deepEqual(toolsets.find((t) => t.id === 'ai-browser')?.open, true);
  });
});
