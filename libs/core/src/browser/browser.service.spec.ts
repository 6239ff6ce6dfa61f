import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { AppConfig } from '../config/app-config.js';
import type { AgentTool, ToolContext, ToolOutcome } from '../kernel/tool.js';
import { SystemClock } from '../ports/clock.port.js';
import { FakeClock } from '#testing/fakes.js';
import { ax, FakeBrowserEngine } from '#testing/fake-browser-engine.js';
import { FakeFileStore } from '#testing/fake-files.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import type { BrowserProfiles, BrowserScope, BrowserStorageState } from './ai-browser.js';
import { BrowserService } from './browser.service.js';
import { loadRunScript, runTimeout } from './browser-run.js';

const WORK = '/spaces/s1';
const HOME = 'https://shop.example/';
const CART = 'https://shop.example/cart';

class RecordingProfiles implements BrowserProfiles {
  readonly saved: Array<{ profile: string; state: BrowserStorageState }> = [];
  async load(): Promise<BrowserStorageState | null> {
    return null;
  }
  async save(profile: string, state: BrowserStorageState): Promise<void> {
    this.saved.push({ profile, state });
  }
  async cookieDomains(): Promise<string[]> {
    return [];
  }
}

describe('BrowserService over a fake engine', () => {
  let engine: FakeBrowserEngine;
  let files: FakeFileStore;
  let events: RecordingEventBus;
  let profiles: RecordingProfiles;
  let service: BrowserService;
  let tools: AgentTool[];
  const scope: BrowserScope = {
    key: 'conv:c1',
    kind: 'chat',
    spaceId: 's1',
    conversationId: 'c1',
    appId: null,
    workDir: WORK,
    profile: 's1',
  };
  const ctx = { signal: new AbortController().signal, toolUseId: 't' } as ToolContext;
  const call = (name: string, input: Record<string, unknown> = {}): Promise<ToolOutcome> =>
    tools.find((t) => t.name === `mcp__ai-browser__${name}`)!.run(input, ctx);
  const text = async (name: string, input: Record<string, unknown> = {}) => (await call(name, input)).output;

  beforeEach(() => {
    engine = new FakeBrowserEngine();
    engine.site.set(HOME, {
      title: 'Shop',
      nodes: ax('RootWebArea', 'Shop', 1, [...ax('button', 'Buy', 2), ...ax('textbox', 'Qty', 3)]),
    });
    engine.site.set(CART, { title: 'Cart', nodes: ax('RootWebArea', 'Cart', 10, ax('link', 'Back', 11)) });
    engine.hosts.set('shop.example', ['93.184.216.34']);
    files = new FakeFileStore().addFolder(WORK);
    events = new RecordingEventBus();
    profiles = new RecordingProfiles();
    const config = { browser: { allow: [], block: [], maxPages: 3, downloadMaxBytes: 1000 } } as unknown as AppConfig;
    service = new BrowserService(engine, profiles, files, events, new SystemClock(), config);
    tools = service.tools(scope);
  });

  it('offers the 14 tools and the legacy names as mcp__ai-browser__*', () => {
    assert.deepEqual(tools.map((t) => t.name.replace('mcp__ai-browser__', '')).sort(), [
      'browser_click',
      'browser_close_page',
      'browser_download',
      'browser_drag',
      'browser_evaluate',
      'browser_fill',
      'browser_fill_form',
      'browser_hover',
      'browser_inspect',
      'browser_list_pages',
      'browser_navigate',
      'browser_new_page',
      'browser_press_key',
      'browser_resize',
      'browser_run',
      'browser_screenshot',
      'browser_select_page',
      'browser_snapshot',
      'browser_tab',
      'browser_upload_file',
      'browser_wait',
      'browser_wait_for',
    ]);
  });

  it('the no-page texts: the long one for click/snapshot/run/download/inspect, the short one for the rest', async () => {
    for (const name of ['browser_click', 'browser_snapshot', 'browser_run', 'browser_download', 'browser_inspect']) {
      assert.equal(
        await text(name, { uid: 'x', file: 'a.js', target: 'console' }),
        'No active browser page. Use browser_navigate first.',
        name,
      );
    }
    for (const name of [
      'browser_fill',
      'browser_hover',
      'browser_press_key',
      'browser_upload_file',
      'browser_screenshot',
      'browser_evaluate',
    ]) {
      assert.equal(
        await text(name, { uid: 'x', value: 'v', key: 'Enter', filePath: 'a.txt', function: '() => 1' }),
        'No active browser page.',
        name,
      );
    }
  });

  it('navigate: creates (pc, then h5 in a new page), navigates, fails with the original texts', async () => {
    assert.equal(await text('browser_navigate', { url: 'shop.example/' }), `Created page: Shop - ${HOME}`);
    assert.equal(await text('browser_navigate', { url: CART }), `Navigated to: ${CART}`);
    assert.equal(
      await text('browser_navigate', { url: HOME, device: 'h5' }),
      `Created page [H5 mobile mode]: Shop - ${HOME}`,
    );
    assert.equal(engine.pages.length, 2);
    assert.equal(engine.pages[1]!.device, 'h5');
    const failed = await call('browser_navigate', { url: 'https://nowhere.example/' });
    assert.deepEqual(failed, {
      output: 'Navigation failed: net::ERR_NAME_NOT_RESOLVED at https://nowhere.example/',
      isError: true,
    });
    assert.equal(
      await text('browser_navigate', { url: 'http://10.0.0.1/' }),
      'Navigation failed: Navigation to "10.0.0.1" blocked by browser policy',
    );
    const changed = events.on('ai-browser:active-view-changed');
    assert.equal(changed.length, 2);
    assert.deepEqual(Object.keys(changed[0]!).sort(), ['conversationId', 'owned', 'spaceId', 'title', 'url', 'viewId']);
  });

  it('snapshot uids address elements; stale ones, or those of another page, are not found', async () => {
    await call('browser_navigate', { url: HOME });
    const snap = await text('browser_snapshot');
    assert.match(
      snap,
      /^# Page: Shop\nURL: https:\/\/shop\.example\/\n\nuid=snap_(\d+)_0 RootWebArea "Shop"\n {2}uid=snap_\1_1 button "Buy"\n {2}uid=snap_\1_2 textbox "Qty"$/,
    );
    const n = /snap_(\d+)_0/.exec(snap)![1];
    assert.equal(await text('browser_click', { uid: `snap_${n}_1` }), 'Successfully clicked on the element.');
    assert.equal(
      await text('browser_click', { uid: `snap_${n}_1`, dblClick: true }),
      'Successfully double clicked on the element.',
    );
    assert.equal(
      await text('browser_click', { uid: `snap_${n}_1`, dragTo: `snap_${n}_2` }),
      'Successfully dragged element to target.',
    );
    assert.equal(
      await text('browser_drag', { from_uid: `snap_${n}_1`, to_uid: `snap_${n}_2` }),
      'Successfully dragged element to target.',
    );
    assert.equal(await text('browser_hover', { uid: `snap_${n}_1` }), 'Successfully hovered over the element.');
    assert.equal(await text('browser_fill', { uid: `snap_${n}_2`, value: '2' }), 'Successfully filled the element.');
    assert.equal(await text('browser_press_key', { key: 'Enter' }), 'Successfully pressed key: Enter');
    assert.deepEqual(engine.actions, [
      'click 2 x1',
      'click 2 x2',
      'drag 2 3',
      'drag 2 3',
      'hover 2',
      'fill 3 2',
      'key Enter',
    ]);
    await call('browser_tab', { action: 'new', url: CART });
    assert.equal(
      await text('browser_click', { uid: `snap_${n}_1` }),
      `Click failed on snap_${n}_1: Element not found: snap_${n}_1`,
    );
  });

  it('fill: read-back mismatches, passwords by length only, unreadable elements, batches', async () => {
    await call('browser_navigate', { url: HOME });
    const snap = await text('browser_snapshot');
    const uid = /uid=(\S+) textbox/.exec(snap)![1]!;
    engine.fillReadBack = () => ({ kind: 'field', value: 'abc', secret: false });
    const short = await call('browser_fill', { uid, value: 'abcdef' });
    assert.equal(short.isError, true);
    assert.match(short.output, new RegExp(`^Filled ${uid}, but the field reads "abc", not the requested "abcdef"\\.`));
    engine.fillReadBack = () => ({ kind: 'field', value: 'hunter', secret: true });
    const secret = await call('browser_fill', { uid, value: 'hunter22' });
    assert.match(secret.output, /holds 6 characters, not the requested 8/);
    assert.doesNotMatch(secret.output, /hunter/);
    engine.fillReadBack = () => ({ kind: 'unreadable' });
    const unreadable = await call('browser_fill', { uid, value: 'x' });
    assert.equal(unreadable.isError, false);
    assert.match(
      unreadable.output,
      /^Typed into .*, but this element has no value to read back\. Check it with browser_snapshot before submitting\.$/,
    );
    engine.fillReadBack = () => ({ kind: 'focus-elsewhere' });
    assert.equal(
      await text('browser_fill', { uid, value: 'x' }),
      `Fill failed on ${uid}: focus stayed on another element, so nothing was typed`,
    );
    engine.fillReadBack = (_n, v) => ({ kind: 'field', value: v, secret: false });
    assert.equal(
      await text('browser_fill_form', {
        elements: [
          { uid, value: 'a' },
          { uid, value: 'b' },
        ],
      }),
      'Successfully filled 2 form fields.',
    );
    const partial = await call('browser_fill', {
      elements: [
        { uid, value: 'a' },
        { uid: 'snap_0_0', value: 'b' },
      ],
    });
    assert.equal(partial.isError, false);
    assert.match(
      partial.output,
      /^Partially filled form \(1\/2 succeeded\)\.\nErrors:\n- snap_0_0: Fill failed on snap_0_0: Element not found: snap_0_0$/,
    );
    assert.equal(await text('browser_fill', {}), 'Provide uid and value, or elements: [{uid, value}].');
  });

  it('tabs: list, select, close with the original texts', async () => {
    assert.equal(await text('browser_tab', { action: 'list' }), 'No browser pages are currently open.');
    await call('browser_new_page', { url: HOME });
    assert.equal(await text('browser_tab', { action: 'new', url: CART }), `Created page: Cart - ${CART}`);
    assert.equal(
      await text('browser_list_pages'),
      `Open browser pages:\n[0] Shop - ${HOME}\n[1] Cart - ${CART} (active)`,
    );
    assert.equal(await text('browser_tab', { action: 'select' }), 'pageIdx is required for action "select".');
    assert.equal(
      await text('browser_tab', { action: 'select', pageIdx: 2 }),
      'Invalid page index: 2. Valid range: 0-1',
    );
    assert.equal(await text('browser_tab', { action: 'select', pageIdx: 0 }), `Selected page [0]: Shop - ${HOME}`);
    assert.equal(await text('browser_tab', { action: 'close', pageIdx: 0 }), `Closed page [0]: Shop - ${HOME}`);
    assert.equal(await text('browser_list_pages'), `Open browser pages:\n[0] Cart - ${CART} (active)`);
    assert.equal(await text('browser_close_page', { pageIdx: 0 }), 'The last open page cannot be closed.');
    assert.equal(events.on('ai-browser:view-gone').length, 1);
  });

  it('the page cap refuses a new page with a clear error', async () => {
    for (let i = 0; i < 3; i++) await call('browser_tab', { action: 'new', url: HOME });
    const refused = await call('browser_tab', { action: 'new', url: HOME });
    assert.equal(refused.isError, true);
    assert.match(
      refused.output,
      /^Failed to create page: too many browser pages are open on this server \(at most 3\)/,
    );
  });

  it('over the memory budget a new page first closes the least recently used idle page of another scope, then is refused', async () => {
    const MB = 1024 * 1024;
    engine.bytesPerPage = 400 * MB;
    const budgeted = new BrowserService(engine, profiles, files, events, new SystemClock(), {
      browser: { allow: [], block: [], maxPages: 10, downloadMaxBytes: 1000, memoryBudgetMb: 1000 },
    } as unknown as AppConfig);
    const scoped = (key: string) => budgeted.tools({ ...scope, key, conversationId: key });
    const navigate = (set: AgentTool[]) =>
      set.find((t) => t.name === 'mcp__ai-browser__browser_navigate')!.run({ url: HOME }, ctx);
    const [a, b, c] = [scoped('conv:a'), scoped('conv:b'), scoped('conv:c')];
    assert.equal((await navigate(a)).isError, false);
    assert.equal((await navigate(b)).isError, false);
    assert.equal((await navigate(c)).isError, false, '800 MB used: under the budget');
    // 1200 MB: c's page needs room; a's page, the oldest idle one, goes.
    const d = scoped('conv:d');
    assert.equal((await navigate(d)).isError, false);
    assert.deepEqual((await budgeted.livePages({})).map((p) => p.conversationId).sort(), [
      'conv:b',
      'conv:c',
      'conv:d',
    ]);
    // Every other page watched by a person: none may go, and the new one is refused.
    for (const page of await budgeted.livePages({})) {
      await budgeted.watch(page.viewId, { frame: () => undefined, ended: () => undefined });
    }
    const refused = await navigate(scoped('conv:e'));
    assert.equal(refused.isError, true);
    assert.match(refused.output, /memory budget on this server \(1000 MB\) is used up/);
    await budgeted.onModuleDestroy();
  });

  it('browser_run: success, failure and timeout texts; evaluate texts; screenshot carries an image', async () => {
    await call('browser_navigate', { url: HOME });
    files.addFile(`${WORK}/.claude/skills/s/index.js`, 'async (p) => p;\n');
    engine.script = async (_source, params) => ({ ok: true, value: params });
    assert.equal(
      await text('browser_run', { file: '.claude/skills/s/index.js', params: { a: 1 } }),
      'Script executed successfully.\n```json\n{\n  "a": 1\n}\n```',
    );
    engine.script = async () => ({ ok: true, value: undefined });
    assert.equal(
      await text('browser_run', { file: '.claude/skills/s/index.js' }),
      'Script executed successfully.\n```json\nundefined\n```',
    );
    engine.script = async () => ({ ok: false, error: 'TypeError: x is not a function' });
    assert.equal(
      await text('browser_run', { file: '.claude/skills/s/index.js' }),
      'Script execution failed: TypeError: x is not a function',
    );
    engine.script = async () => ({ timedOut: true });
    assert.equal(
      await text('browser_run', { file: '.claude/skills/s/index.js', timeout: 999_999 }),
      'Script execution failed: browser_run timed out after 120000ms',
    );
    engine.script = async () => ({ ok: true, value: 'hi' });
    assert.equal(await text('browser_evaluate', { function: '() => "hi"' }), 'Script result:\n```json\nhi\n```');
    engine.script = async () => ({ ok: false, error: 'ReferenceError: y is not defined' });
    assert.equal(
      await text('browser_evaluate', { function: '() => y' }),
      'Script error: ReferenceError: y is not defined',
    );
    const shot = await call('browser_screenshot', {});
    assert.equal(shot.output, 'Screenshot of current viewport.');
    assert.deepEqual(shot.images, [{ mediaType: 'image/jpeg', data: Buffer.from('fake-image').toString('base64') }]);
    assert.equal(await text('browser_screenshot', { fullPage: true }), 'Screenshot of full page.');
  });

  it('a crashed page is forgotten: the next tool says there is no page, the next navigate opens a fresh one', async () => {
    await call('browser_navigate', { url: HOME });
    engine.pages[0]!.crash();
    assert.equal(await text('browser_snapshot'), 'No active browser page. Use browser_navigate first.');
    assert.equal(await text('browser_navigate', { url: HOME }), `Created page: Shop - ${HOME}`);
  });

  it('live view: frames go to the viewer, input reaches the page and holds the tools off', async () => {
    await call('browser_navigate', { url: HOME });
    const [live] = await service.livePages({ spaceId: 's1' });
    assert.deepEqual(live, {
      viewId: live!.viewId,
      conversationId: 'c1',
      spaceId: 's1',
      url: HOME,
      title: 'Shop',
      owned: true,
      active: true,
    });
    const frames: number[] = [];
    const watch = (await service.watch(live!.viewId, { frame: (f) => frames.push(f.seq), ended: () => {} }))!;
    let acked = 0;
    engine.pages[0]!.screencast!({ data: 'AAAA', width: 10, height: 10, ack: async () => void acked++ });
    assert.deepEqual(frames, [1]);
    await watch.input({ type: 'ack', seq: 1 });
    assert.equal(acked, 1);
    assert.equal((await call('browser_snapshot')).isError, false, 'watching alone does not hold the tools off');
    await watch.input({ type: 'text', text: 'hello' });
    assert.deepEqual(engine.pages[0]!.inputs, [{ type: 'text', text: 'hello' }]);
    assert.deepEqual(await call('browser_snapshot'), {
      output: 'A person is controlling this page; wait and retry',
      isError: true,
    });
    await watch.close();
    assert.equal((await call('browser_snapshot')).isError, false);
  });

  it('live view: a view closed while another opens (the page shown again) leaves the screencast running', async () => {
    await call('browser_navigate', { url: HOME });
    const [live] = await service.livePages({ spaceId: 's1' });
    const a = (await service.watch(live!.viewId, { frame: () => {}, ended: () => {} }))!;
    const frames: number[] = [];
    const [, b] = await Promise.all([
      a.close(),
      service.watch(live!.viewId, { frame: (f) => frames.push(f.seq), ended: () => {} }),
    ]);
    assert.ok(engine.pages[0]!.screencast, 'the newcomer keeps the screencast');
    engine.pages[0]!.screencast!({ data: 'AAAA', width: 10, height: 10, ack: async () => undefined });
    assert.deepEqual(frames, [1]);
    await b!.close();
    assert.equal(engine.pages[0]!.screencast, null, 'stopped once nobody watches');
  });

  it('live view: a viewer joining a running screencast gets the last frame at once (a still page sends no new one)', async () => {
    await call('browser_navigate', { url: HOME });
    const [live] = await service.livePages({ spaceId: 's1' });
    const first: number[] = [];
    const second: number[] = [];
    const a = (await service.watch(live!.viewId, { frame: (f) => first.push(f.seq), ended: () => {} }))!;
    engine.pages[0]!.screencast!({ data: 'AAAA', width: 10, height: 10, ack: async () => undefined });
    const b = (await service.watch(live!.viewId, { frame: (f) => second.push(f.seq), ended: () => {} }))!;
    assert.deepEqual(first, [1]);
    assert.deepEqual(second, [1], 'the late viewer sees the screen as it is');
    engine.pages[0]!.screencast!({ data: 'BBBB', width: 10, height: 10, ack: async () => undefined });
    assert.deepEqual(
      [first, second],
      [
        [1, 2],
        [1, 2],
      ],
    );
    await a.close();
    await b.close();
  });

  it('stop refuses pages of other conversations; turnEnded saves the profile; release closes and announces', async () => {
    await call('browser_navigate', { url: HOME });
    const [live] = await service.livePages({ conversationId: 'c1' });
    assert.deepEqual(await service.stopPage(live!.viewId, 'c2'), { stopped: false, reason: 'not-owned' });
    assert.deepEqual(await service.stopPage('nope', 'c1'), { stopped: false, reason: 'not-owned' });
    await service.turnEnded(scope);
    assert.deepEqual(
      profiles.saved.map((s) => s.profile),
      ['s1'],
    );
    await service.release(scope.key);
    assert.equal(engine.pages[0]!.isClosed(), true);
    assert.deepEqual(events.on('ai-browser:conversation-released'), [{ conversationId: 'c1' }]);
    assert.deepEqual(events.on('ai-browser:view-gone'), [{ viewId: live!.viewId }]);
  });

  it('sign-in: a page in the space profile, saved and closed at finish; a blocked address is refused', async () => {
    const { viewId } = await service.openLogin('s9', HOME);
    assert.equal(engine.pages[0]!.options.profile, 's9');
    assert.deepEqual(await service.livePages({}), [], 'sign-in pages belong to no conversation');
    assert.deepEqual(await service.finishLogin(viewId), { saved: true });
    assert.deepEqual(
      profiles.saved.map((s) => s.profile),
      ['s9'],
    );
    await assert.rejects(service.finishLogin(viewId), /No such sign-in session/);
    await assert.rejects(service.openLogin('s9', 'http://127.0.0.1/'), /blocked by browser policy/);
  });
});

