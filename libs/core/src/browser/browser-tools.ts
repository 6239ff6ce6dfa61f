import { basename, isAbsolute, resolve as resolvePath } from 'node:path';
import { AI_BROWSER_SERVER } from '#contracts/browser.js';
import { DomainError } from '../errors/domain-error.js';
import type { AgentTool, ToolOutcome } from '../kernel/tool.js';
import type { DeviceMode, DownloadEntry, FillReadBack } from './browser-engine.port.js';
import { loadRunScript, runTimeout } from './browser-run.js';
import { BrowserTexts as T } from './browser-texts.js';
import {
  bounded,
  type BrowserToolHost,
  normaliseUrl,
  OPERATION_TIMEOUT_MS,
  type PageEntry,
  type ScopeState,
  TOOL_TIMEOUT_MS,
} from './browser-state.js';
import { formatSnapshot } from './snapshot-format.js';

const NAV_DEFAULT_TIMEOUT_MS = 30_000;
const WAIT_POLL_MS = 500;
const WAIT_MAX_MS = 30_000;
const QUOTE_MAX = 300;
/** The largest screenshot handed to the model (base64 characters), as the original. */
const IMAGE_MAX_BASE64 = 500_000;

const ok = (output: string): ToolOutcome => ({ output, isError: false });
const fail = (output: string): ToolOutcome => ({ output, isError: true });
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

type Run = (input: Record<string, unknown>, state: ScopeState) => Promise<ToolOutcome>;

interface ToolSpec {
  name: string;
  description: string;
  properties: Record<string, unknown>;
  required?: string[];
  /** Bound of the whole call; TOOL_TIMEOUT_MS unless the tool waits longer by design. */
  outerTimeout?: (input: Record<string, unknown>) => number;
  run: Run;
}

