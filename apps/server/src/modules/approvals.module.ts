import { Module } from '@nestjs/common';
import { ApprovalsService } from '#core/approvals/approvals.service.js';
import { ModelsModule } from './models.module.js';

/**
 * Tool approvals: the policy (`approvals` in the configuration and in a digital human's
 * overrides), the answers of approve/reject and the audit. The agent engine holds the calls;
 * the digital humans' runs watch them.
 */
@Module({
  imports: [ModelsModule],
  providers: [ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule {}
