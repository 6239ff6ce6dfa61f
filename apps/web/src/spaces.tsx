import type { SpaceDto } from '#contracts/spaces.js';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { ask, confirmAction } from './dialogs.js';

export type Space = Pick<SpaceDto, 'id' | 'name' | 'path'> & Partial<SpaceDto>;

export async function loadSpaces(): Promise<Space[]> {
  const [temp, own] = await Promise.all([api.get<Space>('/api/spaces/svc'), api.get<Space[]>('/api/spaces')]);
  return [...own, { ...temp, isTemp: true }];
}

/** Spaces: list, create, rename, delete (confirmed), switch; the temporary space is always there. */
export function SpacesScreen(props: {
  spaces: Space[];
  current: string;
  onSwitch: (id: string) => void;
  reload: () => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [status, setStatus] = useState('');
  const run = async (work: () => Promise<unknown>, done: string) => {
    try {
      await work();
      await props.reload();
      setStatus(done);
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  return (
    <section class="panel stack" aria-labelledby="spaces-title">
      <h1 id="spaces-title">Spaces</h1>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const wanted = name.trim();
          if (!wanted) return;
          void run(async () => {
            const created = await api.post<Space>('/api/spaces', { name: wanted });
            setName('');
            props.onSwitch(created.id);
          }, `Created ${wanted}.`);
        }}
      >
        <label for="new-space">New space</label>
        <input id="new-space" value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="Name" />
        <button type="submit" class="primary">
          Create
        </button>
      </form>
      <ul class="plain list stack" aria-label="Spaces">
        {props.spaces.map((space) => (
          <li key={space.id} class="row">
            <span class="item grow" aria-current={space.id === props.current ? 'true' : undefined}>
              {space.icon && <span aria-hidden="true">{space.icon}</span>} {space.name}
              {space.id === TEMP_SPACE_ID && <span class="badge">temporary</span>}
              <span class="muted"> {space.path}</span>
            </span>
            <button onClick={() => props.onSwitch(space.id)} disabled={space.id === props.current}>
              Open
            </button>
            {space.id !== TEMP_SPACE_ID && (
              <>
                <button
                  onClick={async () => {
                    const next = await ask(`Rename ${space.name}`, 'New name', space.name, 'Rename');
                    if (next) void run(() => api.put(`/api/spaces/${space.id}`, { name: next }), `Renamed to ${next}.`);
                  }}
                >
                  Rename
                </button>
                <button
                  class="danger"
                  onClick={async () => {
                    if (
                      !(await confirmAction(
                        `Delete ${space.name}, its folder and its conversations? This cannot be undone.`,
                      ))
                    )
                      return;
                    void run(async () => {
                      await api.del(`/api/spaces/${space.id}`);
                      if (space.id === props.current) props.onSwitch(TEMP_SPACE_ID);
                    }, `Deleted ${space.name}.`);
                  }}
                >
                  Delete
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      <p role="status">{status}</p>
    </section>
  );
}
