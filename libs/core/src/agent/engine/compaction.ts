import type { ModelMessage } from '../../ports/model-provider.port.js';

/** Compact once the context passes this share of the model's window. */
export const COMPACTION_THRESHOLD = 0.8;

export const SUMMARY_PREFIX = '[Summary of the earlier conversation]';

/** A rough token count (≈ 4 characters a token) for when the provider has not told us yet. */
export function estimateTokens(messages: ModelMessage[], system: string): number {
  let chars = system.length;
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type === 'text') chars += b.text.length;
      else if (b.type === 'thinking') chars += b.thinking.length;
      else if (b.type === 'tool_use') chars += JSON.stringify(b.input).length;
      else if (b.type === 'tool_result') chars += b.content.length;
      else if (b.type === 'image') chars += 4 * 1600;
    }
  }
  return Math.ceil(chars / 4);
}

/**
 * Where the kept part of the history starts: the last user message that is not a tool
 * result (the current exchange); everything before it is summarized.
 */
export function compactionSplit(history: ModelMessage[]): number {
  let keepFrom = history.length - 1;
  while (keepFrom > 0 && !isPlainUserMessage(history[keepFrom]!)) keepFrom--;
  return keepFrom;
}

function isPlainUserMessage(m: ModelMessage): boolean {
  return m.role === 'user' && !m.content.some((b) => b.type === 'tool_result');
}

/** The older messages as plain text for the summarizing call. */
export function transcriptOf(older: ModelMessage[]): string {
  return older
    .map(
      (m) =>
        `${m.role.toUpperCase()}: ${m.content
          .map((b) =>
            b.type === 'text'
              ? b.text
              : b.type === 'tool_result'
                ? `[tool result] ${b.content.slice(0, 2000)}`
                : b.type === 'tool_use'
                  ? `[tool ${b.name}] ${JSON.stringify(b.input).slice(0, 500)}`
                  : '',
          )
          .filter(Boolean)
          .join('\n')}`,
    )
    .join('\n\n');
}

/** The history after compaction: the summary, an acknowledgement, then the kept messages. */
export function compactedHistory(summary: string, kept: ModelMessage[]): ModelMessage[] {
  return [
    { role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}\n${summary}` }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Understood; continuing from that summary.' }] },
    ...kept,
  ];
}
