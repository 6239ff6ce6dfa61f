import { retryWhileDetached } from './cdp-retry.js';
import { descendantsResidentBytes } from './process-memory.js';
import { lookup } from 'node:dns/promises';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Browser, BrowserContext, CDPSession, Download, Page, Response } from 'playwright-core';
import type { BrowserViewerInput } from '#contracts/browser.js';
import type { BrowserProfiles, BrowserStorageState } from '#core/browser/ai-browser.js';
import {
  type AxNode,
  type AxProperties,
  BrowserEngine,
  type ConsoleEntry,
  type DeviceMode,
  type DownloadEntry,
  type EnginePage,
  type FillReadBack,
  type NetworkEntry,
  type OpenPageOptions,
  type ScreencastFrame,
  type ScreenshotRequest,
  type ScriptOutcome,
} from '#core/browser/browser-engine.port.js';
import type { BrowserSettings } from '#core/config/app-config.js';
import type { AppLogger } from '../logging/logger.js';

const DEFAULT_EXECUTABLE = '/usr/bin/chromium';
const CDP_TIMEOUT_MS = 15_000;
/** How long a new screencast may stay without a frame before a screenshot stands in as its first. */
const FIRST_FRAME_WAIT_MS = 1_000;
const FIRST_FRAME_TRIES = 5;
/** A command refused while a navigation swaps the renderer is tried again, for up to about 5 s. */
const DETACHED_TRIES = 50;
const DETACHED_RETRY_MS = 100;
const CONSOLE_MAX = 1000;
const NETWORK_MAX = 1000;
const DOWNLOADS_MAX = 500;
const LAUNCH_ARGS = [
  '--disable-dev-shm-usage',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-blink-features=AutomationControlled',
  '--mute-audio',
];
/** Runs in every document: `window.open` and `target=_blank` links load in the same page. */
const SAME_WINDOW_SCRIPT = `(() => {
  window.open = function (url) { if (url) location.href = String(url); return null; };
  document.addEventListener('click', (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[target]') : null;
    if (a && a.target !== '_self') a.target = '_self';
  }, true);
})();`;
const IPHONE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

/**
 * The AI browser's engine on playwright-core: a local Chromium (launched on first use, with
 * its sandbox unless running as root) or a remote Playwright browser server; one browser
 * context per profile and device, loaded from BrowserProfiles; CDP for the accessibility tree,
 * element boxes, input, scripts and the screencast; the navigation policy on every document
 * request and redirect (CDP Fetch, which sees each redirect hop).
 */
export class PlaywrightBrowserEngine extends BrowserEngine {
  private browser: Promise<Browser> | null = null;
  private readonly contexts = new Map<string, Promise<BrowserContext>>();
  private readonly pages = new Set<PlaywrightEnginePage>();
  /** Contexts being saved and closed, and those closed (by us or with their browser). */
  private readonly retiring = new WeakSet<BrowserContext>();
  private readonly closedContexts = new WeakSet<BrowserContext>();
  private sandboxNoted = false;

  constructor(
    private readonly settings: BrowserSettings,
    private readonly profiles: BrowserProfiles,
    private readonly logger: Pick<AppLogger, 'log' | 'warn'>,
  ) {
    super();
  }

  async openPage(options: OpenPageOptions): Promise<EnginePage> {
    let context = await this.context(options.profile, options.device);
    let page: Page;
    try {
      page = await context.newPage();
    } catch {
      // The context closed meanwhile (its last page went, or the browser died): a fresh one.
      context = await this.context(options.profile, options.device);
      page = await context.newPage();
    }
    const cdp = await context.newCDPSession(page);
    const enginePage = new PlaywrightEnginePage(page, cdp, options, this.logger);
    this.pages.add(enginePage);
    enginePage.onClosed(() => {
      this.pages.delete(enginePage);
      void this.closeIfUnused(options.profile, options.device, context);
    });
    await enginePage.start();
    return enginePage;
  }

  /**
   * A context whose last page closed is saved to its profile and closed (contexts stay few). A
   * page opened on it while it was being saved (another run of the profile took it just before)
   * keeps it open: closing it then aborted that run's first navigation ("frame was detached").
   */
  private async closeIfUnused(profile: string, device: DeviceMode, context: BrowserContext): Promise<void> {
    const key = `${profile}|${device}`;
    const inUse = () => context.pages().some((p) => !p.isClosed());
    if (inUse() || this.retiring.has(context) || this.closedContexts.has(context) || this.browser === null) return;
    this.retiring.add(context);
    const current = this.contexts.get(key);
    // From here on a new page of the profile gets a fresh context (this one's may still come).
    if (current && (await current.catch(() => null)) === context) this.contexts.delete(key);
    try {
      await this.profiles.save(profile, (await context.storageState()) as BrowserStorageState);
    } catch (err) {
      this.logger.warn(`AI browser: could not save profile ${profile}: ${(err as Error).message}`);
    }
    if (inUse()) {
      // Kept for the page opened meanwhile; its own last close retires it again.
      this.retiring.delete(context);
      if (!this.contexts.has(key)) this.contexts.set(key, Promise.resolve(context));
      return;
    }
    this.closedContexts.add(context);
    await context.close().catch(() => undefined);
  }

