import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import type { BrowserScope } from '#core/browser/ai-browser.js';
import { BrowserService } from '#core/browser/browser.service.js';
import type { AppConfig, BrowserSettings } from '#core/config/app-config.js';
import type { AgentTool, ToolContext, ToolOutcome } from '#core/kernel/tool.js';
import { SystemClock } from '#core/ports/clock.port.js';
import { InMemoryBrowserProfiles } from '#infra/browser/in-memory-browser-profiles.js';
import { PlaywrightBrowserEngine } from '#infra/browser/playwright-browser-engine.js';
import { NodeFileStore } from '#infra/files/node-file-store.js';
import { browserSkipReason, CHROMIUM_PATH } from '#testing/browser.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { REPO_ROOT } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

/** A real skill of the public catalog, read from beside the repository (never copied into it). */
const SKILL_SOURCE = join(
  REPO_ROOT,
  '..',
  'shared',
  'reference',
  'dhp-catalog',
  'packages',
  'digital-humans',
  'x-publisher',
  'skills',
  'x-read-profile',
  'index.js',
);

/** The pages the browser visits, served on loopback by the test. */
function pages(req: http.IncomingMessage, res: http.ServerResponse, port: () => number): void {
  const html = (body: string, title = 'Test page', headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(`<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`);
  };
  const url = new URL(req.url ?? '/', 'http://x');
  switch (url.pathname) {
    case '/form':
      return html(
        `<h1>Sign up</h1>
        <label>Name <input id="name" type="text"></label>
        <label>Password <input id="pw" type="password"></label>
        <label>Short <input id="short" type="text" maxlength="3"></label>
        <label>Color <select id="color"><option value="r">Red</option><option value="b">Blue</option></select></label>
        <label>Attachment <input id="file" type="file"></label>
        <button onclick="document.getElementById('out').textContent = 'Submitted: ' + document.getElementById('name').value + ' / ' + document.getElementById('color').value + ' / ' + (document.getElementById('file').files[0]?.name ?? '-')">Submit</button>
        <button ondblclick="document.getElementById('out').textContent = 'Double clicked'">Twice</button>
        <button onmouseover="document.getElementById('out').textContent = 'Hovered'">Hover me</button>
        <p id="out" role="status">Nothing yet</p>`,
        'Form',
      );
    case '/delayed':
      return html(
        `<p>Loading</p><script>setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Ready now'; document.body.append(p); }, 800)</script>`,
        'Delayed',
      );
    case '/slow':
      setTimeout(() => html('<p>Finally</p>', 'Slow'), 4_000);
      return;
    case '/dialog':
      return html(`<script>alert('hello'); confirm('sure?');</script><p>After the dialog</p>`, 'Dialog');
    case '/file.txt':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-disposition': 'attachment; filename="report.txt"' });
      res.end('the report');
      return;
    case '/big.bin':
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename="big.bin"',
      });
      res.end(Buffer.alloc(64 * 1024));
      return;
    case '/download-page':
      return html(`<a href="/file.txt">Get the report</a>`, 'Downloads');
    case '/framed':
      return html(
        `<p>Outer</p><iframe src="http://127.0.0.2:${url.searchParams.get('port')}/inner"></iframe>`,
        'Framed',
      );
    case '/to-metadata':
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
      res.end();
      return;
    case '/login':
      if (req.method === 'POST') {
        res.writeHead(303, { location: '/private', 'set-cookie': 'session=s3cret-value; Path=/; HttpOnly' });
        res.end();
        return;
      }
      return html(`<form method="post" action="/login"><button>Sign in</button></form>`, 'Login');
    case '/private':
      return /session=s3cret-value/.test(req.headers.cookie ?? '')
        ? html('<p>Welcome back</p>', 'Private')
        : html('<p>Please sign in</p>', 'Private');
    case '/jack':
      return html(
        `<div data-testid="UserName">Jack Tester\n@jack</div>
         <div data-testid="UserDescription">Just testing</div>
         <a href="/jack/following">36 Following</a><a href="/jack/followers">1.2K Followers</a>
         <article data-testid="tweet"><a href="/jack/status/123"><time datetime="2026-01-01T00:00:00Z">Jan 1</time></a>
           <div data-testid="tweetText">hello world</div></article>`,
        'Jack (@jack)',
      );
    default:
      return html(`<p>port ${port()}</p>`);
  }
}

