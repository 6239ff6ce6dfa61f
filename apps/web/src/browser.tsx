import type { ToolsetEntry } from '#contracts/agent.js';
import type { BrowserLivePage, BrowserLoginSite, BrowserStopResult } from '#contracts/browser.js';
import { AI_BROWSER_SERVER } from '#contracts/browser.js';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, q } from './api.js';
import { lazyModule, useLazyModule } from './lazy.js';
import type { EventSocket } from './socket.js';

/** The live view, loaded on first use: the first screen does not carry it. */
const loadLiveView = lazyModule(() => import('./live-view.js'));

function LiveViewLazy(props: { viewId: string; label: string }) {
  const [mod, failed] = useLazyModule(loadLiveView);
  if (failed)
    return (
      <p class="error" role="alert">
        The live view could not be loaded; reload the page.
      </p>
    );
  return mod ? <mod.LiveView viewId={props.viewId} label={props.label} /> : <p class="muted">Loading the live view…</p>;
}

const pageName = (page: Pick<BrowserLivePage, 'title' | 'url'>): string => page.title || page.url || 'Untitled page';

const STOP_REFUSALS: Record<NonNullable<BrowserStopResult['reason']>, string> = {
  'not-owned': 'This page was not opened by this conversation, so it cannot stop it.',
  'in-use': 'A tool is working on this page right now; try again in a moment.',
};

/**
 * The live pages answered by `GET /api/browser/pages?<query>` that `keep` accepts, read again
 * on every `ai-browser:*` event and whenever `refreshOn` says an event may have changed a page
 * (a tool result changes its title and address).
 */
function useLivePages(
  socket: EventSocket,
  query: string,
  keep: (page: BrowserLivePage) => boolean,
  refreshOn: (channel: string, data: Record<string, unknown>) => boolean = () => false,
): BrowserLivePage[] {
  const [pages, setPages] = useState<BrowserLivePage[]>([]);
  const keepRef = useRef(keep);
  keepRef.current = keep;
  useEffect(() => {
    let live = true;
    let again = false;
    let running = false;
    const reload = async () => {
      // One read at a time; events during a read ask for one more.
      if (running) return void (again = true);
      running = true;
      try {
        const found = await api.get<BrowserLivePage[]>(`/api/browser/pages?${query}`);
        if (live) setPages(found.filter((p) => keepRef.current(p)));
      } catch {
        // Without the browser the server has no pages to show.
      } finally {
        running = false;
        if (again && live) {
          again = false;
          void reload();
        }
      }
    };
    void reload();
    const off = socket.on((event) => {
      if (event.channel.startsWith('ai-browser:') || refreshOn(event.channel, event.data as Record<string, unknown>))
        void reload();
    });
    return () => {
      live = false;
      off();
    };
  }, [query]);
  return pages;
}

