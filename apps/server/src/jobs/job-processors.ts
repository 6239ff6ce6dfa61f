import { Injectable } from '@nestjs/common';
import { JobQueue } from '#core/ports/job-queue.port.js';
import { SystemService } from '#core/system/system.service.js';

export const HEARTBEAT_EVERY_MS = 30_000;

/**
 * Thin processors: each job name maps to one core service call. Registered only in
 * processes that consume jobs (SVC_ROLE all or worker).
 */
@Injectable()
export class JobProcessors {
  constructor(
    private readonly queue: JobQueue,
    private readonly system: SystemService,
  ) {}

  async startConsuming(): Promise<void> {
    this.queue.process('system.heartbeat', () => this.system.recordHeartbeat());
    await this.queue.startConsuming();
    await this.queue.repeat('system.heartbeat', 'system.heartbeat', {}, { everyMs: HEARTBEAT_EVERY_MS });
  }
}
