import type { BrowserViewerInput } from '#contracts/browser.js';
import type { BrowserStorageState } from '#core/browser/ai-browser.js';
import {
  type AxNode,
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

/** A page of the fake site: its title and accessibility tree. */
export interface FakeSitePage {
  title: string;
  nodes: AxNode[];
}

/** An accessibility node for fake pages: `ax('button', 'OK', 7)`. */
export function ax(
  role: string,
  name: string,
  backendNodeId: number | null,
  children: AxNode[] = [],
  extra: Partial<AxNode> = {},
): AxNode[] {
  const id = `ax-${backendNodeId ?? Math.random().toString(36).slice(2)}`;
  const self: AxNode = {
    id,
    role,
    name,
    ignored: false,
    backendNodeId,
    childIds: children.filter((c, _i, all) => !all.some((p) => p.childIds.includes(c.id))).map((c) => c.id),
    properties: {},
    ...extra,
  };
  return [self, ...children];
}

/**
 * A BrowserEngine in memory: pages of a fake site (URL → title and tree), element actions
 * recorded, scripts answered by a test-given function. Enough to check the tools' texts and
 * the service's page bookkeeping without Chromium.
 */
export class FakeBrowserEngine extends BrowserEngine {
  readonly site = new Map<string, FakeSitePage>();
  readonly pages: FakeEnginePage[] = [];
  readonly actions: string[] = [];
  /** Answers `runScript`/`evaluate`; a test replaces it. */
  script: (source: string, params: unknown) => Promise<ScriptOutcome | { timedOut: true }> = async () => ({
    ok: true,
    value: null,
  });
  fillReadBack: (node: number, value: string) => FillReadBack = (_node, value) => ({
    kind: 'field',
    value,
    secret: false,
  });
  hosts = new Map<string, string[]>();
  storage: BrowserStorageState | null = { cookies: [], origins: [] };

  async openPage(options: OpenPageOptions): Promise<EnginePage> {
    const page = new FakeEnginePage(this, options);
    this.pages.push(page);
    return page;
  }

  async storageState(): Promise<BrowserStorageState | null> {
    return this.storage;
  }

  async resolveHost(host: string): Promise<string[]> {
    return this.hosts.get(host) ?? ['93.184.216.34'];
  }

  ownAddresses(): string[] {
    return ['10.1.2.3'];
  }

  async shutdown(): Promise<void> {}

  /** Bytes each open page costs in `memoryBytes` (0: the engine says nothing of its memory). */
  bytesPerPage = 0;

  override async memoryBytes(): Promise<number | null> {
    return this.bytesPerPage === 0 ? null : this.pages.filter((p) => !p.isClosed()).length * this.bytesPerPage;
  }
}

export class FakeEnginePage implements EnginePage {
  readonly device: DeviceMode;
  private current = 'about:blank';
  private closed = false;
  private readonly listeners: Array<(reason: 'closed' | 'crashed') => void> = [];
  readonly inputs: Array<Exclude<BrowserViewerInput, { type: 'ack' }>> = [];
  screencast: ((frame: ScreencastFrame) => void) | null = null;

  constructor(
    private readonly engine: FakeBrowserEngine,
    readonly options: OpenPageOptions,
  ) {
    this.device = options.device;
  }

  url(): string {
    return this.current;
  }
  async title(): Promise<string> {
    return this.engine.site.get(this.current)?.title ?? '';
  }
  async navigate(url: string): Promise<void> {
    const problem = await this.options.checkNavigation(url);
    if (problem) throw new Error(problem);
    if (!this.engine.site.has(url)) throw new Error(`net::ERR_NAME_NOT_RESOLVED at ${url}`);
    this.current = url;
  }
  async accessibilityTree(): Promise<AxNode[]> {
    return this.engine.site.get(this.current)?.nodes ?? [];
  }
  async click(node: number, clickCount: 1 | 2): Promise<void> {
    this.engine.actions.push(`click ${node} x${clickCount}`);
  }
  async drag(from: number, to: number): Promise<void> {
    this.engine.actions.push(`drag ${from} ${to}`);
  }
  async hover(node: number): Promise<void> {
    this.engine.actions.push(`hover ${node}`);
  }
  async fill(node: number, value: string): Promise<FillReadBack> {
    this.engine.actions.push(`fill ${node} ${value}`);
    return this.engine.fillReadBack(node, value);
  }
  async selectOption(): Promise<boolean> {
    return false;
  }
  async uploadFiles(node: number, paths: string[]): Promise<void> {
    this.engine.actions.push(`upload ${node} ${paths.join(',')}`);
  }
  async pressKey(key: string): Promise<void> {
    this.engine.actions.push(`key ${key}`);
  }
  async evaluate(fn: string): Promise<ScriptOutcome> {
    const outcome = await this.engine.script(fn, undefined);
    return 'timedOut' in outcome ? { ok: false, error: 'timed out' } : outcome;
  }
  runScript(source: string, params: unknown): Promise<ScriptOutcome | { timedOut: true }> {
    return this.engine.script(source, params);
  }
  async screenshot(request: ScreenshotRequest): Promise<{ data: Buffer; mimeType: string }> {
    return { data: Buffer.from('fake-image'), mimeType: `image/${request.format}` };
  }
  async setViewport(width: number, height: number): Promise<void> {
    this.engine.actions.push(`viewport ${width}x${height}`);
  }
  consoleMessages(): ConsoleEntry[] {
    return [];
  }
  networkRequests(): NetworkEntry[] {
    return [];
  }
  async responseBody(): Promise<string | null> {
    return null;
  }
  downloads(): DownloadEntry[] {
    return [];
  }
  async startDownload(): Promise<void> {}
  async startScreencast(onFrame: (frame: ScreencastFrame) => void): Promise<void> {
    this.screencast = onFrame;
  }
  async stopScreencast(): Promise<void> {
    // A round trip to the browser, as with CDP: a start asked for meanwhile may overtake it.
    await new Promise((resolve) => setImmediate(resolve));
    this.screencast = null;
  }
  async dispatchInput(input: Exclude<BrowserViewerInput, { type: 'ack' }>): Promise<void> {
    this.inputs.push(input);
  }
  onClosed(listener: (reason: 'closed' | 'crashed') => void): void {
    this.listeners.push(listener);
  }
  isClosed(): boolean {
    return this.closed;
  }
  async close(): Promise<void> {
    this.end('closed');
  }
  /** The renderer died. */
  crash(): void {
    this.end('crashed');
  }
  private end(reason: 'closed' | 'crashed'): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.listeners) l(reason);
  }
}
