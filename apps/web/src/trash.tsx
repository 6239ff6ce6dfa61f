import type { TrashEntry } from '#contracts/artifacts.js';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { ask, confirmAction } from './dialogs.js';
import { FileIcon, FolderIcon } from './icons.js';

const sizeText = (n = 0): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;

/** `a/b (restored).txt` for `a/b.txt`: a free name to offer when the original path is taken. */
const restoredName = (path: string): string => {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? `${path.slice(0, dot)} (restored)${path.slice(dot)}` : `${path} (restored)`;
};

/**
 * A space's trash (docs/api.md, "Trash"): what was deleted from it, newest first, each with
 * Restore (to where it was, or under another path when that one is taken) and Delete forever.
 * `onRestored` gets the restored entry's absolute path, for the tree to show it.
 */
export function TrashView(props: {
  spaceId: string;
  onRestored: (path: string, relativePath: string) => void;
  onClose: () => void;
  /** Bumped by the caller when something was moved to the trash meanwhile. */
  version: number;
}) {
  const [entries, setEntries] = useState<TrashEntry[] | null>(null);
  const [status, setStatus] = useState('');
  const base = `/api/spaces/${props.spaceId}/trash`;

  const load = useCallback(async () => {
    try {
      setEntries(await api.get<TrashEntry[]>(base));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  }, [base]);
  useEffect(() => void load(), [load, props.version]);

  async function restore(entry: TrashEntry) {
    const send = (path?: string) =>
      api.post<{ path: string; relativePath: string }>(
        `${base}/restore`,
        path ? { id: entry.id, path } : { id: entry.id },
      );
    try {
      let restored;
      try {
        restored = await send();
      } catch (err) {
        if ((err as ApiError).status !== 409) throw err;
        const path = await ask(
          `Something is at ${entry.path} now`,
          'Restore it as (a path in this space)',
          restoredName(entry.path),
          'Restore',
        );
        if (!path) return;
        restored = await send(path);
      }
      setStatus(`Restored ${restored.relativePath}.`);
      props.onRestored(restored.path, restored.relativePath);
    } catch (err) {
      setStatus((err as ApiError).message);
    }
    void load();
  }

  async function purge(entry: TrashEntry) {
    if (!(await confirmAction(`Delete ${entry.path} forever? This cannot be undone.`, 'Delete forever'))) return;
    try {
      await api.del(`${base}/${encodeURIComponent(entry.id)}`);
      setStatus(`Deleted ${entry.path} forever.`);
    } catch (err) {
      setStatus((err as ApiError).message);
    }
    void load();
  }

  return (
    <section class="stack" aria-labelledby="trash-title">
      <div class="row">
        <h2 id="trash-title" class="grow">
          Trash
        </h2>
        <button onClick={props.onClose}>Close trash</button>
      </div>
      <p role="status" class="muted" aria-live="polite">
        {status}
      </p>
      {entries === null ? (
        <p class="muted">Loading…</p>
      ) : entries.length === 0 ? (
        <p class="muted">The trash is empty.</p>
      ) : (
        <ul class="plain trash-list" aria-label="Deleted files">
          {entries.map((entry) => (
            <li key={entry.id} class="row trash-entry">
              {entry.isDirectory ? <FolderIcon /> : <FileIcon />}
              <span class="grow">
                <span class="trash-path">{entry.path}</span>
                <br />
                <span class="muted">
                  Deleted {new Date(entry.deletedAt).toLocaleString()}
                  {entry.isDirectory ? ', folder' : `, ${sizeText(entry.size)}`}
                </span>
              </span>
              <span class="row">
                <button onClick={() => void restore(entry)} aria-label={`Restore ${entry.path}`}>
                  Restore
                </button>
                <button class="danger" onClick={() => void purge(entry)} aria-label={`Delete forever: ${entry.path}`}>
                  Delete forever
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
