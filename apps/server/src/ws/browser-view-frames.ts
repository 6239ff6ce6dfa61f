import type { BrowserViewerInput } from '#contracts/browser.js';

/** The largest viewport a viewer may ask for (pixels per side), and the smallest. */
export const VIEWPORT_MIN = 200;
export const VIEWPORT_MAX = 4096;
/** Text a viewer types at once (a pasted password, a 2FA code, an address). */
export const MAX_TEXT_LENGTH = 10_000;

const MOUSE_EVENTS = ['mousePressed', 'mouseReleased', 'mouseMoved', 'mouseWheel'];
const MOUSE_BUTTONS = ['left', 'middle', 'right', 'none'];
const KEY_EVENTS = ['keyDown', 'keyUp'];

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
const oneOf = (v: unknown, values: string[]): v is string => typeof v === 'string' && values.includes(v);

/**
 * A viewer's frame of `/ws/browser/:viewId` (docs/api/ai-browser-views.md, "Live view"), checked
 * and stripped to its known fields; a string says what is wrong with it.
 */
export function parseViewerInput(frame: Record<string, unknown>): BrowserViewerInput | string {
  switch (frame.type) {
    case 'ack':
      return isCount(frame.seq) ? { type: 'ack', seq: frame.seq } : 'ack: seq must be a non-negative integer';
    case 'mouse': {
      if (!oneOf(frame.event, MOUSE_EVENTS)) return `mouse: event must be one of ${MOUSE_EVENTS.join(', ')}`;
      if (!isNumber(frame.x) || !isNumber(frame.y)) return 'mouse: x and y must be numbers';
      if (frame.button !== undefined && !oneOf(frame.button, MOUSE_BUTTONS))
        return `mouse: button must be one of ${MOUSE_BUTTONS.join(', ')}`;
      if (frame.clickCount !== undefined && !(isCount(frame.clickCount) && frame.clickCount <= 3))
        return 'mouse: clickCount must be an integer from 0 to 3';
      for (const delta of ['deltaX', 'deltaY'] as const) {
        if (frame[delta] !== undefined && !isNumber(frame[delta])) return `mouse: ${delta} must be a number`;
      }
      return {
        type: 'mouse',
        event: frame.event as 'mousePressed',
        x: frame.x,
        y: frame.y,
        ...(frame.button !== undefined ? { button: frame.button as 'left' } : {}),
        ...(frame.clickCount !== undefined ? { clickCount: frame.clickCount as number } : {}),
        ...(frame.deltaX !== undefined ? { deltaX: frame.deltaX as number } : {}),
        ...(frame.deltaY !== undefined ? { deltaY: frame.deltaY as number } : {}),
      };
    }
    case 'key':
      if (!oneOf(frame.event, KEY_EVENTS)) return 'key: event must be keyDown or keyUp';
      if (typeof frame.key !== 'string' || frame.key === '' || frame.key.length > 64)
        return 'key: key must be a key name (1 to 64 characters)';
      if (frame.text !== undefined && (typeof frame.text !== 'string' || frame.text.length > 16))
        return 'key: text must be a string of at most 16 characters';
      return {
        type: 'key',
        event: frame.event as 'keyDown',
        key: frame.key,
        ...(frame.text !== undefined ? { text: frame.text as string } : {}),
      };
    case 'text':
      return typeof frame.text === 'string' && frame.text.length <= MAX_TEXT_LENGTH
        ? { type: 'text', text: frame.text }
        : `text: text must be a string of at most ${MAX_TEXT_LENGTH} characters`;
    case 'viewport': {
      const fits = (v: unknown): boolean =>
        Number.isInteger(v) && (v as number) >= VIEWPORT_MIN && (v as number) <= VIEWPORT_MAX;
      return fits(frame.width) && fits(frame.height)
        ? { type: 'viewport', width: frame.width as number, height: frame.height as number }
        : `viewport: width and height must be integers from ${VIEWPORT_MIN} to ${VIEWPORT_MAX}`;
    }
    default:
      return `Unknown frame type: ${typeof frame.type === 'string' ? frame.type.slice(0, 40) : String(frame.type)}`;
  }
}

/** `/ws/browser/<viewId>` as the gateway's path `/ws/browser` with the view in the query (see routeBrowserViews). */
export const BROWSER_VIEW_PATH = '/ws/browser';
export const VIEW_QUERY = 'view';

/**
 * The WebSocket adapter routes an upgrade by its exact path, so `/ws/browser/<viewId>` is
 * rewritten to `/ws/browser?view=<viewId>` before it looks. Installed before the base path's
 * strip (prepended listeners run newest first), so it sees the path without the prefix.
 */
export function routeBrowserViews(server: {
  prependListener(event: 'upgrade', listener: (req: { url?: string }) => void): unknown;
}): void {
  server.prependListener('upgrade', (req) => {
    const url = req.url ?? '/';
    if (!url.startsWith(`${BROWSER_VIEW_PATH}/`)) return;
    const [path, query = ''] = url.split('?', 2) as [string, string?];
    let viewId = path.slice(BROWSER_VIEW_PATH.length + 1);
    try {
      viewId = decodeURIComponent(viewId);
    } catch {
      /* kept as sent: no page has such an id */
    }
    const params = new URLSearchParams(query);
    params.set(VIEW_QUERY, viewId);
    req.url = `${BROWSER_VIEW_PATH}?${params.toString()}`;
  });
}

/** The view id of an upgrade request routed by routeBrowserViews; null without one. */
export function viewIdOf(url: string | undefined): string | null {
  const query = (url ?? '').split('?', 2)[1] ?? '';
  const viewId = new URLSearchParams(query).get(VIEW_QUERY);
  return viewId && viewId.length <= 256 ? viewId : null;
}
