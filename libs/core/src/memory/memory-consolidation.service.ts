import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { JobMap } from '#contracts/jobs.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { type ResolvedModel, ModelSourcesService } from '../models/model-sources.service.js';
import { Clock } from '../ports/clock.port.js';
import { FileStore } from '../ports/file-store.port.js';
import { JobQueue } from '../ports/job-queue.port.js';
import { ConsolidationLock, MemoryFiles } from '../ports/memory-files.port.js';
import { ModelCallError, ModelProvider, type StopReason } from '../ports/model-provider.port.js';
import { consolidationJobId } from '../kernel/job-ids.js';
import type { Space } from '../kernel/space.js';
import { SpacesService } from '../spaces/spaces.service.js';
import { autoConsolidationDecision } from './cadence-rules.js';
import {
  CONSOLIDATION_SYSTEM_PROMPT,
  consolidationRequest,
  type MemoryContent,
  parseConsolidationReply,
  planConsolidation,
  reconcileConcurrentChanges,
  totalBytes,
} from './consolidation-format.js';
import { type MemoryStateRecord, MemoryStore, MemoryTooLarge } from './memory-store.js';

export const CONSOLIDATE_JOB = 'memory.consolidate';
export type ConsolidationTrigger = JobMap['memory.consolidate']['trigger'];

/** Answer of `POST /api/spaces/:spaceId/memory/consolidate`. */
export interface ConsolidationStart {
  started: boolean;
  reason?: 'already-running' | 'empty';
}

/** Why an attempt failed, as `.state.json` records it (`lastAttempt.reason`). */
export type ConsolidationFailureReason =
  | 'no-model'
  | 'empty'
  | 'too-large'
  | 'model-error'
  | 'truncated'
  | 'invalid-response'
  | 'invalid-path'
  | 'too-many-topics'
  | 'shrunk'
  | 'changed'
  | 'lock-lost'
  | 'timeout'
  | 'write-failed'
  | 'access-denied'
  | 'error';

export type ConsolidationOutcome =
  { outcome: 'committed'; snapshot: string } | { outcome: 'failed'; reason: ConsolidationFailureReason };

/** Injection token of the lease timings (optional; tests shorten them). */
export const CONSOLIDATION_TIMINGS = Symbol('CONSOLIDATION_TIMINGS');

/** Lease timings. */
export interface ConsolidationTimings {
  /** Lease taken by the request before the job is enqueued (covers a crash between the two). */
  enqueueLeaseMs: number;
  /** Lease while the job waits in the queue. */
  queuedLeaseMs: number;
  /** Lease while the job runs, renewed every third of it. */
  runLeaseMs: number;
  /** The whole model exchange must end within this. */
  runTimeoutMs: number;
}

export const DEFAULT_CONSOLIDATION_TIMINGS: ConsolidationTimings = {
  enqueueLeaseMs: 30_000,
  queuedLeaseMs: 15 * 60_000,
  runLeaseMs: 60_000,
  runTimeoutMs: 10 * 60_000,
};

/** Retries of a model call that failed before streaming anything (429, 5xx, network). */
const MODEL_RETRIES = 2;
/** Output budget of the reply (the adapters clamp it to what the model allows). */
const MAX_REPLY_TOKENS = 64_000;

class Failed extends Error {
  constructor(
    readonly reason: ConsolidationFailureReason,
    detail: string,
  ) {
    super(detail);
  }
}

/**
 * Memory consolidation: a model reorganizes a space's memory into a short `# now` memory.md
 * plus topic pages. A request (or a turn's end, by cadence) takes the space's lease and
 * enqueues a `memory.consolidate` job; the job keeps the lease while it runs, so every
 * replica reports `consolidating` and refuses a second start. The reply is validated before
 * anything changes; a snapshot of what is replaced is kept; every attempt is recorded in
 * `.state.json`. Memory is left as it was whenever an attempt fails.
 */
@Injectable()
export class MemoryConsolidationService {
  private readonly logger = new Logger('MemoryConsolidation');
  private readonly timings: ConsolidationTimings;

  constructor(
    private readonly spaces: SpacesService,
    private readonly files: FileStore,
    private readonly memoryFiles: MemoryFiles,
    private readonly lock: ConsolidationLock,
    private readonly queue: JobQueue,
    private readonly models: ModelSourcesService,
    private readonly provider: ModelProvider,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(CONSOLIDATION_TIMINGS) timings?: Partial<ConsolidationTimings>,
  ) {
    this.timings = { ...DEFAULT_CONSOLIDATION_TIMINGS, ...(timings ?? {}) };
  }

  private store(space: Space): MemoryStore {
    return new MemoryStore(this.files, this.memoryFiles, space.path);
  }

