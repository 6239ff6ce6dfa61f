import type { LoggedEvent } from '../ports/event-log.port.js';

/**
 * The reply text the latest turn of a conversation streamed, rebuilt from the conversation's
 * event log by the rules clients follow (docs/api.md, "Assembling a reply from agent:message"):
 * a `delta` appends, a new text block starts after a blank line, a `content` without `delta`
 * replaces. Used when the replica that ran the turn died: what it streamed is all that is left.
 */
export function streamedReply(events: readonly LoggedEvent[]): string {
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.channel === 'agent:turn-start') {
      start = i;
      break;
    }
  }
  if (start < 0) return '';
  let text = '';
  for (const event of events.slice(start + 1)) {
    if (event.channel !== 'agent:message') continue;
    const d = event.data as { delta?: unknown; content?: unknown; isNewTextBlock?: unknown };
    if (typeof d.delta === 'string') text += d.delta;
    else if (d.isNewTextBlock === true) text = text ? `${text}\n\n` : '';
    else if (typeof d.content === 'string') text = d.content;
  }
  return text.trim() === '' ? '' : text;
}