describe('BrowserService lifetimes', () => {
  it('idle pages are reaped after 30 minutes, not while watched; a takeover holds the tools off for 5 s', async () => {
    const engine = new FakeBrowserEngine();
    engine.site.set(HOME, { title: 'Shop', nodes: ax('RootWebArea', 'Shop', 1) });
    const clock = new FakeClock();
    const config = { browser: { allow: [], block: [], maxPages: 5, downloadMaxBytes: 1000 } } as unknown as AppConfig;
    const service = new BrowserService(
      engine,
      new RecordingProfiles(),
      new FakeFileStore().addFolder(WORK),
      new RecordingEventBus(),
      clock,
      config,
    );
    const scope = (key: string): BrowserScope => ({
      key,
      kind: 'run',
      spaceId: 's1',
      conversationId: null,
      appId: 'a1',
      workDir: WORK,
      profile: 's1',
    });
    const ctx = { signal: new AbortController().signal, toolUseId: 't' } as ToolContext;
    const run = (key: string, name: string, input: Record<string, unknown> = {}) =>
      service
        .tools(scope(key))
        .find((t) => t.name === `mcp__ai-browser__${name}`)!
        .run(input, ctx);
    await run('run:a', 'browser_navigate', { url: HOME });
    await run('run:b', 'browser_navigate', { url: HOME });
    const [, watched] = engine.pages;
    assert.deepEqual(await service.livePages({}), [], 'runs without a conversation list nothing');
    // Run b's page is the second one this process opened.
    const ids = [...(service as unknown as { pages: Map<string, unknown> }).pages.keys()];
    const watch = (await service.watch(ids[1]!, { frame: () => {}, ended: () => {} }))!;
    await watch.input({ type: 'mouse', event: 'mouseMoved', x: 1, y: 1 });
    assert.equal((await run('run:b', 'browser_snapshot')).output, 'A person is controlling this page; wait and retry');
    clock.advance(5_001);
    assert.equal((await run('run:b', 'browser_snapshot')).isError, false);
    clock.advance(30 * 60_000 + 1);
    await service.reapIdle();
    assert.equal(engine.pages[0]!.isClosed(), true, 'the idle page is closed');
    assert.equal(watched!.isClosed(), false, 'the watched page stays');
    assert.equal(
      (await run('run:a', 'browser_snapshot')).output,
      'No active browser page. Use browser_navigate first.',
    );
  });
});

