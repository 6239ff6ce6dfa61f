import type { BrowserFrame, BrowserViewerInput } from '#contracts/browser.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { browserViewUrl, session } from './api.js';

type ViewState = { kind: 'connecting' } | { kind: 'live' } | { kind: 'ended'; reason: string };

const BUTTONS = ['left', 'middle', 'right'] as const;
/** The page's text input takes at most this much per frame (docs/api/ai-browser.md). */
const TEXT_MAX = 10_000;
/** Close code of a view that could not start (the page is there): the view connects again. */
const VIEW_FAILED = 1011;
const RECONNECT_TRIES = 3;
const RECONNECT_DELAY_MS = 1000;

/** Why the socket closed, in words (close codes of `/ws/browser/:viewId`). */
function endedReason(event: CloseEvent): string {
  if (event.code === 4004) return 'This page is no longer open.';
  if (event.code === 4001) return 'The server refused the sign-in.';
  if (event.code === 4000) return event.reason ? `The page closed: ${event.reason}.` : 'The page closed.';
  if (event.code === VIEW_FAILED) return 'The live view could not start; reload to try again.';
  return 'The live view was disconnected.';
}

/**
 * A page's live view: the screencast's JPEG frames drawn on a canvas (each acknowledged once
 * drawn, so a slow viewer gets fewer frames rather than a queue), and, after "Take control", the
 * person's mouse, keys and pasted or typed text sent to the page. Unmounting closes the socket.
 */
