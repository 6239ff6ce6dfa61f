import { Module } from '@nestjs/common';
import { JobProcessors } from '../jobs/job-processors.js';
import { CoreModule } from './core.module.js';

/**
 * The `worker` role's entry points on top of the core: the job processors, which run turns,
 * fire schedules and webhooks, consolidate memory and reconcile the schedules' delayed jobs.
 * No controller: its probes and metrics are plain handlers (see main.ts).
 */
@Module({
  imports: [CoreModule],
  providers: [JobProcessors],
  exports: [JobProcessors],
})
export class WorkerModule {}
