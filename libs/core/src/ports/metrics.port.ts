/**
 * What the server counts, in the words of the domain. Adapters turn these into a metrics
 * system (Prometheus in production, a no-op or a recorder in tests). Methods are called on
 * hot paths: implementations must not allocate per call beyond the arguments.
 */

/** Which sign-in lock refused: the caller's address, or sign-in for everyone. */
export type LockoutScope = 'ip' | 'global';

export type TurnOutcome = 'completed' | 'failed' | 'interrupted';

/**
 * What became of a webhook delivery: `received` (signature and body accepted), `duplicate` (a
 * repeat, answered alike, no run), `queued` (waiting for the app's run in progress), `refused`
 * (over the app's queue bound: 429).
 */
export type WebhookDeliveryResult = 'received' | 'duplicate' | 'queued' | 'refused';

/** A schedule's occurrence: `fired` (a run was asked for) or `skipped` (running, paused, too soon). */
export type ScheduleTickOutcome = 'fired' | 'skipped';

export interface ModelCallReport {
  provider: string;
  /** Wall time of the call, headers to last event (or to the failure), in seconds. */
  seconds: number;
  /** Set when the call failed: the classified kind and the HTTP status when there was one. */
  errorKind?: string;
  status?: number | null;
}

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

export abstract class Metrics {
  /** One HTTP request answered; `route` is the matched template (`/api/spaces/:spaceId`). */
  abstract httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** Signed-in WebSocket connections of this process, whenever that number changes. */
  abstract wsClients(count: number): void;
  /** Frames sent to WebSocket clients. */
  abstract wsFramesSent(count: number): void;
  /** One event published on the event bus (serialize + hand-off), in seconds. */
  abstract eventPublished(seconds: number): void;
  /** One model call ended (success or failure). */
  abstract modelCall(report: ModelCallReport): void;
  /** Tokens a model call reported. */
  abstract modelTokens(provider: string, usage: TokenCounts): void;
  /** A failed model call was attempted again (by the turn loop), at this provider. */
  abstract modelRetry(provider: string, errorKind: string): void;
  /** A turn ended; its cost in USD when the model's price is known. */
  abstract turnEnded(outcome: TurnOutcome, seconds: number, costUsd: number): void;
  /** A sign-in attempt was refused; `locked` when the lockout refused it. */
  abstract signInFailed(reason: 'invalid' | 'locked'): void;
  /** A lockout was met for the first time by an address: its own (`ip`) or everyone's (`global`). */
  abstract lockout(scope: LockoutScope): void;
  /** From the first file change of a batch to its event going out, in seconds. */
  abstract fileWatchLag(seconds: number): void;
  /** A resuming client was told `stream:gap` (the log no longer reached back). */
  abstract replayGap(): void;
  /** A job failed, or stalled (its worker stopped renewing it). */
  abstract jobFailed(name: string): void;
  abstract jobStalled(): void;
  /** A tool call held for approval was decided: approved, rejected, timeout or stopped. */
  abstract toolApproval(outcome: string): void;
  /** A turn ended, by its kind (chat, app-chat, app-run, team-member) and outcome. */
  abstract turnFinished(kind: string, outcome: TurnOutcome): void;
  /** A digital human's run started; `trigger`: its trigger type (schedule, webhook, file, manual, …). */
  abstract runStarted(trigger: string): void;
  /** A run ended, with the trigger type that started it. */
  abstract runFinished(trigger: string, outcome: TurnOutcome): void;
  /** A webhook delivery, by what became of it. */
  abstract webhookDelivery(result: WebhookDeliveryResult): void;
  /** A schedule occurrence came due. */
  abstract scheduleTick(outcome: ScheduleTickOutcome): void;
  /** This process's MCP server connections, counted by status (connecting, connected, failed, stopped). */
  abstract mcpServers(countsByStatus: Readonly<Record<string, number>>): void;
}

/** Counts nothing: for processes and tests that do not care. */
export class NoopMetrics extends Metrics {
  httpRequest(): void {}
  wsClients(): void {}
  wsFramesSent(): void {}
  eventPublished(): void {}
  modelCall(): void {}
  modelTokens(): void {}
  modelRetry(): void {}
  turnEnded(): void {}
  signInFailed(): void {}
  lockout(): void {}
  fileWatchLag(): void {}
  replayGap(): void {}
  jobFailed(): void {}
  jobStalled(): void {}
  toolApproval(): void {}
  turnFinished(): void {}
  runStarted(): void {}
  runFinished(): void {}
  webhookDelivery(): void {}
  scheduleTick(): void {}
  mcpServers(): void {}
}
