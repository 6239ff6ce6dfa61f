import { Module } from '@nestjs/common';
import { ChannelConnections } from '#core/channels/channel-connections.js';
import { ChannelsService } from '#core/channels/channels.service.js';
import { AppAgentModule } from './app-agent.module.js';
import { ApprovalsModule } from './approvals.module.js';

/**
 * Message channels (docs/api/channels.md): instances, threads, dispatch and replies, and the
 * connection leases of connection-style transports. Its turns run through ChannelChat, which
 * the digital-human context (AppAgentModule) registers; tool calls held for approval are shown
 * in threads and answered there through ApprovalsService. The records' adapter
 * (ChannelRepository) and the providers (ChannelProviders) are bound in InfraModule.
 */
@Module({
  imports: [AppAgentModule, ApprovalsModule],
  providers: [ChannelsService, ChannelConnections],
  exports: [ChannelsService, ChannelConnections],
})
export class ChannelsModule {}
