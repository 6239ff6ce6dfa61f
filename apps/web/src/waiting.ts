import { AppChannels, type AppDto, type AppStatusChangedEvent } from '#contracts/apps.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { appName } from './apps.js';
import { api } from './api.js';
import { go } from './route.js';
import type { EventSocket } from './socket.js';

/** Waiting digital humans by id, each with its open escalation's id ('' where the server names none). */
type Waiting = ReadonlyMap<string, string>;

const NOTIFY_KEY = 'svc-notify-waiting';

/** Whether the person asked to be notified (Settings); the browser's permission is checked apart. */
export const notifyWaitingWanted = (): boolean => localStorage.getItem(NOTIFY_KEY) === 'on';

export type NotifyPermission = NotificationPermission | 'unsupported';

export const notificationPermission = (): NotifyPermission =>
  typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;

/** Turns the notifications on (asking the browser's permission first) or off; answers the permission. */
export async function setNotifyWaiting(on: boolean): Promise<NotifyPermission> {
  if (!on) {
    localStorage.removeItem(NOTIFY_KEY);
    return notificationPermission();
  }
  const permission =
    notificationPermission() === 'unsupported' ? 'unsupported' : await Notification.requestPermission();
  if (permission === 'granted') localStorage.setItem(NOTIFY_KEY, 'on');
  else localStorage.removeItem(NOTIFY_KEY);
  return permission;
}

/**
 * How many digital humans wait for a person (an open question or a tool call held for approval:
 * status `waiting_user`), kept live from `app:status_changed`; the list is read again when apps
 * come or go. With the Settings switch on, each newly open escalation is also a browser notification.
 */
export function useWaitingApps(socket: EventSocket): number {
  // null until the first read: what already waits when the page opens is not announced again.
  const [waiting, setWaiting] = useState<Waiting | null>(null);
  const names = useRef(new Map<string, string>());
  useEffect(() => {
    let live = true;
    const load = () =>
      api.get<AppDto[]>('/api/apps').then(
        (apps) => {
          if (!live) return;
          for (const app of apps) names.current.set(app.id, appName(app));
          setWaiting(
            new Map(apps.filter((a) => a.status === 'waiting_user').map((a) => [a.id, a.pendingEscalationId ?? ''])),
          );
        },
        () => undefined,
      );
    void load();
    const off = socket.on((event) => {
      if (event.channel === AppChannels.statusChanged) {
        const { appId, state } = event.data as unknown as AppStatusChangedEvent;
        const escalation = state.status === 'waiting_user' ? (state.pendingEscalationId ?? '') : undefined;
        setWaiting((prev) => {
          if (!prev || prev.get(appId) === escalation) return prev;
          const next = new Map(prev);
          if (escalation === undefined) next.delete(appId);
          else next.set(appId, escalation);
          return next;
        });
      } else if (event.channel === AppChannels.listChanged || event.channel === AppChannels.deleted) void load();
    });
    return () => {
      live = false;
      off();
    };
  }, [socket]);

  const previous = useRef<Waiting | null>(null);
  const announced = useRef(new Set<string>());
  useEffect(() => {
    const before = previous.current;
    previous.current = waiting;
    if (!waiting) return;
    for (const [appId, escalation] of waiting) {
      const key = escalation || appId;
      const fresh = before !== null && before.get(appId) !== escalation && !announced.current.has(key);
      // The first read only marks what waits already; an escalation is never announced twice.
      if (escalation) announced.current.add(key);
      if (fresh && notifyWaitingWanted() && notificationPermission() === 'granted')
        void notifyWaiting(appId, escalation, names.current.get(appId));
    }
  }, [waiting]);
  return waiting?.size ?? 0;
}

async function notifyWaiting(appId: string, escalation: string, known: string | undefined): Promise<void> {
  const name = known ?? (await api.get<AppDto>(`/api/apps/${appId}`).then(appName, () => 'A digital human'));
  const notification = new Notification(name, {
    body: `${name} is waiting for you.`,
    tag: `svc-waiting-${escalation || appId}`,
  });
  notification.onclick = () => {
    window.focus();
    go('apps', appId);
    notification.close();
  };
}

/** The tab's title: the product's name, after the count of digital humans waiting, if any. */
export function titleWithWaiting(waiting: number): string {
  return waiting > 0 ? `(${waiting}) svc-server` : 'svc-server';
}
