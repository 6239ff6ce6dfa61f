/**
 * Wire contract of the AI browser (docs/api/ai-browser.md): its events, the live pages the
 * HTTP API lists, and the frames of a page's live view on `/ws/browser/:viewId`.
 */

/** The in-process MCP server's name: its tools reach the model as `mcp__ai-browser__<tool>`. */
export const AI_BROWSER_SERVER = 'ai-browser';

/** MCP server ids a spec's `requires.mcps` may name that are part of the server, not installed apps. */
export const BUILT_IN_MCP_SERVERS: readonly string[] = [AI_BROWSER_SERVER];

export const BrowserChannels = {
  activeViewChanged: 'ai-browser:active-view-changed',
  viewGone: 'ai-browser:view-gone',
  conversationReleased: 'ai-browser:conversation-released',
} as const;

/** `ai-browser:active-view-changed`: a conversation's active page was set. */
export interface BrowserActiveViewChangedEvent {
  conversationId: string | null;
  spaceId: string | null;
  viewId: string;
  owned: boolean;
  url: string | null;
  title: string | null;
}

/** `ai-browser:view-gone`: a page a conversation owned or pointed at closed. */
export interface BrowserViewGoneEvent {
  viewId: string;
}

/** `ai-browser:conversation-released`: a conversation's browser was released. */
export interface BrowserConversationReleasedEvent {
  conversationId: string;
}

/** `GET /api/browser/pages`: a live page (the event's payload plus whether it is its conversation's active one). */
export interface BrowserLivePage {
  viewId: string;
  conversationId: string | null;
  spaceId: string | null;
  url: string | null;
  title: string | null;
  owned: boolean;
  active: boolean;
}

/** `POST /api/browser/pages/:viewId/stop`. */
export interface BrowserStopResult {
  stopped: boolean;
  reason?: 'not-owned' | 'in-use';
}

/** Server → viewer frames of a live view. */
export interface BrowserFrame {
  type: 'frame';
  /** Base64 JPEG. */
  data: string;
  width: number;
  height: number;
  seq: number;
}

/** Viewer → server frames of a live view (after the usual `{type:"auth"}` frame). */
export type BrowserViewerInput =
  | { type: 'ack'; seq: number }
  | {
      type: 'mouse';
      event: 'mousePressed' | 'mouseReleased' | 'mouseMoved' | 'mouseWheel';
      x: number;
      y: number;
      button?: 'left' | 'middle' | 'right' | 'none';
      clickCount?: number;
      deltaX?: number;
      deltaY?: number;
    }
  | { type: 'key'; event: 'keyDown' | 'keyUp'; key: string; text?: string }
  | { type: 'text'; text: string }
  | { type: 'viewport'; width: number; height: number };

/**
 * Coordination between replicas (never delivered to sockets): a page lives on the replica that
 * runs its scope's turn, so stop, finish and the live view of a page held elsewhere travel as
 * commands to its holder, which answers on `reply`; a relayed live view carries frames out and
 * input in under its watch id.
 */
export const BrowserInternalChannels = {
  command: 'internal:browser-command',
  reply: 'internal:browser-reply',
  watchFrame: 'internal:browser-watch-frame',
} as const;

/** A command for the replica holding a page. */
export type BrowserCommand = { requestId: string; replica: string; from: string } & (
  | { op: 'stop'; viewId: string; conversationId: string | null }
  | { op: 'finish'; viewId: string }
  | { op: 'watch'; viewId: string; watchId: string }
  | { op: 'input'; watchId: string; input: BrowserViewerInput }
  | { op: 'unwatch'; watchId: string }
);

/** The holder's answer to a command: its result, or why it failed (`notFound`: no such page there). */
export interface BrowserCommandReply {
  requestId: string;
  replica: string;
  result?: unknown;
  error?: { message: string; notFound?: boolean };
}

/** A relayed live view's traffic from the holder to the viewer's replica. */
export interface BrowserWatchFrame {
  watchId: string;
  replica: string;
  frame?: BrowserFrame;
  ended?: string;
}

/** `GET /api/apps/:appId/browser-login`: a digital human's sign-in site; `signedIn` is a hint (cookies for its domain). */
export interface BrowserLoginSite {
  url: string;
  label: string;
  signedIn: boolean;
}