  async storageState(profile: string): Promise<BrowserStorageState | null> {
    const states: BrowserStorageState[] = [];
    for (const device of ['pc', 'h5'] as const) {
      const context = this.contexts.get(`${profile}|${device}`);
      if (!context) continue;
      try {
        states.push((await (await context).storageState()) as BrowserStorageState);
      } catch {
        // a context of a dead browser has nothing to save
      }
    }
    if (states.length === 0) return null;
    const cookies = new Map<string, BrowserStorageState['cookies'][number]>();
    const origins = new Map<string, BrowserStorageState['origins'][number]>();
    for (const state of states) {
      for (const c of state.cookies) cookies.set(`${c.name}|${c.domain}|${c.path}`, c);
      for (const o of state.origins) origins.set(o.origin, o);
    }
    return { cookies: [...cookies.values()], origins: [...origins.values()] };
  }

  async resolveHost(host: string): Promise<string[]> {
    try {
      return (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      return [];
    }
  }

  ownAddresses(): string[] {
    return Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .map((a) => a.address);
  }

  /** The local Chromium's processes (children of this one); a remote browser's memory is not this host's. */
  override async memoryBytes(): Promise<number | null> {
    if (this.settings.wsEndpoint !== null || this.browser === null) return this.settings.wsEndpoint !== null ? null : 0;
    return descendantsResidentBytes();
  }

  async shutdown(): Promise<void> {
    const browser = this.browser;
    this.browser = null;
    this.contexts.clear();
    if (browser) await (await browser.catch(() => null))?.close().catch(() => undefined);
  }

  private context(profile: string, device: DeviceMode): Promise<BrowserContext> {
    const key = `${profile}|${device}`;
    let context = this.contexts.get(key);
    if (!context) {
      context = this.createContext(profile, device);
      this.contexts.set(key, context);
      context.catch(() => this.contexts.delete(key));
    }
    return context;
  }

  private async createContext(profile: string, device: DeviceMode): Promise<BrowserContext> {
    const browser = await this.launch();
    const state = await this.profiles.load(profile);
    const major = browser.version().split('.')[0] ?? '120';
    const desktopUa = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
    const userAgent = this.settings.userAgent ?? (device === 'h5' ? IPHONE_UA : desktopUa);
    const context = await browser.newContext({
      storageState: state ?? undefined,
      userAgent,
      acceptDownloads: true,
      ...(device === 'h5'
        ? { viewport: { width: 430, height: 932 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true }
        : { viewport: { width: 1280, height: 720 } }),
    });
    await context.addInitScript(SAME_WINDOW_SCRIPT);
    context.on('close', () => {
      this.closedContexts.add(context);
      if (this.contexts.get(`${profile}|${device}`) !== undefined) this.contexts.delete(`${profile}|${device}`);
    });
    return context;
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      const started = this.start();
      this.browser = started;
      started.then(
        (browser) =>
          browser.on('disconnected', () => {
            if (this.browser === started) {
              this.logger.warn('the AI browser disconnected; the next page starts a new one');
              this.browser = null;
              this.contexts.clear();
              for (const page of [...this.pages]) page.lost();
            }
          }),
        () => {
          if (this.browser === started) this.browser = null;
        },
      );
    }
    return this.browser;
  }

  /** Playwright loads on first use, so a server that never opens a page never pays for it. */
  private async start(): Promise<Browser> {
    const { chromium } = await import('playwright-core');
    if (this.settings.wsEndpoint) return chromium.connect(this.settings.wsEndpoint, { timeout: 30_000 });
    const launch = (extra: string[]) =>
      chromium.launch({
        executablePath: this.settings.executablePath ?? DEFAULT_EXECUTABLE,
        headless: true,
        args: [...LAUNCH_ARGS, ...extra],
        timeout: 30_000,
      });
    const extra = this.sandboxArgs();
    try {
      return await launch(extra);
    } catch (err) {
      // A container without user namespaces has no sandbox for Chromium to start in.
      if (extra.length > 0 || !/sandbox/i.test((err as Error).message)) throw err;
      this.logger.warn(
        "The AI browser's Chromium runs without its sandbox: the kernel gives it none here (no user namespaces). Allow them, or run the browser as a separate container (SVC_BROWSER_WS_ENDPOINT).",
      );
      return launch(['--no-sandbox']);
    }
  }

  private sandboxArgs(): string[] {
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!root) return [];
    if (!this.sandboxNoted) {
      this.sandboxNoted = true;
      this.logger.warn(
        "The AI browser's Chromium runs without its sandbox: this process runs as root, where Chromium's sandbox cannot start. Run the server as a non-root user, or the browser as a separate container (SVC_BROWSER_WS_ENDPOINT).",
      );
    }
    return ['--no-sandbox'];
  }
}

