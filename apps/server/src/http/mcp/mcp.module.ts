import { Module } from '@nestjs/common';
import { McpServers } from '#core/mcp/mcp-servers.service.js';

/**
 * The MCP servers of installed `mcp` apps: one connection per server per process, shared by
 * every turn kind's plan builder. Reads apps and spaces through the global ports.
 */
@Module({
  providers: [McpServers],
  exports: [McpServers],
})
export class McpModule {}
