import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, session, whenUnauthorized } from './api.js';
import { AppsScreen } from './apps.js';
import { ChatScreen } from './chat.js';
import { FilesScreen } from './files.js';
import { SettingsScreen } from './settings.js';
import { StoreScreen } from './store.js';
import { href, useRoute } from './route.js';
import { SignIn, signInFromLink } from './signin.js';
import { EventSocket, type SocketState } from './socket.js';
import { loadSpaces, type Space, SpacesScreen } from './spaces.js';
import { titleWithWaiting, useWaitingApps } from './waiting.js';
import { lazyModule, useLazyModule } from './lazy.js';

// Screens loaded when first opened (they stay out of the first screen's bundle).
const loadTeams = lazyModule(() => import('./teams.js'));
const loadKnowledge = lazyModule(() => import('./knowledge.js'));

function LazyTeams(props: { space: Space; socket: EventSocket; teamId?: string }) {
  const [mod, failed] = useLazyModule(loadTeams);
  if (!mod) return <p class="muted">{failed ? `The Teams page could not be loaded: ${failed}` : 'Loading…'}</p>;
  return <mod.TeamsScreen {...props} />;
}

function LazyKnowledge(props: { spaces: Space[]; socket: EventSocket; kbId?: string }) {
  const [mod, failed] = useLazyModule(loadKnowledge);
  if (!mod) return <p class="muted">{failed ? `The Knowledge page could not be loaded: ${failed}` : 'Loading…'}</p>;
  return <mod.KnowledgeScreen {...props} />;
}

type Theme = 'system' | 'light' | 'dark';
const SPACE_KEY = 'svc-space';
const THEME_KEY = 'svc-theme';

