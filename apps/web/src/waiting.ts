import { AppChannels, type AppDto, type AppStatusChangedEvent } from '#contracts/apps.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import type { EventSocket } from './socket.js';

/**
 * How many digital humans wait for a person (an open question or a tool call held for approval:
 * status `waiting_user`), kept live from `app:status_changed`; the list is read again when apps
 * come or go.
 */
export function useWaitingApps(socket: EventSocket): number {
  const [waiting, setWaiting] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    let live = true;
    const load = () =>
      api.get<AppDto[]>('/api/apps').then(
        (apps) => live && setWaiting(new Set(apps.filter((a) => a.status === 'waiting_user').map((a) => a.id))),
        () => undefined,
      );
    void load();
    const off = socket.on((event) => {
      if (event.channel === AppChannels.statusChanged) {
        const { appId, state } = event.data as unknown as AppStatusChangedEvent;
        setWaiting((prev) => {
          if (prev.has(appId) === (state.status === 'waiting_user')) return prev;
          const next = new Set(prev);
          if (state.status === 'waiting_user') next.add(appId);
          else next.delete(appId);
          return next;
        });
      } else if (event.channel === AppChannels.listChanged || event.channel === AppChannels.deleted) void load();
    });
    return () => {
      live = false;
      off();
    };
  }, [socket]);
  return waiting.size;
}

/** The tab's title: the product's name, after the count of digital humans waiting, if any. */
export function titleWithWaiting(waiting: number): string {
  return waiting > 0 ? `(${waiting}) svc-server` : 'svc-server';
}
