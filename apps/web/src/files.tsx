import type { EventEnvelope } from '#contracts/events.js';
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, q } from './api.js';
import { ask, confirmAction, SubmitOrCancel } from './dialogs.js';
import { codeLanguage, tableDelimiter } from './file-kinds.js';
import { FileIcon, FolderIcon } from './icons.js';
import { lazyModule, useLazyModule } from './lazy.js';
import { renderMarkdown } from './markdown.js';
import type { EventSocket } from './socket.js';
import type { Space } from './spaces.js';
import { TrashView } from './trash.js';

/** A listing entry (docs/api.md, "Workspaces and files"; the contracts library has no file shapes). */
interface Entry {
  name: string;
  type: 'file' | 'folder';
  path: string;
  relativePath: string;
  size?: number;
}
interface TypeInfo {
  isText: boolean;
  contentType: string;
  mimeType: string;
}
interface Opened {
  entry: Entry;
  type: TypeInfo;
  text?: string;
  imageUrl?: string;
  /** A PDF: its preview fetches the bytes itself. */
  pdf?: boolean;
}

type PreviewModule = typeof import('./file-preview.js');
const loadPreview = lazyModule(() => import('./file-preview.js'));

/**
 * A preview from file-preview.tsx, loaded on first use so the first screen does not carry it;
 * `fallback` shows meanwhile (and if it cannot be loaded).
 */
function LazyPreview(props: { render: (m: PreviewModule) => ComponentChildren; fallback: ComponentChildren }) {
  const [mod] = useLazyModule(loadPreview);
  return <>{mod ? props.render(mod) : props.fallback}</>;
}

/** A file to upload and where it goes, relative to the target folder. */
interface Picked {
  file: File;
  relativePath: string;
}

/** Files of a drop, folders walked (their files keep their relative paths). */
async function droppedFiles(data: DataTransfer): Promise<Picked[]> {
  const entries = Array.from(data.items)
    .map((item) => item.webkitGetAsEntry?.())
    .filter((entry): entry is FileSystemEntry => Boolean(entry));
  if (entries.length === 0) return Array.from(data.files).map((file) => ({ file, relativePath: file.name }));
  const out: Picked[] = [];
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
      out.push({ file, relativePath: `${prefix}${entry.name}` });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      // readEntries answers in batches until an empty one.
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child, `${prefix}${entry.name}/`);
      }
    }
  };
  for (const entry of entries) await walk(entry, '');
  return out;
}