/** The page's title and address, its live view, and "Stop page" (refusals are shown). */
function PageViewer(props: { page: BrowserLivePage; actions?: ComponentChildren }) {
  const { page } = props;
  const [status, setStatus] = useState('');
  const stop = async () => {
    setStatus('');
    try {
      const result = await api.post<BrowserStopResult>(`/api/browser/pages/${q(page.viewId)}/stop`, {
        ...(page.conversationId ? { conversationId: page.conversationId } : {}),
      });
      setStatus(result.stopped ? 'Page stopped.' : (STOP_REFUSALS[result.reason ?? 'not-owned'] ?? 'Refused.'));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  return (
    <div class="stack">
      <div class="row">
        <div class="grow">
          <strong class="page-title">{page.title || 'Untitled page'}</strong>
          {page.url && <div class="muted page-url">{page.url}</div>}
        </div>
        <button type="button" class="danger" onClick={() => void stop()}>
          Stop page
        </button>
        {props.actions}
      </div>
      <p role="status" class="muted status-line">
        {status}
      </p>
      <LiveViewLazy key={page.viewId} viewId={page.viewId} label={pageName(page)} />
    </div>
  );
}

/**
 * The chat's switch for its conversation's AI browser toolset (`toolsets/list`, `open`,
 * `close`), kept in step with `toolsets:changed` (another tab, or a message's `aiBrowserEnabled`).
 */
export function BrowserToggle(props: { spaceId: string; conversationId: string; socket: EventSocket }) {
  const [open, setOpen] = useState<boolean | null>(null);
  const [error, setError] = useState('');
  const body = { spaceId: props.spaceId, conversationId: props.conversationId, toolsetId: AI_BROWSER_SERVER };
  useEffect(() => {
    let live = true;
    void api.post<ToolsetEntry[]>('/api/agent/toolsets/list', body).then(
      (list) => {
        const entry = list.find((t) => t.id === AI_BROWSER_SERVER);
        if (live) setOpen(entry ? entry.open : null);
      },
      () => live && setOpen(null),
    );
    const off = props.socket.on((event) => {
      const d = event.data as { conversationId?: string; open?: unknown };
      if (event.channel === 'toolsets:changed' && d.conversationId === props.conversationId && Array.isArray(d.open))
        setOpen(d.open.includes(AI_BROWSER_SERVER));
    });
    return () => {
      live = false;
      off();
    };
  }, [props.conversationId]);
  if (open === null) return null;
  return (
    <span class="row">
      <button
        type="button"
        class={open ? 'chip primary' : 'chip'}
        aria-pressed={open}
        title="Lets the assistant open web pages in a browser that keeps this space's sign-ins"
        onClick={async () => {
          setError('');
          try {
            const list = await api.post<ToolsetEntry[]>(`/api/agent/toolsets/${open ? 'close' : 'open'}`, body);
            setOpen(list.find((t) => t.id === AI_BROWSER_SERVER)?.open ?? !open);
          } catch (err) {
            setError((err as ApiError).message);
          }
        }}
      >
        AI browser {open ? 'on' : 'off'}
      </button>
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

/**
 * A chat's browser panel: shown while the conversation has live pages, with the active page's
 * live view (or the one picked). Closing it closes the live view's socket; it opens again when
 * the conversation's active page changes.
 */
export function ChatBrowserPanel(props: { conversationId: string; socket: EventSocket }) {
  const id = props.conversationId;
  const pages = useLivePages(
    props.socket,
    `conversationId=${q(id)}`,
    (p) => p.conversationId === id,
    (channel, d) => d.conversationId === id && (channel === 'agent:tool-result' || channel === 'agent:complete'),
  );
  const [picked, setPicked] = useState<string | null>(null);
  const [closedFor, setClosedFor] = useState<string | null>(null);
  const shown = pages.find((p) => p.viewId === picked) ?? pages.find((p) => p.active) ?? pages[0];
  if (!shown) return null;
  if (closedFor === shown.viewId)
    return (
      <div class="row">
        <button type="button" onClick={() => setClosedFor(null)}>
          Show the browser page
        </button>
      </div>
    );
  return (
    <section class="panel stack browser-panel" aria-label="AI browser page">
      {pages.length > 1 && (
        <div class="row" role="group" aria-label="Pages of this conversation">
          {pages.map((p) => (
            <button
              key={p.viewId}
              type="button"
              class="chip"
              aria-pressed={p.viewId === shown.viewId}
              onClick={() => setPicked(p.viewId)}
            >
              {pageName(p)}
            </button>
          ))}
        </div>
      )}
      <PageViewer
        page={shown}
        actions={
          <button type="button" aria-label="Close the browser panel" onClick={() => setClosedFor(shown.viewId)}>
            Close
          </button>
        }
      />
    </section>
  );
}

/** A modal dialog (native <dialog>: focus kept inside) that closes through `onClose` only. */
function WideDialog(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    ref.current?.showModal();
    return () => previous?.focus();
  }, []);
  return (
    <dialog
      ref={ref}
      class="wide"
      aria-label={props.title}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <div class="stack">
        <h2>{props.title}</h2>
        {props.children}
      </div>
    </dialog>
  );
}

/**
 * A digital human's browser: its `browser_login` sites with "Sign in" (and one for any address),
 * each opening a sign-in page whose live view the person uses in a dialog, "Done" saving the
 * cookies into the space's profile; and the live pages of its chat threads and runs, watchable.
 */
export function AppBrowser(props: { appId: string; spaceId: string; conversationIds: string[]; socket: EventSocket }) {
  const [sites, setSites] = useState<BrowserLoginSite[] | null>(null);
  const [customUrl, setCustomUrl] = useState('');
  const [signIn, setSignIn] = useState<{ viewId: string; label: string } | null>(null);
  const [watching, setWatching] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const ids = new Set(props.conversationIds);
  const pages = useLivePages(props.socket, `spaceId=${q(props.spaceId)}`, (p) => ids.has(p.conversationId ?? ''));
  const loadSites = async () => {
    try {
      setSites(await api.get<BrowserLoginSite[]>(`/api/apps/${q(props.appId)}/browser-login`));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  useEffect(() => void loadSites(), [props.appId]);

  const start = async (url: string, label: string) => {
    setStatus('');
    setBusy(true);
    try {
      const { viewId } = await api.post<{ viewId: string }>('/api/browser/login-sessions', {
        spaceId: props.spaceId,
        url,
      });
      setSignIn({ viewId, label });
    } catch (err) {
      setStatus((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  const finish = async () => {
    if (!signIn) return;
    try {
      await api.post(`/api/browser/login-sessions/${q(signIn.viewId)}/finish`);
      setStatus(`Sign-in to ${signIn.label} saved in this space's browser profile.`);
    } catch (err) {
      // Already finished elsewhere, or the page is gone: nothing is left to save.
      setStatus((err as ApiError).message);
    }
    setSignIn(null);
    await loadSites();
  };
  const watched = pages.find((p) => p.viewId === watching);

  return (
    <section class="panel stack" aria-labelledby="app-browser-title">
      <h2 id="app-browser-title">Browser sign-in</h2>
      <p class="muted">
        Sign in to the sites this digital human works on. The cookies are kept in this space's browser profile; the
        status is a hint (cookies for the site exist), not a verified sign-in.
      </p>
      {sites && sites.length === 0 && <p class="muted">Its spec names no sign-in sites.</p>}
      <ul class="plain stack" aria-label="Sign-in sites">
        {(sites ?? []).map((site) => (
          <li key={site.url} class="row">
            <span class="grow">
              <strong>{site.label}</strong> <span class="muted">{site.url}</span>
            </span>
            <span class={site.signedIn ? 'badge ok' : 'badge'}>{site.signedIn ? 'signed in' : 'not signed in'}</span>
            <button
              type="button"
              disabled={busy}
              aria-label={`Sign in to ${site.label}`}
              onClick={() => void start(site.url, site.label)}
            >
              Sign in
            </button>
          </li>
        ))}
      </ul>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const url = customUrl.trim();
          if (url) void start(url, url);
        }}
      >
        <label for="sign-in-url">Another site</label>
        <input
          id="sign-in-url"
          class="grow"
          type="url"
          placeholder="https://example.com/login"
          value={customUrl}
          onInput={(e) => setCustomUrl(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy || !customUrl.trim()}>
          Sign in at this address
        </button>
      </form>
      <p role="status" class="muted">
        {status}
      </p>
      <h2 id="app-pages-title">Live pages</h2>
      {pages.length === 0 ? (
        <p class="muted">No page is open for its chat or runs.</p>
      ) : (
        <ul class="plain stack" aria-labelledby="app-pages-title">
          {pages.map((p) => (
            <li key={p.viewId} class="row">
              <span class="grow">
                <strong>{p.title || 'Untitled page'}</strong> <span class="muted">{p.url}</span>
              </span>
              <button type="button" aria-label={`Watch ${pageName(p)}`} onClick={() => setWatching(p.viewId)}>
                Watch
              </button>
            </li>
          ))}
        </ul>
      )}
      {signIn && (
        <WideDialog title={`Sign in to ${signIn.label}`} onClose={() => void finish()}>
          <p class="muted">
            Take control to type, click or scan a QR code in the page below, then choose Done to keep the sign-in.
          </p>
          <LiveViewLazy viewId={signIn.viewId} label={`the sign-in page of ${signIn.label}`} />
          <div class="row">
            <button type="button" class="primary" onClick={() => void finish()}>
              Done
            </button>
          </div>
        </WideDialog>
      )}
      {watched && (
        <WideDialog title="Live page" onClose={() => setWatching(null)}>
          <PageViewer
            page={watched}
            actions={
              <button type="button" onClick={() => setWatching(null)}>
                Close
              </button>
            }
          />
        </WideDialog>
      )}
    </section>
  );
}