  /**
   * Starts a consolidation in the background; answers once the job is enqueued. Unknown
   * space: DomainError not_found. The job id is derived from the lease token, so a run is
   * enqueued once whatever retries the request.
   */
  async start(spaceId: string, trigger: ConsolidationTrigger): Promise<ConsolidationStart> {
    const space = await this.spaces.get(spaceId);
    if (await this.lock.isConsolidating(space.id)) return { started: false, reason: 'already-running' };
    if (await this.store(space).isEmpty()) return { started: false, reason: 'empty' };
    const jobId = consolidationJobId(space.id);
    if (!(await this.lock.acquire(space.id, jobId, this.timings.enqueueLeaseMs))) {
      return { started: false, reason: 'already-running' };
    }
    try {
      await this.queue.add(CONSOLIDATE_JOB, { spaceId: space.id, trigger }, { jobId });
      await this.lock.renew(space.id, jobId, this.timings.queuedLeaseMs);
    } catch (err) {
      await this.lock.release(space.id, jobId);
      throw err;
    }
    this.logger.log(`memory consolidation of space ${space.id} queued (${trigger}, job ${jobId})`);
    return { started: true };
  }

  /**
   * Called at the end of each assistant turn: enqueues an automatic consolidation when the
   * space's preferences allow it and its cadence says it is due. Never throws.
   */
  async afterTurn(spaceId: string): Promise<ConsolidationStart | null> {
    try {
      const space = await this.spaces.get(spaceId);
      const preferences = this.spaces.preferencesOf(space).memory;
      if (!preferences.enabled || !preferences.autoConsolidate) return null;
      const store = this.store(space);
      // The state file is read only for memory grown past the cadence's threshold: below it
      // (after most turns) the check is the sizes alone, fewer file operations in the moments
      // after a turn, when the next message's request is served.
      const sizes = await store.sizes();
      const bySize = { preferences, ...sizes, lastConsolidatedAt: null, lastAttempt: null, now: this.clock.now() };
      if (!autoConsolidationDecision(bySize).consolidate) return null;
      const state = await store.readState();
      const decision = autoConsolidationDecision({
        ...bySize,
        lastConsolidatedAt: typeof state.lastConsolidatedAt === 'string' ? state.lastConsolidatedAt : null,
        lastAttempt: state.lastAttempt ?? null,
      });
      if (!decision.consolidate) return null;
      return await this.start(space.id, 'auto');
    } catch (err) {
      this.logger.warn(`automatic memory consolidation check for space ${spaceId} failed: ${(err as Error).message}`);
      return null;
    }
  }

  /**
   * The `memory.consolidate` job. Claims the lease its request took (or a free one), keeps
   * renewing it, consolidates, records the attempt and releases the lease. Never throws:
   * every failure ends as a recorded attempt (or a log line when even that fails).
   */
  async run(data: JobMap['memory.consolidate'], jobId: string): Promise<ConsolidationOutcome | null> {
    const { spaceId, trigger } = data;
    let space: Space;
    try {
      space = await this.spaces.get(spaceId);
    } catch (err) {
      // Nothing can run without the space: free it for a later request either way.
      await this.lock.release(spaceId, jobId);
      if (err instanceof DomainError && err.kind === 'not_found') {
        this.logger.log(`memory consolidation skipped: space ${spaceId} no longer exists`);
        return null;
      }
      throw err;
    }
    if (!(await this.lock.claim(spaceId, jobId, this.timings.runLeaseMs))) {
      this.logger.log(`memory consolidation of space ${spaceId} skipped: another run holds the space (job ${jobId})`);
      return null;
    }
    const controller = new AbortController();
    let lost = false;
    const renewal = setInterval(
      () => {
        this.lock.renew(spaceId, jobId, this.timings.runLeaseMs).then(
          (held) => {
            if (!held && !lost) {
              lost = true;
              controller.abort(new Failed('lock-lost', 'the consolidation lease was lost'));
            }
          },
          (err: unknown) =>
            this.logger.warn(`renewing the consolidation lease of ${spaceId} failed: ${(err as Error).message}`),
        );
      },
      Math.max(1_000, Math.floor(this.timings.runLeaseMs / 3)),
    );
    renewal.unref?.();
    const timeout = setTimeout(
      () =>
        controller.abort(new Failed('timeout', `the consolidation took longer than ${this.timings.runTimeoutMs} ms`)),
      this.timings.runTimeoutMs,
    );
    timeout.unref?.();
    const store = this.store(space);
    const started = this.clock.now();
    try {
      let outcome: ConsolidationOutcome;
      try {
        outcome = { outcome: 'committed', snapshot: await this.consolidate(store, controller.signal) };
      } catch (err) {
        const failure = asFailure(err, controller.signal);
        outcome = { outcome: 'failed', reason: failure.reason };
        if (failure.reason === 'error') {
          this.logger.error(`memory consolidation of space ${spaceId} failed: ${(err as Error)?.stack ?? String(err)}`);
        } else {
          this.logger.warn(`memory consolidation of space ${spaceId} failed (${failure.reason}): ${failure.message}`);
        }
      }
      await this.record(store, outcome);
      if (outcome.outcome === 'committed') {
        this.logger.log(
          `memory of space ${spaceId} consolidated (${trigger}, ${this.clock.now() - started} ms, snapshot ${outcome.snapshot})`,
        );
      }
      return outcome;
    } catch (err) {
      this.logger.error(`recording the memory consolidation of space ${spaceId} failed: ${(err as Error).message}`);
      return null;
    } finally {
      clearInterval(renewal);
      clearTimeout(timeout);
      await this.lock.release(spaceId, jobId);
    }
  }