function applyTheme(theme: Theme) {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

export interface Screen {
  id: string;
  label: string;
}
export const SCREENS: Screen[] = [
  { id: 'chat', label: 'Chat' },
  { id: 'files', label: 'Files' },
  { id: 'apps', label: 'Digital humans' },
  { id: 'teams', label: 'Teams' },
  { id: 'knowledge', label: 'Knowledge' },
  { id: 'store', label: 'Store' },
  { id: 'spaces', label: 'Spaces' },
  { id: 'settings', label: 'Settings' },
];

export function App() {
  const [signedIn, setSignedIn] = useState<boolean | null>(null);
  const [notice, setNotice] = useState('');
  useEffect(() => {
    whenUnauthorized(() => {
      session.clear();
      setNotice('Your session ended: sign in again.');
      setSignedIn(false);
    });
    void (async () => {
      if (await signInFromLink()) return setSignedIn(true);
      if (!session.token) return setSignedIn(false);
      try {
        await api.get('/api/system/version');
        setSignedIn(true);
      } catch (err) {
        if ((err as ApiError).status === 401) session.clear();
        setSignedIn((err as ApiError).status !== 401);
      }
    })();
  }, []);
  if (signedIn === null) return <p class="muted">Loading…</p>;
  if (!signedIn) return <SignIn notice={notice} onSignedIn={() => setSignedIn(true)} />;
  return (
    <Shell
      onSignOut={() => {
        session.clear();
        setNotice('Signed out.');
        setSignedIn(false);
      }}
    />
  );
}

function Shell(props: { onSignOut: () => void }) {
  const route = useRoute();
  const screen = route[0] ?? 'files';
  const socket = useMemo(() => new EventSocket(props.onSignOut), []);
  const [connection, setConnection] = useState<SocketState>('connecting');
  const [pausedForMs, setPausedForMs] = useState(0);
  const [spaces, setSpaces] = useState<Space[]>([]);
  const [spaceId, setSpaceId] = useState(localStorage.getItem(SPACE_KEY) ?? TEMP_SPACE_ID);
  const [theme, setTheme] = useState<Theme>((localStorage.getItem(THEME_KEY) as Theme | null) ?? 'system');
  const [version, setVersion] = useState('');
  const [error, setError] = useState('');

  const reload = async () => {
    try {
      setSpaces(await loadSpaces());
    } catch (err) {
      setError((err as ApiError).message);
    }
  };
  useEffect(() => {
    const off = socket.onState((state, retryInMs) => {
      setConnection(state);
      setPausedForMs(state === 'paused' ? (retryInMs ?? 0) : 0);
    });
    socket.start();
    void reload();
    void api.get<string>('/api/system/version').then(setVersion, () => undefined);
    return () => {
      off();
      socket.stop();
    };
  }, [socket]);
  useEffect(() => applyTheme(theme), [theme]);
  // Digital humans waiting for an answer show on the nav and in the tab's title, from any screen.
  const waiting = useWaitingApps(socket);
  useEffect(() => {
    document.title = titleWithWaiting(waiting);
  }, [waiting]);

  const switchSpace = (id: string) => {
    setSpaceId(id);
    localStorage.setItem(SPACE_KEY, id);
  };
  const space = spaces.find((s) => s.id === spaceId) ?? spaces.find((s) => s.id === TEMP_SPACE_ID);

  return (
    <>
      <header class="top">
        {/* Hash routes own the fragment (`#content` would be a route): the link moves focus itself. */}
        <a
          class="skip-link"
          href={href(...route)}
          onClick={(e) => {
            e.preventDefault();
            document.getElementById('content')?.focus();
          }}
        >
          Skip to content
        </a>
        <span class="brand">svc-server</span>
        <nav class="main" aria-label="Main">
          {SCREENS.map((s) => (
            <a key={s.id} href={href(s.id)} aria-current={screen === s.id ? 'page' : undefined}>
              {s.label}
              {s.id === 'apps' && waiting > 0 && (
                <>
                  <span class="badge waiting" aria-hidden="true">
                    {waiting}
                  </span>
                  <span class="sr-only"> ({waiting} waiting for you)</span>
                </>
              )}
            </a>
          ))}
        </nav>
        <span class="grow" />
        <label for="space-switch" class="sr-only">
          Current space
        </label>
        <select id="space-switch" value={space?.id} onChange={(e) => switchSpace(e.currentTarget.value)}>
          {spaces.map((s) => (
            <option key={s.id} value={s.id}>
              {s.id === TEMP_SPACE_ID ? `${s.name} (temporary)` : s.name}
            </option>
          ))}
        </select>
        <span class={`conn ${connection}`} role="status" aria-live="polite">
          {connection === 'open'
            ? 'Live'
            : connection === 'connecting'
              ? 'Connecting…'
              : connection === 'paused'
                ? `Live updates paused: sign-in is locked for ${Math.ceil(pausedForMs / 60_000)} min`
                : 'Offline, retrying'}
        </span>
        <label for="theme" class="sr-only">
          Theme
        </label>
        <select
          id="theme"
          value={theme}
          onChange={(e) => {
            const next = e.currentTarget.value as Theme;
            localStorage.setItem(THEME_KEY, next);
            setTheme(next);
          }}
        >
          <option value="system">System theme</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
        </select>
        <button onClick={props.onSignOut}>Sign out</button>
      </header>
      <main class="screen" id="content" tabIndex={-1}>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {!space ? (
          <p class="muted">Loading…</p>
        ) : screen === 'chat' ? (
          <ChatScreen key={space.id} space={space} socket={socket} conversationId={route[1]} />
        ) : screen === 'apps' ? (
          <AppsScreen space={space} socket={socket} appId={route[1]} />
        ) : screen === 'teams' ? (
          <LazyTeams key={space.id} space={space} socket={socket} teamId={route[1]} />
        ) : screen === 'knowledge' ? (
          <LazyKnowledge spaces={spaces} socket={socket} kbId={route[1]} />
        ) : screen === 'store' ? (
          <StoreScreen space={space} />
        ) : screen === 'settings' ? (
          <SettingsScreen section={route[1]} />
        ) : screen === 'spaces' ? (
          <SpacesScreen spaces={spaces} current={space.id} onSwitch={switchSpace} reload={reload} />
        ) : (
          <FilesScreen key={space.id} space={space} socket={socket} />
        )}
        <footer class="notice">Server version {version}</footer>
      </main>
    </>
  );
}