interface CdpAxNode {
  nodeId: string;
  ignored: boolean;
  role?: { value?: unknown };
  name?: { value?: unknown };
  value?: { value?: unknown };
  description?: { value?: unknown };
  properties?: Array<{ name: string; value: { value?: unknown } }>;
  childIds?: string[];
  backendDOMNodeId?: number;
}

class PlaywrightEnginePage implements EnginePage {
  readonly device: DeviceMode;
  private readonly closedListeners: Array<(reason: 'closed' | 'crashed') => void> = [];
  private closed = false;
  private readonly consoleEntries: ConsoleEntry[] = [];
  private readonly networkEntries: NetworkEntry[] = [];
  private readonly requestIds = new Map<unknown, number>();
  private readonly responses = new Map<number, Response>();
  private readonly downloadEntries: DownloadEntry[] = [];
  private nextId = 1;
  /** The policy's text for the latest document it refused (a navigation fails with it). */
  private lastRefusal: string | null = null;
  private screencastHandler:
    | ((event: { data: string; sessionId: number; metadata: { deviceWidth: number; deviceHeight: number } }) => void)
    | null = null;

  constructor(
    private readonly page: Page,
    private readonly cdp: CDPSession,
    private readonly options: OpenPageOptions,
    private readonly logger: Pick<AppLogger, 'log' | 'warn'>,
  ) {
    this.device = options.device;
  }

  async start(): Promise<void> {
    const { page, cdp } = this;
    page.on('close', () => this.ended('closed'));
    page.on('crash', () => {
      this.ended('crashed');
      void page.close().catch(() => undefined);
    });
    page.on('dialog', (dialog) => {
      this.logger.log(`AI browser: dismissed a ${dialog.type()} dialog on ${page.url()}`);
      void dialog.dismiss().catch(() => undefined);
    });
    // New windows would escape the policy's per-page guard: the init script keeps links and
    // window.open in this page; any window that still opens is closed at once.
    page.on('popup', (popup) => {
      this.logger.log(`AI browser: closed a new window opened by ${page.url()}`);
      void popup.close().catch(() => undefined);
    });
    page.on('console', (msg) => {
      this.consoleEntries.push({ id: this.nextId++, type: msg.type(), text: msg.text(), timestamp: Date.now() });
      if (this.consoleEntries.length > CONSOLE_MAX) this.consoleEntries.shift();
    });
    page.on('request', (request) => {
      const id = this.nextId++;
      this.requestIds.set(request, id);
      this.networkEntries.push({
        id,
        url: request.url(),
        method: request.method(),
        resourceType: request.resourceType(),
        status: null,
        mimeType: null,
        requestHeaders: request.headers(),
        responseHeaders: null,
        postData: request.postData(),
        failure: null,
      });
      if (this.networkEntries.length > NETWORK_MAX) {
        const dropped = this.networkEntries.shift();
        if (dropped) this.responses.delete(dropped.id);
      }
    });
    page.on('response', (response) => {
      const id = this.requestIds.get(response.request());
      const entry = this.networkEntries.find((e) => e.id === id);
      if (!entry) return;
      entry.status = response.status();
      const headers = response.headers();
      entry.responseHeaders = headers;
      entry.mimeType = headers['content-type']?.split(';')[0] ?? null;
      this.responses.set(entry.id, response);
    });
    page.on('requestfailed', (request) => {
      const entry = this.networkEntries.find((e) => e.id === this.requestIds.get(request));
      if (entry) entry.failure = request.failure()?.errorText ?? 'failed';
    });
    page.on('download', (download) => void this.saveDownload(download));

    // The navigation policy on every document request, redirects included.
    cdp.on('Fetch.requestPaused', (event: { requestId: string; request: { url: string } }) => {
      void (async () => {
        const problem = await this.options.checkNavigation(event.request.url).catch(() => 'policy check failed');
        if (problem) {
          this.lastRefusal = problem;
          this.logger.warn(`AI browser: ${problem} (${event.request.url.slice(0, 200)})`);
          await cdp.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' });
        } else {
          await cdp.send('Fetch.continueRequest', { requestId: event.requestId });
        }
      })().catch(() => undefined);
    });
    cdp.on('Page.screencastFrame', (event) => this.screencastHandler?.(event as never));
    await this.send('Fetch.enable', {
      patterns: [{ urlPattern: '*', resourceType: 'Document', requestStage: 'Request' }],
    });
    await this.send('DOM.enable');
    await this.send('Accessibility.enable');
  }

