import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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
import { LatencyProbe } from '#testing/latency-probe.js';

/**
 * The AI browser's hostile suite (issue 33), against real Chromium through the browser tools:
 * navigation and redirects (HTTP, meta refresh, script, new windows, forms) to loopback in its
 * many spellings, link-local, private and unspecified addresses and a listening "server port",
 * refused unless the allow-list names them; `filePath`, `browser_upload_file` and `browser_run`
 * outside the space's working folder refused; downloads over the cap refused with nothing left.
 * Prints inputs tried, handled cleanly, escapes (a request reaching the internal listener, a
 * file written or read outside the folder: must be 0), and the longest stall of a status
 * endpoint served by this process meanwhile (the tools share its event loop, as in the server).
 */

const DOWNLOAD_CAP = 32 * 1024;

describe('hostile inputs to the AI browser (real Chromium)', { skip: browserSkipReason() }, () => {
  let pages: http.Server;
  let base: string;
  /** The internal service: listens on every address; any request here is an escape. */
  let internal: http.Server;
  let internalPort: number;
  const internalHits: string[] = [];
  /** A stand-in for the server's own /api/remote/status, answered by this process. */
  let status: http.Server;
  let statusUrl: string;
  let root: string;
  let workDir: string;
  let outside: string;
  let engine: PlaywrightBrowserEngine;
  const services: BrowserService[] = [];

  const settings = (allow: string[]): BrowserSettings => ({
    allow,
    block: [],
    executablePath: CHROMIUM_PATH ?? null,
    wsEndpoint: null,
    userAgent: null,
    maxPages: 20,
    downloadMaxBytes: DOWNLOAD_CAP,
  });
  const toolsWith = (allow: string[], key: string): AgentTool[] => {
    const service = new BrowserService(
      engine,
      new InMemoryBrowserProfiles(),
      new NodeFileStore({ trashDir: join(root, 'trash') }),
      new RecordingEventBus(),
      new SystemClock(),
      { browser: settings(allow) } as AppConfig,
    );
    services.push(service);
    const scope: BrowserScope = {
      key,
      kind: 'chat',
      spaceId: key,
      conversationId: key,
      appId: null,
      workDir,
      profile: key,
    };
    return service.tools(scope);
  };
  const ctx = { signal: new AbortController().signal, toolUseId: 't' } as ToolContext;
  const call = async (tools: AgentTool[], name: string, input: Record<string, unknown> = {}): Promise<ToolOutcome> => {
    const tool = tools.find((t) => t.name === `mcp__ai-browser__${name}`);
    assert.ok(tool, `tool ${name} exists`);
    return tool.run(input, ctx);
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-hostile-browser-'));
    workDir = join(root, 'space');
    outside = join(root, 'outside');
    mkdirSync(workDir);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'outside secret');
    writeFileSync(join(outside, 'evil.js'), '() => { document.title = "EVIL RAN"; return "evil"; }');
    symlinkSync(outside, join(workDir, 'link-out'));
    internal = http.createServer((req, res) => {
      internalHits.push(`${req.method} ${req.headers.host}${req.url}`);
      res.end('<p>internal</p>');
    });
    await new Promise<void>((resolve) => internal.listen(0, '::', resolve));
    internalPort = (internal.address() as AddressInfo).port;
    const to = (url: URL) => url.searchParams.get('to') ?? '';
    pages = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const html = (body: string) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!doctype html><html><head><title>Page</title></head><body>${body}</body></html>`);
      };
      switch (url.pathname) {
        case '/302':
          res.writeHead(302, { location: to(url) });
          return res.end();
        case '/307':
          res.writeHead(307, { location: to(url) });
          return res.end();
        case '/chain':
          res.writeHead(302, { location: `/302?to=${encodeURIComponent(to(url))}` });
          return res.end();
        case '/meta':
          return html(`<meta http-equiv="refresh" content="0;url=${to(url)}"><p>meta</p>`);
        case '/script':
          return html(`<p>script</p><script>location.href = ${JSON.stringify(to(url))}</script>`);
        case '/open':
          return html(`<p>open</p><script>window.open(${JSON.stringify(to(url))})</script>`);
        case '/form':
          return html(
            `<form id="f" method="post" action="${to(url)}"></form><script>document.getElementById('f').submit()</script>`,
          );
        case '/form-upload':
          return html(`<label>Attachment <input id="file" type="file"></label>`);
        case '/big':
          res.writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-disposition': 'attachment; filename="big.bin"',
          });
          return res.end(Buffer.alloc(DOWNLOAD_CAP * 4));
        case '/big-chunked':
          res.writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-disposition': 'attachment; filename="chunked.bin"',
          });
          for (let i = 0; i < 8; i++) res.write(Buffer.alloc(DOWNLOAD_CAP));
          return res.end();
        case '/download-page':
          return html(`<a href="/big">Get the big file</a>`);
        default:
          return html('<p>public page</p>');
      }
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    status = http.createServer((_req, res) => res.end('{"active":true}'));
    await new Promise<void>((resolve) => status.listen(0, '127.0.0.1', resolve));
    statusUrl = `http://127.0.0.1:${(status.address() as AddressInfo).port}`;
    engine = new PlaywrightBrowserEngine(settings([]), new InMemoryBrowserProfiles(), {
      log: () => {},
      warn: () => {},
    });
  });

  after(async () => {
    for (const s of services) await s.onModuleDestroy().catch(() => undefined);
    for (const server of [pages, internal, status]) await new Promise((resolve) => server?.close(resolve));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('navigation, redirects and file paths: every hostile input refused, 0 escapes', async (t) => {
    const tried: string[] = [];
    const unexpected: string[] = [];
    const escapes: string[] = [];
    const probe = LatencyProbe.start(statusUrl.replace(/\/$/, ''));
    const p = internalPort;
    /** Internal targets, all reaching the internal listener if they were ever loaded. */
    const loopbackTargets = [
      `http://127.0.0.1:${p}/own-port`,
      `http://localhost:${p}/localhost`,
      `http://localhost.:${p}/trailing-dot`,
      `http://sub.localhost:${p}/sub`,
      `http://127.1:${p}/short`,
      `http://0x7f000001:${p}/hex`,
      `http://2130706433:${p}/decimal`,
      `http://0177.0.0.1:${p}/octal`,
      `http://127.0.0.2:${p}/other-loopback`,
      `http://[::1]:${p}/v6`,
      `http://[::ffff:127.0.0.1]:${p}/mapped`,
      `http://[::ffff:7f00:1]:${p}/mapped-hex`,
      `http://[0:0:0:0:0:0:0:1]:${p}/v6-long`,
      `http://0.0.0.0:${p}/any`,
      `http://[::]:${p}/v6-any`,
      `http://user@127.0.0.1:${p}/userinfo`,
    ];
    const otherTargets = [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://100.64.0.1/',
      'http://[fd00::1]/',
      'file:///etc/passwd',
      'view-source:http://127.0.0.1/',
      'chrome://version',
      'javascript:alert(1)',
      'data:text/html,<p>x</p>',
    ];
    const refused = (out: ToolOutcome) =>
      out.isError && /blocked by browser policy|not allowed|Navigation failed|Failed to create page/.test(out.output);

    // 1. Direct navigation with an empty allow-list: every internal target refused.
    const strict = toolsWith([], 'strict');
    for (const target of [...loopbackTargets, ...otherTargets, `${base}/public`]) {
      tried.push(`navigate ${target}`);
      const out = await call(strict, 'browser_navigate', { url: target, timeout: 5_000 });
      if (!refused(out)) unexpected.push(`navigate ${target}: ${out.output.slice(0, 120)}`);
    }
    // 2. From an allowed page (127.0.0.1 allowed for the test pages): redirects, meta refresh,
    // script navigation, new windows and form posts to every internal target other than 127.0.0.1.
    const permissive = toolsWith(['127.0.0.1'], 'permissive');
    // 127.0.0.1 itself is allowed here, in every spelling: the targets are other internal addresses.
    const viaPage = [
      `http://127.0.0.2:${p}/other-loopback`,
      `http://0x7f000002:${p}/hex-other`,
      `http://[::1]:${p}/v6`,
      `http://[::ffff:127.0.0.2]:${p}/mapped-other`,
      `http://0.0.0.0:${p}/any`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
    ];
    for (const kind of ['302', '307', 'chain', 'meta', 'script', 'open', 'form']) {
      for (const target of viaPage) {
        tried.push(`${kind} → ${target}`);
        const out = await call(permissive, 'browser_navigate', {
          url: `${base}/${kind}?to=${encodeURIComponent(target)}`,
          timeout: 5_000,
        });
        // A redirect is refused as a navigation; a page's own navigation is stopped in the browser.
        if (['302', '307', 'chain'].includes(kind) && !refused(out)) {
          unexpected.push(`${kind} → ${target}: ${out.output.slice(0, 120)}`);
        }
      }
      await call(permissive, 'browser_evaluate', { function: '() => new Promise((r) => setTimeout(r, 300))' });
    }
    await new Promise((r) => setTimeout(r, 1_000));
    if (internalHits.length > 0) escapes.push(`the internal listener was reached: ${internalHits.join(', ')}`);

    // 3. File paths outside the working folder.
    const before_ = new Set(readdirSync(outside).concat(readdirSync(root)));
    await call(permissive, 'browser_navigate', { url: `${base}/form-upload` });
    const snap = (await call(permissive, 'browser_snapshot')).output;
    const uid = /uid=(\S+) button "Attachment"/.exec(snap)?.[1] ?? /uid=(\S+)[^\n]*Attachment/.exec(snap)?.[1] ?? '';
    const hostilePaths = [
      '/tmp/hostile-browser.txt',
      '../escaped.txt',
      '../../escaped.txt',
      'a/../../escaped.txt',
      'link-out/escaped.txt',
      join(outside, 'escaped.txt'),
      '%2e%2e/escaped.txt',
      '..\\escaped.txt',
      'x\u0000.txt',
      '~/escaped.txt',
    ];
    for (const filePath of hostilePaths) {
      for (const tool of ['browser_snapshot', 'browser_screenshot'] as const) {
        tried.push(`${tool} filePath ${JSON.stringify(filePath)}`);
        const out = await call(permissive, tool, { filePath });
        if (!out.isError && !/%2e%2e|\.\.\\|~/.test(filePath))
          unexpected.push(`${tool} ${filePath}: ${out.output.slice(0, 120)}`);
      }
    }
    for (const filePath of [
      '/etc/passwd',
      '../outside/secret.txt',
      'link-out/secret.txt',
      join(outside, 'secret.txt'),
      ['cv.txt', '/etc/hostname'],
    ]) {
      tried.push(`browser_upload_file ${JSON.stringify(filePath)}`);
      writeFileSync(join(workDir, 'cv.txt'), 'cv');
      const out = await call(permissive, 'browser_upload_file', { uid, filePath });
      if (!out.isError) unexpected.push(`upload ${JSON.stringify(filePath)}: ${out.output}`);
    }
    const chosen = await call(permissive, 'browser_evaluate', {
      function: '() => Array.from(document.getElementById("file").files).map((f) => f.name)',
    });
    if (/secret|passwd|hostname/.test(chosen.output))
      escapes.push(`a file outside was given to the page: ${chosen.output}`);
    for (const file of [
      join(outside, 'evil.js'),
      '../outside/evil.js',
      'link-out/evil.js',
      '/tmp/.claude/skills/evil.js',
      '.claude/skills/../../link-out/evil.js',
    ]) {
      tried.push(`browser_run ${file}`);
      const out = await call(permissive, 'browser_run', { file });
      if (!out.isError) unexpected.push(`browser_run ${file}: ${out.output}`);
    }
    const title = await call(permissive, 'browser_evaluate', { function: '() => document.title' });
    if (/EVIL RAN/.test(title.output)) escapes.push('a script outside the folder ran');
    const after_ = readdirSync(outside).concat(readdirSync(root));
    for (const name of after_) if (!before_.has(name)) escapes.push(`written outside the folder: ${name}`);
    if (existsSync('/tmp/hostile-browser.txt')) escapes.push('written to /tmp/hostile-browser.txt');

    // 4. Downloads over the cap: refused, nothing left in downloads/.
    for (const [what, input] of [
      ['direct, declared size', { url: `${base}/big` }],
      ['direct, chunked', { url: `${base}/big-chunked` }],
      ['direct to an internal address', { url: `http://127.0.0.2:${p}/x` }],
    ] as Array<[string, Record<string, unknown>]>) {
      tried.push(`download ${what}`);
      const out = await call(permissive, 'browser_download', { ...input, timeout: 10_000 });
      if (!out.isError) unexpected.push(`download ${what}: ${out.output}`);
    }
    await call(permissive, 'browser_navigate', { url: `${base}/download-page` });
    const page = (await call(permissive, 'browser_snapshot')).output;
    const link = /uid=(\S+) link "Get the big file"/.exec(page)?.[1];
    if (link) {
      tried.push('download started by the page');
      await call(permissive, 'browser_click', { uid: link });
      const out = await call(permissive, 'browser_download', { timeout: 10_000 });
      if (!out.isError) unexpected.push(`page download: ${out.output}`);
    }
    const kept = existsSync(join(workDir, 'downloads')) ? readdirSync(join(workDir, 'downloads')) : [];
    if (kept.length > 0) escapes.push(`over-cap downloads left: ${kept.join(', ')}`);

    const figures = probe.stop();
    t.diagnostic(
      `AI browser: ${tried.length} inputs tried, ${tried.length - unexpected.length} handled cleanly, 0 × 500 (no HTTP here), ` +
        `${escapes.length} escapes, longest status stall ${figures.max} ms`,
    );
    for (const line of [...escapes, ...unexpected]) t.diagnostic(line.slice(0, 300));
    assert.deepEqual(escapes, []);
    assert.deepEqual(unexpected, []);
  });
});
