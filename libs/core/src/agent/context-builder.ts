import { SUPERSEDED_META } from '#contracts/conversations.js';
import { COMPACTION_KIND, isCompactionSummary, type Message } from '../kernel/conversation.js';
import type { ModelContentBlock, ModelMessage } from '../ports/model-provider.port.js';
import { SUMMARY_PREFIX } from './engine/compaction.js';
import { attachmentNote, attachmentsOf, ATTACHMENTS_META, MISSING_ATTACHMENTS_META } from './message-attachments.js';

export { COMPACTION_KIND };

export interface ImageAttachment {
  mediaType: string;
  data: string;
}

/**
 * Messages of failed turns that stay out of the model's context: every failed turn's partial
 * reply (an assistant message with `meta.error`), and a user message sent again by Retry (the
 * next user message, with only such failed replies between, has the same text, images and
 * attachments), so
 * a retried message is not seen twice. Regenerate and Edit (the web app) mark the last message
 * `superseded` first: it stays out too, and so does the user message of its turn once another
 * user message follows (Edit sends a different one), as if that turn had failed.
 */
export function failedTurnMessages(messages: Message[]): Set<Message> {
  const left = new Set<Message>();
  const superseded = (m: Message): boolean => m.meta[SUPERSEDED_META] === true;
  const failedReply = (m: Message): boolean =>
    m.role === 'assistant' && (typeof m.meta.error === 'string' || superseded(m));
  messages.forEach((m, i) => {
    if (failedReply(m) || superseded(m)) left.add(m);
    if (m.role !== 'user') return;
    let j = i + 1;
    while (j < messages.length && failedReply(messages[j]!)) j++;
    const next = messages[j];
    if (next?.role !== 'user') return;
    if (
      messages.slice(i + 1, j).some(superseded) ||
      (next.content === m.content &&
        JSON.stringify(next.meta.images ?? null) === JSON.stringify(m.meta.images ?? null) &&
        JSON.stringify(next.meta[ATTACHMENTS_META] ?? null) === JSON.stringify(m.meta[ATTACHMENTS_META] ?? null))
    )
      left.add(m);
  });
  return left;
}

/**
 * The conversation as the model sees it: the latest compaction summary (if any) replaces
 * everything before it; user messages carry their images (attached image files read by
 * MessageAttachments.withImages), a note naming each other attached file and, on the first one, the memory
 * snapshot taken when the conversation started; assistant messages are the final replies
 * (tool work of past turns is summarized by those replies). Consecutive same-role messages
 * are merged, as the providers require alternation.
 */
export function buildHistory(messages: Message[]): ModelMessage[] {
  let start = 0;
  let summary: string | null = null;
  messages.forEach((m, i) => {
    if (isCompactionSummary(m)) {
      start = i + 1;
      summary = m.content;
    }
  });
  const history: ModelMessage[] = [];
  const push = (role: 'user' | 'assistant', blocks: ModelContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = history[history.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else history.push({ role, content: blocks });
  };
  if (summary !== null) push('user', [{ type: 'text', text: `${SUMMARY_PREFIX}\n${summary}` }]);
  const failed = failedTurnMessages(messages);
  // The memory snapshot of a user message left out (retried) goes with the next one.
  let carried: unknown;
  for (const m of messages.slice(start)) {
    if (failed.has(m)) {
      if (m.role === 'user' && m.meta.memorySnapshot !== undefined) carried = m.meta.memorySnapshot;
      continue;
    }
    if (m.role === 'user') {
      const blocks: ModelContentBlock[] = [];
      const snapshot = m.meta.memorySnapshot ?? carried;
      carried = undefined;
      if (typeof snapshot === 'string' && snapshot.trim() !== '') {
        blocks.push({
          type: 'text',
          text: `[Workspace memory (.svc/memory.md) when this conversation started]\n${snapshot}`,
        });
      }
      for (const image of asImages(m.meta.images)) blocks.push({ type: 'image', ...image });
      const missing = Array.isArray(m.meta[MISSING_ATTACHMENTS_META])
        ? (m.meta[MISSING_ATTACHMENTS_META] as unknown[])
        : [];
      for (const attachment of attachmentsOf(m.meta)) {
        if (missing.includes(attachment.path)) blocks.push({ type: 'text', text: attachmentNote(attachment, true) });
        else if (!attachment.image) blocks.push({ type: 'text', text: attachmentNote(attachment) });
      }
      blocks.push({ type: 'text', text: m.content });
      push('user', blocks);
    } else if (m.role === 'assistant' && m.content.trim() !== '') {
      push('assistant', [{ type: 'text', text: m.content }]);
    }
  }
  // Providers want the conversation to start with the user.
  if (history[0]?.role === 'assistant')
    history.unshift({ role: 'user', content: [{ type: 'text', text: '(continuing)' }] });
  return history;
}

export function asImages(value: unknown): ImageAttachment[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (v): v is ImageAttachment =>
      !!v &&
      typeof v === 'object' &&
      typeof (v as ImageAttachment).data === 'string' &&
      typeof (v as ImageAttachment).mediaType === 'string',
  );
}

export function systemPrompt(input: {
  workspacePath: string;
  now: Date;
  memoryEnabled: boolean;
  toolNames: string[];
}): string {
  const lines = [
    'You are svc, a capable AI assistant working for the user inside a workspace folder on a server.',
    `Workspace folder: ${input.workspacePath}`,
    `Current date: ${input.now.toISOString().slice(0, 10)}`,
    `Tools: ${input.toolNames.join(', ')}. File paths are absolute inside the workspace folder or relative to it; nothing outside it can be touched.`,
    'Work step by step: look before you change, keep changes minimal, and say plainly what you did.',
    'When you need a decision only the user can make, ask with AskUserQuestion instead of guessing.',
  ];
  if (input.memoryEnabled) {
    lines.push(
      'Workspace memory: .svc/memory.md holds durable notes shared by every conversation in this workspace (facts, decisions, preferences, open work).',
      'Read it when useful and update it with Edit or Write when you learn something worth remembering later; keep it short and current.',
    );
  }
  return lines.join('\n');
}