  url(): string {
    return this.page.url();
  }

  title(): Promise<string> {
    return this.page.title();
  }

  async navigate(url: string, timeoutMs: number): Promise<void> {
    this.lastRefusal = null;
    const before = this.page.url();
    for (let attempt = 0; ; attempt++) {
      try {
        await this.page.goto(url, { timeout: timeoutMs, waitUntil: 'load' });
        return;
      } catch (err) {
        // A page still loading at the timeout is a page (the original's rule).
        if ((err as Error).name === 'TimeoutError') return;
        const text = firstLine(err);
        // The error page of a refused navigation may still be committing: once it has, go again.
        if (attempt === 0 && /interrupted by another navigation to "chrome-error:/.test(text)) {
          await this.page.waitForLoadState('load', { timeout: 2_000 }).catch(() => undefined);
          continue;
        }
        // The document request held for the policy check and let go can reach Playwright as a
        // second navigation to the same address: that one is the navigation asked for.
        // Wait for that document itself: until it commits, the frame still shows the previous one,
        // whose load state has long been reached (its empty title was once read as the new page's).
        if (text.includes(`interrupted by another navigation to "${url}"`)) {
          const target = normalisedUrl(url);
          await this.page
            .waitForURL((u) => u.href === target || u.href !== before, { timeout: timeoutMs, waitUntil: 'load' })
            .catch(() => undefined);
          return;
        }
        if (this.lastRefusal && /ERR_BLOCKED_BY_CLIENT/.test(text)) {
          // Let Chromium's error page settle, so the next navigation is not interrupted by it.
          await this.page.waitForLoadState('load', { timeout: 2_000 }).catch(() => undefined);
          throw new Error(this.lastRefusal, { cause: err });
        }
        throw new Error(text, { cause: err });
      }
    }
  }

  async accessibilityTree(): Promise<AxNode[]> {
    const { nodes } = (await this.send('Accessibility.getFullAXTree')) as { nodes: CdpAxNode[] };
    return nodes.map((n) => ({
      id: n.nodeId,
      role: String(n.role?.value ?? ''),
      name: String(n.name?.value ?? ''),
      ignored: n.ignored,
      backendNodeId: n.backendDOMNodeId ?? null,
      childIds: n.childIds ?? [],
      properties: axProperties(n),
    }));
  }

  async click(node: number, clickCount: 1 | 2): Promise<void> {
    const { x, y } = await this.centre(node);
    await this.page.mouse.click(x, y);
    if (clickCount === 2) {
      await sleep(50);
      await this.page.mouse.click(x, y, { clickCount: 2 });
    }
  }

  async drag(from: number, to: number): Promise<void> {
    const a = await this.centre(from);
    const b = await this.centre(to);
    await this.page.mouse.move(a.x, a.y);
    await this.page.mouse.down();
    await this.page.mouse.move(b.x, b.y, { steps: 10 });
    await this.page.mouse.up();
  }

  async hover(node: number): Promise<void> {
    const { x, y } = await this.centre(node);
    await this.page.mouse.move(x, y);
  }

  async fill(node: number, value: string): Promise<FillReadBack> {
    // One handle for the whole fill, and the focus given in the same call that checks it: the
    // fewest round trips to the page (a fill is the most frequent action of a form-filling run).
    const objectId = await this.objectId(node);
    const focus = (await this.callOnObject(
      objectId,
      `function () {
        let doc = this.ownerDocument;
        try { if (doc !== document && !doc.defaultView.frameElement) return 'cross-origin'; } catch { return 'cross-origin'; }
        if (typeof this.focus === 'function') this.focus();
        const active = doc.activeElement;
        if (!(active === this || this.contains(active))) return 'elsewhere';
        if (typeof this.select === 'function' && 'value' in this) this.select();
        else { const r = doc.createRange(); r.selectNodeContents(active.isContentEditable ? active : this); const s = doc.getSelection(); s.removeAllRanges(); s.addRange(r); }
        return 'ok';
      }`,
    )) as string;
    if (focus === 'cross-origin') return { kind: 'cross-origin-frame' };
    if (focus === 'elsewhere') return { kind: 'focus-elsewhere' };
    if (value === '') await this.page.keyboard.press('Delete');
    else await this.page.keyboard.insertText(value);
    await sleep(0);
    return (await this.callOnObject(
      objectId,
      `function () {
        const el = this.ownerDocument.activeElement && this.contains(this.ownerDocument.activeElement) ? this.ownerDocument.activeElement : this;
        if ((el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') && 'value' in el) return { kind: 'field', value: String(el.value), secret: el.type === 'password' };
        if (el.isContentEditable) return { kind: 'editable', text: el.innerText };
        return { kind: 'unreadable' };
      }`,
    )) as FillReadBack;
  }

