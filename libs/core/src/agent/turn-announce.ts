import { AgentChannels } from '#contracts/agent.js';
import { turnJobId } from '../kernel/job-ids.js';
import type { JobQueue } from '../ports/job-queue.port.js';
import type { TurnRecord } from '../ports/turn.repository.port.js';
import type { ConversationEvents } from './conversation-events.js';

/**
 * Announces a turn just recorded as queued: `agent:turn-start` to its conversation, then its
 * `agent.turn` job (the turn's id makes the job's: adding it again is a no-op).
 */
export async function announceQueuedTurn(
  events: Pick<ConversationEvents, 'emit'>,
  queue: Pick<JobQueue, 'add'>,
  turn: TurnRecord,
): Promise<void> {
  await events.emit(turn.spaceId, turn.conversationId, AgentChannels.turnStart, { type: 'turn-start' });
  await queue.add('agent.turn', { turnId: turn.id, kind: turn.kind }, { jobId: turnJobId(turn.id) });
}