describe('AI browser tools against real Chromium', { skip: browserSkipReason() }, () => {
  let server: http.Server;
  let base: string;
  let workDir: string;
  let engine: PlaywrightBrowserEngine;
  let service: BrowserService;
  let events: RecordingEventBus;
  let profiles: InMemoryBrowserProfiles;
  let tools: AgentTool[];

  const settings = (allow: string[]): BrowserSettings => ({
    allow,
    block: [],
    executablePath: CHROMIUM_PATH ?? null,
    wsEndpoint: null,
    userAgent: null,
    maxPages: 20,
    downloadMaxBytes: 32 * 1024,
  });
  const scopeOf = (key: string, conversationId: string | null, profile = 'space-1'): BrowserScope => ({
    key,
    kind: 'chat',
    spaceId: profile,
    conversationId,
    appId: null,
    workDir,
    profile,
  });
  const serviceWith = (allow: string[]) =>
    new BrowserService(
      engine,
      profiles,
      new NodeFileStore({ trashDir: join(workDir, '..', 'trash') }),
      events,
      new SystemClock(),
      { browser: settings(allow) } as AppConfig,
    );
  const ctx = { signal: new AbortController().signal, toolUseId: 't' } as ToolContext;
  const callWith = async (
    set: AgentTool[],
    name: string,
    input: Record<string, unknown> = {},
  ): Promise<ToolOutcome> => {
    const tool = set.find((t) => t.name === `mcp__ai-browser__${name}`);
    assert.ok(tool, `tool ${name} exists`);
    return tool.run(input, ctx);
  };
  const call = (name: string, input: Record<string, unknown> = {}) => callWith(tools, name, input);
  const okText = async (name: string, input: Record<string, unknown> = {}): Promise<string> => {
    const out = await call(name, input);
    assert.equal(out.isError, false, `${name} failed: ${out.output}`);
    return out.output;
  };
  /** The uid of the first snapshot line with this role and name. */
  const uidOf = (snapshot: string, role: string, name: string): string => {
    const line = snapshot.split('\n').find((l) => l.includes(` ${role} "${name}"`));
    assert.ok(line, `no ${role} "${name}" in:\n${snapshot}`);
    return /uid=(\S+)/.exec(line)![1]!;
  };

  before(async () => {
    const root = mkdtempSync(join(tmpdir(), 'aib-'));
    workDir = join(root, 'space');
    mkdirSync(workDir);
    server = http.createServer((req, res) => pages(req, res, () => (server.address() as AddressInfo).port));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    events = new RecordingEventBus();
    profiles = new InMemoryBrowserProfiles();
    engine = new PlaywrightBrowserEngine(settings(['127.0.0.1']), profiles, { log: () => {}, warn: () => {} });
    service = serviceWith(['127.0.0.1']);
    tools = service.tools(scopeOf('conv:c1', 'c1'));
  });

  after(async () => {
    await service?.onModuleDestroy();
    await new Promise((resolve) => server?.close(resolve));
    if (workDir) rmSync(join(workDir, '..'), { recursive: true, force: true });
  });

  it('answers "No active browser page" before any navigation', async () => {
    assert.deepEqual(await call('browser_snapshot'), {
      output: 'No active browser page. Use browser_navigate first.',
      isError: true,
    });
    assert.equal(
      (await call('browser_click', { uid: 'snap_1_1' })).output,
      'No active browser page. Use browser_navigate first.',
    );
    assert.equal((await call('browser_hover', { uid: 'snap_1_1' })).output, 'No active browser page.');
    assert.equal((await call('browser_list_pages')).output, 'No browser pages are currently open.');
  });

  it('navigate creates a page, then navigates it; the active-view event fires once', async () => {
    const created = await okText('browser_navigate', { url: `${base}/form` });
    assert.equal(created, `Created page: Form - ${base}/form`);
    assert.equal(await okText('browser_navigate', { url: `${base}/delayed` }), `Navigated to: ${base}/delayed`);
    const active = events.on('ai-browser:active-view-changed');
    assert.equal(active.length, 1);
    assert.equal(active[0]!.conversationId, 'c1');
    assert.equal(active[0]!.owned, true);
  });

  it('wait_for finds text that appears later, and times out with the waited time', async () => {
    assert.equal(await okText('browser_wait_for', { text: 'Ready now', timeout: 5_000 }), 'Text found: "Ready now"');
    const missing = await call('browser_wait_for', { text: 'Never there', timeout: 1_000 });
    assert.equal(missing.isError, true);
    assert.match(missing.output, /^Timeout waiting for text: "Never there" \(waited \d+ms\)$/);
  });

  it('a slow page: navigation with a short timeout still answers (a half-loaded page is a page)', async () => {
    const out = await call('browser_navigate', { url: `${base}/slow`, timeout: 500 });
    assert.equal(out.isError, false, out.output);
    assert.match(out.output, /^Navigated to: /);
  });

  it('snapshot, fill (with read-back), select, click, double click, hover, press_key, upload', async () => {
    await okText('browser_navigate', { url: `${base}/form` });
    let snap = await okText('browser_snapshot');
    const lines = snap.split('\n');
    assert.equal(lines[0], '# Page: Form');
    assert.equal(lines[1], `URL: ${base}/form`);
    assert.equal(lines[2], '');
    assert.match(lines[3]!, /^uid=snap_\d+_0 RootWebArea "Form"/);
    assert.ok(
      lines.some((l) => /^ {2,}uid=snap_\d+_\d+ heading "Sign up" level="1"$/.test(l)),
      snap,
    );

    const name = uidOf(snap, 'textbox', 'Name');
    assert.equal(await okText('browser_fill', { uid: name, value: 'Ann' }), 'Successfully filled the element.');
    const short = await call('browser_fill', { uid: uidOf(snap, 'textbox', 'Short'), value: 'abcdef' });
    assert.equal(short.isError, true);
    assert.match(short.output, /^Filled snap_\d+_\d+, but the field reads "abc", not the requested "abcdef"\./);
    assert.equal(
      await okText('browser_fill', {
        elements: [
          { uid: uidOf(snap, 'textbox', 'Password'), value: 'hunter22' },
          { uid: uidOf(snap, 'combobox', 'Color'), value: 'Blue' },
        ],
      }),
      'Successfully filled 2 form fields.',
    );
    // A new snapshot (its uids replace the earlier ones): no password text in it.
    snap = await okText('browser_snapshot', { verbose: true });
    assert.doesNotMatch(snap, /hunter22/);
    writeFileSync(join(workDir, 'cv.txt'), 'my cv');
    assert.equal(
      await okText('browser_upload_file', { uid: uidOf(snap, 'button', 'Attachment'), filePath: 'cv.txt' }),
      'Uploaded 1 file: cv.txt',
    );
    const outside = await call('browser_upload_file', { uid: name, filePath: '/etc/passwd' });
    assert.equal(outside.isError, true);
    assert.match(outside.output, /outside the space's working folder/);
    assert.equal(
      (await call('browser_upload_file', { uid: name, filePath: 'nope.txt' })).output,
      `File(s) not found: ${join(workDir, 'nope.txt')}`,
    );

    assert.equal(
      await okText('browser_click', { uid: uidOf(snap, 'button', 'Submit') }),
      'Successfully clicked on the element.',
    );
    assert.equal(
      await okText('browser_wait_for', { text: 'Submitted: Ann / b / cv.txt', timeout: 3_000 }),
      'Text found: "Submitted: Ann / b / cv.txt"',
    );
    assert.equal(
      await okText('browser_click', { uid: uidOf(snap, 'button', 'Twice'), dblClick: true }),
      'Successfully double clicked on the element.',
    );
    await okText('browser_wait_for', { text: 'Double clicked', timeout: 3_000 });
    assert.equal(
      await okText('browser_hover', { uid: uidOf(snap, 'button', 'Hover me') }),
      'Successfully hovered over the element.',
    );
    await okText('browser_wait_for', { text: 'Hovered', timeout: 3_000 });
    assert.equal(await okText('browser_press_key', { key: 'Control+A' }), 'Successfully pressed key: Control+A');

    const stale = await call('browser_click', { uid: 'snap_0_999' });
    assert.deepEqual(stale, { output: 'Click failed on snap_0_999: Element not found: snap_0_999', isError: true });
  });

  it('a uid is valid only against the latest snapshot of the active page', async () => {
    const snap = await okText('browser_snapshot');
    const uid = uidOf(snap, 'button', 'Submit');
    await okText('browser_snapshot');
    assert.equal((await call('browser_click', { uid })).output, `Click failed on ${uid}: Element not found: ${uid}`);
  });

  it('snapshot and screenshot write their filePath inside the working folder only', async () => {
    const saved = await okText('browser_snapshot', { filePath: 'out/snap.txt' });
    assert.match(
      saved,
      new RegExp(`^Snapshot saved to: ${join(workDir, 'out/snap.txt')}\nPage: Form\nURL: .*/form\nElements: \\d+$`),
    );
    assert.match(readFileSync(join(workDir, 'out/snap.txt'), 'utf8'), /^# Page: Form/);
    const refused = await call('browser_snapshot', { filePath: '/tmp/elsewhere.txt' });
    assert.equal(refused.isError, true);
    const shot = await call('browser_screenshot', { filePath: 'shot.png' });
    assert.equal(shot.isError, false, shot.output);
    assert.equal(shot.output, `Screenshot of current viewport.\nSaved to: ${join(workDir, 'shot.png')}`);
    assert.equal(shot.images?.[0]?.mediaType, 'image/jpeg');
    assert.ok(readFileSync(join(workDir, 'shot.png')).subarray(1, 4).toString() === 'PNG');
    const snap = await okText('browser_snapshot');
    const element = await call('browser_screenshot', { uid: uidOf(snap, 'heading', 'Sign up') });
    assert.equal(element.output, `Screenshot of element "${uidOf(snap, 'heading', 'Sign up')}".`);
    assert.equal(
      (await call('browser_screenshot', { uid: 'x', fullPage: true })).output,
      'Cannot provide both uid and fullPage.',
    );
  });

  it('evaluate passes real elements and reports script errors', async () => {
    const snap = await okText('browser_snapshot');
    assert.equal(
      await okText('browser_evaluate', { function: '() => document.title' }),
      'Script result:\n```json\nForm\n```',
    );
    assert.equal(
      await okText('browser_evaluate', {
        function: '(el) => ({ tag: el.tagName, text: el.textContent })',
        args: [{ uid: uidOf(snap, 'heading', 'Sign up') }],
      }),
      'Script result:\n```json\n{\n  "tag": "H1",\n  "text": "Sign up"\n}\n```',
    );
    const thrown = await call('browser_evaluate', { function: '() => { throw new Error("boom") }' });
    assert.deepEqual(thrown, { output: 'Script error: Error: boom', isError: true });
  });

  it('browser_run: a skill of .claude/skills, the check order and texts, and the timeout', async () => {
    const skills = join(workDir, '.claude/skills/demo');
    mkdirSync(skills, { recursive: true });
    writeFileSync(
      join(skills, 'index.js'),
      '/* demo */\nasync (params) => ({ title: document.title, echo: params.word });\n',
    );
    assert.equal(
      await okText('browser_run', { file: '.claude/skills/demo/index.js', params: { word: 'hi' } }),
      'Script executed successfully.\n```json\n{\n  "title": "Form",\n  "echo": "hi"\n}\n```',
    );
    writeFileSync(join(workDir, 'n.js'), 'async () => 42');
    assert.equal(
      await okText('browser_run', { file: join(workDir, 'n.js') }),
      'Script executed successfully.\n```json\n42\n```',
    );
    const fail = async (input: Record<string, unknown>) => {
      const out = await call('browser_run', input);
      assert.equal(out.isError, true);
      return out.output;
    };
    assert.equal(
      await fail({ file: 'x.ts' }),
      'Script execution failed: Invalid file type: expected .js file, got ".ts".',
    );
    assert.equal(
      await fail({ file: '/tmp/.claude/skills/x.js' }),
      'Script execution failed: Path not allowed: "/tmp/.claude/skills/x.js". Scripts must be within a .claude/skills/ directory or the space working directory.',
    );
    const outsideDir = mkdtempSync(join(tmpdir(), 'aib-out-'));
    writeFileSync(join(outsideDir, 'evil.js'), '() => 1');
    symlinkSync(outsideDir, join(workDir, 'link'));
    assert.match(await fail({ file: 'link/evil.js' }), /^Script execution failed: Path not allowed: /);
    assert.equal(
      await fail({ file: 'missing.js' }),
      `Script execution failed: File not found: "${join(workDir, 'missing.js')}".`,
    );
    writeFileSync(join(workDir, 'empty.js'), ' ;\n');
    assert.equal(
      await fail({ file: 'empty.js' }),
      `Script execution failed: File is empty: "${join(workDir, 'empty.js')}".`,
    );
    writeFileSync(join(workDir, 'throws.js'), 'async () => { throw new Error("nope") }');
    assert.equal(await fail({ file: 'throws.js' }), 'Script execution failed: Error: nope');

    writeFileSync(join(workDir, 'busy.js'), '() => { for (;;) {} }');
    assert.equal(
      await fail({ file: 'busy.js', timeout: 1_000 }),
      'Script execution failed: browser_run timed out after 1000ms',
    );
    writeFileSync(join(workDir, 'hang.js'), 'async () => new Promise(() => {})');
    assert.equal(
      await fail({ file: 'hang.js', timeout: 10 }),
      'Script execution failed: browser_run timed out after 1000ms',
    );
    // The page is still usable after a script was stopped.
    assert.equal(await okText('browser_evaluate', { function: '() => 1 + 1' }), 'Script result:\n```json\n2\n```');
    rmSync(outsideDir, { recursive: true, force: true });
  });

  it(
    'browser_run of a catalog skill (x-read-profile) against a stub page',
    { skip: !existsSync(SKILL_SOURCE) && 'the catalog is not here' },
    async () => {
      const dir = join(workDir, '.claude/skills/x-read-profile');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'index.js'), readFileSync(SKILL_SOURCE));
      await okText('browser_navigate', { url: `${base}/jack` });
      const out = await okText('browser_run', {
        file: '.claude/skills/x-read-profile/index.js',
        params: { max_tweets: 5 },
      });
      const json = JSON.parse(/```json\n([\s\S]*)\n```/.exec(out)![1]!) as {
        success: boolean;
        profile: { handle: string };
        total: number;
      };
      assert.equal(json.success, true);
      assert.equal(json.profile.handle, 'jack');
      assert.equal(json.total, 1);
    },
  );

  it('tabs: new, list, select, close; the last page cannot be closed', async () => {
    // The active page shows /jack whichever tests ran before (the catalog skill's may be skipped).
    await okText('browser_navigate', { url: `${base}/jack` });
    const created = await okText('browser_tab', { action: 'new', url: `${base}/private` });
    assert.equal(created, `Created page: Private - ${base}/private`);
    assert.equal((await call('browser_tab', { action: 'new' })).output, 'url is required for action "new".');
    const list = await okText('browser_tab', { action: 'list' });
    assert.match(
      list,
      /^Open browser pages:\n\[0\] Jack \(@jack\) - .*\/jack\n\[1\] Private - .*\/private \(active\)$/,
    );
    assert.equal(await okText('browser_select_page', { pageIdx: 0 }), `Selected page [0]: Jack (@jack) - ${base}/jack`);
    assert.equal(
      (await call('browser_tab', { action: 'select', pageIdx: 5 })).output,
      'Invalid page index: 5. Valid range: 0-1',
    );
    assert.equal(await okText('browser_close_page', { pageIdx: 1 }), `Closed page [1]: Private - ${base}/private`);
    assert.equal(
      (await call('browser_tab', { action: 'close', pageIdx: 0 })).output,
      'The last open page cannot be closed.',
    );
    assert.equal(await okText('browser_new_page', { url: `${base}/form` }), `Created new page: Form - ${base}/form`);
  });

  it('dialogs are dismissed and the page goes on', async () => {
    await okText('browser_navigate', { url: `${base}/dialog` });
    assert.equal(
      await okText('browser_wait_for', { text: 'After the dialog', timeout: 5_000 }),
      'Text found: "After the dialog"',
    );
  });

  it('downloads: a page-initiated one and a direct one land in downloads/; the size cap holds', async () => {
    await okText('browser_navigate', { url: `${base}/download-page` });
    const snap = await okText('browser_snapshot');
    await okText('browser_click', { uid: uidOf(snap, 'link', 'Get the report') });
    const first = await okText('browser_download', { timeout: 10_000 });
    assert.match(
      first,
      new RegExp(
        `^Download completed:\nFile: report.txt\nPath: ${join(workDir, 'downloads', 'report.txt')}\nSize: 10 bytes`,
      ),
    );
    assert.equal(readFileSync(join(workDir, 'downloads/report.txt'), 'utf8'), 'the report');
    const direct = await okText('browser_download', { url: `${base}/file.txt`, timeout: 10_000 });
    assert.match(direct, /^Download completed:\nFile: report \(1\)\.txt\n/);
    const big = await call('browser_download', { url: `${base}/big.bin`, timeout: 10_000 });
    assert.equal(big.isError, true);
    assert.match(big.output, /^Download failed:[\s\S]*larger than the download limit/);
    assert.equal(
      (await call('browser_download', { url: 'file:///etc/passwd' })).output,
      'Download blocked: protocol "file:" not allowed',
    );
    assert.equal((await call('browser_download', { url: 'nonsense' })).output, 'Download blocked: invalid URL');
    assert.equal(
      (await call('browser_download', { url: 'http://169.254.169.254/x' })).output,
      'Download blocked by browser policy: http://169.254.169.254/x',
    );
  });

  it('inspect lists console messages and network requests', async () => {
    await okText('browser_evaluate', { function: '() => console.log("hello from the page")' });
    assert.match(await okText('browser_inspect', { target: 'console' }), /\[id=\d+\] \[log\] hello from the page/);
    const network = await okText('browser_inspect', { target: 'network', resourceTypes: ['document'] });
    assert.match(network, /^Network requests \(1-\d+ of \d+\):\n\[id=\d+\] GET 200 document http/);
    const id = Number(/\[id=(\d+)\]/.exec(network)![1]);
    assert.match(
      await okText('browser_inspect', { target: 'network', id }),
      new RegExp(`^Request reqid=${id}\nGET http`),
    );
    assert.equal(
      (await call('browser_inspect', { target: 'console', id: 999999 })).output,
      'Console message not found: msgid=999999',
    );
  });

  it('a login sets a cookie the profile keeps; turnEnded saves it (no cookie value is ever shown)', async () => {
    await okText('browser_navigate', { url: `${base}/login` });
    const snap = await okText('browser_snapshot');
    await okText('browser_click', { uid: uidOf(snap, 'button', 'Sign in') });
    await okText('browser_wait_for', { text: 'Welcome back', timeout: 5_000 });
    const net = await okText('browser_inspect', { target: 'network' });
    const postId = Number(/\[id=(\d+)\] POST/.exec(net)![1]);
    const detail = await okText('browser_inspect', { target: 'network', id: postId });
    assert.doesNotMatch(detail, /s3cret-value/);
    await service.turnEnded(scopeOf('conv:c1', 'c1'));
    assert.deepEqual(await profiles.cookieDomains('space-1'), ['127.0.0.1']);
  });

  it('policy: a redirect to the metadata address and a frame of an internal address are refused; with an empty allow-list loopback is refused too', async () => {
    const redirected = await call('browser_navigate', { url: `${base}/to-metadata` });
    assert.equal(redirected.isError, true);
    assert.equal(redirected.output, 'Navigation failed: Navigation to "169.254.169.254" blocked by browser policy');
    assert.equal(
      (await call('browser_navigate', { url: 'file:///etc/passwd' })).output,
      'Navigation failed: Navigation to "file:/etc/passwd" blocked by browser policy',
    );

    // A frame's document is checked too: 127.0.0.2 is not on the allow-list.
    const hits: string[] = [];
    const other = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('internal');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.2', resolve));
    try {
      const otherPort = (other.address() as AddressInfo).port;
      await okText('browser_navigate', { url: `${base}/framed?port=${otherPort}` });
      await okText('browser_wait_for', { text: 'Outer', timeout: 5_000 });
      await okText('browser_evaluate', { function: '() => new Promise((r) => setTimeout(r, 300))' });
      assert.deepEqual(hits, [], 'the internal server saw no request');
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }

    const strict = serviceWith([]);
    const strictTools = strict.tools(scopeOf('run:r1', null, 'space-2'));
    const blocked = await callWith(strictTools, 'browser_navigate', { url: `${base}/form` });
    assert.deepEqual(blocked, {
      output: 'Failed to create page: Navigation to "127.0.0.1" blocked by browser policy',
      isError: true,
    });
    const local = await callWith(strictTools, 'browser_navigate', { url: 'http://localhost:9/' });
    assert.equal(local.output, 'Failed to create page: Navigation to "localhost" blocked by browser policy');
    await strict.release('run:r1');
  });

  it('the live view: frames out, input in; while a person controls the page the tools wait', async () => {
    await okText('browser_navigate', { url: `${base}/form` });
    const page = (await service.livePages({ conversationId: 'c1' })).find((p) => p.active);
    assert.ok(page, 'the conversation has an active page');
    const frames: number[] = [];
    let gotFrame: () => void = () => {};
    const firstFrame = new Promise<void>((resolve) => (gotFrame = resolve));
    const watch = await service.watch(page.viewId, {
      frame: (f) => {
        frames.push(f.seq);
        gotFrame();
      },
      ended: () => {},
    });
    assert.ok(watch, 'the page can be watched');
    // Something to paint, so a frame comes even on a still page.
    await okText('browser_evaluate', { function: '() => { document.body.style.background = "#eef"; }' });
    await Promise.race([firstFrame, new Promise((r) => setTimeout(r, 15_000))]);
    assert.ok(frames.length > 0, 'a frame arrived');
    await watch.input({ type: 'ack', seq: frames[0]! });
    await watch.input({ type: 'mouse', event: 'mouseMoved', x: 10, y: 10 });
    assert.deepEqual(await call('browser_snapshot'), {
      output: 'A person is controlling this page; wait and retry',
      isError: true,
    });
    await watch.close();
    const after = await call('browser_snapshot');
    assert.equal(after.isError, false, after.output);
  });

  it("a page opened on a profile while its last page's context is being saved keeps working", async () => {
    const options = {
      profile: 'closing-race',
      device: 'pc' as const,
      downloadDir: null,
      downloadMaxBytes: 0,
      checkNavigation: async () => null,
    };
    const first = await engine.openPage(options);
    const save = profiles.save.bind(profiles);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let saving = false;
    profiles.save = async (profile, state) => {
      if (profile === options.profile) {
        saving = true;
        await held;
      }
      return save(profile, state);
    };
    try {
      // Another run of the profile takes its context just as the last page of it closes.
      const secondOpening = engine.openPage(options);
      await first.close();
      const second = await secondOpening;
      await waitFor(() => saving, 10_000, "the closed page's context is being saved");
      release();
      await new Promise((r) => setTimeout(r, 500));
      await second.navigate(`${base}/`, 10_000);
      assert.equal(second.isClosed(), false, 'the page opened meanwhile is still open');
      await second.close();
    } finally {
      release();
      profiles.save = save;
    }
  });

  it('sign-in: openLogin opens the space profile, finishLogin saves it and closes the page', async () => {
    const { viewId } = await service.openLogin('space-3', `${base}/login`);
    const watch = await service.watch(viewId, { frame: () => {}, ended: () => {} });
    assert.ok(watch);
    await watch.close();
    assert.deepEqual(await service.finishLogin(viewId), { saved: true });
    assert.equal(await service.watch(viewId, { frame: () => {}, ended: () => {} }), null);
  });

  it('a remote Playwright browser server (SVC_BROWSER_WS_ENDPOINT) drives the same tools, policy included', async () => {
    const remote = await chromium.launchServer({
      executablePath: CHROMIUM_PATH,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    const remoteEngine = new PlaywrightBrowserEngine(
      { ...settings(['127.0.0.1']), executablePath: null, wsEndpoint: remote.wsEndpoint() },
      profiles,
      { log: () => {}, warn: () => {} },
    );
    const remoteService = new BrowserService(
      remoteEngine,
      profiles,
      new NodeFileStore({ trashDir: join(workDir, '..', 'trash') }),
      events,
      new SystemClock(),
      { browser: settings(['127.0.0.1']) } as AppConfig,
    );
    try {
      const set = remoteService.tools(scopeOf('run:remote', null, 'space-remote'));
      assert.equal(
        (await callWith(set, 'browser_navigate', { url: `${base}/form` })).output,
        `Created page: Form - ${base}/form`,
      );
      assert.match((await callWith(set, 'browser_snapshot')).output, /heading "Sign up"/);
      assert.equal(
        (await callWith(set, 'browser_navigate', { url: `${base}/to-metadata` })).output,
        'Navigation failed: Navigation to "169.254.169.254" blocked by browser policy',
      );
    } finally {
      await remoteService.onModuleDestroy();
      await remote.close();
    }
  });

  it('a browser that dies is started again by the next page; the tool in between answers an error', async () => {
    const set = service.tools(scopeOf('run:crash', null, 'space-crash'));
    await callWith(set, 'browser_navigate', { url: `${base}/form` });
    const browser = await (engine as unknown as { browser: Promise<import('playwright-core').Browser> }).browser;
    await browser.close();
    assert.equal(
      (await callWith(set, 'browser_snapshot')).output,
      'No active browser page. Use browser_navigate first.',
    );
    assert.equal(
      (await callWith(set, 'browser_navigate', { url: `${base}/form` })).output,
      `Created page: Form - ${base}/form`,
    );
    await service.release('run:crash');
  });

  it('stop and release: a page of another conversation is refused; release closes the pages', async () => {
    // The page of c1 went with the browser of the test before: navigate opens a fresh one.
    await okText('browser_navigate', { url: `${base}/form` });
    const [page] = await service.livePages({ conversationId: 'c1' });
    assert.deepEqual(await service.stopPage(page!.viewId, 'other'), { stopped: false, reason: 'not-owned' });
    await service.release('conv:c1');
    assert.deepEqual(await service.livePages({ conversationId: 'c1' }), []);
    assert.ok(events.on('ai-browser:view-gone').length >= 1);
    assert.deepEqual(events.on('ai-browser:conversation-released'), [{ conversationId: 'c1' }]);
  });
});
