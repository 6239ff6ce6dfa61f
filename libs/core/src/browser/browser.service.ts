import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import {
  type BrowserFrame,
  type BrowserLivePage,
  type BrowserStopResult,
  BrowserChannels,
  type BrowserViewerInput,
} from '#contracts/browser.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import type { AgentTool } from '../kernel/tool.js';
import { Clock } from '../ports/clock.port.js';
import { EventBus } from '../ports/event-bus.port.js';
import { FileStore } from '../ports/file-store.port.js';
import { AiBrowser, BrowserProfiles, type BrowserScope, type PageViewer, type PageWatch } from './ai-browser.js';
import { BrowserEngine, type DeviceMode } from './browser-engine.port.js';
import { type BrowserPolicy, browserPolicy, navigationProblem } from './browser-policy.js';
import { BrowserTexts } from './browser-texts.js';
import { browserTools } from './browser-tools.js';
import {
  bounded,
  type BrowserToolHost,
  IDLE_REAP_MS,
  normaliseUrl,
  OPERATION_TIMEOUT_MS,
  type PageEntry,
  type ScopeState,
  TAKEOVER_HOLD_MS,
  TOOL_TIMEOUT_MS,
} from './browser-state.js';

/**
 * The AI browser (docs/api/ai-browser.md) over the BrowserEngine port: per-scope state, the
 * `mcp__ai-browser__*` tools, profiles saved after turns and sign-ins, live views with takeover.
 */
@Injectable()
export class BrowserService extends AiBrowser implements BrowserToolHost, OnModuleDestroy {
  private readonly logger = new Logger('AiBrowser');
  private readonly pages = new Map<string, PageEntry>();
  private readonly scopes = new Map<string, ScopeState>();
  private snapshotCounter = 0;
  private policyCache: BrowserPolicy | null = null;
  private readonly reaper: ReturnType<typeof setInterval>;

