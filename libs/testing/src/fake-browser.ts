import type { BrowserFrame, BrowserLivePage, BrowserStopResult, BrowserViewerInput } from '#contracts/browser.js';
import {
  AiBrowser,
  BrowserProfiles,
  type BrowserScope,
  type BrowserStorageState,
  type PageViewer,
  type PageWatch,
} from '#core/browser/ai-browser.js';
import { LivePageRegistry, type ReplicaPages } from '#core/browser/live-page-registry.js';
import { DomainError } from '#core/errors/domain-error.js';
import type { AgentTool } from '#core/kernel/tool.js';

interface FakePage {
  page: BrowserLivePage;
  /** A sign-in page (no conversation's). */
  login: boolean;
  profile: string;
  viewers: Set<PageViewer>;
  busy: boolean;
}

/**
 * An AiBrowser without Chromium: pages are records, a live view sends one frame per `pushFrame`,
 * input is recorded, a sign-in's "cookies" are what `signIn` put there and `finishLogin` saves
 * them into the profiles given.
 */
export class FakeAiBrowser extends AiBrowser {
  readonly pages = new Map<string, FakePage>();
  readonly inputs: Array<{ viewId: string; input: BrowserViewerInput }> = [];
  private readonly pendingCookies = new Map<string, BrowserStorageState['cookies']>();
  private seq = 0;
  private next = 1;

  constructor(
    private readonly profiles: BrowserProfiles | null = null,
    private readonly prefix = 'view',
  ) {
    super();
  }

  /** What turns did with their scopes, in order (`tools <key> <kind> <profile>`, `turnEnded <key>`, `release <key>`). */
  readonly calls: string[] = [];
  /** Set to make the end-of-turn work fail. */
  failing = false;

  /** One tool per scope, answering what it was asked. */
  tools(scope: BrowserScope): AgentTool[] {
    this.calls.push(`tools ${scope.key} ${scope.kind} ${scope.profile}`);
    return [
      {
        name: 'mcp__ai-browser__browser_navigate',
        description: 'Opens a page',
        inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
        run: async (input) => ({ output: `Navigated to: ${String(input.url)}`, isError: false }),
      },
    ];
  }

  async turnEnded(scope: BrowserScope): Promise<void> {
    this.calls.push(`turnEnded ${scope.key}`);
    if (this.failing) throw new Error('profile store down');
  }

  async release(scopeKey: string): Promise<void> {
    this.calls.push(`release ${scopeKey}`);
  }

  /** A conversation's page, as a turn's browser_navigate would open it. */
  openPage(conversationId: string, spaceId: string, url: string): string {
    const viewId = `${this.prefix}-${this.next++}`;
    this.pages.set(viewId, {
      page: { viewId, conversationId, spaceId, url, title: 'Page', owned: true, active: true },
      login: false,
      profile: spaceId,
      viewers: new Set(),
      busy: false,
    });
    return viewId;
  }

  /** What a person's sign-in would leave in the page's cookie jar. */
  signIn(viewId: string, cookies: BrowserStorageState['cookies']): void {
    this.pendingCookies.set(viewId, cookies);
  }

  /** One screencast frame to every viewer of `viewId`. */
  pushFrame(viewId: string): void {
    const frame: BrowserFrame = { type: 'frame', data: 'AAAA', width: 1280, height: 720, seq: ++this.seq };
    for (const viewer of this.pages.get(viewId)?.viewers ?? []) viewer.frame(frame);
  }

  /** The page closes (a crash, a reap): viewers are told. */
  closePage(viewId: string, reason = 'The page closed'): void {
    const entry = this.pages.get(viewId);
    this.pages.delete(viewId);
    for (const viewer of entry?.viewers ?? []) viewer.ended(reason);
  }

  viewerCount(viewId: string): number {
    return this.pages.get(viewId)?.viewers.size ?? 0;
  }

  async livePages(filter: { spaceId?: string; conversationId?: string }): Promise<BrowserLivePage[]> {
    return [...this.pages.values()]
      .filter((p) => !p.login)
      .map((p) => p.page)
      .filter(
        (p) =>
          (filter.spaceId === undefined || p.spaceId === filter.spaceId) &&
          (filter.conversationId === undefined || p.conversationId === filter.conversationId),
      );
  }

  async stopPage(viewId: string, conversationId: string | null): Promise<BrowserStopResult> {
    const entry = this.pages.get(viewId);
    if (!entry || entry.login) return { stopped: false, reason: 'not-owned' };
    if (conversationId !== null && entry.page.conversationId !== conversationId)
      return { stopped: false, reason: 'not-owned' };
    if (entry.busy) return { stopped: false, reason: 'in-use' };
    this.closePage(viewId);
    return { stopped: true };
  }

  async openLogin(spaceId: string, url: string): Promise<{ viewId: string }> {
    const viewId = `${this.prefix}-login-${this.next++}`;
    this.pages.set(viewId, {
      page: { viewId, conversationId: null, spaceId, url, title: 'Sign in', owned: false, active: false },
      login: true,
      profile: spaceId,
      viewers: new Set(),
      busy: false,
    });
    return { viewId };
  }

  async finishLogin(viewId: string): Promise<{ saved: true }> {
    const entry = this.pages.get(viewId);
    if (!entry?.login) throw DomainError.notFound('No such sign-in session');
    await this.profiles?.save(entry.profile, { cookies: this.pendingCookies.get(viewId) ?? [], origins: [] });
    this.closePage(viewId);
    return { saved: true };
  }

  async watch(viewId: string, viewer: PageViewer): Promise<PageWatch | null> {
    const entry = this.pages.get(viewId);
    if (!entry) return null;
    entry.viewers.add(viewer);
    return {
      input: async (input) => {
        this.inputs.push({ viewId, input });
      },
      close: async () => {
        entry.viewers.delete(viewer);
      },
    };
  }
}

/** Profiles in memory, last save wins (the merge is the adapter's, tested there). */
export class FakeBrowserProfiles extends BrowserProfiles {
  readonly saved = new Map<string, BrowserStorageState>();

  async load(profile: string): Promise<BrowserStorageState | null> {
    return this.saved.get(profile) ?? null;
  }

  async save(profile: string, state: BrowserStorageState): Promise<void> {
    const before = this.saved.get(profile)?.cookies ?? [];
    const key = (c: { name: string; domain: string; path: string }): string => `${c.name}|${c.domain}|${c.path}`;
    const merged = new Map(before.map((c) => [key(c), c]));
    for (const c of state.cookies) merged.set(key(c), c);
    this.saved.set(profile, { cookies: [...merged.values()], origins: state.origins });
  }

  async cookieDomains(profile: string): Promise<string[]> {
    return [...new Set((this.saved.get(profile)?.cookies ?? []).map((c) => c.domain.replace(/^\./, '')))].sort();
  }
}

/** One registry shared by the fake replicas of a test, with a clock the test moves. */
export class FakeLivePageRegistry extends LivePageRegistry {
  readonly leaseMs = 10_000;
  private readonly entries = new Map<string, { holding: ReplicaPages; expiresAt: number }>();
  now = 0;

  async announce(holding: ReplicaPages): Promise<void> {
    this.entries.set(holding.replica, { holding, expiresAt: this.now + this.leaseMs });
  }

  async all(): Promise<ReplicaPages[]> {
    return [...this.entries.values()].filter((e) => e.expiresAt > this.now).map((e) => e.holding);
  }

  async withdraw(replica: string): Promise<void> {
    this.entries.delete(replica);
  }
}
