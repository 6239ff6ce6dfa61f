import { Module } from '@nestjs/common';
import { McpServers } from '#core/mcp/mcp-servers.service.js';
import { ModelsModule } from './models.module.js';

/**
 * The MCP servers of installed `mcp` apps and of the configuration (`mcpServers`): one
 * connection per server per process, shared by every turn kind's plan builder. Reads apps
 * and spaces through the global ports, the configuration through ModelSourcesService, and
 * checks a stdio server's cwd with the FileStore's path guard.
 */
@Module({
  imports: [ModelsModule],
  providers: [McpServers],
  exports: [McpServers],
})
export class McpModule {}