  async selectOption(node: number, text: string): Promise<boolean> {
    return (await this.callOn(
      node,
      `function (text) {
        if (this.tagName !== 'SELECT') return false;
        const option = [...this.options].find((o) => o.text.trim() === text.trim() || o.value === text);
        if (!option) return false;
        this.value = option.value;
        this.dispatchEvent(new Event('input', { bubbles: true }));
        this.dispatchEvent(new Event('change', { bubbles: true }));
        return true;
      }`,
      [text],
    )) as boolean;
  }

  async uploadFiles(node: number, paths: string[]): Promise<void> {
    await this.send('DOM.setFileInputFiles', { files: paths, backendNodeId: node });
  }

  async pressKey(key: string): Promise<void> {
    const aliases: Record<string, string> = {
      ctrl: 'Control',
      control: 'Control',
      cmd: 'Meta',
      command: 'Meta',
      meta: 'Meta',
      alt: 'Alt',
      shift: 'Shift',
      esc: 'Escape',
      space: ' ',
      up: 'ArrowUp',
      down: 'ArrowDown',
      left: 'ArrowLeft',
      right: 'ArrowRight',
    };
    const combo = key
      .split('+')
      .map((part) => aliases[part.trim().toLowerCase()] ?? part.trim())
      .join('+');
    await this.page.keyboard.press(combo === '' ? '+' : combo);
  }

  async evaluate(fn: string, nodes: number[], timeoutMs: number): Promise<ScriptOutcome> {
    const declaration = `function (...args) { return (${fn})(...args); }`;
    if (nodes.length === 0) return this.runExpression(`(${fn})()`, timeoutMs);
    const objectIds = [];
    for (const node of nodes) objectIds.push(await this.objectId(node));
    const result = (await this.send(
      'Runtime.callFunctionOn',
      {
        functionDeclaration: declaration,
        objectId: objectIds[0],
        arguments: objectIds.map((objectId) => ({ objectId })),
        awaitPromise: true,
        returnByValue: true,
      },
      timeoutMs,
    )) as RuntimeResult;
    return outcomeOf(result);
  }

