import type { RunTriggerResult } from '#contracts/apps.js';
import type { App } from '../kernel/app.js';
import type { Message } from '../kernel/conversation.js';

/** What started a run: a trigger's kind and its data (a schedule tick, a webhook body, an answer, …). */
export interface RunTrigger {
  type: string;
  data?: unknown;
}

/**
 * What a firing trigger does to an app's runs. The trigger machinery decides when something
 * fires; the apps context owns what a run is and registers its starter at start
 * (`AppScheduler.useRunStarter`), so triggers never import the apps context.
 */
export interface RunStarter {
  /**
   * Starts a run now, or records why it was skipped; `runId` names the run when the caller chose
   * it; `app`: the app as the caller has just read it (not read again).
   */
  startRun(appId: string, trigger: RunTrigger, options?: { runId?: string; app?: App }): Promise<RunTriggerResult>;
  /**
   * Starts the run of a queued delivery under `runId` when the app is free: `waiting` (nothing
   * recorded) while a run is in progress or the app is not active (paused, waiting for an
   * answer), `skipped` when a reason was recorded instead (a server it requires is off). `app`:
   * the app as the caller has just read it (not read again).
   */
  startQueuedRun(
    appId: string,
    trigger: RunTrigger,
    runId: string,
    app?: App,
  ): Promise<'started' | 'waiting' | 'skipped'>;
  /**
   * Whether a run of the app is in progress (one look-up). Its end drains the app's deliveries
   * again, after the turn stopped being active.
   */
  runInProgress(appId: string): Promise<boolean>;
  /** Records a `run_skipped` entry with the reason (backing off, paused). */
  skipRun(appId: string, reason: string, details?: Record<string, unknown>): Promise<RunTriggerResult>;
  /** The messages of one run in the app's run conversation (none when it never started). */
  runMessages(app: App, runId: string): Promise<readonly Message[]>;
  /** Pauses the app (after repeated failed runs). */
  pause(appId: string): Promise<unknown>;
}
