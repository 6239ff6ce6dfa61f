import {
  type ChannelConfigField,
  type ChatType,
  type GuestPolicy,
  MASKED,
  type ReplyScope,
} from '#contracts/channels.js';

/** Pure rules of message channels (docs/api/channels.md, "How a message is handled"). */

export const REPLY_SCOPES: readonly ReplyScope[] = ['all', 'group', 'direct'];
export const GUEST_POLICIES: readonly GuestPolicy[] = ['deny', 'chat-only'];
/** `app:im-session-updated` carries this much of the last message. */
export const LAST_MESSAGE_CHARS = 50;

export const ChannelTexts = {
  stopped: 'Stopped.',
  cleared: 'Cleared. The next message starts a new conversation.',
  merged: 'Got it — I will take this into account.',
  denied: 'Sorry, I only answer my owners here.',
  emptyReply: '(no answer)',
  appGone: 'The digital human of this channel no longer exists.',
  unknownType: (type: string, known: readonly string[]) => `type must be one of ${known.join(', ')} (got "${type}")`,
  instanceNotFound: (id: string) => `Channel instance not found: ${id}`,
  sessionNotFound: 'No such channel thread',
  missingField: (key: string) => `config.${key} is required`,
} as const;

/** The config with every secret field that holds a value answered as `***`. */
export function maskConfig(
  config: Record<string, unknown>,
  fields: readonly ChannelConfigField[],
): Record<string, unknown> {
  const secret = new Set(fields.filter((f) => f.type === 'secret').map((f) => f.key));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    out[key] = secret.has(key) && value !== undefined && value !== null && value !== '' ? MASKED : value;
  }
  return out;
}

/**
 * A config change merged into the stored one: `***` (what was answered) or an absent key keeps
 * the stored value; null removes it.
 */
export function mergeConfig(stored: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === MASKED) continue;
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** The first required field the config lacks, or null. */
export function missingConfigField(
  config: Record<string, unknown>,
  fields: readonly ChannelConfigField[],
): string | null {
  for (const f of fields) {
    const v = config[f.key];
    if (f.required && (v === undefined || v === null || v === '')) return f.key;
  }
  return null;
}

/**
 * A group message without its leading mentions (`@bot`, Slack's `<@U123>`), which address the
 * bot and are not part of what was said.
 */
export function stripMentions(text: string): string {
  return text.replace(/^(\s*(<@[A-Za-z0-9_.|-]+>|@[^\s@]+)[,:]?)+\s*/u, '').trim();
}

export type ChannelCommand = 'stop' | 'clear';

/** `/stop` or `/clear` (also `/stop@botname`, as Telegram writes commands in groups); else null. */
export function parseCommand(text: string): ChannelCommand | null {
  const m = /^\/(stop|clear|cancel|reset)(@\S+)?\s*$/i.exec(text.trim());
  if (!m) return null;
  const word = m[1]!.toLowerCase();
  return word === 'stop' || word === 'cancel' ? 'stop' : 'clear';
}

export function inScope(scope: ReplyScope, chatType: ChatType): boolean {
  return scope === 'all' || scope === chatType;
}

export type SenderRole = 'owner' | 'claims-ownership' | 'guest' | 'denied';

/**
 * Who a sender is to an instance: an owner; the first direct sender of an instance without
 * owners (who becomes its owner); else a guest under `chat-only`, or denied.
 */
export function senderRole(
  instance: { owners: readonly string[]; guestPolicy: GuestPolicy },
  senderId: string,
  chatType: ChatType,
): SenderRole {
  if (instance.owners.includes(senderId)) return 'owner';
  if (instance.owners.length === 0 && chatType === 'direct') return 'claims-ownership';
  return instance.guestPolicy === 'chat-only' ? 'guest' : 'denied';
}

/**
 * A reply cut into parts of at most `limit` characters, in order: at the last paragraph break,
 * else line break, else space in the second half of a part, else hard at the limit. Nothing is
 * lost but the whitespace at a cut.
 */
export function splitReply(text: string, limit: number): string[] {
  if (limit < 1) throw new Error('limit must be positive');
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    let cut = -1;
    for (const sep of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(sep);
      if (at >= limit / 2) {
        cut = at;
        break;
      }
    }
    if (cut <= 0) {
      // A surrogate pair is never cut in two.
      cut = limit;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    } else {
      parts.push(rest.slice(0, cut).trimEnd());
      rest = rest.slice(cut).trimStart();
    }
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

/** The claim a platform message takes: it starts at most one turn, across replicas. */
export const messageClaimKey = (instanceId: string, messageId: string): string => `msg:${instanceId}:${messageId}`;
/** The claim of a run's result reaching one thread (once per run). */
export const pushClaimKey = (runId: string, instanceId: string, chatId: string): string =>
  `push:${runId}:${instanceId}:${chatId}`;

/** A chat id as it may stand in a conversation id: no control characters, at most 200 characters. */
export function chatIdProblem(chatId: string): string | null {
  if (chatId.trim() === '') return 'chatId must not be empty';
  if (chatId.length > 200) return 'chatId must be at most 200 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(chatId)) return 'chatId must not contain control characters';
  return null;
}
