import type { AppDto } from '#contracts/apps.js';
import {
  type AddFilesResultDto,
  type IngestStatusDto,
  type KnowledgeBaseDto,
  KnowledgeChannels,
  type KnowledgeStatsUpdatedEvent,
  type LinkedDirDto,
  type RawFileDto,
  type SearchHitDto,
  type SourceState,
} from '#contracts/knowledge.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { appName } from './apps.js';
import { api, ApiError, q } from './api.js';
import { ask, confirmAction } from './dialogs.js';
import { FileIcon, FolderIcon } from './icons.js';
import { go, href } from './route.js';
import type { EventSocket } from './socket.js';
import type { Space } from './spaces.js';

/**
 * Knowledge (docs/web-app.md, "Knowledge"; the routes of docs/api/knowledge.md): the knowledge
 * bases, creating one, and one base's page: stats, live ingestion progress, sources with their
 * state, upload, files and linked folders from a workspace, bindings and search with cited
 * passages. Loaded only when the screen is opened (it is not part of the first screen).
 */
export function KnowledgeScreen(props: { spaces: Space[]; socket: EventSocket; kbId?: string }) {
  return props.kbId ? (
    <KnowledgePage key={props.kbId} kbId={props.kbId} spaces={props.spaces} socket={props.socket} />
  ) : (
    <KnowledgeList socket={props.socket} />
  );
}

const base = (kbId: string): string => `/api/tlon/${q(kbId)}`;
const sizeText = (n = 0): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;

const STATE_TEXT: Record<SourceState, string> = {
  pending: 'pending',
  learned: 'learned',
  'no-text': 'no text',
  failed: 'failed',
};

