import type { BrowserViewerInput } from '#contracts/browser.js';
import type { BrowserStorageState } from './ai-browser.js';

/** `pc`: a 1280×720 desktop; `h5`: a 430×932 phone (dpr 3, touch). */
export type DeviceMode = 'pc' | 'h5';

/** The flags and values of an accessibility node that the snapshot prints (a flag present at all means "-able"). */
export interface AxProperties {
  disabled?: boolean;
  expanded?: boolean;
  focusable?: boolean;
  focused?: boolean;
  selected?: boolean;
  checked?: boolean | 'mixed';
  required?: boolean;
  value?: string;
  level?: number;
  description?: string;
}

/** One node of Chromium's accessibility tree (CDP `Accessibility.getFullAXTree`). */
export interface AxNode {
  id: string;
  role: string;
  name: string;
  ignored: boolean;
  /** The DOM node it stands for, which actions address; null for nodes without one. */
  backendNodeId: number | null;
  childIds: string[];
  properties: AxProperties;
}

/** What a filled element holds one task after the text went in. */
export type FillReadBack =
  | { kind: 'field'; value: string; secret: boolean }
  | { kind: 'editable'; text: string }
  | { kind: 'unreadable' }
  /** Focus did not land on the element: nothing was typed. */
  | { kind: 'focus-elsewhere' }
  /** The element sits in a frame of another site: nothing was typed. */
  | { kind: 'cross-origin-frame' };

/** A script's result: its value as JSON-able data, or the exception's description. */
export type ScriptOutcome = { ok: true; value: unknown } | { ok: false; error: string };

export interface ConsoleEntry {
  id: number;
  type: string;
  text: string;
  timestamp: number;
}

export interface NetworkEntry {
  id: number;
  url: string;
  method: string;
  resourceType: string;
  status: number | null;
  mimeType: string | null;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string> | null;
  postData: string | null;
  failure: string | null;
}

export interface DownloadEntry {
  id: number;
  url: string;
  filename: string;
  /** Where it was saved (inside the scope's `downloads/`); null until saved. */
  savePath: string | null;
  state: 'in_progress' | 'completed' | 'cancelled' | 'failed';
  totalBytes: number;
  receivedBytes: number;
  mimeType: string | null;
  startTime: number;
  endTime: number | null;
  error: string | null;
}

/** A screencast frame; `ack` lets Chromium send the next one. */
export interface ScreencastFrame {
  data: string;
  width: number;
  height: number;
  ack(): Promise<void>;
}

export interface ScreenshotRequest {
  format: 'png' | 'jpeg' | 'webp';
  quality?: number;
  /** Clip to this element's box. */
  node?: number;
  fullPage?: boolean;
}

export interface OpenPageOptions {
  /** The cookie jar (one browser context per profile, loaded from BrowserProfiles). */
  profile: string;
  device: DeviceMode;
  /** Page-initiated and direct downloads are saved here (a checked folder); null refuses downloads. */
  downloadDir: string | null;
  downloadMaxBytes: number;
  /**
   * The navigation policy, asked before every document request and redirect: why `url` may
   * not be loaded (the whole tool text), or null.
   */
  checkNavigation(url: string): Promise<string | null>;
}

/**
 * A page of the engine. Elements are addressed by the backend DOM node ids of the latest
 * accessibility tree. Every method fails with an Error whose message the tools quote.
 */
export interface EnginePage {
  readonly device: DeviceMode;
  url(): string;
  title(): Promise<string>;
  /** Loads `url`; resolves when loaded, or when `timeoutMs` passes (a half-loaded page is still a page). */
  navigate(url: string, timeoutMs: number): Promise<void>;
  /** The full tree, root first. */
  accessibilityTree(): Promise<AxNode[]>;
  click(node: number, clickCount: 1 | 2): Promise<void>;
  drag(from: number, to: number): Promise<void>;
  hover(node: number): Promise<void>;
  fill(node: number, value: string): Promise<FillReadBack>;
  /** Picks the option whose visible text is `text` in a select/listbox; false when none matches. */
  selectOption(node: number, text: string): Promise<boolean>;
  uploadFiles(node: number, paths: string[]): Promise<void>;
  /** `Key+Key` syntax: `Enter`, `Control+A`. */
  pressKey(key: string): Promise<void>;
  /** Applies the function text to the elements (real element handles) in the page's main world. */
  evaluate(fn: string, nodes: number[], timeoutMs: number): Promise<ScriptOutcome>;
  /**
   * Applies the function text to `params` in the page's main world; at `timeoutMs` the script
   * is stopped and this answers `{timedOut: true}` (the page stays usable).
   */
  runScript(source: string, params: unknown, timeoutMs: number): Promise<ScriptOutcome | { timedOut: true }>;
  screenshot(request: ScreenshotRequest): Promise<{ data: Buffer; mimeType: string }>;
  setViewport(width: number, height: number): Promise<void>;
  consoleMessages(): ConsoleEntry[];
  networkRequests(): NetworkEntry[];
  responseBody(requestId: number): Promise<string | null>;
  downloads(): DownloadEntry[];
  /** Starts a download of `url` (checked by the caller) into the page's download folder. */
  startDownload(url: string): Promise<void>;
  startScreencast(onFrame: (frame: ScreencastFrame) => void): Promise<void>;
  stopScreencast(): Promise<void>;
  dispatchInput(input: Exclude<BrowserViewerInput, { type: 'ack' }>): Promise<void>;
  /** Called once when the page closes, however (`crashed`: the renderer or the browser died). */
  onClosed(listener: (reason: 'closed' | 'crashed') => void): void;
  isClosed(): boolean;
  close(): Promise<void>;
}

/**
 * What the AI browser needs from Chromium (adapter: libs/infra/src/browser). The engine owns one
 * browser (launched lazily, relaunched after a crash) and one context per profile.
 */
export abstract class BrowserEngine {
  abstract openPage(options: OpenPageOptions): Promise<EnginePage>;
  /** The profile's current cookies and storage; null when no context of it lives. */
  abstract storageState(profile: string): Promise<BrowserStorageState | null>;
  /** The addresses a host name resolves to (an IP literal: itself); [] when it does not resolve. */
  abstract resolveHost(host: string): Promise<string[]>;
  /** This server's own addresses (its interfaces), which the policy blocks like loopback. */
  abstract ownAddresses(): string[];
  abstract shutdown(): Promise<void>;
}