  /** One attempt; returns the snapshot's name, or throws Failed (or anything unexpected). */
  private async consolidate(store: MemoryStore, signal: AbortSignal): Promise<string> {
    let sent: MemoryContent;
    try {
      sent = await store.read();
    } catch (err) {
      if (err instanceof MemoryTooLarge) throw new Failed('too-large', err.message);
      throw err;
    }
    if ((sent.memory === null || sent.memory.trim() === '') && sent.topics.size === 0)
      throw new Failed('empty', 'the memory is empty');
    const model = await this.models.current();
    if (!model) throw new Failed('no-model', 'no model source is configured');
    const info = this.provider.info(model.endpoint.provider, model.model);
    const prompt = consolidationRequest(sent, new Date(this.clock.now()));
    // About 3 characters a token keeps room for scripts denser than English.
    if ((prompt.length + CONSOLIDATION_SYSTEM_PROMPT.length) / 3 > info.contextWindow * 0.6) {
      throw new Failed('too-large', `${totalBytes(sent)} bytes of memory do not fit the model's context window`);
    }
    const reply = await this.ask(model, prompt, Math.min(MAX_REPLY_TOKENS, info.maxOutputTokens), signal);
    if (reply.stopReason === 'max_tokens') throw new Failed('truncated', 'the reply was cut off at the output limit');
    const parsed = parseConsolidationReply(reply.text);
    if (!parsed.ok) throw new Failed(parsed.reason, parsed.detail);
    const planned = planConsolidation(sent, parsed.value);
    if (!planned.ok) throw new Failed(planned.reason, planned.detail);
    signal.throwIfAborted();

    // Commit: what is on disk now is what gets replaced (and snapshotted).
    const current = await store.read();
    const reconciled = reconcileConcurrentChanges(sent, current, planned.value);
    if (!reconciled.ok) throw new Failed(reconciled.reason, reconciled.detail);
    const snapshot = await store.snapshot(current, new Date(this.clock.now()));
    signal.throwIfAborted();
    try {
      await store.apply(reconciled.value);
    } catch (err) {
      await store
        .restore(current)
        .catch((restoreErr: unknown) =>
          this.logger.error(
            `restoring memory after a failed write failed: ${(restoreErr as Error).message} (snapshot ${snapshot} has it)`,
          ),
        );
      throw new Failed('write-failed', (err as Error).message);
    }
    return snapshot;
  }

  /** One model reply as text, retrying failures that happened before anything streamed. */
  private async ask(
    model: ResolvedModel,
    prompt: string,
    maxOutputTokens: number,
    signal: AbortSignal,
  ): Promise<{ text: string; stopReason: StopReason }> {
    const retries = Math.min(MODEL_RETRIES, this.config.agent.maxRetries);
    for (let attempt = 0; ; attempt++) {
      const blocks: string[] = [];
      let streamed = false;
      let stopReason: StopReason = 'other';
      try {
        for await (const event of this.provider.stream(model.endpoint, {
          model: model.model,
          system: CONSOLIDATION_SYSTEM_PROMPT,
          messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
          tools: [],
          maxOutputTokens,
          reasoningEffort: 'off',
          signal,
        })) {
          if (event.type === 'text_delta') streamed = true;
          else if (event.type === 'text_end') blocks.push(event.text);
          else if (event.type === 'end') stopReason = event.stopReason;
        }
        return { text: blocks.join('\n'), stopReason };
      } catch (err) {
        if (signal.aborted) throw err;
        if (err instanceof ModelCallError && err.retryable && !streamed && attempt < retries) {
          await abortableSleep(
            err.retryAfterMs ?? Math.min(30_000, this.config.agent.retryBaseMs * 2 ** attempt),
            signal,
          );
          continue;
        }
        if (err instanceof ModelCallError) throw new Failed('model-error', `${err.kind}: ${err.message}`);
        throw err;
      }
    }
  }

  private async record(store: MemoryStore, outcome: ConsolidationOutcome): Promise<void> {
    const at = new Date(this.clock.now()).toISOString();
    const state: MemoryStateRecord = { ...(await store.readState()) };
    if (outcome.outcome === 'committed') {
      state.lastConsolidatedAt = at;
      state.lastAttempt = { at, outcome: 'committed' };
    } else {
      state.lastAttempt = { at, outcome: 'failed', reason: outcome.reason };
    }
    await store.writeState(state);
  }
}

function asFailure(err: unknown, signal: AbortSignal): Failed {
  if (signal.aborted && signal.reason instanceof Failed) return signal.reason;
  if (err instanceof Failed) return err;
  if (err instanceof DomainError && err.kind === 'forbidden') return new Failed('access-denied', err.message);
  return new Failed('error', (err as Error)?.message ?? String(err));
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
