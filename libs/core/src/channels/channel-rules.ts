import { createHash } from 'node:crypto';
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
  escalationAsk: 'A question needs your answer:',
  escalationReplyChoice: 'Reply with a number or a choice, or write your own answer.',
  escalationReplyFree: 'Reply here with your answer.',
  escalationAnswered: (answer: string) => `Thanks — answered: ${answer}`,
  unknownType: (type: string, known: readonly string[]) => `type must be one of ${known.join(', ')} (got "${type}")`,
  instanceNotFound: (id: string) => `Channel instance not found: ${id}`,
  sessionNotFound: 'No such channel thread',
  missingField: (key: string) => `config.${key} is required`,
  approve: 'Approve',
  reject: 'Reject',
  ownerOnly: 'Only the owner of this channel can approve or reject.',
  nothingWaits: 'Nothing is waiting for approval.',
  approvedNotice: 'Approved.',
  rejectedNotice: 'Rejected.',
  actionFailed: 'That could not be done; please try again.',
  unknownAction: 'This button is not known here.',
  tooDeep: (levels: number) => `JSON body is nested deeper than ${levels} levels`,
} as const;

/** What a held tool call's message says (docs/api/channels.md, "Tool approvals in a thread"). */
export function approvalPromptText(p: {
  appName: string;
  toolName: string;
  input: Record<string, unknown>;
  deadline: string;
  /** The platform has no buttons: say which words answer. */
  words: boolean;
}): string {
  let input = JSON.stringify(p.input, null, 2);
  if (input.length > APPROVAL_INPUT_CHARS) input = `${input.slice(0, APPROVAL_INPUT_CHARS)}…`;
  const until = p.deadline.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
  return [
    `${p.appName} wants to run the tool ${p.toolName} with:`,
    input,
    `It waits for your answer until ${until}.`,
    ...(p.words ? ['Reply "approve" to run it, or "reject" (and a reason, if you like) to refuse it.'] : []),
  ].join('\n');
}

/** The input shown in a held call's message is cut here. */
export const APPROVAL_INPUT_CHARS = 1500;

/** The line a decision adds in the thread: `Approved by Alice: Bash runs now.` */
export function decisionLine(approved: boolean, toolName: string, who: string, reason?: string): string {
  return approved
    ? `Approved by ${who}: ${toolName} runs now.`
    : `Rejected by ${who}: ${toolName} does not run${reason ? ` (${reason})` : ''}.`;
}

const CHOICE_PREFIX = 'approval';

/** The buttons of a held call; their ids name the call by its approvalKey. */
export function approvalChoices(key: string): Array<{ id: string; label: string; style: 'primary' | 'danger' }> {
  return [
    { id: `${CHOICE_PREFIX}:approve:${key}`, label: ChannelTexts.approve, style: 'primary' },
    { id: `${CHOICE_PREFIX}:reject:${key}`, label: ChannelTexts.reject, style: 'danger' },
  ];
}

/** A pressed approval button's id read back; null for any other id. */
export function parseApprovalChoice(id: string): { approved: boolean; key: string } | null {
  const m = /^approval:(approve|reject):([0-9a-f]{16})$/.exec(id);
  return m ? { approved: m[1] === 'approve', key: m[2]! } : null;
}

/**
 * A reply that answers a held call in words: `approve` (also `/approve`, `approve.`), or `reject`
 * with an optional reason (`reject too risky`). Null for anything else.
 */
export function parseApprovalReply(text: string): { approved: boolean; reason?: string } | null {
  const t = text.trim();
  if (/^\/?approve(@\S+)?[.!]?$/i.test(t)) return { approved: true };
  const m = /^\/?reject(?:@\S+)?[.!:,]?(?:\s+([\s\S]+))?$/i.exec(t);
  if (!m) return null;
  const reason = m[1]?.trim();
  return reason ? { approved: false, reason } : { approved: false };
}

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
/**
 * The id of a platform message's record in its thread, the same at each dispatch of it (a UUID
 * in the form of version 5, from a SHA-256 of the instance and the platform's message id): a job
 * run again after its replica died finds the message recorded and does not hand it over twice.
 */
export function channelMessageRecordId(instanceId: string, messageId: string): string {
  const h = createHash('sha256').update(`channel-message\0${instanceId}\0${messageId}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
/** The claim of a button press (once per instance and platform action id). */
export const actionClaimKey = (instanceId: string, actionId: string): string => `act:${instanceId}:${actionId}`;
/** The claim of a run's result reaching one thread (once per run). */
export const pushClaimKey = (runId: string, instanceId: string, chatId: string): string =>
  `push:${runId}:${instanceId}:${chatId}`;
/** The claim of an escalation reaching one owner's direct chat (once per question). */
export const escalationClaimKey = (entryId: string, instanceId: string, chatId: string): string =>
  `escalation:${entryId}:${instanceId}:${chatId}`;

/** An escalation as sent to a chat: the question, then its choices numbered. */
export function escalationText(question: string, choices: readonly string[]): string {
  if (choices.length === 0) return `${ChannelTexts.escalationAsk}\n${question}\n\n${ChannelTexts.escalationReplyFree}`;
  const listed = choices.map((c, i) => `${i + 1}. ${c}`).join('\n');
  return `${ChannelTexts.escalationAsk}\n${question}\n\n${listed}\n\n${ChannelTexts.escalationReplyChoice}`;
}

/**
 * A reply to an escalation: a choice when it names one (its number or its words, case aside),
 * else free text.
 */
export function escalationAnswer(reply: string, choices: readonly string[]): { choice: string } | { text: string } {
  const said = reply.trim();
  const n = /^\d+$/.test(said) ? Number(said) : NaN;
  if (Number.isInteger(n) && n >= 1 && n <= choices.length) return { choice: choices[n - 1]! };
  const named = choices.find((c) => c.trim().toLowerCase() === said.toLowerCase());
  return named !== undefined ? { choice: named } : { text: said };
}

/** A chat id as it may stand in a conversation id: no control characters, at most 200 characters. */
export function chatIdProblem(chatId: string): string | null {
  if (chatId.trim() === '') return 'chatId must not be empty';
  if (chatId.length > 200) return 'chatId must be at most 200 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(chatId)) return 'chatId must not contain control characters';
  return null;
}
