export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; error?: string }>;
}

/** Whether this process can serve: database, Redis when used, queue consuming. */
export abstract class ReadinessProbe {
  abstract check(): Promise<ReadinessReport>;
}
