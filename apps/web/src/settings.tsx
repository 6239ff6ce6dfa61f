import type { AISource, AppConfiguration, ModelSourceTestResult } from '#contracts/models.js';
import { AI_PROVIDERS, DEFAULT_API_URL, DEFAULT_MODEL } from '#contracts/models.js';
import type { RemoteStatus } from '#contracts/api.js';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { confirmAction } from './dialogs.js';
import { isFromEnvironment } from './seed.js';
import { lazyModule, useLazyModule } from './lazy.js';
import { notificationPermission, notifyWaitingWanted, setNotifyWaiting, type NotifyPermission } from './waiting.js';

// Settings → MCP servers is loaded when Settings first opens: the first screen does not carry it.
const loadMcpServers = lazyModule(() => import('./mcp-servers.js'));

function LazyMcpServers(props: { focus: boolean }) {
  const [mod, failed] = useLazyModule(loadMcpServers);
  if (!mod)
    return (
      <p class="muted">{failed ? `The MCP servers section could not be loaded: ${failed}` : 'Loading MCP servers…'}</p>
    );
  return <mod.McpServersSection {...props} />;
}

/**
 * Settings: model sources (add, test, switch, choose the model, remove), MCP servers (`#/settings/mcp`
 * brings that section into view) and the server's version and status.
 */