  async runScript(source: string, params: unknown, timeoutMs: number): Promise<ScriptOutcome | { timedOut: true }> {
    const expression = `(${source})(${JSON.stringify(params ?? {})})`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<{ timedOut: true }>((resolve) => {
      timer = setTimeout(() => resolve({ timedOut: true }), timeoutMs);
    });
    const run = this.cdp
      .send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true, userGesture: true })
      .then((r) => outcomeOf(r as RuntimeResult))
      .catch((err: unknown) => ({ ok: false as const, error: firstLine(err) }));
    const answer = await Promise.race([run, deadline]);
    clearTimeout(timer);
    if ('timedOut' in answer) {
      // Stops a script still running (a busy loop); its pending timers lose their caller.
      await this.send('Runtime.terminateExecution').catch(() => undefined);
    }
    return answer;
  }

  async screenshot(request: ScreenshotRequest): Promise<{ data: Buffer; mimeType: string }> {
    const type = request.format === 'jpeg' ? 'jpeg' : 'png';
    const quality = type === 'jpeg' ? (request.quality ?? 80) : undefined;
    let data: Buffer;
    if (request.node !== undefined) {
      const token = `aib-${Math.random().toString(36).slice(2)}`;
      await this.callOn(request.node, `function (t) { this.setAttribute('data-aib-shot', t); }`, [token]);
      try {
        data = await this.page
          .locator(`[data-aib-shot="${token}"]`)
          .screenshot({ type, quality, timeout: CDP_TIMEOUT_MS });
      } finally {
        await this.callOn(request.node, `function () { this.removeAttribute('data-aib-shot'); }`).catch(
          () => undefined,
        );
      }
    } else {
      data = await this.page.screenshot({
        type,
        quality,
        fullPage: request.fullPage === true,
        timeout: CDP_TIMEOUT_MS,
      });
    }
    return { data, mimeType: `image/${type}` };
  }

  async setViewport(width: number, height: number): Promise<void> {
    await this.page.setViewportSize({ width, height });
  }

  consoleMessages(): ConsoleEntry[] {
    return [...this.consoleEntries];
  }

  networkRequests(): NetworkEntry[] {
    return [...this.networkEntries];
  }

  async responseBody(requestId: number): Promise<string | null> {
    const response = this.responses.get(requestId);
    if (!response) return null;
    return response.text().catch(() => null);
  }

  downloads(): DownloadEntry[] {
    return [...this.downloadEntries];
  }

  /** A direct download with the context's cookies; each redirect hop checked by the policy. */
  async startDownload(url: string): Promise<void> {
    const entry = this.newDownload(url, fileNameOf(url));
    try {
      const dir = this.downloadDir();
      let current = url;
      for (let hop = 0; ; hop++) {
        const response = await this.page.context().request.get(current, { maxRedirects: 0, timeout: 60_000 });
        const location = response.headers()['location'];
        if (response.status() >= 300 && response.status() < 400 && location) {
          if (hop >= 5) throw new Error('too many redirects');
          current = new URL(location, current).toString();
          const problem = await this.options.checkNavigation(current);
          if (problem) throw new Error(problem);
          continue;
        }
        if (!response.ok()) throw new Error(`HTTP ${response.status()}`);
        const declared = Number(response.headers()['content-length'] ?? -1);
        if (declared > this.options.downloadMaxBytes) throw new Error(this.tooLarge());
        const body = await response.body();
        if (body.length > this.options.downloadMaxBytes) throw new Error(this.tooLarge());
        const disposition = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(
          response.headers()['content-disposition'] ?? '',
        );
        const name = disposition?.[1] ? decodeURIComponentSafe(disposition[1]) : entry.filename;
        const path = await uniquePath(dir, name);
        await pipeline(
          (async function* () {
            yield body;
          })(),
          createWriteStream(path, { flags: 'wx' }),
        );
        Object.assign(entry, {
          filename: name,
          savePath: path,
          state: 'completed',
          totalBytes: body.length,
          receivedBytes: body.length,
          mimeType: response.headers()['content-type']?.split(';')[0] ?? null,
          endTime: Date.now(),
        });
        return;
      }
    } catch (err) {
      Object.assign(entry, { state: 'failed', error: firstLine(err), endTime: Date.now() });
    }
  }

  async startScreencast(onFrame: (frame: ScreencastFrame) => void): Promise<void> {
    let framed = false;
    const handler = (event: Parameters<NonNullable<typeof this.screencastHandler>>[0]) => {
      framed = true;
      onFrame({
        data: event.data,
        width: event.metadata.deviceWidth,
        height: event.metadata.deviceHeight,
        ack: async () => {
          await this.cdp.send('Page.screencastFrameAck', { sessionId: event.sessionId });
        },
      });
    };
    this.screencastHandler = handler;
    // Asked while a navigation swaps the page's renderer, the start is refused for a moment.
    await retryWhileDetached(
      () =>
        this.send('Page.startScreencast', {
          format: 'jpeg',
          quality: 60,
          maxWidth: 1280,
          maxHeight: 960,
          everyNthFrame: 1,
        }),
      { tries: DETACHED_TRIES, delayMs: DETACHED_RETRY_MS },
    );
    // Chromium sends screencast frames as the page repaints: a page that has finished drawing may
    // send none, and a viewer would wait on an empty screen. Then one screenshot is the first frame
    // (tried again while the page is between documents and cannot be captured).
    const standIn = (attempt: number): void => {
      setTimeout(() => {
        if (framed || this.screencastHandler !== handler) return;
        void this.firstFrame()
          .then((frame) => {
            if (!framed && this.screencastHandler === handler) onFrame(frame);
          })
          .catch(() => {
            if (attempt < FIRST_FRAME_TRIES) standIn(attempt + 1);
          });
      }, FIRST_FRAME_WAIT_MS).unref();
    };
    standIn(1);
  }

  /** The page as it is now, as a screencast frame (nothing to acknowledge). */
  private async firstFrame(): Promise<ScreencastFrame> {
    const { data } = (await this.send('Page.captureScreenshot', { format: 'jpeg', quality: 60 })) as { data: string };
    const size =
      this.page.viewportSize() ??
      (
        (await this.send('Page.getLayoutMetrics')) as {
          cssLayoutViewport: { clientWidth: number; clientHeight: number };
        }
      ).cssLayoutViewport;
    const [width, height] = 'width' in size ? [size.width, size.height] : [size.clientWidth, size.clientHeight];
    return { data, width, height, ack: async () => undefined };
  }

  async stopScreencast(): Promise<void> {
    this.screencastHandler = null;
    await this.send('Page.stopScreencast');
  }

  async dispatchInput(input: Exclude<BrowserViewerInput, { type: 'ack' }>): Promise<void> {
    switch (input.type) {
      case 'mouse':
        await this.send('Input.dispatchMouseEvent', {
          type: input.event,
          x: input.x,
          y: input.y,
          button: input.button ?? (input.event === 'mouseMoved' || input.event === 'mouseWheel' ? 'none' : 'left'),
          clickCount: input.clickCount ?? (input.event === 'mousePressed' || input.event === 'mouseReleased' ? 1 : 0),
          deltaX: input.deltaX ?? 0,
          deltaY: input.deltaY ?? 0,
        });
        return;
      case 'key':
        try {
          if (input.event === 'keyDown') await this.page.keyboard.down(input.key);
          else await this.page.keyboard.up(input.key);
        } catch {
          // A key Playwright does not know: its text still goes in.
          if (input.event === 'keyDown' && input.text) await this.page.keyboard.insertText(input.text);
        }
        return;
      case 'text':
        await this.page.keyboard.insertText(input.text);
        return;
      case 'viewport':
        await this.page.setViewportSize({
          width: clamp(Math.floor(input.width), 200, 4096),
          height: clamp(Math.floor(input.height), 200, 4096),
        });
        return;
    }
  }

  onClosed(listener: (reason: 'closed' | 'crashed') => void): void {
    this.closedListeners.push(listener);
  }

  isClosed(): boolean {
    return this.closed || this.page.isClosed();
  }

  async close(): Promise<void> {
    await this.page.close().catch(() => undefined);
    this.ended('closed');
  }

  /** The browser went away under the page. */
  lost(): void {
    this.ended('crashed');
  }

  private ended(reason: 'closed' | 'crashed'): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closedListeners) listener(reason);
  }

  private async send(method: string, params?: Record<string, unknown>, timeoutMs = CDP_TIMEOUT_MS): Promise<unknown> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${method} timed out after ${timeoutMs}ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.cdp.send(method as never, params as never), timeout]);
    } catch (err) {
      throw new Error(firstLine(err), { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  private async objectId(node: number): Promise<string> {
    const { object } = (await this.send('DOM.resolveNode', { backendNodeId: node })) as {
      object: { objectId?: string };
    };
    if (!object.objectId) throw new Error('the element is gone');
    return object.objectId;
  }

  private async callOn(node: number, declaration: string, args: unknown[] = []): Promise<unknown> {
    return this.callOnObject(await this.objectId(node), declaration, args);
  }

  private async callOnObject(objectId: string, declaration: string, args: unknown[] = []): Promise<unknown> {
    const result = (await this.send('Runtime.callFunctionOn', {
      functionDeclaration: declaration,
      objectId,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
      awaitPromise: true,
    })) as RuntimeResult;
    const outcome = outcomeOf(result);
    if (!outcome.ok) throw new Error(outcome.error);
    return outcome.value;
  }

  /** The element's centre in the viewport, scrolled into view first. */
  private async centre(node: number): Promise<{ x: number; y: number }> {
    await this.send('DOM.scrollIntoViewIfNeeded', { backendNodeId: node }).catch(() => undefined);
    let model: { model: { content: number[] } };
    try {
      model = (await this.send('DOM.getBoxModel', { backendNodeId: node })) as typeof model;
    } catch (err) {
      throw new Error('Could not get bounding box for element', { cause: err });
    }
    const q = model.model.content;
    return { x: (q[0]! + q[2]! + q[4]! + q[6]!) / 4, y: (q[1]! + q[3]! + q[5]! + q[7]!) / 4 };
  }

  private async runExpression(expression: string, timeoutMs: number): Promise<ScriptOutcome> {
    const result = (await this.send(
      'Runtime.evaluate',
      { expression, awaitPromise: true, returnByValue: true, userGesture: true },
      timeoutMs,
    )) as RuntimeResult;
    return outcomeOf(result);
  }

  private downloadDir(): string {
    if (this.options.downloadDir === null) throw new Error('downloads are not available on this page');
    return this.options.downloadDir;
  }

  private tooLarge(): string {
    return `the file is larger than the download limit (${this.options.downloadMaxBytes} bytes)`;
  }

  private newDownload(url: string, filename: string): DownloadEntry {
    const entry: DownloadEntry = {
      id: this.nextId++,
      url,
      filename,
      savePath: null,
      state: 'in_progress',
      totalBytes: -1,
      receivedBytes: 0,
      mimeType: null,
      startTime: Date.now(),
      endTime: null,
      error: null,
    };
    this.downloadEntries.push(entry);
    if (this.downloadEntries.length > DOWNLOADS_MAX) this.downloadEntries.shift();
    return entry;
  }

  /** A page-initiated download (its request passed the policy): saved with the size cap. */
  private async saveDownload(download: Download): Promise<void> {
    const entry = this.newDownload(download.url(), sanitiseFileName(download.suggestedFilename()));
    let path: string | null = null;
    try {
      const dir = this.downloadDir();
      path = await uniquePath(dir, entry.filename);
      const max = this.options.downloadMaxBytes;
      let received = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          received += chunk.length;
          entry.receivedBytes = received;
          if (received > max) done(new Error('too-large'));
          else done(null, chunk);
        },
      });
      const stream = await download.createReadStream();
      await pipeline(stream, counter, createWriteStream(path, { flags: 'wx' }));
      const failure = await download.failure();
      if (failure) throw new Error(failure);
      Object.assign(entry, { savePath: path, state: 'completed', totalBytes: received, endTime: Date.now() });
    } catch (err) {
      const tooLarge = (err as Error).message === 'too-large';
      await download.cancel().catch(() => undefined);
      if (path) await rm(path, { force: true }).catch(() => undefined);
      Object.assign(entry, {
        state: tooLarge ? 'cancelled' : 'failed',
        error: tooLarge ? this.tooLarge() : firstLine(err),
        endTime: Date.now(),
      });
    }
  }
}

