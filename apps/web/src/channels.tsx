import type {
  ChannelConfigField,
  ChannelInstanceDto,
  ChannelProviderDto,
  GuestPolicy,
  ImSessionDto,
  ReplyScope,
} from '#contracts/channels.js';
import { channelThreadId, MASKED } from '#contracts/channels.js';
import type { MessageDto } from '#contracts/conversations.js';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, q } from './api.js';
import { confirmAction } from './dialogs.js';
import type { EventSocket } from './socket.js';

/**
 * A digital human's message channels (docs/web-app.md, "Channels"; docs/api/channels.md): its channel
 * instances with their live state, a form per provider built from `configFields`, and the chats
 * (threads) of its instances with their messages and the proactive switch. Loaded on first use.
 */
export function ChannelsSection(props: { appId: string; socket: EventSocket }) {
  const { appId } = props;
  const [providers, setProviders] = useState<ChannelProviderDto[]>([]);
  const [instances, setInstances] = useState<ChannelInstanceDto[]>([]);
  const [sessions, setSessions] = useState<ImSessionDto[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [open, setOpen] = useState<ImSessionDto | null>(null);
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');

  const loadSessions = () =>
    api
      .get<ImSessionDto[]>(`/api/im-sessions?appId=${q(appId)}`)
      .then(setSessions, (err: ApiError) => setError(err.message));
  useEffect(() => {
    void api
      .get<ChannelProviderDto[]>('/api/im-channels/providers')
      .then(setProviders, (err: ApiError) => setError(err.message));
    void api.get<ChannelInstanceDto[]>('/api/im-channels/instances').then(
      (all) => setInstances(all.filter((i) => i.appId === appId)),
      (err: ApiError) => setError(err.message),
    );
    void loadSessions();
    return props.socket.on((event) => {
      if (event.channel === 'im-channels:instance-updated') {
        const d = event.data as { instanceId: string; instance: ChannelInstanceDto | null };
        setInstances((prev) => {
          const rest = prev.filter((i) => i.id !== d.instanceId);
          if (!d.instance || d.instance.appId !== appId) return rest;
          const at = prev.findIndex((i) => i.id === d.instanceId);
          return at < 0 ? [...prev, d.instance] : prev.map((i) => (i.id === d.instanceId ? d.instance! : i));
        });
        if (!d.instance) void loadSessions();
      }
      if (event.channel === 'app:im-session-updated' && (event.data as { appId?: string }).appId === appId)
        void loadSessions();
    });
  }, [appId]);

  const act = async (work: () => Promise<unknown>, done: string) => {
    setError('');
    try {
      await work();
      setStatus(done);
    } catch (err) {
      setError((err as ApiError).message);
    }
  };
  const providerOf = (type: string) => providers.find((p) => p.type === type);
  const sessionsOf = (instanceId: string) => sessions.filter((s) => s.instanceId === instanceId);
  const nameOfSession = (s: ImSessionDto) => s.customName || s.displayName || s.chatId;

  return (
    <section class="panel stack" aria-labelledby="channels-title">
      <h2 id="channels-title">Channels</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p role="status" class="muted">
        {status}
      </p>
      {instances.length === 0 && <p class="muted">No channel connects this digital human yet.</p>}
      <ul class="plain stack" aria-label="Channel instances">
        {instances.map((inst) => (
          <li key={inst.id} class="panel stack" aria-label={inst.name}>
            <span class="row">
              <strong>{inst.name}</strong>
              <span class="badge">{providerOf(inst.type)?.displayName ?? inst.type}</span>
              <span class={`badge${inst.state === 'online' ? ' ok' : ''}`} aria-label={`State: ${inst.state}`}>
                {inst.state}
              </span>
              {!inst.enabled && <span class="badge">disabled</span>}
            </span>
            {inst.reason && <span class="error">{inst.reason}</span>}
            <div class="row" role="group" aria-label={`Actions for ${inst.name}`}>
              <button onClick={() => setEditing(editing === inst.id ? null : inst.id)}>
                {editing === inst.id ? 'Close editor' : 'Edit'}
              </button>
              <button
                onClick={() =>
                  act(
                    () => api.patch(`/api/im-channels/instances/${q(inst.id)}`, { enabled: !inst.enabled }),
                    inst.enabled ? `${inst.name} disabled.` : `${inst.name} enabled.`,
                  )
                }
              >
                {inst.enabled ? 'Disable' : 'Enable'}
              </button>
              <button
                onClick={() =>
                  act(
                    () => api.post('/api/im-channels/reconnect', { instanceId: inst.id }),
                    `${inst.name} reconnecting.`,
                  )
                }
              >
                Reconnect
              </button>
              <button
                class="danger"
                onClick={async () => {
                  if (!(await confirmAction(`Delete the channel ${inst.name}?`, 'Delete'))) return;
                  await act(() => api.del(`/api/im-channels/instances/${q(inst.id)}`), `${inst.name} deleted.`);
                }}
              >
                Delete
              </button>
            </div>
            {editing === inst.id && (
              <InstanceForm
                appId={appId}
                providers={providers}
                instance={inst}
                onSaved={(saved) => {
                  setInstances((prev) => prev.map((i) => (i.id === saved.id ? saved : i)));
                  setEditing(null);
                  setStatus(`${saved.name} saved.`);
                }}
              />
            )}
            <ThreadList
              label={`Threads of ${inst.name}`}
              sessions={sessionsOf(inst.id)}
              nameOf={nameOfSession}
              open={open}
              onOpen={setOpen}
              onProactive={(s, proactive) =>
                act(
                  async () => {
                    await api.post('/api/im-sessions/set-proactive', {
                      appId,
                      instanceId: s.instanceId,
                      chatId: s.chatId,
                      proactive,
                    });
                    await loadSessions();
                  },
                  `${nameOfSession(s)}: proactive ${proactive ? 'on' : 'off'}.`,
                )
              }
            />
          </li>
        ))}
      </ul>
      {open && sessions.some((s) => s.instanceId === open.instanceId && s.chatId === open.chatId) && (
        <ThreadMessages
          key={`${open.instanceId}:${open.chatType}:${open.chatId}`}
          appId={appId}
          session={open}
          title={nameOfSession(open)}
          socket={props.socket}
        />
      )}
      <details>
        <summary>Add a channel</summary>
        <InstanceForm
          appId={appId}
          providers={providers}
          onSaved={(saved) => {
            setInstances((prev) => [...prev.filter((i) => i.id !== saved.id), saved]);
            setStatus(`${saved.name} added.`);
          }}
        />
      </details>
    </section>
  );
}

function ThreadList(props: {
  label: string;
  sessions: ImSessionDto[];
  nameOf: (s: ImSessionDto) => string;
  open: ImSessionDto | null;
  onOpen: (s: ImSessionDto) => void;
  onProactive: (s: ImSessionDto, proactive: boolean) => void;
}) {
  if (props.sessions.length === 0) return <p class="muted">No chat yet.</p>;
  return (
    <ul class="plain stack" aria-label={props.label}>
      {props.sessions.map((s) => {
        const name = props.nameOf(s);
        const current = props.open?.instanceId === s.instanceId && props.open.chatId === s.chatId;
        return (
          <li key={`${s.chatType}:${s.chatId}`} class="row">
            <button class="link item" aria-current={current ? 'true' : undefined} onClick={() => props.onOpen(s)}>
              {name}
            </button>
            <span class="badge">{s.chatType}</span>
            <span class="muted">{s.lastMessageAt ? new Date(s.lastMessageAt).toLocaleString() : '—'}</span>
            <label class="row">
              <input
                type="checkbox"
                checked={s.proactive}
                aria-label={`Proactive: ${name}`}
                onChange={(e) => props.onProactive(s, e.currentTarget.checked)}
              />{' '}
              Proactive
            </label>
          </li>
        );
      })}
    </ul>
  );
}

/** A channel thread's messages, read again when the thread changes or its turn ends. */
function ThreadMessages(props: { appId: string; session: ImSessionDto; title: string; socket: EventSocket }) {
  const { appId, session } = props;
  const [messages, setMessages] = useState<MessageDto[]>([]);
  const [error, setError] = useState('');
  const conversationId = channelThreadId(appId, session.channel, session.chatType, session.chatId);
  useEffect(() => {
    const load = () =>
      api
        .get<MessageDto[]>(
          `/api/apps/${q(appId)}/im-chat/messages?instanceId=${q(session.instanceId)}&chatType=${q(session.chatType)}&chatId=${q(session.chatId)}`,
        )
        .then(
          (list) => {
            setMessages(list);
            setError('');
          },
          (err: ApiError) => setError(err.message),
        );
    void load();
    return props.socket.on((event) => {
      const d = event.data as { appId?: string; chatId?: string; instanceId?: string; conversationId?: string };
      if (
        (event.channel === 'app:im-session-updated' && d.appId === appId && d.chatId === session.chatId) ||
        ((event.channel === 'agent:complete' || event.channel === 'agent:error') && d.conversationId === conversationId)
      )
        void load();
    });
  }, [conversationId]);
  return (
    <section class="panel stack" aria-labelledby="thread-title">
      <h3 id="thread-title">Messages of {props.title}</h3>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {messages.length === 0 && <p class="muted">No message yet.</p>}
      <ol class="plain stack" aria-label={`Messages of ${props.title}`}>
        {messages.map((m) => (
          <li key={m.id}>
            <span class="badge">{m.role === 'user' ? 'them' : m.role === 'assistant' ? 'reply' : m.role}</span>{' '}
            <span class="pre-wrap">{m.content}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The error text's field: `config.<key> …` names a config field, `<field> …` a top-level one. */
function fieldOfError(message: string): string | null {
  const m = /^(config\.[A-Za-z0-9_]+|name|type|replyScope|guestPolicy|owners)\b/.exec(message);
  return m ? m[1]! : null;
}

/**
 * The form of a new instance (a provider picked) or of an existing one. Credentials are write-only:
 * a secret field is never filled in, and left empty it keeps the stored value.
 */
function InstanceForm(props: {
  appId: string;
  providers: ChannelProviderDto[];
  instance?: ChannelInstanceDto;
  onSaved: (instance: ChannelInstanceDto) => void;
}) {
  const inst = props.instance;
  const [type, setType] = useState(inst?.type ?? '');
  const provider = props.providers.find((p) => p.type === (type || props.providers[0]?.type));
  const initialConfig = (p: ChannelProviderDto | undefined): Record<string, unknown> => {
    const base = { ...(p?.defaultConfig ?? {}), ...(inst?.config ?? {}) };
    for (const f of p?.configFields ?? []) if (f.type === 'secret') base[f.key] = '';
    return base;
  };
  const [name, setName] = useState(inst?.name ?? '');
  const [config, setConfig] = useState<Record<string, unknown>>(() => initialConfig(provider));
  const [replyScope, setReplyScope] = useState<ReplyScope>(inst?.replyScope ?? 'all');
  const [guestPolicy, setGuestPolicy] = useState<GuestPolicy>(inst?.guestPolicy ?? 'chat-only');
  const [owners, setOwners] = useState((inst?.owners ?? []).join(', '));
  const [fieldError, setFieldError] = useState<{ field: string | null; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const prefix = inst ? `edit-${inst.id}` : 'new-channel';
  const errorFor = (field: string) =>
    fieldError?.field === field ? (
      <span id={`${prefix}-${field}-error`} class="error">
        {fieldError.message}
      </span>
    ) : null;
  const invalid = (field: string) =>
    fieldError?.field === field
      ? { 'aria-invalid': true as const, 'aria-describedby': `${prefix}-${field}-error` }
      : {};
  if (!provider) return <p class="muted">Loading the providers…</p>;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFieldError(null);
    const cfg: Record<string, unknown> = {};
    for (const f of provider.configFields) {
      const v = config[f.key];
      // An empty secret keeps the stored one (the server keeps an absent key or "***").
      if (f.type === 'secret' && (v === '' || v === undefined || v === MASKED)) continue;
      if (f.type !== 'boolean' && (v === '' || v === undefined)) continue;
      cfg[f.key] = v;
    }
    const body = {
      name: name.trim(),
      config: cfg,
      replyScope,
      guestPolicy,
      owners: owners
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    };
    try {
      const saved = inst
        ? await api.patch<ChannelInstanceDto>(`/api/im-channels/instances/${q(inst.id)}`, body)
        : await api.post<ChannelInstanceDto>('/api/im-channels/instances', {
            ...body,
            type: provider.type,
            appId: props.appId,
          });
      props.onSaved(saved);
      if (!inst) {
        setName('');
        setConfig(initialConfig(provider));
      } else setConfig((prev) => ({ ...prev, ...initialConfig(provider) }));
    } catch (err) {
      const message = (err as ApiError).message;
      setFieldError({ field: fieldOfError(message), message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack" aria-label={inst ? `Edit ${inst.name}` : 'New channel'} onSubmit={submit} noValidate>
      {!inst && (
        <>
          <label for={`${prefix}-type`}>Platform</label>
          <select
            id={`${prefix}-type`}
            value={provider.type}
            onChange={(e) => {
              const next = props.providers.find((p) => p.type === e.currentTarget.value);
              setType(e.currentTarget.value);
              setConfig(initialConfig(next));
              setFieldError(null);
            }}
          >
            {props.providers.map((p) => (
              <option key={p.type} value={p.type}>
                {p.displayName}
              </option>
            ))}
          </select>
          <span class="notice">{provider.description}</span>
        </>
      )}
      <label for={`${prefix}-name`}>Channel name</label>
      <input
        id={`${prefix}-name`}
        required
        value={name}
        onInput={(e) => setName(e.currentTarget.value)}
        {...invalid('name')}
      />
      {errorFor('name')}
      {provider.configFields.map((f) => (
        <ConfigField
          key={`${provider.type}-${f.key}`}
          prefix={prefix}
          field={f}
          value={config[f.key]}
          stored={inst !== undefined}
          invalid={invalid(`config.${f.key}`)}
          error={errorFor(`config.${f.key}`)}
          set={(v) => setConfig({ ...config, [f.key]: v })}
        />
      ))}
      <label for={`${prefix}-scope`}>Answer in</label>
      <select
        id={`${prefix}-scope`}
        value={replyScope}
        onChange={(e) => setReplyScope(e.currentTarget.value as ReplyScope)}
        {...invalid('replyScope')}
      >
        <option value="all">Direct and group chats</option>
        <option value="direct">Direct chats only</option>
        <option value="group">Group chats only</option>
      </select>
      {errorFor('replyScope')}
      <label for={`${prefix}-guests`}>People other than the owners</label>
      <select
        id={`${prefix}-guests`}
        value={guestPolicy}
        onChange={(e) => setGuestPolicy(e.currentTarget.value as GuestPolicy)}
        {...invalid('guestPolicy')}
      >
        <option value="chat-only">May chat (no tool that writes or runs)</option>
        <option value="deny">Are not answered</option>
      </select>
      {errorFor('guestPolicy')}
      <label for={`${prefix}-owners`}>
        Owners (platform user ids, comma-separated; empty: the first direct sender)
      </label>
      <input
        id={`${prefix}-owners`}
        value={owners}
        onInput={(e) => setOwners(e.currentTarget.value)}
        {...invalid('owners')}
      />
      {errorFor('owners')}
      {fieldError && fieldError.field === null && (
        <p class="error" role="alert">
          {fieldError.message}
        </p>
      )}
      {fieldError && fieldError.field !== null && (
        <p class="sr-only" role="alert">
          {fieldError.message}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy}>
        {inst ? 'Save channel' : 'Add channel'}
      </button>
    </form>
  );
}

function ConfigField(props: {
  prefix: string;
  field: ChannelConfigField;
  value: unknown;
  stored: boolean;
  invalid: Record<string, unknown>;
  error: ComponentChildren;
  set: (value: unknown) => void;
}) {
  const { field: f, prefix } = props;
  const id = `${prefix}-cfg-${f.key}`;
  const help = f.description ? `${id}-help` : undefined;
  const describedBy = [props.invalid['aria-describedby'], help].filter(Boolean).join(' ') || undefined;
  if (f.type === 'boolean')
    return (
      <div class="stack">
        <label class="row">
          <input
            id={id}
            type="checkbox"
            checked={Boolean(props.value)}
            onChange={(e) => props.set(e.currentTarget.checked)}
            {...props.invalid}
            aria-describedby={describedBy}
          />{' '}
          {f.label}
        </label>
        {f.description && (
          <span id={help} class="notice">
            {f.description}
          </span>
        )}
        {props.error}
      </div>
    );
  return (
    <div class="stack">
      <label for={id}>
        {f.label}
        {f.required && !(f.type === 'secret' && props.stored) ? ' (required)' : ''}
      </label>
      <input
        id={id}
        type={(f.type === 'secret' ? 'password' : f.type === 'url' ? 'url' : 'text') as 'text'}
        autoComplete={f.type === 'secret' ? 'new-password' : 'off'}
        placeholder={f.type === 'secret' && props.stored ? 'Stored: leave empty to keep it' : undefined}
        value={String(props.value ?? '')}
        onInput={(e) => props.set(e.currentTarget.value)}
        {...props.invalid}
        aria-describedby={describedBy}
      />
      {f.description && (
        <span id={help} class="notice">
          {f.description}
        </span>
      )}
      {props.error}
    </div>
  );
}
