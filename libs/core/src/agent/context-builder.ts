import type { Message } from '../kernel/conversation.js';
import type { ModelContentBlock, ModelMessage } from '../ports/model-provider.port.js';
import { SUMMARY_PREFIX } from './engine/compaction.js';

export const COMPACTION_KIND = 'compaction';

export interface ImageAttachment {
  mediaType: string;
  data: string;
}

/**
 * The conversation as the model sees it: the latest compaction summary (if any) replaces
 * everything before it; user messages carry their images and, on the first one, the memory
 * snapshot taken when the conversation started; assistant messages are the final replies
 * (tool work of past turns is summarized by those replies). Consecutive same-role messages
 * are merged, as the providers require alternation.
 */
export function buildHistory(messages: Message[]): ModelMessage[] {
  let start = 0;
  let summary: string | null = null;
  messages.forEach((m, i) => {
    if (m.role === 'system' && m.meta.kind === COMPACTION_KIND) {
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
  for (const m of messages.slice(start)) {
    if (m.role === 'user') {
      const blocks: ModelContentBlock[] = [];
      const snapshot = m.meta.memorySnapshot;
      if (typeof snapshot === 'string' && snapshot.trim() !== '') {
        blocks.push({
          type: 'text',
          text: `[Workspace memory (.svc/memory.md) when this conversation started]\n${snapshot}`,
        });
      }
      for (const image of asImages(m.meta.images)) blocks.push({ type: 'image', ...image });
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