const parentOf = (path: string): string => path.slice(0, path.lastIndexOf('/')) || '/';
/** `entry`'s path relative to its space once `from` has moved to `to` (the same prefix cut). */
const relativeAfter = (entry: Entry, from: Entry, to: string): string => {
  const spaceRoot = from.path.slice(0, from.path.length - from.relativePath.length);
  const path = to + entry.path.slice(from.path.length);
  return path.startsWith(spaceRoot) ? path.slice(spaceRoot.length) : entry.relativePath;
};
const sizeText = (n = 0): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Files of the current space: lazy tree with live updates, viewer, upload, file operations, search. */
export function FilesScreen(props: { space: Space; socket: EventSocket }) {
  const root = props.space.path;
  const [folders, setFolders] = useState<Map<string, Entry[]>>(new Map());
  const [expanded, setExpanded] = useState<Set<string>>(new Set([root]));
  const [selected, setSelected] = useState<Entry | null>(null);
  const [opened, setOpened] = useState<Opened | null>(null);
  const [status, setStatus] = useState('');
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<Entry[] | null>(null);
  const [over, setOver] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [focused, setFocused] = useState<string | null>(null);
  /** The Trash view shows in place of the open file; `trashVersion` reloads it after a delete. */
  const [showTrash, setShowTrash] = useState(false);
  const [trashVersion, setTrashVersion] = useState(0);
  const loaded = useRef(folders);
  loaded.current = folders;

  const loadFolder = useCallback(
    async (dir: string) => {
      try {
        const entries = await api.post<Entry[]>(`/api/spaces/${props.space.id}/artifacts/children`, { dirPath: dir });
        setFolders((prev) => new Map(prev).set(dir, entries));
      } catch (err) {
        if ((err as ApiError).status === 404 && dir !== root) {
          setFolders((prev) => {
            const next = new Map(prev);
            next.delete(dir);
            return next;
          });
        } else setStatus((err as ApiError).message);
      }
    },
    [props.space.id, root],
  );

  useEffect(() => {
    setFolders(new Map());
    setExpanded(new Set([root]));
    setSelected(null);
    setOpened(null);
    setShowTrash(false);
    void loadFolder(root);
  }, [root, loadFolder]);

  // Live updates: reload the loaded folders a change touched (debounced).
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const dirty = new Set<string>();
    return props.socket.on((event: EventEnvelope) => {
      if (!event.channel.startsWith('artifact:')) return;
      const data = event.data as {
        spaceId?: string;
        changes?: Array<{ path: string }>;
        updatedDirs?: Array<{ dirPath: string }>;
      };
      if (data.spaceId !== props.space.id) return;
      for (const change of data.changes ?? []) dirty.add(parentOf(change.path));
      for (const dir of data.updatedDirs ?? []) dirty.add(dir.dirPath.replace(/\/$/, '') || '/');
      clearTimeout(timer);
      timer = setTimeout(() => {
        const dirs = [...dirty].filter((d) => loaded.current.has(d));
        dirty.clear();
        (dirs.length > 0 ? dirs : [root]).forEach((d) => void loadFolder(d));
      }, 150);
    });
  }, [props.socket, props.space.id, root, loadFolder]);

  // Search as you type; while the space is still being indexed, asks again.
  const [indexing, setIndexing] = useState(false);
  useEffect(() => {
    const text = query.trim();
    setIndexing(false);
    if (!text) return setResults(null);
    let timer: ReturnType<typeof setTimeout>;
    let tries = 0;
    const search = async () => {
      try {
        const found = await api.get<{ items: Entry[]; indexing: boolean }>(
          `/api/spaces/${props.space.id}/artifacts/query?q=${q(text)}&limit=50`,
        );
        setResults(found.items);
        setIndexing(found.indexing);
        if (found.indexing && tries++ < 40) timer = setTimeout(search, 500);
      } catch (err) {
        setStatus((err as ApiError).message);
      }
    };
    timer = setTimeout(search, 150);
    return () => clearTimeout(timer);
  }, [query, props.space.id]);

  /** Edits not saved yet: another file opening (or the page closing) asks first. */
  const unsaved = editing !== null && opened?.text !== undefined && editing !== opened.text;
  useEffect(() => {
    if (!unsaved) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [unsaved]);

  async function open(entry: Entry) {
    if (entry.type !== 'folder' && unsaved && opened && entry.path !== opened.entry.path) {
      const discard = await confirmAction(`Discard your unsaved changes to ${opened.entry.name}?`, 'Discard changes');
      if (!discard) return;
    }
    setSelected(entry);
    if (entry.type === 'folder') return toggle(entry.path);
    setEditing(null);
    setShowTrash(false);
    try {
      const type = await api.get<TypeInfo>(`/api/artifacts/detect-type?path=${q(entry.path)}`);
      if (opened?.imageUrl) URL.revokeObjectURL(opened.imageUrl);
      if (type.mimeType.startsWith('image/')) {
        const blob = await api.blob(`/api/artifacts/download?path=${q(entry.path)}`);
        setOpened({ entry, type, imageUrl: URL.createObjectURL(blob) });
      } else if (type.mimeType === 'application/pdf') {
        setOpened({ entry, type, pdf: true });
      } else if (type.isText) {
        const content = await api.get<{ content: string; encoding: string }>(
          `/api/artifacts/content?path=${q(entry.path)}`,
        );
        setOpened({ entry, type, text: content.encoding === 'utf-8' ? content.content : atob(content.content) });
      } else setOpened({ entry, type });
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  }

  function toggle(dir: string) {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (next.has(dir)) next.delete(dir);
      else {
        next.add(dir);
        if (!loaded.current.has(dir)) void loadFolder(dir);
      }
      return next;
    });
  }

  const base = `/api/spaces/${props.space.id}/artifacts`;

  /** Where new things go: the selected folder, the selected file's folder, or the root. */
  const targetFolder = (): string =>
    selected ? (selected.type === 'folder' ? selected.path : parentOf(selected.path)) : root;

  const act = async (work: () => Promise<unknown>, done: string): Promise<boolean> => {
    try {
      await work();
      setStatus(done);
      return true;
    } catch (err) {
      setStatus((err as ApiError).message);
      return false;
    }
  };

  /** Saves the open file's edited text; the viewer then shows it. */
  const save = async (file: Opened, text: string): Promise<boolean> => {
    const saved = await act(() => api.post('/api/artifacts/save', { path: file.entry.path, content: text }), 'Saved.');
    if (saved) setOpened((o) => (o && o.entry.path === file.entry.path ? { ...o, text } : o));
    return saved;
  };

  /** A renamed or moved entry: the selection, the open file and the focus follow it to `path`. */
  const follow = (from: Entry, path: string) => {
    const moved = (entry: Entry): Entry => {
      if (entry.path === from.path) {
        return {
          ...entry,
          path,
          name: path.slice(path.lastIndexOf('/') + 1),
          relativePath: relativeAfter(entry, from, path),
        };
      }
      if (!entry.path.startsWith(`${from.path}/`)) return entry;
      return {
        ...entry,
        path: path + entry.path.slice(from.path.length),
        relativePath: relativeAfter(entry, from, path),
      };
    };
    setSelected((s) => (s ? moved(s) : s));
    setOpened((o) => (o ? { ...o, entry: moved(o.entry) } : o));
    setFocused((f) => (f === from.path ? path : f));
  };

  /**
   * Uploads files into `folder`, each at its relative path (a dropped or picked folder keeps its
   * layout): the folders on the way are created first, since an upload needs its parent.
   */
  async function upload(files: FileList | File[] | Picked[], folder = targetFolder()) {
    const picked: Picked[] = Array.from(files as ArrayLike<File | Picked>).map((f) =>
      f instanceof File ? { file: f, relativePath: f.webkitRelativePath || f.name } : f,
    );
    const made = new Set<string>();
    for (const { file, relativePath } of picked) {
      const parts = relativePath.split('/').filter(Boolean);
      let parent = folder;
      for (const name of parts.slice(0, -1)) {
        const path = `${parent}/${name}`;
        if (!made.has(path)) {
          made.add(path);
          // Already there is fine: the upload says so if the folder really is missing.
          await api.post(`${base}/folder`, { name, parentPath: parent }).catch(() => undefined);
        }
        parent = path;
      }
      setStatus(`Uploading ${relativePath}…`);
      await act(
        () => api.upload(`${base}/upload?path=${q(`${parent}/${parts.at(-1) ?? file.name}`)}`, file),
        `Uploaded ${relativePath} (${sizeText(file.size)}).`,
      );
    }
    void loadFolder(folder);
    if (picked.some((p) => p.relativePath.includes('/'))) {
      const top = `${folder}/${picked[0]!.relativePath.split('/')[0]}`;
      setExpanded((prev) => new Set(prev).add(top));
      void loadFolder(top);
    }
  }

  async function download(entry: Entry) {
    const blob = await api.blob(`/api/artifacts/download?path=${q(entry.path)}`);
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = entry.name;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  }

  const toolbar = (
    <div class="row" role="toolbar" aria-label="File actions">
      <button
        onClick={async () => {
          const name = await ask('New file', 'File name', '', 'Create');
          const folder = targetFolder();
          const created =
            !!name &&
            (await act(() => api.post(`${base}/file`, { name, parentPath: folder, content: '' }), `Created ${name}.`));
          await loadFolder(folder);
          if (created) {
            // The new file is opened, and its tree item takes the focus (its folder shown open).
            const path = `${folder}/${name}`;
            setExpanded((prev) => new Set(prev).add(folder));
            await open({ name, type: 'file', path, relativePath: path.slice(root.length + 1) });
            focusItem(path);
          }
        }}
      >
        New file
      </button>
      <button
        onClick={async () => {
          const name = await ask('New folder', 'Folder name', '', 'Create');
          const folder = targetFolder();
          if (name) await act(() => api.post(`${base}/folder`, { name, parentPath: folder }), `Created ${name}.`);
          void loadFolder(folder);
        }}
      >
        New folder
      </button>
      <label class="button-like">
        Upload…
        <input
          class="sr-only"
          type="file"
          multiple
          aria-label="Upload files"
          onChange={(e) => {
            const files = e.currentTarget.files;
            if (files?.length) void upload(files);
            e.currentTarget.value = '';
          }}
        />
      </label>
      <label class="button-like">
        Upload folder…
        <input
          class="sr-only"
          type="file"
          multiple
          {...{ webkitdirectory: true }}
          aria-label="Upload a folder"
          onChange={(e) => {
            const files = e.currentTarget.files;
            if (files?.length) void upload(files);
            e.currentTarget.value = '';
          }}
        />
      </label>
      <button
        disabled={!selected}
        onClick={async () => {
          if (!selected) return;
          const name = await ask(`Rename ${selected.name}`, 'New name', selected.name, 'Rename');
          if (name && name !== selected.name) {
            const renamed = await act(
              () => api.post(`${base}/rename`, { oldPath: selected.path, newName: name }),
              `Renamed to ${name}.`,
            );
            if (renamed) follow(selected, `${parentOf(selected.path).replace(/\/$/, '')}/${name}`);
            void loadFolder(parentOf(selected.path));
          }
        }}
      >
        Rename
      </button>
      <button
        disabled={!selected}
        onClick={async () => {
          if (!selected) return;
          const rel = await ask(
            `Move ${selected.name}`,
            'To folder (relative to the space; empty for its root)',
            '',
            'Move',
          );
          if (rel === null) return;
          const destination = rel === '/' ? root : `${root}/${rel.replace(/^\/+|\/+$/g, '')}`.replace(/\/$/, '');
          let movedTo = '';
          await act(async () => {
            movedTo = (
              await api.post<{ path: string }>(`${base}/move`, { oldPath: selected.path, newParentPath: destination })
            ).path;
          }, `Moved ${selected.name}.`);
          if (movedTo) follow(selected, movedTo);
          void loadFolder(parentOf(selected.path));
          void loadFolder(destination);
        }}
      >
        Move
      </button>
      <button
        class="danger"
        disabled={!selected}
        onClick={async () => {
          if (!selected || !(await confirmAction(`Move ${selected.name} to the trash?`, 'Move to trash'))) return;
          await act(() => api.del(base, { path: selected.path }), `${selected.name} moved to the trash.`);
          setTrashVersion((v) => v + 1);
          if (opened?.entry.path === selected.path) setOpened(null);
          void loadFolder(parentOf(selected.path));
          setSelected(null);
        }}
      >
        Delete
      </button>
    </div>
  );

  /** The tree's items in display order (expanded folders' children under them). */
  const visible = (dir = root): Entry[] =>
    (folders.get(dir) ?? []).flatMap((e) =>
      e.type === 'folder' && expanded.has(e.path) ? [e, ...visible(e.path)] : [e],
    );
  const focusItem = (path: string | undefined) => {
    if (!path) return;
    setFocused(path);
    const find = () => document.querySelector<HTMLElement>(`[role=tree] [data-path="${CSS.escape(path)}"]`);
    const now = find();
    if (now) now.focus();
    else requestAnimationFrame(() => find()?.focus());
  };
  /** Arrow keys move through the tree (WAI-ARIA tree pattern); Enter and Space open, as a button does. */
  function onTreeKey(e: KeyboardEvent, entry: Entry) {
    const items = visible();
    const at = items.findIndex((i) => i.path === entry.path);
    const isOpen = entry.type === 'folder' && expanded.has(entry.path);
    let handled = true;
    if (e.key === 'ArrowDown') focusItem(items[at + 1]?.path);
    else if (e.key === 'ArrowUp') focusItem(items[at - 1]?.path);
    else if (e.key === 'Home') focusItem(items[0]?.path);
    else if (e.key === 'End') focusItem(items.at(-1)?.path);
    else if (e.key === 'ArrowRight') {
      if (entry.type === 'folder' && !isOpen) toggle(entry.path);
      else if (isOpen) focusItem(folders.get(entry.path)?.[0]?.path);
    } else if (e.key === 'ArrowLeft') {
      if (isOpen) toggle(entry.path);
      else if (parentOf(entry.path) !== root) focusItem(parentOf(entry.path));
    } else handled = false;
    if (handled) e.preventDefault();
  }

  const renderFolder = (dir: string) => {
    const entries = folders.get(dir);
    if (!entries) return <p class="muted">Loading…</p>;
    if (entries.length === 0 && dir === root) return <p class="muted">No files yet. Drop files here to upload.</p>;
    return (
      <ul
        class={dir === root ? 'plain tree' : 'plain'}
        role={dir === root ? 'tree' : 'group'}
        aria-label={dir === root ? 'Files' : undefined}
      >
        {entries.map((entry) => {
          const isOpen = entry.type === 'folder' && expanded.has(entry.path);
          return (
            <li
              key={entry.path}
              role="treeitem"
              aria-expanded={entry.type === 'folder' ? isOpen : undefined}
              aria-selected={selected?.path === entry.path}
            >
              <button
                class="link item"
                data-path={entry.path}
                tabIndex={entry.path === (focused ?? visible()[0]?.path) ? 0 : -1}
                onFocus={() => setFocused(entry.path)}
                onKeyDown={(e) => onTreeKey(e, entry)}
                onClick={() => void open(entry)}
              >
                {entry.type === 'folder' ? <FolderIcon open={isOpen} /> : <FileIcon />}
                {entry.name}
              </button>
              {isOpen && renderFolder(entry.path)}
            </li>
          );
        })}
      </ul>
    );
  };

  /** A restored entry shows in the tree: the folders on its way are opened and read again. */
  const revealRestored = async (path: string, relativePath: string) => {
    const parts = relativePath.split('/').slice(0, -1);
    const dirs = [root, ...parts.map((_, i) => `${root}/${parts.slice(0, i + 1).join('/')}`)];
    setExpanded((prev) => new Set([...prev, ...dirs]));
    for (const dir of dirs) await loadFolder(dir);
    setFocused(path);
  };

  // How the open file is previewed (besides Markdown and images): a table, or highlighted code.
  const delimiter = opened ? tableDelimiter(opened.entry.name, opened.type.mimeType) : null;
  const language = opened && !delimiter ? codeLanguage(opened.entry.name) : null;

  return (
    <div class="split">
      <h1 class="sr-only">Files</h1>
      <section
        class={`panel stack dropzone ${over ? 'over' : ''}`}
        aria-label="File tree"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer)
            void droppedFiles(e.dataTransfer).then((picked) => {
              if (picked.length) void upload(picked);
            });
        }}
      >
        <label for="file-search">Search files</label>
        <div class="row">
          <input
            id="file-search"
            class="grow"
            type="search"
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
            placeholder="Name or path"
          />
          <button class="trash-toggle" aria-pressed={showTrash} onClick={() => setShowTrash((shown) => !shown)}>
            Trash
          </button>
        </div>
        {results ? (
          <ul class="plain list" aria-label="Search results">
            {results.length === 0 && <li class="muted">{indexing ? 'Indexing the space…' : 'Nothing found.'}</li>}
            {results.map((item) => (
              <li key={item.path}>
                <button class="link item" onClick={() => void open(item)}>
                  {item.type === 'folder' ? <FolderIcon /> : <FileIcon />} {item.relativePath}
                </button>
              </li>
            ))}
          </ul>
        ) : (
          renderFolder(root)
        )}
        <p class="muted hint">Drag and drop files here to upload them into the selected folder.</p>
      </section>
      <section class="panel stack viewer" aria-label="File">
        {toolbar}
        <p role="status" class="muted" aria-live="polite">
          {status}
        </p>
        {showTrash ? (
          <TrashView
            spaceId={props.space.id}
            version={trashVersion}
            onRestored={(path, relativePath) => void revealRestored(path, relativePath)}
            onClose={() => setShowTrash(false)}
          />
        ) : opened ? (
          <article class="stack" aria-label={opened.entry.name}>
            <div class="row">
              <h2 class="grow">{opened.entry.name}</h2>
              <button onClick={() => void download(opened.entry)}>Download</button>
              {opened.text !== undefined && editing === null && (
                <button onClick={() => setEditing(opened.text ?? '')}>{delimiter ? 'Edit as text' : 'Edit'}</button>
              )}
            </div>
            {editing !== null ? (
              <form
                class="stack"
                onSubmit={async (e) => {
                  e.preventDefault();
                  if (await save(opened, editing)) setEditing(null);
                }}
              >
                <label for="editor" class="sr-only">
                  Content of {opened.entry.name}
                </label>
                <textarea
                  id="editor"
                  class="editor"
                  value={editing}
                  onInput={(e) => setEditing(e.currentTarget.value)}
                  onKeyDown={(e) => {
                    // Ctrl+S (⌘S): save and keep editing.
                    if (e.key.toLowerCase() === 's' && (e.ctrlKey || e.metaKey) && !e.altKey) {
                      e.preventDefault();
                      void save(opened, e.currentTarget.value);
                    }
                  }}
                />
                <SubmitOrCancel onCancel={() => setEditing(null)}>Save</SubmitOrCancel>
              </form>
            ) : opened.imageUrl ? (
              <img src={opened.imageUrl} alt={opened.entry.name} />
            ) : opened.pdf ? (
              <LazyPreview
                fallback={<p class="muted">Loading {opened.entry.name}…</p>}
                render={(m) => (
                  <m.PdfPreview key={opened.entry.path} name={opened.entry.name} path={opened.entry.path} />
                )}
              />
            ) : opened.text !== undefined && opened.type.contentType === 'markdown' ? (
              <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(opened.text) }} />
            ) : opened.text !== undefined && delimiter ? (
              <LazyPreview
                fallback={<pre>{opened.text}</pre>}
                render={(m) => <m.CsvPreview name={opened.entry.name} text={opened.text ?? ''} delimiter={delimiter} />}
              />
            ) : opened.text !== undefined && language ? (
              <LazyPreview
                fallback={<pre>{opened.text}</pre>}
                render={(m) => <m.CodePreview name={opened.entry.name} text={opened.text ?? ''} language={language} />}
              />
            ) : opened.text !== undefined ? (
              <pre>{opened.text}</pre>
            ) : (
              <p class="muted">
                {opened.type.mimeType}, {sizeText(opened.entry.size)}: no preview. Use Download.
              </p>
            )}
          </article>
        ) : (
          <p class="muted">Select a file to open it.</p>
        )}
      </section>
    </div>
  );
}