function KnowledgeList(props: { socket: EventSocket }) {
  const [bases, setBases] = useState<KnowledgeBaseDto[] | null>(null);
  const [status, setStatus] = useState('');
  const reload = async () => {
    try {
      setBases(await api.get<KnowledgeBaseDto[]>('/api/tlon'));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  useEffect(() => {
    void reload();
    return props.socket.on((event) => {
      if (event.channel === KnowledgeChannels.statsUpdated) void reload();
    });
  }, []);
  return (
    <div class="stack kb">
      <section class="panel stack" aria-labelledby="kb-list-title">
        <h1 id="kb-list-title">Knowledge</h1>
        {bases === null ? (
          <p class="muted">{status || 'Loading…'}</p>
        ) : bases.length === 0 ? (
          <p class="muted">No knowledge base yet.</p>
        ) : (
          <ul class="plain cards" aria-label="Knowledge bases">
            {bases.map((kb) => (
              <li key={kb.id} class="panel stack">
                <a href={href('knowledge', kb.id)}>
                  <strong>{kb.name}</strong>
                </a>
                {kb.description && <span class="muted">{kb.description}</span>}
                <span class="row">
                  {kb.isDefault && <span class="badge ok">default</span>}
                  <span class="badge">{kb.status}</span>
                  <span class="badge">{kb.searchMode === 'hybrid' ? 'hybrid search' : 'keyword search'}</span>
                </span>
                <span class="muted">
                  {kb.stats.rawFileCount} source(s), {kb.stats.chunkCount} passage(s)
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <CreateKnowledgeBase />
    </div>
  );
}

function CreateKnowledgeBase() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="panel stack"
      aria-labelledby="kb-create-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          const kb = await api.post<KnowledgeBaseDto>('/api/tlon', {
            name: name.trim(),
            ...(description.trim() ? { description: description.trim() } : {}),
          });
          go('knowledge', kb.id);
        } catch (err) {
          setStatus((err as ApiError).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2 id="kb-create-title">New knowledge base</h2>
      <label for="kb-name">Name</label>
      <input id="kb-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="kb-description">Description</label>
      <textarea
        id="kb-description"
        rows={2}
        value={description}
        onInput={(e) => setDescription(e.currentTarget.value)}
      />
      <button type="submit" class="primary" disabled={busy || !name.trim()}>
        Create knowledge base
      </button>
      <p role="status" class="muted status-line">
        {status}
      </p>
    </form>
  );
}

function KnowledgePage(props: { kbId: string; spaces: Space[]; socket: EventSocket }) {
  const { kbId } = props;
  const [kb, setKb] = useState<KnowledgeBaseDto | null>(null);
  const [sources, setSources] = useState<RawFileDto[]>([]);
  const [links, setLinks] = useState<LinkedDirDto[]>([]);
  const [progress, setProgress] = useState<IngestStatusDto | null>(null);
  const [status, setStatus] = useState('');

  const loadKb = async () => {
    try {
      setKb(await api.get<KnowledgeBaseDto>(base(kbId)));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  const loadSources = async () => {
    const [raw, linked] = await Promise.all([
      api.get<RawFileDto[]>(`${base(kbId)}/raw`).catch(() => null),
      api.get<LinkedDirDto[]>(`${base(kbId)}/linked-dirs`).catch(() => null),
    ]);
    if (raw) setSources(raw);
    if (linked) setLinks(linked);
  };
  const refresh = () => Promise.all([loadKb(), loadSources()]);

  useEffect(() => {
    void refresh();
    void api.get<IngestStatusDto>(`${base(kbId)}/ingest-status`).then(setProgress, () => undefined);
    let pending: ReturnType<typeof setTimeout> | null = null;
    // Sources change state as the batch runs: read them back at most every 300 ms.
    const soon = () => {
      if (pending) clearTimeout(pending);
      pending = setTimeout(() => void loadSources(), 300);
    };
    const off = props.socket.on((event) => {
      if (event.channel === KnowledgeChannels.ingestProgress) {
        const data = event.data as unknown as IngestStatusDto;
        if (data.kbId !== kbId) return;
        setProgress(data);
        soon();
      } else if (event.channel === KnowledgeChannels.statsUpdated) {
        const data = event.data as unknown as KnowledgeStatsUpdatedEvent;
        if (data.kbId !== kbId) return;
        setKb((prev) => (prev ? { ...prev, stats: data.stats } : prev));
        soon();
      }
    });
    return () => {
      off();
      if (pending) clearTimeout(pending);
    };
  }, [kbId]);

  if (!kb) return <p class="muted">{status || 'Loading…'}</p>;
  const act = async (what: () => Promise<unknown>, done: string) => {
    try {
      await what();
      setStatus(done);
      await refresh();
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };

  return (
    <div class="stack kb">
      <section class="panel stack" aria-labelledby="kb-title">
        <p>
          <a href={href('knowledge')}>← Knowledge</a>
        </p>
        <h1 id="kb-title">{kb.name}</h1>
        {kb.description && <p class="muted">{kb.description}</p>}
        <span class="row">
          {kb.isDefault && <span class="badge ok">default</span>}
          <span class="badge" aria-label="Status">
            {kb.status}
          </span>
        </span>
        <dl class="facts" aria-label="Stats">
          <dt>Sources</dt>
          <dd>{kb.stats.rawFileCount}</dd>
          <dt>Learned</dt>
          <dd>{kb.stats.indexedCount}</dd>
          <dt>Passages</dt>
          <dd>{kb.stats.chunkCount}</dd>
          <dt>Size</dt>
          <dd>{sizeText(kb.stats.rawSizeBytes)}</dd>
          <dt>Last learned</dt>
          <dd>{kb.stats.lastIngestAt ? new Date(kb.stats.lastIngestAt).toLocaleString() : 'never'}</dd>
        </dl>
        <span class="row">
          <button
            onClick={async () => {
              const name = await ask('Rename the knowledge base', 'Name', kb.name, 'Rename');
              if (name) await act(() => api.put(base(kbId), { name }), 'Renamed.');
            }}
          >
            Rename
          </button>
          <button
            onClick={async () => {
              const description = await ask('Describe the knowledge base', 'Description', kb.description ?? '', 'Save');
              if (description) await act(() => api.put(base(kbId), { description }), 'Saved.');
            }}
          >
            Edit description
          </button>
          <button
            onClick={() =>
              act(
                () => api.put(base(kbId), { status: kb.status === 'active' ? 'paused' : 'active' }),
                kb.status === 'active' ? 'Paused: turns no longer search it.' : 'Active again.',
              )
            }
          >
            {kb.status === 'active' ? 'Pause' : 'Activate'}
          </button>
          <button
            onClick={() =>
              act(
                () => api.post('/api/tlon/set-default', { kbId: kb.isDefault ? null : kbId }),
                kb.isDefault ? 'No longer the default.' : 'Now the default: the assistant searches it in every space.',
              )
            }
          >
            {kb.isDefault ? 'Unset default' : 'Make default'}
          </button>
          <button
            class="danger"
            onClick={async () => {
              const question = `Delete the knowledge base "${kb.name}"? Its sources and index are deleted.`;
              if (!(await confirmAction(question, 'Delete'))) return;
              try {
                await api.del(base(kbId));
                go('knowledge');
              } catch (err) {
                setStatus((err as ApiError).message);
              }
            }}
          >
            Delete
          </button>
        </span>
        <p role="status" class="muted status-line">
          {status}
        </p>
      </section>

      <Progress progress={progress} />
      <Search kb={kb} />

      <section class="panel stack" aria-labelledby="kb-sources-title">
        <h2 id="kb-sources-title">Sources</h2>
        <Upload kbId={kbId} onDone={(text) => setStatus(text)} onAdded={() => void loadSources()} />
        {sources.length === 0 ? (
          <p class="muted">No source yet: upload files or add them from a workspace.</p>
        ) : (
          <ul class="plain stack" aria-label="Sources">
            {sources.map((s) => (
              <li key={s.path} class="row" data-source={s.path}>
                <FileIcon />
                <span class="grow">
                  <strong>{s.path}</strong> <span class="muted">{sizeText(s.size)}</span>
                  {s.source === 'linked' && <span class="muted"> · linked</span>}
                  {s.error && <span class="error block">{s.error}</span>}
                </span>
                <span class={`badge${s.state === 'learned' ? ' ok' : ''}`} aria-label={`State of ${s.path}`}>
                  {STATE_TEXT[s.state]}
                </span>
                <button
                  class="danger"
                  aria-label={`Remove ${s.path}`}
                  onClick={async () => {
                    const question = `Remove "${s.path}"? Its file and passages are deleted.`;
                    if (!(await confirmAction(question, 'Remove'))) return;
                    await act(
                      () => api.post(`${base(kbId)}/remove-raw`, { relativePath: s.path }),
                      `Removed ${s.path}.`,
                    );
                  }}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
        <span class="row">
          <button onClick={() => act(() => api.post(`${base(kbId)}/ingest`), 'Learning what is not learned yet.')}>
            Learn new and changed
          </button>
          <button
            onClick={async () => {
              const question = 'Forget every passage and learn every source again?';
              if (!(await confirmAction(question, 'Learn again'))) return;
              try {
                const answer = await api.post<true | string>(`${base(kbId)}/clear-relearn`);
                setStatus(answer === true ? 'Learning every source again.' : String(answer));
              } catch (err) {
                setStatus((err as ApiError).message);
              }
            }}
          >
            Learn everything again
          </button>
        </span>
      </section>

      <div class="kb-grid">
        <FromWorkspace kbId={kbId} spaces={props.spaces} onChanged={() => void loadSources()} />

        <section class="panel stack" aria-labelledby="kb-links-title">
          <h2 id="kb-links-title">Linked folders</h2>
          <p class="muted">
            A linked folder stays in step with the workspace: new and changed files are learned, removed ones forgotten.
          </p>
          {links.length === 0 ? (
            <p class="muted">No linked folder.</p>
          ) : (
            <ul class="plain stack" aria-label="Linked folders">
              {links.map((l) => {
                const spaceName = props.spaces.find((s) => s.id === l.spaceId)?.name ?? 'a removed space';
                const where = `${spaceName}: ${l.path || '(the whole space)'}`;
                return (
                  <li key={l.id} class="row">
                    <FolderIcon />
                    <span class="grow">
                      <strong>{l.label ?? where}</strong> {l.label && <span class="muted">{where}</span>}{' '}
                      <span class="muted">· {l.fileCount} file(s)</span>
                      {l.error && <span class="error block">{l.error}</span>}
                    </span>
                    <span class={`badge${l.state === 'active' ? ' ok' : ''}`}>{l.state}</span>
                    <button
                      aria-label={`Read ${l.label ?? where} again`}
                      onClick={() => act(() => api.post(`${base(kbId)}/linked-dirs/${q(l.id)}/retry`), 'Read again.')}
                    >
                      Read again
                    </button>
                    <button
                      class="danger"
                      aria-label={`Unlink ${l.label ?? where}`}
                      onClick={async () => {
                        if (!(await confirmAction(`Unlink "${l.label ?? where}"? Its sources are removed.`, 'Unlink')))
                          return;
                        await act(() => api.del(`${base(kbId)}/linked-dirs/${q(l.id)}`), 'Unlinked.');
                      }}
                    >
                      Unlink
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
        </section>

        <Bindings kb={kb} spaces={props.spaces} onChanged={setKb} />
      </div>
    </div>
  );
}

function Progress(props: { progress: IngestStatusDto | null }) {
  const p = props.progress;
  const running = p?.phase === 'running';
  return (
    <section class="panel stack" aria-labelledby="kb-progress-title">
      <h2 id="kb-progress-title">Learning</h2>
      <p role="status" aria-label="Learning progress" class="status-line">
        {!p || p.phase === 'idle'
          ? 'Nothing learned yet.'
          : running
            ? `Learning ${p.completed} of ${p.total}${p.current ? `: ${p.current}` : ''}…`
            : p.phase === 'error'
              ? `Learning ended with errors (${p.completed} of ${p.total}).`
              : p.errors.length > 0
                ? `Done: ${p.completed} of ${p.total}, ${p.errors.length} with errors.`
                : `Done: ${p.completed} of ${p.total} learned.`}
      </p>
      {p && p.total > 0 && (
        <progress max={p.total} value={p.completed} aria-label="Sources learned in this batch">
          {p.completed} of {p.total}
        </progress>
      )}
      {p && p.errors.length > 0 && (
        <ul class="stack" aria-label="Learning errors">
          {p.errors.map((e, i) => (
            <li key={i} class="error">
              {e.file}: {e.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Upload(props: { kbId: string; onDone: (text: string) => void; onAdded: () => void }) {
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const upload = async (files: File[]) => {
    setBusy(true);
    const failed: string[] = [];
    for (const file of files) {
      try {
        await api.upload(`${base(props.kbId)}/upload?name=${q(file.name)}`, file);
      } catch (err) {
        failed.push(`${file.name}: ${(err as ApiError).message}`);
      }
    }
    setBusy(false);
    if (input.current) input.current.value = '';
    props.onAdded();
    const added = files.length - failed.length;
    props.onDone([added > 0 ? `Uploaded ${added} file(s).` : '', ...failed].filter(Boolean).join(' '));
  };
  return (
    <label class="button-like" for="kb-upload">
      {busy ? 'Uploading…' : 'Upload files'}
      <input
        ref={input}
        id="kb-upload"
        class="sr-only"
        type="file"
        multiple
        disabled={busy}
        accept=".md,.markdown,.txt,.text,.rst,.org,.csv,.tsv,.html,.htm,.docx,.pptx,.xlsx,.pdf"
        onChange={(e) => void upload(Array.from(e.currentTarget.files ?? []))}
      />
    </label>
  );
}

/** A listing entry of the files API (docs/api.md, "Workspaces and files"). */
interface Entry {
  name: string;
  type: 'file' | 'folder';
  path: string;
  relativePath: string;
}

/** A small folder browser over a workspace: pick files or folders to copy, or link the folder shown. */
function FromWorkspace(props: { kbId: string; spaces: Space[]; onChanged: () => void }) {
  const spaces = props.spaces
    .filter((s) => s.id !== TEMP_SPACE_ID)
    .concat(props.spaces.filter((s) => s.id === TEMP_SPACE_ID));
  const [spaceId, setSpaceId] = useState(spaces[0]?.id ?? '');
  const space = spaces.find((s) => s.id === spaceId);
  /** The folder shown, as a path relative to the space ('' for its root). */
  const [dir, setDir] = useState('');
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [label, setLabel] = useState('');
  const [status, setStatus] = useState('');
  useEffect(() => {
    if (!space) return;
    setEntries(null);
    setPicked(new Set());
    const dirPath = dir ? `${space.path}/${dir}` : space.path;
    api
      .post<Entry[]>(`/api/spaces/${q(space.id)}/artifacts/children`, { dirPath })
      .then(setEntries, (err: ApiError) => {
        setEntries([]);
        setStatus(err.message);
      });
  }, [space?.id, dir]);
  const rel = (entry: Entry) => (dir ? `${dir}/${entry.name}` : entry.name);
  const run = async (what: () => Promise<string>) => {
    try {
      const text = await what();
      setStatus(text);
      props.onChanged();
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  return (
    <section class="panel stack" aria-labelledby="kb-workspace-title">
      <h2 id="kb-workspace-title">Add from a workspace</h2>
      <label for="kb-space">Space</label>
      <select
        id="kb-space"
        value={spaceId}
        onChange={(e) => {
          setSpaceId(e.currentTarget.value);
          setDir('');
        }}
      >
        {spaces.map((s) => (
          <option key={s.id} value={s.id}>
            {s.id === TEMP_SPACE_ID ? `${s.name} (temporary)` : s.name}
          </option>
        ))}
      </select>
      <p class="row">
        <span>
          Folder: <strong>{dir || '(the whole space)'}</strong>
        </span>
        {dir && (
          <button type="button" onClick={() => setDir(dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '')}>
            Up
          </button>
        )}
      </p>
      {entries === null ? (
        <p class="muted">Loading…</p>
      ) : entries.length === 0 ? (
        <p class="muted">This folder is empty.</p>
      ) : (
        <ul class="plain stack" aria-label="Workspace files">
          {entries.map((entry) => (
            <li key={entry.path} class="row">
              <label class="row">
                <input
                  type="checkbox"
                  checked={picked.has(rel(entry))}
                  onChange={(e) => {
                    const next = new Set(picked);
                    if (e.currentTarget.checked) next.add(rel(entry));
                    else next.delete(rel(entry));
                    setPicked(next);
                  }}
                />
                {entry.type === 'folder' ? <FolderIcon /> : <FileIcon />} {entry.name}
              </label>
              {entry.type === 'folder' && (
                <button type="button" class="link" aria-label={`Open ${entry.name}`} onClick={() => setDir(rel(entry))}>
                  Open
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <button
        type="button"
        class="primary"
        disabled={picked.size === 0 || !space}
        onClick={() =>
          run(async () => {
            const result = await api.post<AddFilesResultDto>(`${base(props.kbId)}/files`, {
              spaceId,
              filePaths: [...picked],
            });
            setPicked(new Set());
            const rejected = result.rejected.map((r) => `${r.path} (${r.reason})`).join(', ');
            return `Added ${result.added.length} file(s).${rejected ? ` Not added: ${rejected}.` : ''}`;
          })
        }
      >
        Add selected
      </button>
      <label for="kb-link-label">Label of the link (optional)</label>
      <input id="kb-link-label" value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
      <button
        type="button"
        disabled={!space}
        onClick={() =>
          run(async () => {
            const link = await api.post<LinkedDirDto>(`${base(props.kbId)}/linked-dirs`, {
              spaceId,
              path: dir,
              ...(label.trim() ? { label: label.trim() } : {}),
            });
            setLabel('');
            return `Linked ${link.path || 'the whole space'}: ${link.fileCount} file(s).`;
          })
        }
      >
        Link this folder
      </button>
      <p role="status" class="muted status-line">
        {status}
      </p>
    </section>
  );
}

function Bindings(props: { kb: KnowledgeBaseDto; spaces: Space[]; onChanged: (kb: KnowledgeBaseDto) => void }) {
  const { kb } = props;
  const [apps, setApps] = useState<AppDto[]>([]);
  const [status, setStatus] = useState('');
  useEffect(() => {
    void api
      .get<AppDto[]>('/api/apps')
      .then((all) => setApps(all.filter((a) => a.status !== 'uninstalled')))
      .catch((err: ApiError) => setStatus(err.message));
  }, []);
  const toggle = async (kind: 'space' | 'app', id: string, on: boolean) => {
    try {
      const body = kind === 'space' ? { spaceId: id } : { appId: id };
      props.onChanged(await api.post<KnowledgeBaseDto>(`${base(kb.id)}/${on ? 'bind' : 'unbind'}-${kind}`, body));
      setStatus(on ? 'Bound.' : 'Unbound.');
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  return (
    <section class="panel stack" aria-labelledby="kb-bindings-title">
      <h2 id="kb-bindings-title">Who uses it</h2>
      <p class="muted">The assistant in a bound space, and a bound digital human, search this knowledge base.</p>
      <fieldset class="stack">
        <legend>Spaces</legend>
        {props.spaces.map((s) => (
          <label key={s.id} class="row">
            <input
              type="checkbox"
              checked={kb.spaceIds.includes(s.id)}
              onChange={(e) => void toggle('space', s.id, e.currentTarget.checked)}
            />{' '}
            {s.id === TEMP_SPACE_ID ? `${s.name} (temporary)` : s.name}
          </label>
        ))}
      </fieldset>
      <fieldset class="stack">
        <legend>Digital humans</legend>
        {apps.length === 0 && <p class="muted">No digital human installed.</p>}
        {apps.map((a) => (
          <label key={a.id} class="row">
            <input
              type="checkbox"
              checked={kb.appIds.includes(a.id)}
              onChange={(e) => void toggle('app', a.id, e.currentTarget.checked)}
            />{' '}
            {appName(a)}
          </label>
        ))}
      </fieldset>
      <p role="status" class="muted status-line">
        {status}
      </p>
    </section>
  );
}

function Search(props: { kb: KnowledgeBaseDto }) {
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<SearchHitDto[] | null>(null);
  const [status, setStatus] = useState('');
  return (
    <section class="panel stack" aria-labelledby="kb-search-title">
      <h2 id="kb-search-title">Search</h2>
      {props.kb.searchMode === 'keyword' && (
        <p class="notice">
          Keyword search only: passages are found by the words they share with the query
          {props.kb.embedding ? '' : ' (this knowledge base has no embedding model)'}.
          {props.kb.searchNote ? ` ${props.kb.searchNote}` : ''}
        </p>
      )}
      <form
        role="search"
        class="row"
        onSubmit={async (e) => {
          e.preventDefault();
          setStatus('Searching…');
          try {
            const found = await api.post<SearchHitDto[]>(`${base(props.kb.id)}/search`, { query });
            setHits(found);
            setStatus(found.length ? `${found.length} passage(s).` : 'No passage found.');
          } catch (err) {
            setStatus((err as ApiError).message);
          }
        }}
      >
        <label for="kb-query" class="sr-only">
          Search this knowledge base
        </label>
        <input
          id="kb-query"
          type="search"
          class="grow"
          required
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <button type="submit" disabled={!query.trim()}>
          Search
        </button>
      </form>
      <p role="status" class="muted status-line">
        {status}
      </p>
      {hits && hits.length > 0 && (
        <ol class="stack" aria-label="Passages">
          {hits.map((h) => (
            <li key={h.chunkId}>
              <article class="stack passage" aria-label={`${h.sourceName}${h.heading ? `, ${h.heading}` : ''}`}>
                <span class="row">
                  <strong>{h.sourceName}</strong>
                  {h.heading && <span class="muted">{h.heading}</span>}
                </span>
                <blockquote class="pre-wrap">{h.text}</blockquote>
                <span class="muted">
                  Citation <code>{h.chunkId}</code>
                </span>
              </article>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