  constructor(
    private readonly engine: BrowserEngine,
    private readonly profiles: BrowserProfiles,
    private readonly files: FileStore,
    private readonly events: EventBus,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
    this.reaper = setInterval(() => void this.reapIdle(), 60_000);
    this.reaper.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.reaper);
    for (const entry of [...this.pages.values()]) await entry.page.close().catch(() => undefined);
    await this.engine.shutdown().catch(() => undefined);
  }

  // --- AiBrowser -------------------------------------------------------------------------

  tools(scope: BrowserScope): AgentTool[] {
    const state = this.scopes.get(scope.key);
    if (state) state.scope = scope;
    else this.scopes.set(scope.key, { scope, viewIds: [], activeViewId: null, snapshot: null });
    return browserTools(this, scope.key);
  }

  async turnEnded(scope: BrowserScope): Promise<void> {
    await this.saveProfile(scope.profile);
  }

  async release(scopeKey: string): Promise<void> {
    const state = this.scopes.get(scopeKey);
    if (!state) return;
    await this.saveProfile(state.scope.profile);
    for (const viewId of [...state.viewIds]) await this.closePage(viewId);
    this.scopes.delete(scopeKey);
    if (state.scope.conversationId !== null) {
      await this.publish(BrowserChannels.conversationReleased, { conversationId: state.scope.conversationId });
    }
  }

  async livePages(filter: { spaceId?: string; conversationId?: string }): Promise<BrowserLivePage[]> {
    const out: BrowserLivePage[] = [];
    for (const state of this.scopes.values()) {
      const { conversationId, spaceId } = state.scope;
      if (conversationId === null) continue;
      if (filter.spaceId !== undefined && filter.spaceId !== spaceId) continue;
      if (filter.conversationId !== undefined && filter.conversationId !== conversationId) continue;
      for (const viewId of state.viewIds) {
        const entry = this.pages.get(viewId);
        if (!entry || entry.page.isClosed()) continue;
        entry.title = await bounded(entry.page.title(), 2_000, 'title').catch(() => entry.title);
        out.push({
          viewId,
          conversationId,
          spaceId,
          url: entry.page.url(),
          title: entry.title,
          owned: true,
          active: state.activeViewId === viewId,
        });
      }
    }
    return out;
  }

  async stopPage(viewId: string, conversationId: string | null): Promise<BrowserStopResult> {
    const entry = this.pages.get(viewId);
    if (!entry || entry.scopeKey === null) return { stopped: false, reason: 'not-owned' };
    if (conversationId !== null && entry.conversationId !== conversationId)
      return { stopped: false, reason: 'not-owned' };
    if (entry.busy > 0) return { stopped: false, reason: 'in-use' };
    await this.closePage(viewId);
    return { stopped: true };
  }

  async openLogin(spaceId: string, url: string): Promise<{ viewId: string }> {
    const target = normaliseUrl(url);
    const problem = await this.checkNavigation(target);
    if (problem) throw DomainError.invalid(problem);
    const entry = await this.createPage(
      { profile: spaceId, spaceId, scopeKey: null, conversationId: null },
      'pc',
      null,
    );
    await entry.page.navigate(target, 30_000).catch((err: Error) => {
      this.logger.warn(`sign-in page ${entry.viewId} did not load ${target}: ${err.message}`);
    });
    return { viewId: entry.viewId };
  }

  async finishLogin(viewId: string): Promise<{ saved: true }> {
    const entry = this.pages.get(viewId);
    if (!entry || entry.scopeKey !== null) throw DomainError.notFound('No such sign-in session');
    await this.saveProfile(entry.profile);
    await this.closePage(viewId);
    return { saved: true };
  }

  async watch(viewId: string, viewer: PageViewer): Promise<PageWatch | null> {
    const entry = this.pages.get(viewId);
    if (!entry || entry.page.isClosed()) return null;
    entry.viewers.add(viewer);
    // Chromium sends a frame only when the page repaints: a viewer joining a screencast that
    // already runs gets the screen as it is now, or a still page would leave it empty.
    const last = this.frameAcks.get(entry)?.last;
    if (last) viewer.frame(last);
    try {
      await this.syncScreencast(entry);
    } catch (err) {
      entry.viewers.delete(viewer);
      throw err;
    }
    let closed = false;
    return {
      input: async (message: BrowserViewerInput) => {
        if (closed || entry.page.isClosed()) return;
        if (message.type === 'ack') {
          this.ackFrame(entry, viewer, message.seq);
          return;
        }
        entry.lastInputAt = this.clock.now();
        entry.lastUsed = entry.lastInputAt;
        await bounded(entry.page.dispatchInput(message), OPERATION_TIMEOUT_MS, 'input').catch((err: Error) =>
          this.logger.debug(`live-view input on ${viewId} failed: ${err.message}`),
        );
      },
      close: async () => {
        if (closed) return;
        closed = true;
        entry.viewers.delete(viewer);
        await this.syncScreencast(entry).catch(() => undefined);
      },
    };
  }

  // --- What the tools use ----------------------------------------------------------------

  scope(scopeKey: string): ScopeState {
    const state = this.scopes.get(scopeKey);
    if (!state) throw new Error('the browser of this turn was released');
    return state;
  }

  entry(viewId: string): PageEntry | undefined {
    return this.pages.get(viewId);
  }

  /** The scope's active page, if it still lives. */
  active(state: ScopeState): PageEntry | null {
    if (state.activeViewId === null) return null;
    const entry = this.pages.get(state.activeViewId);
    if (!entry || entry.page.isClosed()) {
      state.activeViewId = null;
      return null;
    }
    return entry;
  }

  /** The scope's live pages in opening order (browser_tab's indices). */
  scopePages(state: ScopeState): PageEntry[] {
    return state.viewIds.map((id) => this.pages.get(id)).filter((e): e is PageEntry => !!e && !e.page.isClosed());
  }

  personControlling(entry: PageEntry): boolean {
    return entry.viewers.size > 0 && this.clock.now() - entry.lastInputAt < TAKEOVER_HOLD_MS;
  }

  nextSnapshotNumber(): number {
    return ++this.snapshotCounter;
  }

  now(): number {
    return this.clock.now();
  }

  get fileStore(): FileStore {
    return this.files;
  }

  get maxDownloadBytes(): number {
    return this.config.browser.downloadMaxBytes;
  }

  async checkNavigation(url: string): Promise<string | null> {
    this.policyCache ??= browserPolicy(
      this.config.browser.allow,
      this.config.browser.block,
      this.engine.ownAddresses(),
    );
    return navigationProblem(url, this.policyCache, (host) => this.engine.resolveHost(host));
  }

  /** Opens a page for the scope and makes it the active one (the active-view event). */
  async openScopePage(state: ScopeState, device: DeviceMode): Promise<PageEntry> {
    const { scope } = state;
    const downloads = await this.files.resolve({ roots: [scope.workDir], path: 'downloads', base: scope.workDir });
    const entry = await this.createPage(
      { profile: scope.profile, spaceId: scope.spaceId, scopeKey: scope.key, conversationId: scope.conversationId },
      device,
      downloads.real,
    );
    state.viewIds.push(entry.viewId);
    await this.setActive(state, entry);
    return entry;
  }

  async setActive(state: ScopeState, entry: PageEntry): Promise<void> {
    state.activeViewId = entry.viewId;
    state.snapshot = null;
    if (state.scope.conversationId === null) return;
    entry.title = await bounded(entry.page.title(), 2_000, 'title').catch(() => entry.title);
    await this.publish(BrowserChannels.activeViewChanged, {
      conversationId: state.scope.conversationId,
      spaceId: state.scope.spaceId,
      viewId: entry.viewId,
      owned: true,
      url: entry.page.url(),
      title: entry.title,
    });
  }

  async closePage(viewId: string): Promise<void> {
    const entry = this.pages.get(viewId);
    if (!entry) return;
    await bounded(entry.page.close(), OPERATION_TIMEOUT_MS, 'close').catch(() => undefined);
    await this.forget(entry);
  }

  // --- Inside ------------------------------------------------------------------------------

  private async createPage(
    owner: Pick<PageEntry, 'profile' | 'spaceId' | 'scopeKey' | 'conversationId'>,
    device: DeviceMode,
    downloadDir: string | null,
  ): Promise<PageEntry> {
    const open = [...this.pages.values()].filter((e) => !e.page.isClosed()).length;
    if (open >= this.config.browser.maxPages) throw new Error(BrowserTexts.tooManyPages(this.config.browser.maxPages));
    await this.withinMemoryBudget(owner.scopeKey);
    const page = await bounded(
      this.engine.openPage({
        profile: owner.profile,
        device,
        downloadDir,
        downloadMaxBytes: this.config.browser.downloadMaxBytes,
        checkNavigation: (url) => this.checkNavigation(url),
      }),
      TOOL_TIMEOUT_MS,
      'opening a page',
    );
    const entry: PageEntry = {
      ...owner,
      viewId: `ai-browser-${this.clock.now()}-${randomBytes(3).toString('hex')}`,
      page,
      title: '',
      lastUsed: this.clock.now(),
      viewers: new Set(),
      lastInputAt: 0,
      busy: 0,
      reportedDownloads: new Set(),
    };
    this.pages.set(entry.viewId, entry);
    page.onClosed((reason) => {
      if (reason === 'crashed') this.logger.warn(`page ${entry.viewId} crashed`);
      void this.forget(entry);
    });
    return entry;
  }

  /** Drops a closed page from every table; viewers are told, conversations get view-gone. */
  private async forget(entry: PageEntry): Promise<void> {
    if (this.pages.get(entry.viewId) !== entry) return;
    this.pages.delete(entry.viewId);
    for (const viewer of entry.viewers) viewer.ended('The page closed');
    entry.viewers.clear();
    const state = entry.scopeKey === null ? undefined : this.scopes.get(entry.scopeKey);
    if (state) {
      state.viewIds = state.viewIds.filter((id) => id !== entry.viewId);
      if (state.activeViewId === entry.viewId) state.activeViewId = null;
      if (state.snapshot?.viewId === entry.viewId) state.snapshot = null;
    }
    if (entry.conversationId !== null) await this.publish(BrowserChannels.viewGone, { viewId: entry.viewId });
  }

  private async saveProfile(profile: string): Promise<void> {
    try {
      const state = await bounded(this.engine.storageState(profile), OPERATION_TIMEOUT_MS, 'storage state');
      if (state) await this.profiles.save(profile, state);
    } catch (err) {
      this.logger.warn(`could not save browser profile ${profile}: ${(err as Error).message}`);
    }
  }

  private readonly frameAcks = new WeakMap<
    PageEntry,
    { seq: number; pending: Map<number, () => Promise<void>>; last: BrowserFrame | null }
  >();

  /** Each page's screencast starts and stops one step at a time (see `syncScreencast`). */
  private readonly screencastSteps = new WeakMap<PageEntry, Promise<void>>();

  /**
   * Runs the page's screencast while anyone watches. Starts and stops are chained per page and
   * each looks at the viewers as they are when it runs: a viewer leaving while another joins (a
   * view opened again) could otherwise stop the screencast the newcomer had just started, and
   * leave it waiting for frames that never come.
   */
  private syncScreencast(entry: PageEntry): Promise<void> {
    const step = (this.screencastSteps.get(entry) ?? Promise.resolve()).then(async () => {
      const running = this.frameAcks.has(entry);
      if (entry.page.isClosed()) return;
      if (entry.viewers.size > 0 && !running) await this.startScreencast(entry);
      else if (entry.viewers.size === 0 && running) {
        this.frameAcks.delete(entry);
        await entry.page.stopScreencast().catch(() => undefined);
      }
    });
    // The chain goes on after a failed step; the caller that asked for it hears of the failure.
    this.screencastSteps.set(
      entry,
      step.catch(() => undefined),
    );
    return step;
  }

  private async startScreencast(entry: PageEntry): Promise<void> {
    const acks = {
      seq: 0,
      pending: new Map<number, () => Promise<void>>(),
      last: null as BrowserFrame | null,
    };
    this.frameAcks.set(entry, acks);
    await entry.page
      .startScreencast((frame) => {
        const seq = ++acks.seq;
        acks.pending.set(seq, frame.ack);
        // A viewer that stops acknowledging must not stall the others for long.
        setTimeout(() => this.ackFrame(entry, null, seq), 1_000).unref();
        const sent: BrowserFrame = { type: 'frame', data: frame.data, width: frame.width, height: frame.height, seq };
        acks.last = sent;
        for (const viewer of entry.viewers) viewer.frame(sent);
      })
      .catch((err: unknown) => {
        this.frameAcks.delete(entry);
        throw err;
      });
  }

  private ackFrame(entry: PageEntry, _viewer: PageViewer | null, seq: number): void {
    const acks = this.frameAcks.get(entry);
    const ack = acks?.pending.get(seq);
    if (!acks || !ack) return;
    for (const key of acks.pending.keys()) if (key <= seq) acks.pending.delete(key);
    void ack().catch(() => undefined);
  }

  /**
   * Room for one more page within the memory budget: over it, the least recently used pages of
   * other scopes that nobody watches or uses are closed first (as the idle reaper would later),
   * then a page that still does not fit is refused with the tool's error.
   */
  private async withinMemoryBudget(forScope: string | null): Promise<void> {
    const budgetMb = this.config.browser.memoryBudgetMb ?? 0;
    if (budgetMb <= 0) return;
    const budget = budgetMb * 1024 * 1024;
    let used = await this.engine.memoryBytes().catch(() => null);
    if (used === null || used < budget) return;
    const idle = [...this.pages.values()]
      .filter((e) => e.scopeKey !== forScope && e.viewers.size === 0 && e.busy === 0 && !e.page.isClosed())
      .sort((a, b) => a.lastUsed - b.lastUsed);
    for (const entry of idle) {
      this.logger.warn(`closing idle page ${entry.viewId} of ${entry.scopeKey}: the browser is over its memory budget`);
      await this.closePage(entry.viewId);
      used = await this.engine.memoryBytes().catch(() => null);
      if (used === null || used < budget) return;
    }
    throw new Error(BrowserTexts.memoryBudget(budgetMb));
  }

  /** Closes pages idle for IDLE_REAP_MS, unless watched or in use (every minute). */
  async reapIdle(): Promise<void> {
    const now = this.clock.now();
    for (const entry of [...this.pages.values()]) {
      if (entry.viewers.size > 0 || entry.busy > 0) continue;
      if (now - entry.lastUsed > IDLE_REAP_MS) await this.closePage(entry.viewId);
    }
  }

  private async publish<C extends (typeof BrowserChannels)[keyof typeof BrowserChannels]>(
    channel: C,
    data: Parameters<EventBus['publish']>[1] & object,
  ): Promise<void> {
    await this.events
      .publish(channel, data as never)
      .catch((err: Error) => this.logger.warn(`could not publish ${channel}: ${err.message}`));
  }
}
