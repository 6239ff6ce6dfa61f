import type { McpServerStatusDto } from '#contracts/mcp.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { confirmAction } from './dialogs.js';
import { type ConfiguredServers, serverNameOf } from './needs.js';

/**
 * One entry of the `mcpServers` configuration (docs/api/mcp-and-skills.md, "Configured servers"):
 * a command (stdio) or a URL (streamable HTTP), with its variables or headers. Secrets come back
 * from GET /api/config as "***"; sent back unchanged, the server keeps what it stored.
 */
interface ServerDefinition {
  type?: 'stdio' | 'http';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  disabled?: boolean;
  description?: string;
}

/** The form's text fields: one argument per line, `KEY=value` and `Name: value` lines. */
interface Draft {
  name: string;
  transport: 'stdio' | 'http';
  command: string;
  args: string;
  env: string;
  url: string;
  headers: string;
  description: string;
}

const EMPTY: Draft = {
  name: '',
  transport: 'stdio',
  command: '',
  args: '',
  env: '',
  url: '',
  headers: '',
  description: '',
};

/** What a test or a refusal said about one server, shown next to it. */
interface Outcome {
  ok: boolean;
  text: string;
  tools: McpServerStatusDto['tools'];
}

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

/** `KEY=value` (variables) or `Name: value` (headers) lines as a map; a line without the separator is an error. */
function pairs(text: string, separator: '=' | ':', field: 'env' | 'headers'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf(separator);
    if (at <= 0) throw new FieldError(field, `Each line needs a name, "${separator}" and a value: ${line}`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

class FieldError extends Error {
  constructor(
    readonly field: keyof Draft | 'form',
    message: string,
  ) {
    super(message);
  }
}

/** The definition the form describes, kept fields (`disabled`, `cwd`) of the entry it edits carried over. */
function definitionOf(draft: Draft, editing: ServerDefinition | null): ServerDefinition {
  const kept: ServerDefinition = {};
  if (editing?.disabled !== undefined) kept.disabled = editing.disabled;
  if (draft.description.trim()) kept.description = draft.description.trim();
  if (draft.transport === 'stdio') {
    if (!draft.command.trim()) throw new FieldError('command', 'Give the command that starts the server.');
    const env = pairs(draft.env, '=', 'env');
    return {
      ...kept,
      command: draft.command.trim(),
      ...(lines(draft.args).length > 0 ? { args: lines(draft.args) } : {}),
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(editing?.cwd !== undefined && editing.command !== undefined ? { cwd: editing.cwd } : {}),
    };
  }
  if (!/^https?:\/\/\S+$/i.test(draft.url.trim())) throw new FieldError('url', 'Give an http:// or https:// URL.');
  const headers = pairs(draft.headers, ':', 'headers');
  return {
    ...kept,
    type: 'http',
    url: draft.url.trim(),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

function draftOf(name: string, def: ServerDefinition): Draft {
  const text = (map: Record<string, string> | undefined, separator: string) =>
    Object.entries(map ?? {})
      .map(([k, v]) => `${k}${separator}${v}`)
      .join('\n');
  return {
    name,
    transport: def.command !== undefined ? 'stdio' : 'http',
    command: def.command ?? '',
    args: (def.args ?? []).join('\n'),
    env: text(def.env, '='),
    url: def.url ?? '',
    headers: text(def.headers, ': '),
    description: def.description ?? '',
  };
}

/** A test's answer for one server: its tools, or why it failed. */
function outcomeOf(status: McpServerStatusDto | undefined): Outcome {
  if (!status) return { ok: false, text: 'The server did not report this entry.', tools: [] };
  if (status.status === 'connected')
    return {
      ok: true,
      text: `Connected: ${status.tools.length} tool${status.tools.length === 1 ? '' : 's'}.`,
      tools: status.tools,
    };
  return { ok: false, text: `Failed: ${status.error ?? status.status}`, tools: [] };
}

/**
 * Settings → MCP servers: the configured `mcpServers` (every chat gets them), added, edited,
 * tested and removed here. What the server refuses (its command policy's 403, a bad field's
 * 400) is shown as it said it, next to the entry or the form.
 */
export function McpServersSection(props: { focus: boolean }) {
  const [servers, setServers] = useState<Record<string, ServerDefinition> | null>(null);
  const [loadError, setLoadError] = useState('');
  const [outcomes, setOutcomes] = useState<Record<string, Outcome>>({});
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [formError, setFormError] = useState<{ field: keyof Draft | 'form'; text: string } | null>(null);
  const [formOutcome, setFormOutcome] = useState<Outcome | null>(null);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const title = useRef<HTMLHeadingElement>(null);
  const nameField = useRef<HTMLInputElement>(null);

  const load = () =>
    api.get<{ mcpServers?: ConfiguredServers }>('/api/config').then(
      (c) => setServers((c.mcpServers ?? {}) as Record<string, ServerDefinition>),
      (err: ApiError) => setLoadError(err.message),
    );
  useEffect(() => {
    void load();
  }, []);
  // Reached from a "what it needs" warning (#/settings/mcp): the section comes into view with the focus.
  useEffect(() => {
    if (props.focus && servers) title.current?.focus();
  }, [props.focus, servers !== null]);

  const editingDef = editing !== null ? (servers?.[editing] ?? null) : null;
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const errorFor = (field: keyof Draft) => (formError?.field === field ? formError.text : '');
  const fieldProps = (field: keyof Draft, id: string, hint?: string) => ({
    id,
    'aria-invalid': errorFor(field) ? ('true' as const) : undefined,
    'aria-describedby': [hint, errorFor(field) ? `${id}-error` : formError?.field === 'form' ? 'mcp-form-error' : '']
      .filter(Boolean)
      .join(' '),
  });
  const fieldError = (field: keyof Draft, id: string) =>
    errorFor(field) ? (
      <p id={`${id}-error`} class="error">
        {errorFor(field)}
      </p>
    ) : null;

  /** The whole branch with `name` set to `def` (and the edited entry's old name gone when it was renamed). */
  const branchWith = (name: string, def: ServerDefinition | null): Record<string, ServerDefinition | undefined> => {
    const next: Record<string, ServerDefinition | undefined> = { ...(servers ?? {}) };
    if (editing !== null && editing !== name) delete next[editing];
    if (def) next[name] = def;
    else delete next[name];
    return next;
  };

  /** POST /api/config {mcpServers}: the branch replaces the stored one; an empty one is removed (null). */
  const save = (branch: Record<string, ServerDefinition | undefined>) =>
    api.post('/api/config', { mcpServers: Object.keys(branch).length > 0 ? branch : null });

  const reset = () => {
    setEditing(null);
    setDraft(EMPTY);
    setFormError(null);
    setFormOutcome(null);
  };

  async function submit(e: Event) {
    e.preventDefault();
    setFormOutcome(null);
    const name = draft.name.trim();
    let def: ServerDefinition;
    try {
      if (!name) throw new FieldError('name', 'Give the server a name.');
      if (editing !== name && servers && name in servers)
        throw new FieldError('name', `A server named ${name} is configured already: edit that one.`);
      def = definitionOf(draft, editingDef);
    } catch (err) {
      const f = err as FieldError;
      setFormError({ field: f.field, text: f.message });
      return;
    }
    setBusy(true);
    setFormError(null);
    try {
      await save(branchWith(name, def));
      setStatus(editing !== null ? `Saved ${name}.` : `Added ${name}.`);
      reset();
      await load();
    } catch (err) {
      // The policy's 403 (MCP_COMMAND_BLOCKED) and a 400 naming the field: the server's own words, next to the form.
      setFormError({ field: 'form', text: (err as ApiError).message });
    } finally {
      setBusy(false);
    }
  }

  /** Connects once to the form's definition (test-mcp with inline servers) without saving it. */
  async function testDraft() {
    const name = draft.name.trim() || 'new-server';
    let def: ServerDefinition;
    try {
      def = definitionOf(draft, editingDef);
    } catch (err) {
      const f = err as FieldError;
      return setFormError({ field: f.field, text: f.message });
    }
    setFormError(null);
    setFormOutcome({ ok: true, text: 'Testing…', tools: [] });
    try {
      const answer = await api.post<McpServerStatusDto[]>('/api/agent/test-mcp', { servers: { [name]: def } });
      setFormOutcome(outcomeOf(answer.find((s) => s.name === name) ?? answer[0]));
    } catch (err) {
      setFormOutcome(null);
      setFormError({ field: 'form', text: (err as ApiError).message });
    }
  }

  /**
   * Tests a stored entry: test-mcp without servers connects the installed and configured ones as
   * stored (secrets included, which this page only sees masked), and this entry's answer is kept.
   */
  async function testStored(key: string) {
    setOutcomes((o) => ({ ...o, [key]: { ok: true, text: 'Testing…', tools: [] } }));
    try {
      const answer = await api.post<McpServerStatusDto[]>('/api/agent/test-mcp', {});
      const mine = answer.find((s) => s.name === serverNameOf(key) && s.appId === undefined);
      setOutcomes((o) => ({ ...o, [key]: outcomeOf(mine) }));
    } catch (err) {
      setOutcomes((o) => ({ ...o, [key]: { ok: false, text: (err as ApiError).message, tools: [] } }));
    }
  }

  async function remove(key: string) {
    if (!(await confirmAction(`Remove the MCP server ${key}?`, 'Remove'))) return;
    const next = { ...(servers ?? {}) };
    delete next[key];
    try {
      await save(next);
      setStatus(`Removed ${key}.`);
      if (editing === key) reset();
      await load();
    } catch (err) {
      setOutcomes((o) => ({ ...o, [key]: { ok: false, text: (err as ApiError).message, tools: [] } }));
    }
  }

  const entries = Object.entries(servers ?? {});
  return (
    <section class="panel stack" aria-labelledby="mcp-title">
      <h2 id="mcp-title" ref={title} tabIndex={-1}>
        MCP servers
      </h2>
      <p class="muted">
        Servers every chat gets as tools (<code>mcp__name__tool</code>). A server that runs a command on this computer
        is added only where the operator allows it; one reached by URL always can be.
      </p>
      {loadError && (
        <p class="error" role="alert">
          {loadError}
        </p>
      )}
      <ul class="plain list stack" aria-label="MCP servers">
        {servers && entries.length === 0 && <li class="muted">No MCP server configured yet: add one below.</li>}
        {entries.map(([key, def]) => {
          const outcome = outcomes[key];
          const resultId = `mcp-result-${serverNameOf(key)}`;
          return (
            <li key={key} class="stack mcp-entry" aria-label={key}>
              <div class="row">
                <span class="grow">
                  <strong>{key}</strong> <span class="badge">{def.command !== undefined ? 'command' : 'URL'}</span>
                  {def.disabled && <span class="badge">disabled</span>}
                  {def.description && <span class="muted block">{def.description}</span>}
                </span>
                <button onClick={() => void testStored(key)} aria-describedby={outcome ? resultId : undefined}>
                  Test
                </button>
                <button
                  onClick={() => {
                    setEditing(key);
                    setDraft(draftOf(key, def));
                    setFormError(null);
                    setFormOutcome(null);
                    requestAnimationFrame(() => nameField.current?.focus());
                  }}
                >
                  Edit
                </button>
                <button class="danger" onClick={() => void remove(key)}>
                  Remove
                </button>
              </div>
              <code class="muted">
                {def.command !== undefined ? [def.command, ...(def.args ?? [])].join(' ') : (def.url ?? '')}
              </code>
              {Object.keys(def.env ?? {}).length > 0 && (
                <span class="muted">Variables: {Object.keys(def.env ?? {}).join(', ')} (values not shown)</span>
              )}
              {Object.keys(def.headers ?? {}).length > 0 && (
                <span class="muted">Headers: {Object.keys(def.headers ?? {}).join(', ')} (values not shown)</span>
              )}
              {outcome && <TestOutcome id={resultId} outcome={outcome} />}
            </li>
          );
        })}
      </ul>
      <form class="stack" aria-labelledby="mcp-form-title" onSubmit={(e) => void submit(e)} noValidate>
        <h3 id="mcp-form-title">{editing !== null ? `Edit ${editing}` : 'Add an MCP server'}</h3>
        <label for="mcp-name">Server name</label>
        <input
          ref={nameField}
          {...fieldProps('name', 'mcp-name', 'mcp-name-hint')}
          required
          value={draft.name}
          onInput={(e) => set({ name: e.currentTarget.value })}
        />
        <span id="mcp-name-hint" class="muted">
          Its tools are named after it: {serverNameOf(draft.name || 'name')}.
        </span>
        {fieldError('name', 'mcp-name')}
        <fieldset class="stack">
          <legend>How it is reached</legend>
          <label class="row">
            <input
              type="radio"
              name="mcp-transport"
              checked={draft.transport === 'stdio'}
              onChange={() => set({ transport: 'stdio' })}
            />
            A command on this computer (stdio)
          </label>
          <label class="row">
            <input
              type="radio"
              name="mcp-transport"
              checked={draft.transport === 'http'}
              onChange={() => set({ transport: 'http' })}
            />
            A URL (streamable HTTP)
          </label>
        </fieldset>
        {draft.transport === 'stdio' ? (
          <>
            <label for="mcp-command">Command</label>
            <input
              {...fieldProps('command', 'mcp-command')}
              required
              value={draft.command}
              onInput={(e) => set({ command: e.currentTarget.value })}
            />
            {fieldError('command', 'mcp-command')}
            <label for="mcp-args">Arguments (one per line)</label>
            <textarea
              {...fieldProps('args', 'mcp-args')}
              rows={3}
              value={draft.args}
              onInput={(e) => set({ args: e.currentTarget.value })}
            />
            <label for="mcp-env">Environment variables (KEY=value, one per line)</label>
            <textarea
              {...fieldProps('env', 'mcp-env', 'mcp-secret-hint')}
              rows={3}
              value={draft.env}
              onInput={(e) => set({ env: e.currentTarget.value })}
            />
            {fieldError('env', 'mcp-env')}
          </>
        ) : (
          <>
            <label for="mcp-url">URL</label>
            <input
              {...fieldProps('url', 'mcp-url')}
              type="url"
              required
              value={draft.url}
              onInput={(e) => set({ url: e.currentTarget.value })}
            />
            {fieldError('url', 'mcp-url')}
            <label for="mcp-headers">Headers (Name: value, one per line)</label>
            <textarea
              {...fieldProps('headers', 'mcp-headers', 'mcp-secret-hint')}
              rows={2}
              value={draft.headers}
              onInput={(e) => set({ headers: e.currentTarget.value })}
            />
            {fieldError('headers', 'mcp-headers')}
          </>
        )}
        <span id="mcp-secret-hint" class="muted">
          A secret the server stored shows as ***: left so, it stays as stored.
        </span>
        <label for="mcp-description">Description (optional)</label>
        <input
          {...fieldProps('description', 'mcp-description')}
          value={draft.description}
          onInput={(e) => set({ description: e.currentTarget.value })}
        />
        {formError?.field === 'form' && (
          <p id="mcp-form-error" class="error" role="alert">
            {formError.text}
          </p>
        )}
        {formOutcome && <TestOutcome id="mcp-form-result" outcome={formOutcome} />}
        <div class="row">
          <button type="button" disabled={busy} onClick={() => void testDraft()}>
            Test
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {editing !== null ? 'Save server' : 'Add server'}
          </button>
          {editing !== null && (
            <button type="button" onClick={reset}>
              Cancel
            </button>
          )}
        </div>
      </form>
      <p role="status" class="muted">
        {status}
      </p>
    </section>
  );
}

/** A test's result: the tools found, or the error (a refusal is the server's own text). */
function TestOutcome(props: { id: string; outcome: Outcome }) {
  const { outcome } = props;
  return (
    <div id={props.id} role="status" class="stack">
      <p class={outcome.ok ? 'ok' : 'error'}>{outcome.text}</p>
      {outcome.tools.length > 0 && (
        <ul class="plain" aria-label="Tools found">
          {outcome.tools.map((t) => (
            <li key={t.name}>
              <code>{t.name}</code>
              {t.description && <span class="muted">: {t.description}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