export function SettingsScreen(props: { section?: string }) {
  const [config, setConfig] = useState<AppConfiguration | null>(null);
  const [version, setVersion] = useState('');
  const [remote, setRemote] = useState<RemoteStatus | null>(null);
  const [status, setStatus] = useState('');
  const [form, setForm] = useState({
    name: '',
    provider: 'anthropic',
    apiUrl: DEFAULT_API_URL.anthropic,
    apiKey: '',
    model: DEFAULT_MODEL.anthropic,
  });
  const load = () =>
    api.get<AppConfiguration>('/api/config').then(setConfig, (err: ApiError) => setStatus(err.message));
  useEffect(() => {
    void load();
    void api.get<string>('/api/system/version').then(setVersion, () => undefined);
    void api.get<RemoteStatus>('/api/remote/status').then(setRemote, () => undefined);
  }, []);
  const act = (work: Promise<unknown>, done: string) =>
    work.then(
      () => {
        setStatus(done);
        return load();
      },
      (err: ApiError) => {
        setStatus(err.message);
        // What is stored, not what was tried (a switch shown as clicked while it saved).
        return load();
      },
    );
  /** One real one-token call to a stored (`modelSourceId`) or unsaved (`source`) source; the result goes to the status line. */
  const testSource = (body: object, label: string) => {
    setStatus(`Testing ${label}…`);
    return api.post<ModelSourceTestResult>('/api/agent/test-model-source', body).then(
      (r) =>
        setStatus(
          r.ok ? `${label}: connected (${r.modelId}, ${r.latencyMs} ms).` : `${label}: connection failed: ${r.error}`,
        ),
      (err: ApiError) => setStatus(err.message),
    );
  };
  const sources: AISource[] = config?.aiSources.sources ?? [];
  /** The `assistant` branch: its switches (docs/api.md, "Conversation titles"). */
  const assistant = (config?.assistant ?? {}) as Record<string, unknown>;
  return (
    <div class="stack">
      <section class="panel stack" aria-labelledby="sources-title">
        <h1 id="sources-title">Model sources</h1>
        <ul class="plain list stack" aria-label="Model sources">
          {sources.length === 0 && <li class="muted">No model source yet: add one below.</li>}
          {sources.map((s) => (
            <li key={s.id} class="row">
              <span class="grow">
                <strong>{s.name}</strong> <span class="badge">{s.provider}</span>
                {config?.aiSources.currentId === s.id && <span class="badge">in use</span>}
                {isFromEnvironment(s) && (
                  <span class="badge" title="Set by SVC_AI_* at the server's start">
                    from the environment
                  </span>
                )}{' '}
                <span class="muted">{s.apiUrl}</span>
                {isFromEnvironment(s) && (
                  <span class="muted block">
                    Comes from the server's SVC_AI_* variables: it is set again from them at every start, so change it
                    there. Sources added here are kept.
                  </span>
                )}
              </span>
              <label for={`model-${s.id}`} class="sr-only">
                Model of {s.name}
              </label>
              <select
                id={`model-${s.id}`}
                value={s.model}
                onChange={(e) =>
                  void act(
                    api.put(`/api/ai-sources/sources/${s.id}`, { model: e.currentTarget.value }),
                    'Model changed.',
                  )
                }
              >
                {[s.model, ...s.availableModels.map((m) => m.id).filter((id) => id !== s.model)].map((id) => (
                  <option key={id} value={id}>
                    {id}
                  </option>
                ))}
              </select>
              <button onClick={() => void testSource({ modelSourceId: s.id }, s.name)}>Test connection</button>
              {config?.aiSources.currentId !== s.id && (
                <button
                  onClick={() =>
                    void act(api.post('/api/ai-sources/switch-source', { sourceId: s.id }), `Now using ${s.name}.`)
                  }
                >
                  Use
                </button>
              )}
              <button
                class="danger"
                onClick={async () => {
                  if (await confirmAction(`Remove the model source ${s.name}?`, 'Remove'))
                    void act(api.del(`/api/ai-sources/sources/${s.id}`), 'Removed.');
                }}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        <form
          class="stack"
          aria-label="Add a model source"
          onSubmit={(e) => {
            e.preventDefault();
            void act(api.post('/api/ai-sources/sources', form), `Added ${form.name}.`);
          }}
        >
          <h2>Add a model source</h2>
          <label for="src-name">Name</label>
          <input
            id="src-name"
            required
            value={form.name}
            onInput={(e) => setForm({ ...form, name: e.currentTarget.value })}
          />
          <label for="src-provider">Provider</label>
          <select
            id="src-provider"
            value={form.provider}
            onChange={(e) => {
              const provider = e.currentTarget.value as 'anthropic' | 'openai';
              setForm({ ...form, provider, apiUrl: DEFAULT_API_URL[provider], model: DEFAULT_MODEL[provider] });
            }}
          >
            {AI_PROVIDERS.map((p) => (
              <option key={p} value={p}>
                {p === 'anthropic' ? 'Anthropic' : 'OpenAI-compatible'}
              </option>
            ))}
          </select>
          <label for="src-url">API URL</label>
          <input
            id="src-url"
            type="url"
            required
            value={form.apiUrl}
            onInput={(e) => setForm({ ...form, apiUrl: e.currentTarget.value })}
          />
          <label for="src-key">API key</label>
          <input
            id="src-key"
            type="password"
            autoComplete="off"
            value={form.apiKey}
            onInput={(e) => setForm({ ...form, apiKey: e.currentTarget.value })}
          />
          <label for="src-model">Model</label>
          <input
            id="src-model"
            required
            value={form.model}
            onInput={(e) => setForm({ ...form, model: e.currentTarget.value })}
          />
          <div class="row">
            <button type="button" onClick={() => void testSource({ source: form }, form.name || 'the new source')}>
              Test connection
            </button>
            <button type="submit" class="primary">
              Add source
            </button>
          </div>
        </form>
        <p role="status" class="muted">
          {status}
        </p>
      </section>
      <LazyMcpServers focus={props.section === 'mcp'} />
      <section class="panel stack" aria-labelledby="chat-settings-title">
        <h2 id="chat-settings-title">Chat</h2>
        <label class="row">
          <input
            type="checkbox"
            checked={assistant.autoTitle === true}
            disabled={!config}
            onChange={(e) => {
              const autoTitle = e.currentTarget.checked;
              const next = { ...assistant, autoTitle };
              // Shown as clicked while it saves (the status line says when it is kept; a failure
              // reloads what is stored), not flipped back until the configuration is read again.
              if (config) setConfig({ ...config, assistant: next } as AppConfiguration);
              // POST /api/config replaces the whole branch: the assistant's other switches go with it.
              void act(
                api.post('/api/config', { assistant: next }),
                autoTitle ? 'New conversations will be titled by the model.' : 'Automatic titles off.',
              );
            }}
          />
          Title new conversations with the model (one short call after the first reply)
        </label>
      </section>
      <NotificationSettings />
      <section class="panel" aria-labelledby="server-title">
        <h2 id="server-title">Server</h2>
        <p>
          Version {version}
          {remote && ` · ${remote.clients} connected client(s) · remote protocol ${remote.version}`}
        </p>
      </section>
    </div>
  );
}

/** The opt-in browser notification for a digital human that waits (kept in this browser only). */
function NotificationSettings() {
  const [permission, setPermission] = useState<NotifyPermission>(notificationPermission);
  const [wanted, setWanted] = useState(notifyWaitingWanted);
  return (
    <section class="panel stack" aria-labelledby="notifications-title">
      <h2 id="notifications-title">Notifications</h2>
      <label class="row">
        <input
          type="checkbox"
          role="switch"
          checked={wanted && permission === 'granted'}
          disabled={permission === 'unsupported'}
          aria-describedby="notify-waiting-state"
          onChange={async (e) => {
            const granted = await setNotifyWaiting(e.currentTarget.checked);
            setPermission(granted);
            setWanted(notifyWaitingWanted());
          }}
        />
        Notify me when a digital human waits for me
      </label>
      <p id="notify-waiting-state" class="muted" role="status">
        {permission === 'unsupported'
          ? 'This browser does not offer notifications.'
          : permission === 'denied'
            ? 'The browser blocks notifications for this site: allow them in its site settings, then turn this on.'
            : wanted && permission === 'granted'
              ? "On in this browser: one notification per question, with the digital human's name."
              : 'Off.'}
      </p>
    </section>
  );
}
