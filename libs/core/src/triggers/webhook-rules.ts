import { createHmac, timingSafeEqual } from 'node:crypto';
import { digest } from './schedule-timing.js';

/** Pure rules of webhook triggers (docs/api/triggers.md, "Webhooks"). */

/** Largest accepted body: 256 KB (else 413). */
export const WEBHOOK_MAX_BYTES = 256 * 1024;
/** The same body again within this long starts no second run. */
export const WEBHOOK_SAME_BODY_MS = 10 * 60_000;
/** The same delivery id again within this long starts no second run (redeliveries come later too). */
export const WEBHOOK_SAME_ID_MS = 7 * 24 * 3_600_000;

export const WebhookTexts = {
  badSignature: 'Invalid webhook signature',
  notFound: (path: string) => `No webhook at /hooks/${path}`,
  notJson: 'Webhook bodies must be JSON (or form-encoded with a JSON `payload` field)',
  queueFull: (max: number) => `Too many deliveries are waiting for this digital human (${max}); retry later`,
  refused: (count: number, max: number, firstMs: number, lastMs: number) =>
    `${count} webhook ${count === 1 ? 'delivery was' : 'deliveries were'} refused (429) while ${max} waited for this digital human (${new Date(firstMs).toISOString()} to ${new Date(lastMs).toISOString()}).`,
  tooDeep: (levels: number) => `JSON body is nested deeper than ${levels} levels`,
} as const;

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | null {
  const value = headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && text.trim() !== '' ? text.trim() : null;
}

/**
 * The signature a request carries, as hex: `X-Hub-Signature-256: sha256=<hex>`, else
 * `X-Signature-256: <hex>` or `X-Webhook-Signature: <hex>` (a `sha256=` prefix is allowed on
 * those too). Header names lower case, as Node gives them.
 */
export function presentedSignature(headers: Headers): string | null {
  const github = header(headers, 'x-hub-signature-256');
  if (github !== null) return github.toLowerCase().startsWith('sha256=') ? github.slice(7) : null;
  const other = header(headers, 'x-signature-256') ?? header(headers, 'x-webhook-signature');
  if (other === null) return null;
  return other.toLowerCase().startsWith('sha256=') ? other.slice(7) : other;
}

/** HMAC-SHA256 of the raw body with `secret`, compared in constant time with what the request carries. */
export function signatureValid(secret: string, rawBody: Buffer, headers: Headers): boolean {
  const presented = presentedSignature(headers);
  if (presented === null || !/^[0-9a-f]{64}$/i.test(presented)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(presented, 'hex'));
}

/** Deliveries that may wait per app by default (SVC_WEBHOOK_QUEUE_MAX); past it a delivery is answered 429. */
export const WEBHOOK_QUEUE_MAX = 100;
/** `Retry-After` (seconds) of a delivery refused because its app's queue is full. */
export const WEBHOOK_RETRY_AFTER_S = 60;

/**
 * Headers a run receives with the body (lower case): what names the event and the delivery.
 * An allow-list: credentials, cookies and signatures never reach the run.
 */
export const WEBHOOK_EVENT_HEADERS: readonly string[] = [
  'x-github-event',
  'x-github-delivery',
  'x-github-hook-id',
  'x-github-hook-installation-target-type',
  'x-github-hook-installation-target-id',
  'x-gitlab-event',
  'x-gitlab-event-uuid',
  'x-gitea-event',
  'x-gitea-delivery',
  'x-event-key',
  'x-request-uuid',
  'x-webhook-id',
  'x-webhook-event',
  'x-event-type',
  'x-event-id',
  'x-shopify-topic',
  'x-shopify-webhook-id',
  'user-agent',
];

/** The allow-listed event headers a delivery carries, each once, at most 512 characters. */
export function eventHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of WEBHOOK_EVENT_HEADERS) {
    const value = header(headers, name);
    if (value !== null) out[name] = value.slice(0, 512);
  }
  return out;
}

/** The media type of a request, lower case, without parameters; '' when none. */
export function mediaType(headers: Headers): string {
  return (header(headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The JSON text of a delivery: the body itself, or for `application/x-www-form-urlencoded`
 * (GitHub's other content type) its `payload` field; null when a form has no `payload`.
 */
export function webhookJsonText(rawBody: Buffer, type: string): string | null {
  const text = rawBody.toString('utf8');
  if (type !== 'application/x-www-form-urlencoded') return text;
  return new URLSearchParams(text).get('payload');
}

/** The sender's delivery id: `X-Webhook-Id`, else `X-GitHub-Delivery`. */
export function deliveryId(headers: Headers): string | null {
  return header(headers, 'x-webhook-id') ?? header(headers, 'x-github-delivery');
}

export interface DedupClaim {
  key: string;
  windowMs: number;
}

/**
 * What a delivery claims in shared state before its run is queued: its delivery id (when it
 * has one) and its body. Either already claimed within its window means a repeat.
 */
export function webhookClaims(appId: string, subscriptionId: string, rawBody: Buffer, id: string | null): DedupClaim[] {
  const scope = `hook:${appId}:${digest(subscriptionId, 12)}`;
  const claims: DedupClaim[] = [];
  if (id !== null) claims.push({ key: `${scope}:id:${digest(id, 32)}`, windowMs: WEBHOOK_SAME_ID_MS });
  claims.push({ key: `${scope}:body:${digest(rawBody, 32)}`, windowMs: WEBHOOK_SAME_BODY_MS });
  return claims;
}

/** The path after `/hooks/` as subscriptions store it (leading and trailing slashes dropped). */
export function normalizeHookPath(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

interface HookOwner {
  id: string;
  spec: { subscriptions?: Array<{ source: { type: string; config: Record<string, unknown> } }> };
}

/**
 * Webhook paths are unique across apps: the first subscription of `spec` whose path another
 * app (`others`, installed ones) already uses, as `{field, path, appId}`; null when all are free.
 */
export function webhookPathConflict(
  spec: HookOwner['spec'],
  others: readonly HookOwner[],
): { field: string; path: string; appId: string } | null {
  const taken = new Map<string, string>();
  for (const other of others) {
    for (const sub of other.spec.subscriptions ?? []) {
      if (sub.source.type === 'webhook' && typeof sub.source.config.path === 'string') {
        taken.set(sub.source.config.path, other.id);
      }
    }
  }
  const subs = spec.subscriptions ?? [];
  for (let i = 0; i < subs.length; i++) {
    const sub = subs[i]!;
    const path = sub.source.config.path;
    if (sub.source.type !== 'webhook' || typeof path !== 'string') continue;
    const owner = taken.get(path);
    if (owner !== undefined) return { field: `subscriptions[${i}].source.config.path`, path, appId: owner };
    taken.set(path, '(this spec)');
  }
  return null;
}