describe('browser_run scripts', () => {
  const files = new FakeFileStore()
    .addFile(`${WORK}/.claude/skills/x/index.js`, '/* doc */\nasync (params) => params;;\n')
    .addFile(`${WORK}/scripts/empty.js`, '  ;  \n')
    .addFile('/elsewhere/.claude/skills/y.js', '() => 1');

  it('resolves relative and absolute paths inside the working folder and trims the source', async () => {
    assert.deepEqual(await loadRunScript('.claude/skills/x/index.js', WORK, files), {
      source: '/* doc */\nasync (params) => params',
    });
    assert.deepEqual(await loadRunScript(`${WORK}/.claude/skills/x/index.js`, WORK, files), {
      source: '/* doc */\nasync (params) => params',
    });
  });

  it('checks in order: .js, inside the folder, present, not empty', async () => {
    assert.deepEqual(await loadRunScript('a.mjs', WORK, files), {
      error: 'Invalid file type: expected .js file, got ".mjs".',
    });
    assert.deepEqual(await loadRunScript('noext', WORK, files), {
      error: 'Invalid file type: expected .js file, got "".',
    });
    assert.deepEqual(await loadRunScript('/elsewhere/.claude/skills/y.js', WORK, files), {
      error:
        'Path not allowed: "/elsewhere/.claude/skills/y.js". Scripts must be within a .claude/skills/ directory or the space working directory.',
    });
    assert.deepEqual(await loadRunScript('../../elsewhere/.claude/skills/y.js', WORK, files), {
      error:
        'Path not allowed: "/elsewhere/.claude/skills/y.js". Scripts must be within a .claude/skills/ directory or the space working directory.',
    });
    assert.deepEqual(await loadRunScript('missing.js', WORK, files), {
      error: `File not found: "${WORK}/missing.js".`,
    });
    assert.deepEqual(await loadRunScript('scripts/empty.js', WORK, files), {
      error: `File is empty: "${WORK}/scripts/empty.js".`,
    });
  });

  it('timeout: 60 s by default, clamped to [1 s, 120 s]', () => {
    assert.equal(runTimeout(undefined), 60_000);
    assert.equal(runTimeout(0), 60_000);
    assert.equal(runTimeout(10), 1_000);
    assert.equal(runTimeout(5_000), 5_000);
    assert.equal(runTimeout(500_000), 120_000);
  });
});
