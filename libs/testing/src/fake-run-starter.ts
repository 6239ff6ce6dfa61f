import type { RunTriggerResult } from '#contracts/apps.js';
import type { App } from '#core/kernel/app.js';
import type { Message } from '#core/kernel/conversation.js';
import type { RunStarter, RunTrigger } from '#core/ports/run-starter.port.js';

/**
 * Starts no agent: records each start and skip in order, answers `started` with a fresh run id
 * (or the one chosen) in the app's run conversation, and refuses to start a paused app (its
 * start is recorded as a skip). `messages` holds what a run's conversation shows, by run id.
 */
export class RecordingRunStarter implements RunStarter {
  readonly started: Array<{ appId: string; trigger: RunTrigger; runId: string }> = [];
  readonly skipped: Array<{ appId: string; reason: string; details?: Record<string, unknown> }> = [];
  readonly paused = new Set<string>();
  readonly messages = new Map<string, Message[]>();
  private nextRun = 0;

  async startRun(appId: string, trigger: RunTrigger, options: { runId?: string } = {}): Promise<RunTriggerResult> {
    if (this.paused.has(appId)) return this.skipRun(appId, 'paused');
    const runId = options.runId ?? `run-${++this.nextRun}`;
    this.started.push({ appId, trigger: structuredClone(trigger), runId });
    return { outcome: 'started', runId, conversationId: `app-run:${appId}` };
  }

  /** Busy apps (`busy`) answer `waiting`; others start as `startRun` does. */
  readonly busy = new Set<string>();

  async startQueuedRun(appId: string, trigger: RunTrigger, runId: string): Promise<'started' | 'waiting' | 'skipped'> {
    if (this.busy.has(appId) || this.paused.has(appId)) return 'waiting';
    return (await this.startRun(appId, trigger, { runId })).outcome;
  }

  async runInProgress(appId: string): Promise<boolean> {
    return this.busy.has(appId);
  }

  async skipRun(appId: string, reason: string, details?: Record<string, unknown>): Promise<RunTriggerResult> {
    this.skipped.push({ appId, reason, ...(details ? { details } : {}) });
    return { outcome: 'skipped', runId: null, reason };
  }

  async runMessages(_app: App, runId: string): Promise<readonly Message[]> {
    return this.messages.get(runId) ?? [];
  }

  async pause(appId: string): Promise<unknown> {
    this.paused.add(appId);
    return { appId, status: 'paused' };
  }
}
