import type { ActivityEntryDto, AppDto, AutomationStateDto, RunTriggerResult } from '#contracts/apps.js';
import { appChatConversationId, appRunConversationId } from '#contracts/apps.js';
import type { PendingApprovalDto } from '#contracts/agent.js';
import type { ConversationDto, MessageDto } from '#contracts/conversations.js';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { AppNeeds } from './needs.js';
import { AppBrowser } from './browser.js';
import { ApprovalCard, Conversation } from './chat.js';
import { ask, confirmAction } from './dialogs.js';
import { lazyModule, useLazyModule } from './lazy.js';
import { go, href } from './route.js';
import type { EventSocket } from './socket.js';
import type { Space } from './spaces.js';

/** A `config_schema` item (docs/api/digital-humans.md, "The spec file"). */
export interface Setting {
  key: string;
  label: string;
  type: 'url' | 'text' | 'string' | 'number' | 'select' | 'boolean' | 'email';
  description?: string;
  placeholder?: string;
  required?: boolean;
  default?: unknown;
  options?: Array<{ label: string; value: string | number | boolean }>;
}
interface Escalation {
  entryId: string;
  question: string;
  choices: string[];
}

type Translations = Record<
  string,
  {
    name?: string;
    description?: string;
    config_schema?: Record<
      string,
      { label?: string; description?: string; placeholder?: string; options?: Record<string, string> }
    >;
  }
>;

/** The spec's translations for the browser's language: the exact tag first, then the language alone. */
export function translationFor(spec: Record<string, unknown>): Translations[string] | undefined {
  const i18n = spec.i18n as Translations | undefined;
  if (!i18n || typeof i18n !== 'object') return undefined;
  const want = navigator.language;
  const lang = want.split('-')[0]!;
  const key =
    Object.keys(i18n).find((k) => k.toLowerCase() === want.toLowerCase()) ??
    Object.keys(i18n).find((k) => k.split('-')[0] === lang);
  return key ? i18n[key] : undefined;
}

/** A spec's `config_schema` (or legacy `inputs`), labels translated per its `i18n` for the browser's language. */
export function settingsOf(spec: Record<string, unknown>): Setting[] {
  const raw = (spec.config_schema ?? spec.inputs ?? []) as Setting[];
  if (!Array.isArray(raw)) return [];
  const t = translationFor(spec)?.config_schema ?? {};
  return raw
    .filter((s) => s && typeof s.key === 'string')
    .map((s) => {
      const tr = t[s.key] ?? {};
      return {
        ...s,
        label: tr.label ?? s.label ?? s.key,
        description: tr.description ?? s.description,
        placeholder: tr.placeholder ?? s.placeholder,
        options: s.options?.map((o) => ({ ...o, label: tr.options?.[String(o.value)] ?? o.label })),
      };
    });
}

/** A digital human's name as people see it everywhere: translated for the browser's language, else its display name, else its name. */
export const appName = (app: AppDto): string =>
  String(translationFor(app.spec)?.name ?? app.spec.display_name ?? app.spec.name ?? app.id);
const time = (ms: number | null | undefined): string => (ms ? new Date(ms).toLocaleString() : '—');