interface RuntimeResult {
  result?: { type?: string; value?: unknown; description?: string; unserializableValue?: string };
  exceptionDetails?: { text?: string; exception?: { description?: string; value?: unknown } };
}

function outcomeOf(r: RuntimeResult): ScriptOutcome {
  if (r.exceptionDetails) {
    const e = r.exceptionDetails;
    const description =
      e.exception?.description ?? (e.exception?.value !== undefined ? String(e.exception.value) : undefined);
    return { ok: false, error: (description ?? e.text ?? 'the script threw').split('\n')[0]! };
  }
  const result = r.result ?? {};
  if (result.type === 'undefined') return { ok: true, value: undefined };
  if (result.unserializableValue !== undefined) return { ok: true, value: result.unserializableValue };
  return { ok: true, value: 'value' in result ? result.value : {} };
}

function axProperties(n: CdpAxNode): AxProperties {
  const out: AxProperties = {};
  for (const p of n.properties ?? []) {
    const v = p.value?.value;
    switch (p.name) {
      case 'disabled':
      case 'expanded':
      case 'focusable':
      case 'focused':
      case 'selected':
      case 'required':
        out[p.name] = v === true || v === 'true';
        break;
      case 'checked':
        out.checked = v === 'mixed' ? 'mixed' : v === true || v === 'true';
        break;
      case 'level':
        if (typeof v === 'number') out.level = v;
        break;
    }
  }
  const value = n.value?.value;
  if (value !== undefined && value !== null && value !== '') out.value = String(value);
  const description = n.description?.value;
  if (typeof description === 'string' && description !== '') out.description = description;
  return out;
}

/** A file name that stays inside its folder: no separators, no dot-names, no control characters. */
export function sanitiseFileName(name: string): string {
  const cleaned = name
    .replace(/[/\\]/g, '_')
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\x00-\x1f\x7f]/g, '_')
    .replace(/^\.+/, '')
    .trim()
    .slice(0, 200);
  return cleaned === '' ? 'download' : cleaned;
}

/** `<dir>/<name>`, or `<name> (N)` when taken; the folder is created. */
async function uniquePath(dir: string, rawName: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const name = sanitiseFileName(rawName);
  const taken = new Set(await readdir(dir).catch(() => [] as string[]));
  if (!taken.has(name)) return join(dir, name);
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let n = 1; ; n++) {
    const candidate = `${stem} (${n})${ext}`;
    if (!taken.has(candidate)) return join(dir, candidate);
  }
}

function fileNameOf(url: string): string {
  try {
    return sanitiseFileName(decodeURIComponentSafe(new URL(url).pathname.split('/').pop() ?? ''));
  } catch {
    return 'download';
  }
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.replace(/^[a-zA-Z.]+: /, '');
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The address as the page will report it (`http://host` becomes `http://host/`); unparsable as given. */
function normalisedUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}
