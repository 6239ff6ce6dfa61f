import { Logger } from '@nestjs/common';
import { AgentChannels, type TokenUsageDto } from '#contracts/agent.js';
import {
  type PendingInput,
  type TurnRecord,
  type TurnRepository,
  type TurnStatus,
} from '../ports/turn.repository.port.js';
import type { Emit } from './engine/step-emitter.js';

export const TurnTexts = {
  stopped: 'Stopped by user.',
  shutdown: 'The server is shutting down; the reply was interrupted.',
  replicaLost: 'The server running this reply stopped; the reply was interrupted.',
  questionCancelled: 'Question cancelled: the user stopped generation before answering.',
  stepLimit: 'Reached the maximum turn limit. Send a message to continue.',
  noModel:
    'No model is configured. Add a model source with POST /api/ai-sources/sources ' +
    '(provider, apiUrl, apiKey, model), or start the server with SVC_AI_API_KEY, SVC_AI_API_URL, ' +
    'SVC_AI_PROVIDER (anthropic or openai) and SVC_AI_MODEL.',
  workDirMissing: 'The workspace folder does not exist.',
} as const;

const logger = new Logger('AgentTurns');

export function toWireMessages(inputs: PendingInput[]): Array<{ id: string; role: 'user'; content: string }> {
  return inputs.map((i) => ({ id: i.messageId, role: 'user' as const, content: i.content }));
}

/** How a turn that did not complete ended, as its `agent:error` tells it. */
export interface TurnEnd {
  status: Extract<TurnStatus, 'failed' | 'interrupted'>;
  error: string;
  /** `errorCode` or `errorType` of the `agent:error` payload. */
  errorFields?: Record<string, unknown>;
  durationMs: number;
  tokenUsage?: TokenUsageDto;
}

/**
 * Ends an active turn that did not complete and announces it: input still waiting for the
 * model is voided (`agent:input-stopped`), then `agent:error` and `agent:complete`. The
 * runner, a stop before any worker picked the turn up, and the reaper all end turns this
 * way. False (and nothing announced) when someone else ended the turn first.
 */
export async function endUnfinishedTurn(
  turns: Pick<TurnRepository, 'takePendingInputs' | 'finish' | 'endAnnounced'>,
  turnId: string,
  emit: Emit,
  end: TurnEnd,
): Promise<boolean> {
  const leftover = await turns.takePendingInputs(turnId).catch(() => [] as PendingInput[]);
  if (!(await turns.finish(turnId, end.status, end.error))) return false;
  if (leftover.length > 0) await emit(AgentChannels.inputStopped, { messages: toWireMessages(leftover) });
  await emit(AgentChannels.error, { error: end.error, ...end.errorFields });
  await emit(AgentChannels.complete, {
    duration: end.durationMs,
    ...(end.tokenUsage ? { tokenUsage: end.tokenUsage } : {}),
  });
  await endAnnounced(turns, turnId);
  return true;
}

/**
 * Clears the turn's unannounced-end mark once its end events are published. Not retried and
 * never thrown: a mark left behind only makes the reaper publish the end once more.
 */
export async function endAnnounced(turns: Pick<TurnRepository, 'endAnnounced'>, turnId: string): Promise<void> {
  await turns
    .endAnnounced(turnId)
    .catch((err: Error) =>
      logger.warn(
        `turn ${turnId}: clearing its unannounced-end mark failed (${err.message}); the reaper announces it again`,
      ),
    );
}

/** The `agent:error` an ended turn's record still tells (the error's code or type is not kept, but an interruption's). */
export function errorEventOf(turn: Pick<TurnRecord, 'status' | 'error'>): { error: string; [field: string]: unknown } {
  return { error: turn.error ?? '', ...(turn.status === 'interrupted' ? { errorType: 'interrupted' } : {}) };
}