/** Digital humans: the list with live status, installing from a spec file, and one app's page. */
export function AppsScreen(props: { space: Space; socket: EventSocket; appId?: string }) {
  const [apps, setApps] = useState<AppDto[]>([]);
  const [states, setStates] = useState<Record<string, AutomationStateDto>>({});
  const [yaml, setYaml] = useState('');
  const [global, setGlobal] = useState(false);
  const [status, setStatus] = useState('');
  const [schema, setSchema] = useState<Setting[]>([]);
  const [config, setConfig] = useState<Record<string, unknown>>({});
  // The spec's settings are asked for before installing (the YAML parser is loaded only here).
  useEffect(() => {
    if (!yaml.trim()) return setSchema([]);
    let live = true;
    void import('yaml')
      .then(({ parse }) => {
        const spec = parse(yaml) as Record<string, unknown> | null;
        const found = spec && typeof spec === 'object' ? settingsOf(spec) : [];
        if (live) {
          setSchema(found);
          setConfig((prev) => initialValues(found, prev));
        }
      })
      .catch(() => live && setSchema([]));
    return () => {
      live = false;
    };
  }, [yaml]);
  const reload = async () => {
    try {
      setApps(await api.get<AppDto[]>('/api/apps'));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  useEffect(() => {
    void reload();
    return props.socket.on((event) => {
      const d = event.data as { appId?: string; state?: AutomationStateDto };
      if (event.channel === 'app:status_changed' && d.appId && d.state) {
        const { appId, state } = d;
        setStates((prev) => ({ ...prev, [appId]: state }));
        void reload();
      }
      if (event.channel === 'app:list_changed' || event.channel === 'app:deleted') void reload();
    });
  }, []);

  if (props.appId) {
    const app = apps.find((a) => a.id === props.appId);
    return app ? (
      <AppPage app={app} state={states[app.id]} space={props.space} socket={props.socket} reload={reload} />
    ) : (
      <p class="muted">{status || 'Loading…'}</p>
    );
  }

  return (
    <div class="stack">
      <section class="panel stack" aria-labelledby="apps-title">
        <h1 id="apps-title">Digital humans</h1>
        {apps.length === 0 && <p class="muted">None installed yet.</p>}
        <ul class="plain cards" aria-label="Installed digital humans">
          {apps.map((app) => (
            <li key={app.id} class="panel stack">
              <a href={href('apps', app.id)}>
                <strong>{appName(app)}</strong>
              </a>
              <span class="muted">{String(app.spec.description ?? '')}</span>
              <span class="row">
                <span class="badge">{app.status}</span>
                {states[app.id] && <span class="badge">{states[app.id]!.status}</span>}
                {app.pendingEscalationId && <span class="badge">waiting for you</span>}
              </span>
            </li>
          ))}
        </ul>
      </section>
      <form
        class="panel stack"
        aria-labelledby="install-title"
        onSubmit={async (e) => {
          e.preventDefault();
          const checked = checkedSettings(schema, config);
          if (!checked.ok) return setStatus(checked.error);
          try {
            const { appId } = await api.post<{ appId: string }>('/api/apps/import-spec', {
              spaceId: global ? null : props.space.id,
              yamlContent: yaml,
              userConfig: checked.values,
            });
            setYaml('');
            setStatus('Installed.');
            await reload();
            go('apps', appId);
          } catch (err) {
            setStatus((err as ApiError).message);
          }
        }}
      >
        <h2 id="install-title">Install from a spec file</h2>
        <label for="spec-file">spec.yaml file</label>
        <input
          id="spec-file"
          type="file"
          accept=".yaml,.yml,text/yaml"
          onChange={async (e) => setYaml((await e.currentTarget.files?.[0]?.text()) ?? '')}
        />
        <label for="spec-text">or paste the spec</label>
        <textarea
          id="spec-text"
          rows={8}
          class="editor short"
          value={yaml}
          onInput={(e) => setYaml(e.currentTarget.value)}
        />
        {schema.length > 0 && (
          <fieldset class="stack">
            <legend>Settings</legend>
            <SettingsFields
              schema={schema}
              values={config}
              set={(key, value) => setConfig({ ...config, [key]: value })}
            />
          </fieldset>
        )}
        <label class="row">
          <input type="checkbox" checked={global} onChange={(e) => setGlobal(e.currentTarget.checked)} /> For every
          space (global)
        </label>
        <button type="submit" class="primary" disabled={!yaml.trim()}>
          Install
        </button>
        <p role="status" class="muted">
          {status}
        </p>
      </form>
    </div>
  );
}

export const initialValues = (schema: Setting[], current: Record<string, unknown> = {}): Record<string, unknown> =>
  Object.fromEntries(schema.map((s) => [s.key, current[s.key] ?? s.default ?? (s.type === 'boolean' ? false : '')]));

const isBlank = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

/**
 * Settings checked against their `config_schema` before they are sent: a required one left empty
 * (a cleared number is empty, not 0) or a number that is not one is refused, naming the setting.
 * The values to send otherwise, optional numbers left empty omitted.
 */
export function checkedSettings(
  schema: Setting[],
  values: Record<string, unknown>,
): { ok: true; values: Record<string, unknown> } | { ok: false; error: string } {
  const out = { ...values };
  for (const s of schema) {
    const v = values[s.key];
    if (s.type === 'boolean') continue;
    if (isBlank(v)) {
      if (s.required) return { ok: false, error: `${s.label} is required.` };
      if (s.type === 'number') delete out[s.key];
      continue;
    }
    if (s.type === 'number') {
      const n = typeof v === 'number' ? v : Number(v);
      if (!Number.isFinite(n)) return { ok: false, error: `${s.label} must be a number.` };
      out[s.key] = n;
    }
  }
  return { ok: true, values: out };
}

/** Controls generated from a spec's `config_schema`: one labelled control per setting, by type. */
export function SettingsFields(props: {
  schema: Setting[];
  values: Record<string, unknown>;
  set: (key: string, value: unknown) => void;
}) {
  const { values, set } = props;
  return (
    <>
      {props.schema.map((s) => {
        const id = `setting-${s.key}`;
        const common = {
          id,
          required: s.required,
          placeholder: s.placeholder,
          'aria-describedby': s.description ? `${id}-help` : undefined,
        };
        const value = values[s.key];
        return (
          <div key={s.key} class="stack">
            {s.type === 'boolean' ? (
              <label class="row">
                <input
                  type="checkbox"
                  id={id}
                  checked={Boolean(value)}
                  onChange={(e) => set(s.key, e.currentTarget.checked)}
                />{' '}
                {s.label}
              </label>
            ) : (
              <label for={id}>{s.label}</label>
            )}
            {s.type === 'text' && (
              <textarea
                {...common}
                rows={4}
                value={String(value ?? '')}
                onInput={(e) => set(s.key, e.currentTarget.value)}
              />
            )}
            {s.type === 'select' && (
              <select
                {...common}
                value={String(value ?? '')}
                onChange={(e) => set(s.key, s.options?.find((o) => String(o.value) === e.currentTarget.value)?.value)}
              >
                {s.options?.map((o) => (
                  <option key={String(o.value)} value={String(o.value)}>
                    {o.label}
                  </option>
                ))}
              </select>
            )}
            {['url', 'string', 'email', 'number'].includes(s.type) && (
              <input
                {...common}
                type={(s.type === 'string' ? 'text' : s.type) as 'text'}
                value={String(value ?? '')}
                onInput={(e) => {
                  // A cleared number stays empty (not 0): a required one is then refused.
                  const text = e.currentTarget.value;
                  set(s.key, s.type === 'number' && text.trim() !== '' ? Number(text) : text);
                }}
              />
            )}
            {s.description && (
              <span id={`${id}-help`} class="notice">
                {s.description}
              </span>
            )}
          </div>
        );
      })}
    </>
  );
}

function SettingsForm(props: { app: AppDto; onSaved: () => void }) {
  const schema = settingsOf(props.app.spec);
  const [values, setValues] = useState<Record<string, unknown>>(() => initialValues(schema, props.app.userConfig));
  const [status, setStatus] = useState('');
  if (schema.length === 0) return <p class="muted">This digital human has no settings.</p>;
  return (
    <form
      class="stack"
      aria-label="Settings"
      onSubmit={async (e) => {
        e.preventDefault();
        const checked = checkedSettings(schema, values);
        if (!checked.ok) return setStatus(checked.error);
        try {
          await api.post(`/api/apps/${props.app.id}/config`, checked.values);
          setStatus('Settings saved.');
          props.onSaved();
        } catch (err) {
          setStatus((err as ApiError).message);
        }
      }}
    >
      <SettingsFields schema={schema} values={values} set={(key, value) => setValues({ ...values, [key]: value })} />
      <button type="submit" class="primary">
        Save settings
      </button>
      <p role="status" class="muted">
        {status}
      </p>
    </form>
  );
}

const TAB_NAMES = {
  chat: 'Chat',
  activity: 'Activity',
  channels: 'Channels',
  browser: 'Browser',
  settings: 'Settings',
} as const;
type Tab = keyof typeof TAB_NAMES;
const TABS = Object.keys(TAB_NAMES) as Tab[];

/** The Channels section, loaded when first opened (it stays out of the first screen's bundle). */
const loadChannels = lazyModule(() => import('./channels.js'));

function LazyChannels(props: { appId: string; socket: EventSocket }) {
  const [mod, failed] = useLazyModule(loadChannels);
  if (!mod) return <p class="muted">{failed ? `The Channels section could not be loaded: ${failed}` : 'Loading…'}</p>;
  return <mod.ChannelsSection {...props} />;
}

/** The conversations whose browser pages are the digital human's: its main chat, its runs', and the threads this browser knows. */
const appConversationIds = (appId: string): string[] => [
  appChatConversationId(appId),
  appRunConversationId(appId),
  ...rememberedThreads(appId).map((t) => t.id),
];

function AppPage(props: {
  app: AppDto;
  state?: AutomationStateDto;
  space: Space;
  socket: EventSocket;
  reload: () => Promise<void>;
}) {
  const { app } = props;
  const [tab, setTab] = useState<Tab>('chat');
  const [activity, setActivity] = useState<ActivityEntryDto[]>([]);
  const [escalations, setEscalations] = useState<Escalation[]>([]);
  const [state, setState] = useState<AutomationStateDto | undefined>(props.state);
  const [status, setStatus] = useState('');
  const spaceId = app.spaceId ?? props.space.id;

  useEffect(() => {
    void api.get<AutomationStateDto>(`/api/apps/${app.id}/state`).then(setState, () => undefined);
    void api.get<ActivityEntryDto[]>(`/api/apps/${app.id}/activity?limit=50`).then(
      (entries) => {
        setActivity(entries);
        const pending = entries.find((e) => e.type === 'escalation' && e.id === app.pendingEscalationId);
        if (pending) {
          const c = pending.content as { question?: string; choices?: string[] };
          setEscalations([{ entryId: pending.id, question: String(c.question ?? ''), choices: c.choices ?? [] }]);
        }
      },
      () => undefined,
    );
    return props.socket.on((event) => {
      const d = event.data as Record<string, unknown>;
      if (d.appId !== app.id) return;
      if (event.channel === 'app:status_changed') setState(d.state as AutomationStateDto);
      if (event.channel === 'app:activity_entry:new') {
        const entry = d.entry as ActivityEntryDto;
        setActivity((prev) => [entry, ...prev.filter((e) => e.id !== entry.id)]);
      }
      if (event.channel === 'app:escalation:new') {
        setEscalations((prev) => [
          ...prev,
          { entryId: String(d.entryId), question: String(d.question), choices: (d.choices as string[]) ?? [] },
        ]);
      }
      if (event.channel === 'app:escalation:resolved')
        setEscalations((prev) => prev.filter((e) => e.entryId !== d.entryId));
    });
  }, [app.id]);

  const act = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      setStatus(done);
      await props.reload();
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  const paused = app.status === 'paused';
  return (
    <div class="stack">
      <section class="panel stack" aria-labelledby="app-title">
        <p>
          <a href={href('apps')}>← Digital humans</a>
        </p>
        <h1 id="app-title">{appName(app)}</h1>
        <p class="row">
          <span class="badge">{app.status}</span>
          {state && (
            <span class="muted">
              {state.status}, {state.runningCount} running, next run {time(state.nextRunAtMs)}, last run{' '}
              {time(state.lastRunAtMs)}
              {state.lastError && <span class="error"> — {state.lastError}</span>}
            </span>
          )}
        </p>
        <div class="row" role="toolbar" aria-label="Digital human actions">
          <button
            onClick={() =>
              act(() => api.post(`/api/apps/${app.id}/${paused ? 'resume' : 'pause'}`), paused ? 'Resumed.' : 'Paused.')
            }
          >
            {paused ? 'Resume' : 'Pause'}
          </button>
          <button
            onClick={async () => {
              try {
                const result = await api.post<RunTriggerResult>(`/api/apps/${app.id}/trigger`);
                setStatus(result.outcome === 'started' ? 'Run started.' : `Skipped: ${result.reason}`);
              } catch (err) {
                setStatus((err as ApiError).message);
              }
            }}
          >
            Run now
          </button>
          <button
            onClick={async () => {
              const yaml = await api.get<string>(`/api/apps/${app.id}/export-spec`);
              const link = document.createElement('a');
              link.href = URL.createObjectURL(new Blob([yaml], { type: 'text/yaml' }));
              link.download = `${String(app.spec.name ?? 'spec')}.yaml`;
              link.click();
            }}
          >
            Export
          </button>
          <button
            class="danger"
            onClick={async () => {
              if (!(await confirmAction(`Uninstall ${appName(app)}?`, 'Uninstall'))) return;
              await act(() => api.del(`/api/apps/${app.id}`), 'Uninstalled.');
              go('apps');
            }}
          >
            Uninstall
          </button>
        </div>
        <p role="status" class="muted">
          {status}
        </p>
        <AppNeeds key={app.id} spec={app.spec} spaceId={app.spaceId ?? props.space.id} app={app} level={2} />
        {escalations.map((e) => (
          <EscalationCard key={e.entryId} appId={app.id} escalation={e} />
        ))}
        {pendingApprovals(activity).map((approval) => (
          <ApprovalCard
            key={approval.toolId}
            conversationId={appRunConversationId(app.id)}
            approval={approval}
            onDone={() => setStatus('Answered.')}
          />
        ))}
      </section>
      <div class="row" role="tablist" aria-label="Sections">
        {TABS.map((t, i) => (
          <button
            key={t}
            id={`tab-${t}`}
            role="tab"
            aria-selected={tab === t}
            aria-controls={`tabpanel-${t}`}
            tabIndex={tab === t ? 0 : -1}
            class={tab === t ? 'primary' : ''}
            onClick={() => setTab(t)}
            onKeyDown={(e) => {
              // WAI-ARIA tabs: arrows move (wrapping), Home/End go to the ends; the tab moved to is shown.
              const to =
                e.key === 'ArrowRight'
                  ? (i + 1) % TABS.length
                  : e.key === 'ArrowLeft'
                    ? (i + TABS.length - 1) % TABS.length
                    : e.key === 'Home'
                      ? 0
                      : e.key === 'End'
                        ? TABS.length - 1
                        : -1;
              if (to < 0) return;
              e.preventDefault();
              setTab(TABS[to]!);
              document.getElementById(`tab-${TABS[to]}`)?.focus();
            }}
          >
            {TAB_NAMES[t]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`tabpanel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === 'chat' && <AppChat app={app} space={{ ...props.space, id: spaceId }} socket={props.socket} />}
        {tab === 'activity' && (
          <section class="panel" aria-label="Activity">
            {activity.length === 0 && <p class="muted">No activity yet.</p>}
            <ol class="plain stack">
              {activity.map((entry) => (
                <ActivityItem key={entry.id} appId={app.id} entry={entry} />
              ))}
            </ol>
          </section>
        )}
        {tab === 'channels' && <LazyChannels appId={app.id} socket={props.socket} />}
        {tab === 'browser' && (
          <AppBrowser
            appId={app.id}
            spaceId={spaceId}
            conversationIds={appConversationIds(app.id)}
            socket={props.socket}
          />
        )}
        {tab === 'settings' && (
          <section class="panel">
            <SettingsForm app={app} onSaved={() => void props.reload()} />
          </section>
        )}
      </div>
    </div>
  );
}

const ACTIVITY_LABELS: Record<string, string> = {
  run_complete: 'Run complete',
  run_error: 'Run failed',
  run_skipped: 'Run skipped',
  milestone: 'Progress',
  output: 'Output',
  escalation: 'Question for you',
  approval: 'Tool call approval',
};
const textOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A run's transcript (its messages), read when first opened. */
function RunTranscript(props: { appId: string; runId: string }) {
  const [messages, setMessages] = useState<MessageDto[] | null>(null);
  const [error, setError] = useState('');
  return (
    <details
      onToggle={(e) => {
        if (!e.currentTarget.open || messages) return;
        void api
          .get<{ messages: MessageDto[] }>(`/api/apps/${props.appId}/runs/${encodeURIComponent(props.runId)}/session`)
          .then(
            (s) => setMessages(s.messages ?? []),
            (err: ApiError) => setError(err.message),
          );
      }}
    >
      <summary>Transcript</summary>
      {error && <p class="error">{error}</p>}
      {messages?.length === 0 && <p class="muted">No messages.</p>}
      <ol class="plain stack">
        {messages?.map((m) => (
          <li key={m.id} class={`msg ${m.role}`}>
            <span class="muted">{m.role === 'user' ? 'Task' : m.role === 'assistant' ? 'Digital human' : m.role}</span>
            <p class="pre-wrap">{m.content}</p>
          </li>
        ))}
      </ol>
    </details>
  );
}

/** One activity entry rendered by its type (not raw JSON). */
function ActivityItem(props: { appId: string; entry: ActivityEntryDto }) {
  const { entry } = props;
  const c = entry.content;
  const response = c.userResponse as { choice?: unknown; text?: unknown } | undefined;
  const resolution = c.resolution as { reason?: unknown } | undefined;
  const answer = [textOf(response?.choice), textOf(response?.text)].filter(Boolean).join(' — ');
  const choices = Array.isArray(c.choices) ? c.choices.map(String) : [];
  return (
    <li class="stack activity-entry" data-type={entry.type}>
      <div class="row">
        <span class={entry.type === 'run_error' ? 'badge error' : 'badge'}>
          {ACTIVITY_LABELS[entry.type] ?? entry.type}
        </span>
        <span class="muted">{time(entry.ts)}</span>
      </div>
      {(entry.type === 'run_complete' || entry.type === 'milestone' || entry.type === 'output') && (
        <p class="pre-wrap">{textOf(c.summary) || 'No summary.'}</p>
      )}
      {entry.type === 'run_error' && (
        <p class="pre-wrap">
          {textOf(c.error) || 'The run failed.'}
          {c.interrupted === true && <span class="muted"> (interrupted)</span>}
        </p>
      )}
      {entry.type === 'run_skipped' && <p>Skipped: {textOf(c.reason) || 'no reason given'}</p>}
      {entry.type === 'escalation' && (
        <>
          <p class="pre-wrap">
            <strong>Question:</strong> {textOf(c.question) || textOf(c.summary)}
          </p>
          {choices.length > 0 && <p class="muted">Choices: {choices.join(', ')}</p>}
          {answer ? (
            <p>
              <strong>Your answer:</strong> {answer}
            </p>
          ) : resolution?.reason === 'expired' ? (
            <p class="muted">Expired without an answer.</p>
          ) : (
            <p class="muted">Waiting for your answer.</p>
          )}
        </>
      )}
      {entry.type === 'approval' && (
        <p>
          {textOf(c.name) || 'A tool call'}
          {textOf(c.outcome) ? `: ${textOf(c.outcome)}` : ': waiting for approval'}
        </p>
      )}
      {entry.runId && entry.type !== 'run_skipped' && <RunTranscript appId={props.appId} runId={entry.runId} />}
    </li>
  );
}

/**
 * A run's tool calls still held for approval: `approval` activity entries whose decision has not
 * been merged in yet (the decided entry comes back through `app:activity_entry:new` with an outcome).
 */
function pendingApprovals(activity: ActivityEntryDto[]): PendingApprovalDto[] {
  const pending: PendingApprovalDto[] = [];
  for (const entry of activity) {
    if (entry.type !== 'approval') continue;
    const c = entry.content as Partial<PendingApprovalDto> & { outcome?: string };
    if (c.outcome || !c.toolId || !c.name) continue;
    pending.push({ toolId: c.toolId, name: c.name, input: c.input ?? {}, deadline: String(c.deadline ?? '') });
  }
  return pending;
}

function EscalationCard(props: { appId: string; escalation: Escalation }) {
  const [text, setText] = useState('');
  const [status, setStatus] = useState('');
  const respond = (body: { choice?: string; text?: string }) =>
    api.post(`/api/apps/${props.appId}/escalation/${props.escalation.entryId}/respond`, body).then(
      () => setStatus('Answered.'),
      (err: ApiError) => setStatus(err.message),
    );
  return (
    <form
      class="panel stack"
      aria-label="Question from the digital human"
      onSubmit={(e) => {
        e.preventDefault();
        void respond({ text });
      }}
    >
      <strong>{props.escalation.question}</strong>
      <div class="row">
        {props.escalation.choices.map((choice) => (
          <button key={choice} type="button" onClick={() => void respond({ choice })}>
            {choice}
          </button>
        ))}
      </div>
      <label for={`esc-${props.escalation.entryId}`}>Or answer in words</label>
      <input id={`esc-${props.escalation.entryId}`} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit" class="primary" disabled={!text.trim()}>
        Send answer
      </button>
      <p role="status" class="muted">
        {status}
      </p>
    </form>
  );
}

interface Thread {
  id: string;
  lastMessage?: string;
}
const threadsKey = (appId: string): string => `svc-threads:${appId}`;
function rememberedThreads(appId: string): Thread[] {
  try {
    const list = JSON.parse(localStorage.getItem(threadsKey(appId)) ?? '[]') as unknown;
    return Array.isArray(list) ? (list as Thread[]) : [];
  } catch {
    return [];
  }
}
/** A caller-chosen thread id: a letter or digit, then letters, digits and `. _ : @ -` (128 at most). */
const threadIdFrom = (name: string): string =>
  name
    .trim()
    .replace(/[^A-Za-z0-9._:@-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 100);

/**
 * A digital human's chat: its main thread and threads of its own (docs/api/digital-humans.md, "Chat": `chat/send` with a
 * `conversationId`). No operation lists an app's threads, so the list is the ones this browser
 * opened plus those `app:im-session-updated` announces while the page is open.
 */
function AppChat(props: { app: AppDto; space: Space; socket: EventSocket }) {
  const { app } = props;
  const main = appChatConversationId(app.id);
  const [threads, setThreads] = useState<Thread[]>(() => rememberedThreads(app.id));
  const [current, setCurrent] = useState(main);
  const remember = (list: Thread[]) => {
    setThreads(list);
    localStorage.setItem(threadsKey(app.id), JSON.stringify(list));
  };
  useEffect(
    () =>
      props.socket.on((event) => {
        const d = event.data as { appId?: string; chatId?: string; channel?: string; lastMessage?: string };
        if (event.channel !== 'app:im-session-updated' || d.appId !== app.id || !d.chatId || d.chatId === main) return;
        const chatId = d.chatId;
        setThreads((prev) => {
          const next = [{ id: chatId, lastMessage: d.lastMessage }, ...prev.filter((t) => t.id !== chatId)];
          localStorage.setItem(threadsKey(app.id), JSON.stringify(next));
          return next;
        });
      }),
    [app.id],
  );
  return (
    <div class="chat">
      <section class="panel stack" aria-labelledby="threads-title">
        <h2 id="threads-title">Threads</h2>
        <button
          class="primary"
          onClick={async () => {
            const name = await ask('New thread', 'Name of the thread', `thread-${threads.length + 1}`, 'Start');
            if (!name) return;
            const id = threadIdFrom(name) || `thread-${Date.now().toString(36)}`;
            if (!threads.some((t) => t.id === id)) remember([{ id }, ...threads]);
            setCurrent(id);
          }}
        >
          New thread
        </button>
        <ul class="plain list stack" aria-label="Threads">
          {[{ id: main, lastMessage: undefined } as Thread, ...threads].map((t) => (
            <li key={t.id}>
              <button
                class="link item"
                aria-current={t.id === current ? 'true' : undefined}
                onClick={() => setCurrent(t.id)}
              >
                {t.id === main ? 'Main thread' : t.id}
                {t.lastMessage && <span class="muted"> — {t.lastMessage}</span>}
              </button>
            </li>
          ))}
        </ul>
      </section>
      <Conversation
        key={current}
        space={props.space}
        socket={props.socket}
        conversationId={current}
        load={async (): Promise<ConversationDto> => {
          const title = `${appName(app)} · ${current === main ? 'main thread' : current}`;
          if (current === main)
            return {
              ...({} as ConversationDto),
              id: main,
              title,
              messages: await api.get<MessageDto[]>(`/api/apps/${app.id}/chat/messages`),
            };
          try {
            const found = await api.get<ConversationDto>(
              `/api/spaces/${props.space.id}/conversations/${encodeURIComponent(current)}`,
            );
            return { ...found, title };
          } catch (err) {
            // A thread without a message yet has no record.
            if ((err as ApiError).status === 404)
              return { ...({} as ConversationDto), id: current, title, messages: [] };
            throw err;
          }
        }}
        send={(message, images) =>
          api.post(`/api/apps/${app.id}/chat/send`, {
            spaceId: props.space.id,
            message,
            ...(images.length ? { images } : {}),
            ...(current === main ? {} : { conversationId: current }),
          })
        }
        stop={() => api.post(`/api/apps/${app.id}/chat/stop`)}
      />
    </div>
  );
}
