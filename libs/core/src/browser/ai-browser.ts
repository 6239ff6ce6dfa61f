import type { BrowserFrame, BrowserLivePage, BrowserStopResult, BrowserViewerInput } from '#contracts/browser.js';
import type { AgentTool } from '../kernel/tool.js';

/**
 * Who drives a set of browser pages: a conversation's turns (the assistant's chat or a
 * digital human's chat) or one run of a digital human. Each scope has its own active page,
 * last snapshot and owned pages; pages use the cookie jar of the scope's profile.
 */
export interface BrowserScope {
  /** `conv:<conversationId>` for a conversation's turns, `run:<runId>` for a run. */
  key: string;
  kind: 'chat' | 'app-chat' | 'run';
  spaceId: string;
  /** The conversation whose UI shows the pages (a run's own conversation too); events carry it. */
  conversationId: string | null;
  /** The digital human, for its chats and runs. */
  appId: string | null;
  /** The space's working folder: `browser_run` files, `downloads/`, upload and `filePath` confinement. */
  workDir: string;
  /** The cookie jar: the space's id by default. */
  profile: string;
}

export function conversationScopeKey(conversationId: string): string {
  return `conv:${conversationId}`;
}

export function runScopeKey(runId: string): string {
  return `run:${runId}`;
}

/** A viewer of a page's live view: frames out. */
export interface PageViewer {
  frame(frame: BrowserFrame): void;
  /** The page went away (closed, lost, its replica gone): the socket closes with this reason. */
  ended(reason: string): void;
}

/** One viewer's hold on a page: input in, acknowledgements, leaving. */
export interface PageWatch {
  /** Input from the viewer; while a viewer sends input, the agent's tools on the page wait their turn. */
  input(message: BrowserViewerInput): Promise<void>;
  close(): Promise<void>;
}

/**
 * The AI browser (docs/api/ai-browser.md): headless Chromium pages driven by the `ai-browser`
 * tools of chats and digital humans, per-space profiles, sign-in sessions and live views.
 * Pages live on the replica that runs their scope's turn.
 */
export abstract class AiBrowser {
  /** The `mcp__ai-browser__*` tools bound to `scope` (one set per turn; the scope's state outlives it). */
  abstract tools(scope: BrowserScope): AgentTool[];

  /** A turn of `scope` ended: its profile is saved; the pages stay for the next turn (a run's until release). */
  abstract turnEnded(scope: BrowserScope): Promise<void>;

  /** `scope` ends (a run finished, a conversation deleted, the permission revoked): its pages close. */
  abstract release(scopeKey: string): Promise<void>;

  /** `GET /api/browser/pages`: live pages of conversations, filtered. */
  abstract livePages(filter: { spaceId?: string; conversationId?: string }): Promise<BrowserLivePage[]>;

  /** `POST /api/browser/pages/:viewId/stop`: closes the page unless refused. */
  abstract stopPage(viewId: string, conversationId: string | null): Promise<BrowserStopResult>;

  /** `POST /api/browser/login-sessions`: opens `url` in the space's profile for a person to sign in through the live view. */
  abstract openLogin(spaceId: string, url: string): Promise<{ viewId: string }>;

  /** `POST /api/browser/login-sessions/:viewId/finish`: saves the profile and closes the page. */
  abstract finishLogin(viewId: string): Promise<{ saved: true }>;

  /** The live view of a page (`/ws/browser/:viewId`); null when no such page lives. */
  abstract watch(viewId: string, viewer: PageViewer): Promise<PageWatch | null>;
}

/** Playwright's storage state: cookies and each origin's localStorage. */
export interface BrowserStorageState {
  cookies: Array<{
    name: string;
    value: string;
    domain: string;
    path: string;
    expires: number;
    httpOnly: boolean;
    secure: boolean;
    sameSite: 'Strict' | 'Lax' | 'None';
  }>;
  origins: Array<{ origin: string; localStorage: Array<{ name: string; value: string }> }>;
}

/**
 * Where browser profiles (cookie jars) are kept between contexts, turns and replicas: per
 * profile (a space's id by default), encrypted at rest. `save` merges with what is stored,
 * newest wins per cookie (name, domain, path) and per origin, so two replicas saving the same
 * profile do not clobber each other.
 */
export abstract class BrowserProfiles {
  abstract load(profile: string): Promise<BrowserStorageState | null>;
  abstract save(profile: string, state: BrowserStorageState): Promise<void>;
  /** Cookie domains the profile holds (a hint for a digital human's `browser_login` sites; never values). */
  abstract cookieDomains(profile: string): Promise<string[]>;
}
