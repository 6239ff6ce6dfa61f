import type { PageViewer, BrowserScope } from './ai-browser.js';
import type { DeviceMode, EnginePage } from './browser-engine.port.js';
import type { FileStore } from '../ports/file-store.port.js';
import { BrowserTexts } from './browser-texts.js';

/** A page of this process: a scope's page, or a sign-in page (no scope). */
export interface PageEntry {
  viewId: string;
  page: EnginePage;
  profile: string;
  spaceId: string;
  /** The owning scope's key; null for a sign-in page. */
  scopeKey: string | null;
  conversationId: string | null;
  title: string;
  lastUsed: number;
  viewers: Set<PageViewer>;
  /** When a viewer last sent input (a person is controlling the page for a few seconds after). */
  lastInputAt: number;
  /** Tool operations in progress on the page. */
  busy: number;
  /** Downloads `browser_download` already reported. */
  reportedDownloads: Set<number>;
}

/** A scope's browser: its pages in opening order, the active one, the latest snapshot's uids. */
export interface ScopeState {
  scope: BrowserScope;
  viewIds: string[];
  activeViewId: string | null;
  snapshot: { viewId: string; uids: Map<string, number> } | null;
}

/** How long after a viewer's last input the agent's tools keep off the page. */
export const TAKEOVER_HOLD_MS = 5_000;
/** Pages nobody used for this long are closed (not while watched). */
export const IDLE_REAP_MS = 30 * 60_000;
/** Bound of one browser operation (CDP call, click, fill, snapshot). */
export const OPERATION_TIMEOUT_MS = 15_000;
/** Bound of one tool call, so a turn never hangs on the browser. */
export const TOOL_TIMEOUT_MS = 60_000;

/** What the tools need of the service that holds the pages (BrowserService). */
export interface BrowserToolHost {
  readonly fileStore: FileStore;
  scope(scopeKey: string): ScopeState;
  active(state: ScopeState): PageEntry | null;
  scopePages(state: ScopeState): PageEntry[];
  personControlling(entry: PageEntry): boolean;
  nextSnapshotNumber(): number;
  now(): number;
  checkNavigation(url: string): Promise<string | null>;
  openScopePage(state: ScopeState, device: DeviceMode): Promise<PageEntry>;
  setActive(state: ScopeState, entry: PageEntry): Promise<void>;
  closePage(viewId: string): Promise<void>;
}

/** The original's URL normalisation: http(s) as is, a bare domain gets https://, other text a search. */
export function normaliseUrl(raw: string): string {
  const text = raw.trim();
  if (/^https?:\/\//i.test(text)) return text;
  if (/^(localhost|[\w-]+(\.[\w-]+)+|\[[0-9a-f:]+\])(:\d+)?([/?#].*)?$/i.test(text)) return `https://${text}`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(text)) return text; // another scheme: the policy answers it
  return `https://www.google.com/search?q=${encodeURIComponent(text)}`;
}

/** `promise`, or an error naming `what` once `ms` passed. */
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(BrowserTexts.timedOut(what, ms))), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