export function LiveView(props: { viewId: string; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const socket = useRef<WebSocket | null>(null);
  /** The page's size in CSS pixels, which is what mouse coordinates are in. */
  const pageSize = useRef({ width: 0, height: 0 });
  const [state, setState] = useState<ViewState>({ kind: 'connecting' });
  const [frames, setFrames] = useState(0);
  const [controlling, setControlling] = useState(false);
  const [text, setText] = useState('');
  const [error, setError] = useState('');
  /** Bumped to connect again after a view that could not start. */
  const [attempt, setAttempt] = useState(0);

  const send = (input: BrowserViewerInput) => {
    const ws = socket.current;
    if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify(input));
  };

  useEffect(() => {
    const ws = new WebSocket(browserViewUrl(props.viewId));
    socket.current = ws;
    let drawing = Promise.resolve();
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', token: session.token ?? '' }));
    ws.onmessage = (message) => {
      let frame: { type?: string; error?: string } & Partial<Omit<BrowserFrame, 'type'>>;
      try {
        frame = JSON.parse(String(message.data)) as typeof frame;
      } catch {
        return;
      }
      if (frame.type === 'auth:success') setState({ kind: 'live' });
      else if (frame.type === 'error') setError(frame.error ?? 'The page refused that input.');
      else if (frame.type === 'frame' && typeof frame.data === 'string') {
        const { data, width = 0, height = 0, seq = 0 } = frame;
        // Frames are drawn in order; each is acknowledged after it is drawn (or failed to decode).
        drawing = drawing
          .then(() => draw(data, width, height))
          .catch(() => undefined)
          .then(() => send({ type: 'ack', seq }));
      }
    };
    let retry: ReturnType<typeof setTimeout> | undefined;
    ws.onclose = (event) => {
      if (socket.current !== ws) return;
      if (event.code === VIEW_FAILED && attempt < RECONNECT_TRIES) {
        setState({ kind: 'connecting' });
        retry = setTimeout(() => setAttempt((n) => n + 1), RECONNECT_DELAY_MS);
        return;
      }
      setState({ kind: 'ended', reason: endedReason(event) });
    };
    const draw = async (data: string, width: number, height: number) => {
      const image = new Image();
      image.src = `data:image/jpeg;base64,${data}`;
      await image.decode();
      const target = canvas.current;
      if (!target) return;
      pageSize.current = { width, height };
      if (target.width !== image.naturalWidth || target.height !== image.naturalHeight) {
        target.width = image.naturalWidth;
        target.height = image.naturalHeight;
      }
      target.getContext('2d')?.drawImage(image, 0, 0);
      setFrames((n) => n + 1);
    };
    return () => {
      clearTimeout(retry);
      socket.current = null;
      ws.close();
    };
  }, [props.viewId, attempt]);

  /** The pointer's position on the page, scaled from the canvas as shown to the page's size. */
  const at = (e: MouseEvent): { x: number; y: number } => {
    const box = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    const { width, height } = pageSize.current;
    return {
      x: Math.round(((e.clientX - box.left) / Math.max(box.width, 1)) * width),
      y: Math.round(((e.clientY - box.top) / Math.max(box.height, 1)) * height),
    };
  };
  const mouse = (event: 'mousePressed' | 'mouseReleased', e: PointerEvent) => {
    if (!controlling) return;
    e.preventDefault();
    if (event === 'mousePressed') {
      canvas.current?.focus();
      canvas.current?.setPointerCapture(e.pointerId);
    }
    send({ type: 'mouse', event, ...at(e), button: BUTTONS[e.button] ?? 'left', clickCount: Math.max(e.detail, 1) });
  };
  // Moves are sent at most once per animation frame.
  const pendingMove = useRef<{ x: number; y: number; button: 'left' | 'none' } | null>(null);
  const move = (e: PointerEvent) => {
    if (!controlling) return;
    const first = pendingMove.current === null;
    pendingMove.current = { ...at(e), button: e.buttons & 1 ? 'left' : 'none' };
    if (!first) return;
    requestAnimationFrame(() => {
      const next = pendingMove.current;
      pendingMove.current = null;
      if (next) send({ type: 'mouse', event: 'mouseMoved', ...next });
    });
  };
  const key = (event: 'keyDown' | 'keyUp', e: KeyboardEvent) => {
    if (!controlling) return;
    if (e.key === 'Escape' && event === 'keyDown') {
      // The way out of the page's keyboard: control is given back (no keyboard trap).
      e.preventDefault();
      setControlling(false);
      return;
    }
    // Paste shortcuts are left to the browser, whose paste event sends the clipboard's text.
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'v') return;
    e.preventDefault();
    const printable = e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey;
    send({ type: 'key', event, key: e.key, ...(printable && event === 'keyDown' ? { text: e.key } : {}) });
  };
  const sendText = (value: string) => {
    for (let i = 0; i < value.length; i += TEXT_MAX) send({ type: 'text', text: value.slice(i, i + TEXT_MAX) });
  };

  const status =
    state.kind === 'connecting'
      ? 'Connecting…'
      : state.kind === 'ended'
        ? state.reason
        : frames === 0
          ? 'Waiting for the page…'
          : controlling
            ? 'You are controlling the page. Escape gives control back.'
            : 'Watching.';
  return (
    <div class="live-view stack">
      <div class="row">
        <button
          type="button"
          aria-pressed={controlling}
          disabled={state.kind !== 'live'}
          onClick={() => {
            const next = !controlling;
            setControlling(next);
            if (next) requestAnimationFrame(() => canvas.current?.focus());
          }}
        >
          {controlling ? 'Release control' : 'Take control'}
        </button>
        <span role="status" class="muted">
          {status}
        </span>
      </div>
      <canvas
        ref={canvas}
        class={controlling ? 'screen controlling' : 'screen'}
        width={1280}
        height={800}
        data-frames={frames}
        role={controlling ? 'application' : 'img'}
        tabIndex={controlling ? 0 : -1}
        aria-label={`${controlling ? 'Controlled' : 'Live'} view of ${props.label}`}
        aria-roledescription="live page view"
        onPointerDown={(e) => mouse('mousePressed', e)}
        onPointerUp={(e) => mouse('mouseReleased', e)}
        onPointerMove={move}
        onContextMenu={(e) => controlling && e.preventDefault()}
        onWheel={(e) => {
          if (!controlling) return;
          e.preventDefault();
          send({ type: 'mouse', event: 'mouseWheel', ...at(e), deltaX: e.deltaX, deltaY: e.deltaY });
        }}
        onKeyDown={(e) => key('keyDown', e)}
        onKeyUp={(e) => key('keyUp', e)}
        onPaste={(e) => {
          if (!controlling) return;
          e.preventDefault();
          sendText(e.clipboardData?.getData('text/plain') ?? '');
        }}
      />
      {controlling && (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (!text) return;
            sendText(text);
            setText('');
          }}
        >
          <label for={`type-${props.viewId}`}>Type into the page</label>
          <input
            id={`type-${props.viewId}`}
            class="grow"
            autoComplete="off"
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
          />
          <button type="submit" disabled={!text}>
            Send text
          </button>
          <button
            type="button"
            onClick={() => {
              send({ type: 'key', event: 'keyDown', key: 'Enter', text: '\r' });
              send({ type: 'key', event: 'keyUp', key: 'Enter' });
            }}
          >
            Press Enter
          </button>
        </form>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