/** The `mcp__ai-browser__*` tools of one scope (docs/api/ai-browser.md, "Tools"). */
export function browserTools(service: BrowserToolHost, scopeKey: string): AgentTool[] {
  const t = new BrowserToolset(service);
  return t.specs().map((spec) => ({
    name: `mcp__${AI_BROWSER_SERVER}__${spec.name}`,
    description: spec.description,
    inputSchema: { type: 'object', properties: spec.properties, required: spec.required ?? [] },
    async run(input, ctx) {
      const state = service.scope(scopeKey);
      const limit = spec.outerTimeout?.(input) ?? TOOL_TIMEOUT_MS;
      // A stopped turn does not wait for a long wait_for or browser_run to end.
      let onAbort: () => void = () => {};
      const stopped = new Promise<ToolOutcome>((resolve) => {
        onAbort = () => resolve(fail('The turn was stopped.'));
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        return await Promise.race([bounded(spec.run(input ?? {}, state), limit, spec.name), stopped]);
      } catch (err) {
        return fail(message(err));
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
    },
  }));
}

const str = { type: 'string' };
const int = { type: 'integer' };
const bool = { type: 'boolean' };
const device = { type: 'string', enum: ['pc', 'h5'], description: 'pc (1280×720 desktop, default) or h5 (phone)' };
const timeout = { type: 'integer', description: 'Milliseconds (default 30000)' };

class BrowserToolset {
  constructor(private readonly s: BrowserToolHost) {}

  specs(): ToolSpec[] {
    return [
      {
        name: 'browser_navigate',
        description:
          'Open a URL in the active browser page (a new page when none is open, or when device differs). Then call browser_snapshot.',
        properties: { url: str, device, timeout },
        required: ['url'],
        run: (i, st) => this.navigate(i, st),
      },
      {
        name: 'browser_wait_for',
        description: 'Wait until the text appears in the page (its accessibility snapshot).',
        properties: { text: str, timeout },
        required: ['text'],
        outerTimeout: (i) => positive(i.timeout, NAV_DEFAULT_TIMEOUT_MS) + 5_000,
        run: (i, st) => this.waitFor(i, st),
      },
      {
        name: 'browser_click',
        description:
          'Click an element by its uid from the latest snapshot (dblClick for a double click, dragTo a uid to drag).',
        properties: { uid: str, dblClick: bool, dragTo: str },
        required: ['uid'],
        run: (i, st) => this.click(String(i.uid ?? ''), i.dblClick === true, optionalString(i.dragTo), st),
      },
      {
        name: 'browser_fill',
        description:
          'Type a value into an element by uid (or choose an option of a select), or several: elements [{uid, value}].',
        properties: {
          uid: str,
          value: str,
          elements: {
            type: 'array',
            items: { type: 'object', properties: { uid: str, value: str }, required: ['uid', 'value'] },
          },
        },
        run: (i, st) => this.fill(i, st),
      },
      {
        name: 'browser_hover',
        description: 'Move the mouse over an element by uid.',
        properties: { uid: str },
        required: ['uid'],
        run: (i, st) => this.hover(i, st),
      },
      {
        name: 'browser_press_key',
        description: 'Press a key or a combination: Enter, Tab, Escape, Control+A, Control+Shift+R.',
        properties: { key: str },
        required: ['key'],
        run: (i, st) => this.pressKey(i, st),
      },
      {
        name: 'browser_upload_file',
        description: "Set the files of an <input type=file> by uid; paths inside the space's working folder.",
        properties: { uid: str, filePath: { oneOf: [str, { type: 'array', items: str, minItems: 1 }] } },
        required: ['uid', 'filePath'],
        run: (i, st) => this.upload(i, st),
      },
      {
        name: 'browser_snapshot',
        description:
          'The page as an accessibility tree with element uids (valid until the next snapshot). filePath saves it to a file instead.',
        properties: { verbose: bool, filePath: str },
        run: (i, st) => this.snapshot(i, st),
      },
      {
        name: 'browser_screenshot',
        description: 'A screenshot of the viewport, the full page (fullPage) or an element (uid).',
        properties: {
          format: { type: 'string', enum: ['png', 'jpeg', 'webp'] },
          quality: { type: 'integer', minimum: 0, maximum: 100 },
          uid: str,
          fullPage: bool,
          filePath: str,
        },
        run: (i, st) => this.screenshot(i, st),
      },
      {
        name: 'browser_evaluate',
        description:
          'Run a JavaScript arrow function in the page, e.g. "() => document.title"; args [{uid}] are passed as elements.',
        properties: { function: str, args: { type: 'array', items: { type: 'object', properties: { uid: str } } } },
        required: ['function'],
        run: (i, st) => this.evaluate(i, st),
      },
      {
        name: 'browser_run',
        description:
          "Run a script file (one async arrow function taking params) in the page: a .js file in the space's working folder or its .claude/skills/. timeout ms (default 60000, at most 120000).",
        properties: { file: str, params: { type: 'object' }, timeout: { type: 'number' } },
        required: ['file'],
        outerTimeout: (i) => runTimeout(i.timeout) + 5_000,
        run: (i, st) => this.run(i, st),
      },
      {
        name: 'browser_tab',
        description: 'Pages of this conversation: list, new (url), select (pageIdx), close (pageIdx).',
        properties: {
          action: { type: 'string', enum: ['list', 'new', 'select', 'close'] },
          url: str,
          device,
          pageIdx: { type: 'number' },
          timeout,
        },
        required: ['action'],
        run: (i, st) => this.tab(i, st),
      },
      {
        name: 'browser_inspect',
        description: 'Network requests or console messages of the active page; id for one in detail.',
        properties: {
          target: { type: 'string', enum: ['network', 'console'] },
          id: { type: 'number' },
          resourceTypes: { type: 'array', items: str },
          types: { type: 'array', items: str },
          limit: int,
          offset: int,
          includePreserved: bool,
        },
        required: ['target'],
        run: (i, st) => this.inspect(i, st),
      },
      {
        name: 'browser_download',
        description:
          "Download url (or wait for the download the page started) into the space's downloads/ folder. timeout ms (default 30000).",
        properties: { url: str, timeout },
        outerTimeout: (i) => positive(i.timeout, NAV_DEFAULT_TIMEOUT_MS) + 5_000,
        run: (i, st) => this.download(i, st),
      },
      // Legacy names the public catalog's digital humans still call.
      {
        name: 'browser_new_page',
        description: 'Open a new page with the URL and make it active (same as browser_tab new).',
        properties: { url: str, device, timeout },
        required: ['url'],
        run: (i, st) => this.newPage(i, st, T.createdNew),
      },
      {
        name: 'browser_list_pages',
        description: 'List the open pages (same as browser_tab list).',
        properties: {},
        run: async (_i, st) => this.listPages(st),
      },
      {
        name: 'browser_select_page',
        description: 'Make page pageIdx active (same as browser_tab select).',
        properties: { pageIdx: { type: 'number' }, bringToFront: bool },
        required: ['pageIdx'],
        run: (i, st) => this.selectPage(i.pageIdx, st),
      },
      {
        name: 'browser_close_page',
        description: 'Close page pageIdx (same as browser_tab close).',
        properties: { pageIdx: { type: 'number' } },
        required: ['pageIdx'],
        run: (i, st) => this.closeTab(i.pageIdx, st),
      },
      {
        name: 'browser_fill_form',
        description: 'Fill several fields: elements [{uid, value}] (same as browser_fill with elements).',
        properties: {
          elements: {
            type: 'array',
            items: { type: 'object', properties: { uid: str, value: str }, required: ['uid', 'value'] },
          },
        },
        required: ['elements'],
        run: (i, st) => this.fill({ elements: i.elements }, st),
      },
      {
        name: 'browser_drag',
        description: 'Drag one element onto another (same as browser_click with dragTo).',
        properties: { from_uid: str, to_uid: str },
        required: ['from_uid', 'to_uid'],
        run: (i, st) => this.click(String(i.from_uid ?? ''), false, String(i.to_uid ?? ''), st),
      },
      {
        name: 'browser_resize',
        description: 'Resize the active page’s viewport.',
        properties: { width: int, height: int },
        required: ['width', 'height'],
        run: (i, st) => this.resize(i, st),
      },
      {
        name: 'browser_wait',
        description: 'Wait a number of milliseconds (at most 30000).',
        properties: { timeout: int },
        required: ['timeout'],
        run: async (i) => {
          const ms = Math.min(WAIT_MAX_MS, positive(i.timeout, 1_000));
          await sleep(ms);
          return ok(T.waited(ms));
        },
      },
    ];
  }

  // --- Pages ---------------------------------------------------------------------------------

  private async navigate(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const url = normaliseUrl(String(input.url ?? ''));
    const wanted = deviceOf(input.device);
    const ms = positive(input.timeout, NAV_DEFAULT_TIMEOUT_MS);
    const active = this.s.active(state);
    if (!active || (wanted !== null && wanted !== active.page.device)) {
      return this.create(state, url, wanted ?? 'pc', ms, (title, u) => T.created(title, u, wanted === 'h5'));
    }
    if (this.s.personControlling(active)) return fail(T.personControlling);
    const problem = await this.s.checkNavigation(url);
    if (problem) return fail(T.navigationFailed(problem));
    return this.busy(active, async () => {
      try {
        await active.page.navigate(url, ms);
      } catch (err) {
        return fail(T.navigationFailed(message(err)));
      }
      state.snapshot = null;
      return ok(T.navigated(active.page.url()));
    });
  }

  private async newPage(
    input: Record<string, unknown>,
    state: ScopeState,
    text: (title: string, url: string) => string,
  ): Promise<ToolOutcome> {
    const url = normaliseUrl(String(input.url ?? ''));
    const mode = deviceOf(input.device) ?? 'pc';
    return this.create(state, url, mode, positive(input.timeout, NAV_DEFAULT_TIMEOUT_MS), text);
  }

  private async create(
    state: ScopeState,
    url: string,
    mode: DeviceMode,
    ms: number,
    text: (title: string, url: string) => string,
  ): Promise<ToolOutcome> {
    const problem = await this.s.checkNavigation(url);
    if (problem) return fail(T.createFailed(problem));
    let entry: PageEntry;
    try {
      entry = await this.s.openScopePage(state, mode);
    } catch (err) {
      return fail(T.createFailed(message(err)));
    }
    return this.busy(entry, async () => {
      try {
        await entry.page.navigate(url, ms);
      } catch (err) {
        await this.s.closePage(entry.viewId);
        return fail(T.createFailed(message(err)));
      }
      entry.title = await bounded(entry.page.title(), OPERATION_TIMEOUT_MS, 'title').catch(() => '');
      return ok(text(entry.title, entry.page.url()));
    });
  }

  private async listPages(state: ScopeState): Promise<ToolOutcome> {
    const pages = this.s.scopePages(state);
    if (pages.length === 0) return ok(T.noPages);
    const lines = await Promise.all(
      pages.map(async (p, i) => {
        p.title = await bounded(p.page.title(), 2_000, 'title').catch(() => p.title);
        return `[${i}] ${p.title} - ${p.page.url()}${state.activeViewId === p.viewId ? ' (active)' : ''}`;
      }),
    );
    return ok([T.pagesHeader, ...lines].join('\n'));
  }

  private async selectPage(rawIdx: unknown, state: ScopeState): Promise<ToolOutcome> {
    if (typeof rawIdx !== 'number') return fail(T.pageIdxRequired('select'));
    const pages = this.s.scopePages(state);
    if (pages.length === 0) return fail(T.noPages);
    const idx = Math.floor(rawIdx);
    const entry = pages[idx];
    if (!entry) return fail(T.invalidIndex(idx, pages.length - 1));
    await this.s.setActive(state, entry);
    return ok(T.selected(idx, entry.title, entry.page.url()));
  }

  private async closeTab(rawIdx: unknown, state: ScopeState): Promise<ToolOutcome> {
    if (typeof rawIdx !== 'number') return fail(T.pageIdxRequired('close'));
    const pages = this.s.scopePages(state);
    if (pages.length === 0) return fail(T.noPages);
    const idx = Math.floor(rawIdx);
    const entry = pages[idx];
    if (!entry) return fail(T.invalidIndex(idx, pages.length - 1));
    if (pages.length === 1) return fail(T.lastPage);
    const wasActive = state.activeViewId === entry.viewId;
    const title = await bounded(entry.page.title(), 2_000, 'title').catch(() => entry.title);
    const url = entry.page.url();
    await this.s.closePage(entry.viewId);
    if (wasActive) {
      const rest = this.s.scopePages(state);
      const next = rest[Math.min(idx, rest.length - 1)];
      if (next) await this.s.setActive(state, next);
    }
    return ok(T.closed(idx, title, url));
  }

  private async tab(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    switch (input.action) {
      case 'list':
        return this.listPages(state);
      case 'new':
        if (typeof input.url !== 'string' || input.url === '') return fail(T.urlRequiredForNew);
        return this.newPage(input, state, (title, url) => T.created(title, url, input.device === 'h5'));
      case 'select':
        return this.selectPage(input.pageIdx, state);
      case 'close':
        return this.closeTab(input.pageIdx, state);
      default:
        return fail('action must be one of list, new, select, close');
    }
  }

  private async resize(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const width = positive(input.width, 0);
    const height = positive(input.height, 0);
    if (width < 100 || height < 100 || width > 4096 || height > 4096)
      return fail('width and height must be 100 to 4096');
    return this.onActive(state, T.noPageShort, async (entry) => {
      await entry.page.setViewport(width, height);
      return ok(T.resized(width, height));
    });
  }

  // --- Reading -------------------------------------------------------------------------------

  private async takeSnapshot(
    entry: PageEntry,
    state: ScopeState,
    verbose: boolean,
    keep = true,
  ): Promise<{ text: string; count: number; title: string; url: string }> {
    const before = entry.page.url();
    const nodes = await bounded(entry.page.accessibilityTree(), OPERATION_TIMEOUT_MS, 'snapshot');
    const title = await bounded(entry.page.title(), OPERATION_TIMEOUT_MS, 'title');
    const url = entry.page.url();
    if (url !== before) throw new Error(T.snapshotChanged);
    entry.title = title;
    const formatted = formatSnapshot(nodes, { title, url }, this.s.nextSnapshotNumber(), verbose);
    if (keep && state.activeViewId === entry.viewId) state.snapshot = { viewId: entry.viewId, uids: formatted.uids };
    return { text: formatted.text, count: formatted.count, title, url };
  }

  private async snapshot(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    return this.onActive(state, T.noPage, async (entry) => {
      let snap;
      try {
        snap = await this.takeSnapshot(entry, state, input.verbose === true);
      } catch (err) {
        return fail(T.snapshotFailed(message(err)));
      }
      const filePath = optionalString(input.filePath);
      if (filePath === undefined) return ok(snap.text);
      const target = await this.outputPath(state, filePath);
      if (typeof target !== 'string') return fail(T.snapshotFailed(target.error));
      await this.write(state, target, snap.text);
      return ok(`Snapshot saved to: ${target}\nPage: ${snap.title}\nURL: ${snap.url}\nElements: ${snap.count}`);
    });
  }

  private async waitFor(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const text = String(input.text ?? '');
    const ms = positive(input.timeout, NAV_DEFAULT_TIMEOUT_MS);
    const started = this.s.now();
    return this.onActive(state, T.noPage, async (entry) => {
      const deadline = Date.now() + ms;
      for (;;) {
        // Polling leaves the model's latest snapshot (and its uids) as they were.
        const snap = await this.takeSnapshot(entry, state, false, false).catch(() => null);
        if (snap && snap.text.includes(text)) return ok(T.textFound(text));
        if (Date.now() + WAIT_POLL_MS > deadline)
          return fail(T.textTimeout(text, Math.max(ms, this.s.now() - started)));
        await sleep(WAIT_POLL_MS);
      }
    });
  }

  private async screenshot(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const uid = optionalString(input.uid);
    const fullPage = input.fullPage === true;
    if (uid !== undefined && fullPage) return fail(T.screenshotBoth);
    return this.onActive(state, T.noPageShort, async (entry) => {
      let node: number | undefined;
      if (uid !== undefined) {
        const found = this.node(state, entry, uid);
        if (found === null) return fail(T.screenshotFailed(T.elementNotFound(uid)));
        node = found;
      }
      try {
        const forModel = await bounded(
          entry.page.screenshot({ format: 'jpeg', quality: 80, node, fullPage }),
          OPERATION_TIMEOUT_MS,
          'screenshot',
        );
        let text =
          uid !== undefined
            ? `Screenshot of element "${uid}".`
            : fullPage
              ? 'Screenshot of full page.'
              : 'Screenshot of current viewport.';
        const filePath = optionalString(input.filePath);
        if (filePath !== undefined) {
          const target = await this.outputPath(state, filePath);
          if (typeof target !== 'string') return fail(T.screenshotFailed(target.error));
          const format = input.format === 'jpeg' || input.format === 'webp' ? input.format : 'png';
          const quality = typeof input.quality === 'number' ? input.quality : undefined;
          const shot =
            format === 'jpeg' && (quality === undefined || quality === 80)
              ? forModel
              : await bounded(
                  entry.page.screenshot({ format, quality: format === 'png' ? undefined : quality, node, fullPage }),
                  OPERATION_TIMEOUT_MS,
                  'screenshot',
                );
          await this.write(state, target, shot.data);
          text += `\nSaved to: ${target}`;
        }
        // The model gets at most IMAGE_MAX_BASE64 characters: lower quality first, then no image.
        let image = forModel;
        for (const quality of [60, 40]) {
          if (base64Length(image.data) <= IMAGE_MAX_BASE64) break;
          image = await bounded(
            entry.page.screenshot({ format: 'jpeg', quality, node, fullPage }),
            OPERATION_TIMEOUT_MS,
            'screenshot',
          );
        }
        if (base64Length(image.data) > IMAGE_MAX_BASE64) {
          return ok(
            `${text}\nThe image is too large to show; save it with filePath, or take the viewport or an element.`,
          );
        }
        return {
          output: text,
          isError: false,
          images: [{ mediaType: image.mimeType, data: image.data.toString('base64') }],
        };
      } catch (err) {
        return fail(T.screenshotFailed(message(err)));
      }
    });
  }

  private async inspect(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    return this.onActive(state, T.noPage, async (entry) => {
      const limit = positive(input.limit, 50) || 50;
      const offset = positive(input.offset, 0);
      const id = typeof input.id === 'number' ? Math.floor(input.id) : undefined;
      if (input.target === 'console') {
        const types = stringList(input.types);
        const all = entry.page.consoleMessages().filter((m) => types.length === 0 || types.includes(m.type));
        if (id !== undefined) {
          const msg = entry.page.consoleMessages().find((m) => m.id === id);
          if (!msg) return fail(`Console message not found: msgid=${id}`);
          return ok(
            `Console message msgid=${id}\nType: ${msg.type}\nTime: ${new Date(msg.timestamp).toISOString()}\n\n${msg.text}`,
          );
        }
        if (all.length === 0) return ok('No console messages.');
        const shown = all.slice(offset, offset + limit);
        const lines = shown.map((m) => `[id=${m.id}] [${m.type}] ${cut(m.text.replace(/\s*\n\s*/g, ' '), 200)}`);
        return ok(pageOf('Console messages', all.length, offset, shown.length, lines));
      }
      if (input.target === 'network') {
        const kinds = stringList(input.resourceTypes);
        const all = entry.page.networkRequests().filter((r) => kinds.length === 0 || kinds.includes(r.resourceType));
        if (id !== undefined) {
          const req = entry.page.networkRequests().find((r) => r.id === id);
          if (!req) return fail(`Network request not found: reqid=${id}`);
          const body = await bounded(entry.page.responseBody(id), OPERATION_TIMEOUT_MS, 'response body').catch(
            () => null,
          );
          const headers = (h: Record<string, string> | null) =>
            h === null
              ? '  (none)'
              : Object.entries(h)
                  .map(([k, v]) => `  ${k}: ${/^(set-)?cookie$/i.test(k) ? '(hidden)' : v}`)
                  .join('\n');
          return ok(
            [
              `Request reqid=${id}`,
              `${req.method} ${req.url}`,
              `Type: ${req.resourceType}`,
              `Status: ${req.status ?? (req.failure ? `failed (${req.failure})` : 'pending')}`,
              `MIME: ${req.mimeType ?? 'unknown'}`,
              `Request headers:\n${headers(req.requestHeaders)}`,
              `Response headers:\n${headers(req.responseHeaders)}`,
              ...(req.postData ? [`Request body:\n${cut(req.postData, 2000)}`] : []),
              ...(body !== null ? [`Response body:\n${cut(body, 4000)}`] : []),
            ].join('\n'),
          );
        }
        if (all.length === 0) return ok('No network requests.');
        const shown = all.slice(offset, offset + limit);
        const lines = shown.map(
          (r) =>
            `[id=${r.id}] ${r.method} ${r.status ?? (r.failure ? 'failed' : 'pending')} ${r.resourceType} ${cut(r.url, 100)}`,
        );
        return ok(pageOf('Network requests', all.length, offset, shown.length, lines));
      }
      return fail('Inspect failed: target must be network or console');
    });
  }

  // --- Acting --------------------------------------------------------------------------------

  private async click(uid: string, dbl: boolean, dragTo: string | undefined, state: ScopeState): Promise<ToolOutcome> {
    return this.onActive(state, T.noPage, async (entry) => {
      const node = this.node(state, entry, uid);
      if (node === null) return fail(T.clickFailed(uid, T.elementNotFound(uid)));
      try {
        if (dragTo !== undefined) {
          const target = this.node(state, entry, dragTo);
          if (target === null) return fail(T.clickFailed(uid, T.elementNotFound(dragTo)));
          await bounded(entry.page.drag(node, target), OPERATION_TIMEOUT_MS, 'drag');
          return ok(T.dragged);
        }
        await bounded(entry.page.click(node, dbl ? 2 : 1), OPERATION_TIMEOUT_MS, 'click');
        return ok(dbl ? T.doubleClicked : T.clicked);
      } catch (err) {
        return fail(T.clickFailed(uid, message(err)));
      }
    });
  }

  private async hover(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const uid = String(input.uid ?? '');
    return this.onActive(state, T.noPageShort, async (entry) => {
      const node = this.node(state, entry, uid);
      if (node === null) return fail(T.hoverFailed(uid, T.elementNotFound(uid)));
      try {
        await bounded(entry.page.hover(node), OPERATION_TIMEOUT_MS, 'hover');
        return ok(T.hovered);
      } catch (err) {
        return fail(T.hoverFailed(uid, message(err)));
      }
    });
  }

  private async pressKey(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const key = String(input.key ?? '');
    return this.onActive(state, T.noPageShort, async (entry) => {
      try {
        await bounded(entry.page.pressKey(key), OPERATION_TIMEOUT_MS, 'key press');
        state.snapshot = state.snapshot?.viewId === entry.viewId ? state.snapshot : null;
        return ok(T.keyPressed(key));
      } catch (err) {
        return fail(T.keyFailed(message(err)));
      }
    });
  }

  private async fill(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const elements = Array.isArray(input.elements)
      ? (input.elements as Array<{ uid?: unknown; value?: unknown }>)
      : null;
    const single = !elements || elements.length === 0;
    if (single && (typeof input.uid !== 'string' || typeof input.value !== 'string')) return fail(T.fillNeedsInput);
    return this.onActive(state, T.noPageShort, async (entry) => {
      if (single) {
        const result = await this.fillOne(state, entry, input.uid as string, input.value as string);
        return result.kind === 'ok'
          ? ok(T.filled)
          : result.kind === 'unconfirmed'
            ? ok(result.text)
            : fail(result.text);
      }
      const errors: string[] = [];
      const unconfirmed: string[] = [];
      for (const element of elements) {
        const uid = String(element.uid ?? '');
        const result = await this.fillOne(state, entry, uid, String(element.value ?? ''));
        if (result.kind === 'error') errors.push(`- ${uid}: ${result.text}`);
        else if (result.kind === 'unconfirmed') unconfirmed.push(`- ${uid}: ${result.text}`);
      }
      const n = elements.length;
      if (errors.length === 0 && unconfirmed.length === 0) return ok(T.filledMany(n));
      if (errors.length === 0) {
        return ok(
          `Filled ${n} form fields; ${unconfirmed.length} could not be read back.\nUnconfirmed:\n${unconfirmed.join('\n')}`,
        );
      }
      const text = `Partially filled form (${n - errors.length}/${n} succeeded).\nErrors:\n${errors.join('\n')}${
        unconfirmed.length > 0 ? `\nUnconfirmed:\n${unconfirmed.join('\n')}` : ''
      }`;
      return { output: text, isError: errors.length === n };
    });
  }

  private async fillOne(
    state: ScopeState,
    entry: PageEntry,
    uid: string,
    value: string,
  ): Promise<{ kind: 'ok' } | { kind: 'unconfirmed' | 'error'; text: string }> {
    const node = this.node(state, entry, uid);
    if (node === null) return { kind: 'error', text: T.fillFailed(uid, T.elementNotFound(uid)) };
    try {
      if (await bounded(entry.page.selectOption(node, value), OPERATION_TIMEOUT_MS, 'select')) return { kind: 'ok' };
      const readBack = await bounded(entry.page.fill(node, value), OPERATION_TIMEOUT_MS, 'fill');
      return judgeFill(uid, value, readBack);
    } catch (err) {
      return { kind: 'error', text: T.fillFailed(uid, message(err)) };
    }
  }

  private async upload(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const uid = String(input.uid ?? '');
    const requested = typeof input.filePath === 'string' ? [input.filePath] : stringList(input.filePath);
    if (requested.length === 0) return fail(T.uploadFailed('filePath is required'));
    return this.onActive(state, T.noPageShort, async (entry) => {
      const real: string[] = [];
      const missing: string[] = [];
      for (const path of requested) {
        const absolute = isAbsolute(path) ? path : resolvePath(state.scope.workDir, path);
        let guarded;
        try {
          guarded = await this.s.fileStore.resolve({ roots: [state.scope.workDir], path: absolute });
        } catch (err) {
          if (err instanceof DomainError) return fail(T.uploadFailed(T.outsideWorkDir(path)));
          throw err;
        }
        const info = await this.s.fileStore.stat(guarded);
        if (!info || info.kind !== 'file') missing.push(absolute);
        else real.push(guarded.real);
      }
      if (missing.length > 0) return fail(T.filesNotFound(missing));
      const node = this.node(state, entry, uid);
      if (node === null) return fail(T.elementNotFound(uid));
      try {
        await bounded(entry.page.uploadFiles(node, real), OPERATION_TIMEOUT_MS, 'upload');
      } catch (err) {
        return fail(T.uploadFailed(message(err)));
      }
      return ok(T.uploaded(requested));
    });
  }

  // --- Scripts -------------------------------------------------------------------------------

  private async evaluate(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const fn = String(input.function ?? '').trim();
    if (fn === '') return fail(T.scriptError('function is required'));
    const args = Array.isArray(input.args) ? (input.args as Array<{ uid?: unknown }>) : [];
    return this.onActive(state, T.noPageShort, async (entry) => {
      const nodes: number[] = [];
      for (const arg of args) {
        const uid = String(arg?.uid ?? '');
        const node = this.node(state, entry, uid);
        if (node === null) return fail(T.scriptError(T.elementNotFound(uid)));
        nodes.push(node);
      }
      const outcome = await entry.page.evaluate(fn, nodes, OPERATION_TIMEOUT_MS).catch((err: unknown) => ({
        ok: false as const,
        error: message(err),
      }));
      return outcome.ok ? ok(T.scriptResult(showValue(outcome.value))) : fail(T.scriptError(outcome.error));
    });
  }

  private async run(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const file = String(input.file ?? '');
    const ms = runTimeout(input.timeout);
    const params = input.params && typeof input.params === 'object' ? input.params : {};
    return this.onActive(state, T.noPage, async (entry) => {
      const script = await loadRunScript(file, state.scope.workDir, this.s.fileStore);
      if ('error' in script) return fail(T.runFailed(script.error));
      const outcome = await entry.page.runScript(script.source, params, ms).catch((err: unknown) => ({
        ok: false as const,
        error: message(err),
      }));
      if ('timedOut' in outcome) return fail(T.runTimedOut(ms));
      return outcome.ok ? ok(T.runOk(showValue(outcome.value))) : fail(T.runFailed(outcome.error));
    });
  }

  // --- Downloads -----------------------------------------------------------------------------

  private async download(input: Record<string, unknown>, state: ScopeState): Promise<ToolOutcome> {
    const ms = positive(input.timeout, NAV_DEFAULT_TIMEOUT_MS);
    const url = optionalString(input.url);
    return this.onActive(state, T.noPage, async (entry) => {
      const started = this.s.now();
      if (url !== undefined) {
        let parsed: URL;
        try {
          parsed = new URL(url);
        } catch {
          return fail(T.downloadInvalidUrl);
        }
        if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
          return fail(T.downloadProtocol(parsed.protocol));
        if (await this.s.checkNavigation(url)) return fail(T.downloadPolicy(url));
        for (const d of entry.page.downloads()) if (d.state !== 'in_progress') entry.reportedDownloads.add(d.id);
        await bounded(entry.page.startDownload(url), OPERATION_TIMEOUT_MS, 'download').catch(() => undefined);
      }
      const deadline = Date.now() + ms;
      for (;;) {
        const done = entry.page
          .downloads()
          .find((d) => d.state !== 'in_progress' && !entry.reportedDownloads.has(d.id));
        if (done) {
          entry.reportedDownloads.add(done.id);
          return { output: describeDownload(done, this.s.now() - started), isError: done.state !== 'completed' };
        }
        if (Date.now() >= deadline) return fail(T.downloadTimeout(ms));
        await sleep(200);
      }
    });
  }

  // --- Helpers -------------------------------------------------------------------------------

  /** Runs `fn` on the active page: the no-page text, or the takeover refusal, or its answer. */
  private async onActive(
    state: ScopeState,
    noPageText: string,
    fn: (entry: PageEntry) => Promise<ToolOutcome>,
  ): Promise<ToolOutcome> {
    const entry = this.s.active(state);
    if (!entry) return fail(noPageText);
    if (this.s.personControlling(entry)) return fail(T.personControlling);
    return this.busy(entry, () => fn(entry));
  }

  private async busy(entry: PageEntry, fn: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
    entry.busy++;
    entry.lastUsed = this.s.now();
    try {
      return await fn();
    } finally {
      entry.busy--;
      entry.lastUsed = this.s.now();
    }
  }

  /** The backend node of `uid`: only from the latest snapshot, and only of the page active now. */
  private node(state: ScopeState, entry: PageEntry, uid: string): number | null {
    if (!state.snapshot || state.snapshot.viewId !== entry.viewId) return null;
    return state.snapshot.uids.get(uid) ?? null;
  }

  /** A `filePath` output inside the scope's working folder (absolute), or why not. */
  private async outputPath(state: ScopeState, path: string): Promise<string | { error: string }> {
    const absolute = isAbsolute(path) ? path : resolvePath(state.scope.workDir, path);
    try {
      const guarded = await this.s.fileStore.resolve({ roots: [state.scope.workDir], path: absolute });
      return guarded.path;
    } catch (err) {
      if (err instanceof DomainError) return { error: T.outsideWorkDir(path) };
      throw err;
    }
  }

  private async write(state: ScopeState, path: string, content: string | Buffer): Promise<void> {
    const guarded = await this.s.fileStore.resolve({ roots: [state.scope.workDir], path });
    const folder = await this.s.fileStore.resolve({
      roots: [state.scope.workDir],
      path: resolvePath(guarded.path, '..'),
      allowRoot: true,
    });
    await this.s.fileStore.makeFolder(folder).catch(() => undefined);
    await this.s.fileStore.writeAtomic(guarded, content);
  }
}

/** The fill's outcome from what the element reads back (§2.3: passwords by length only). */
export function judgeFill(
  uid: string,
  wanted: string,
  readBack: FillReadBack,
): { kind: 'ok' } | { kind: 'unconfirmed' | 'error'; text: string } {
  switch (readBack.kind) {
    case 'focus-elsewhere':
      return { kind: 'error', text: T.fillFailed(uid, T.focusElsewhere) };
    case 'cross-origin-frame':
      return { kind: 'error', text: T.fillFailed(uid, T.crossOriginFrame) };
    case 'unreadable':
      return {
        kind: 'unconfirmed',
        text: `Typed into ${uid}, but this element has no value to read back. Check it with browser_snapshot before submitting.`,
      };
    case 'field': {
      const got = readBack.value.replace(/\r\n/g, '\n');
      if (got === wanted.replace(/\r\n/g, '\n')) return { kind: 'ok' };
      if (readBack.secret) {
        return {
          kind: 'error',
          text: `Filled ${uid}, but the field holds ${got.length} characters, not the requested ${wanted.length}. Check the field's limits, then fill it again.`,
        };
      }
      return {
        kind: 'error',
        text: `Filled ${uid}, but the field reads "${cut(got, QUOTE_MAX)}", not the requested "${cut(wanted, QUOTE_MAX)}". The page may format or limit this field; check it with browser_snapshot.`,
      };
    }
    case 'editable': {
      const norm = (s: string) =>
        s
          .replace(/[\u200b-\u200d\ufeff]/g, '')
          .replace(/\s+/g, ' ')
          .trim();
      if (norm(readBack.text) === norm(wanted)) return { kind: 'ok' };
      return {
        kind: 'error',
        text: `Filled ${uid}, but the field reads "${cut(norm(readBack.text), QUOTE_MAX)}", not the requested "${cut(norm(wanted), QUOTE_MAX)}". The editor may have changed the text; check it with browser_snapshot.`,
      };
    }
  }
}

/** A script's value as the tools show it: objects as pretty JSON, anything else as String(v). */
export function showValue(value: unknown): string {
  if (value !== null && typeof value === 'object') return JSON.stringify(value, null, 2) ?? '{}';
  return String(value);
}

function describeDownload(d: DownloadEntry, elapsedMs: number): string {
  const size = d.totalBytes >= 0 ? d.totalBytes : d.receivedBytes;
  return [
    `Download ${d.state}:`,
    `File: ${d.savePath ? basename(d.savePath) : d.filename}`,
    `Path: ${d.savePath ?? '(not saved)'}`,
    `Size: ${size} bytes`,
    `MIME: ${d.mimeType ?? 'unknown'}`,
    `Duration: ${d.endTime !== null ? d.endTime - d.startTime : elapsedMs}ms`,
    ...(d.error ? [`Error: ${d.error}`] : []),
  ].join('\n');
}

function pageOf(what: string, total: number, offset: number, shown: number, lines: string[]): string {
  const head = `${what} (${offset + 1}-${offset + shown} of ${total}):`;
  const more = offset + shown < total ? `\nUse offset=${offset + shown} to see more.` : '';
  return `${head}\n${lines.join('\n')}${more}`;
}

function base64Length(data: Buffer): number {
  return Math.ceil(data.length / 3) * 4;
}

function deviceOf(raw: unknown): DeviceMode | null {
  return raw === 'pc' || raw === 'h5' ? raw : null;
}

function positive(raw: unknown, fallback: number): number {
  return typeof raw === 'number' && Number.isFinite(raw) && raw > 0 ? Math.floor(raw) : fallback;
}

function optionalString(raw: unknown): string | undefined {
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

function stringList(raw: unknown): string[] {
  return Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
