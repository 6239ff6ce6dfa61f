import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { ErrorCodes } from '#contracts/errors.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeAppRepository } from '#testing/fake-apps.js';
import { FakeFileStore } from '#testing/fake-files.js';
import { FakeSettingsRepository } from '#testing/fake-settings.js';
import { FakeSpaceRepository } from '#testing/fake-spaces.js';
import { FakeCatalogFetcher, FakeMcpConnector } from '#testing/fake-tools.js';
import { FakeClock } from '#testing/fakes.js';
import type { AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import type { App } from '../kernel/app.js';
import { ModelSourcesService } from '../models/model-sources.service.js';
import { McpTexts } from './mcp-rules.js';
import { McpServers } from './mcp-servers.service.js';

Logger.overrideLogger(false);

const refusal = (kind: DomainError['kind'], message: string, code?: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  assert.equal(err.message, message);
  if (code !== undefined) assert.equal(err.code, code);
  return true;
};

const tool = (name: string, run?: (args: Record<string, unknown>) => string) => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object' },
  run,
});

describe('McpServers', () => {
  let connector: FakeMcpConnector;
  let fetcher: FakeCatalogFetcher;
  let apps: FakeAppRepository;
  let service: McpServers;

  const make = (allowMcpCommands: boolean) => {
    const clock = new FakeClock();
    const bus = new RecordingEventBus();
    const config = { allowMcpCommands, mcpAllow: [], dataDir: '/data', modelSeed: null } as unknown as AppConfig;
    const models = new ModelSourcesService(new FakeSettingsRepository(), bus, clock, config);
    const spaces = new FakeSpaceRepository();
    return new McpServers(apps, spaces, connector, bus, clock, config, models, new FakeFileStore(), fetcher);
  };

  beforeEach(() => {
    connector = new FakeMcpConnector();
    fetcher = new FakeCatalogFetcher();
    apps = new FakeAppRepository();
    service = make(false);
  });

  afterEach(async () => {
    await service.onApplicationShutdown();
  });

  describe('test', () => {
    it('connects once to a given server, lists its tools and closes again', async () => {
      connector.server('http:https://mcp.example.com/mcp', [tool('search'), tool('fetch')]);
      const statuses = await service.test({ servers: { web: { url: 'https://mcp.example.com/mcp' } } });
      assert.deepEqual(statuses, [
        {
          name: 'web',
          status: 'connected',
          tools: [
            { name: 'search', description: 'search tool' },
            { name: 'fetch', description: 'fetch tool' },
          ],
          error: null,
        },
      ]);
      assert.equal(connector.openCount('http:https://mcp.example.com/mcp'), 0, 'the test connection was closed');
      assert.deepEqual(service.statuses(), [], 'a test keeps no server');
    });

    it('answers a failed status for a server that cannot be reached or lies on an internal address', async () => {
      fetcher.blockedHosts.set('intranet.local', '10.0.0.5');
      const statuses = await service.test({
        servers: { gone: { url: 'https://gone.example.com/mcp' }, inside: { url: 'https://intranet.local/mcp' } },
      });
      assert.deepEqual(statuses[0], {
        name: 'gone',
        status: 'failed',
        tools: [],
        error: 'could not connect to http:https://gone.example.com/mcp',
      });
      assert.equal(statuses[1]!.status, 'failed');
      assert.match(statuses[1]!.error!, /10\.0\.0\.5/);
      assert.deepEqual(
        connector.launches.map((l) => (l.transport === 'http' ? l.url : l.command)),
        ['https://gone.example.com/mcp'],
        'the internal address was never connected to',
      );
    });

    it('refuses a command server unless the operator allows commands', async () => {
      await assert.rejects(
        service.test({ servers: { local: { command: 'node', args: ['server.js'] } } }),
        refusal('forbidden', McpTexts.commandBlocked, ErrorCodes.MCP_COMMAND_BLOCKED),
      );
      assert.equal(connector.launches.length, 0);
      service = make(true);
      connector.server('stdio:node', [tool('echo')]);
      const [status] = await service.test({ servers: { local: { command: 'node', args: ['server.js'] } } });
      assert.equal(status!.status, 'connected');
      const launch = connector.launches[0]!;
      assert.equal(launch.transport, 'stdio');
      assert.deepEqual(launch.transport === 'stdio' ? [launch.args, launch.cwd] : null, [['server.js'], '/data']);
    });

    it('refuses malformed requests', async () => {
      await assert.rejects(service.test({ spaceId: 3 }), refusal('invalid', 'spaceId must be a string'));
      await assert.rejects(
        service.test({ servers: ['x'] }),
        refusal('invalid', 'servers must be an object of server definitions by name'),
      );
      await assert.rejects(service.test({ servers: { bad: 'nope' } }), (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.kind, 'invalid');
        assert.match(err.message, /servers\.bad/);
        return true;
      });
    });

    it('answers nothing when no server is installed or configured', async () => {
      assert.deepEqual(await service.test({}), []);
    });
  });

  it('blocks a run whose required server is not installed', async () => {
    const app = {
      id: 'dh',
      spaceId: null,
      status: 'active',
      spec: { type: 'automation', name: 'Needs', requires: { mcps: [{ id: 'github' }] } },
    } as unknown as App;
    assert.deepEqual(await service.runTools(app), { tools: null, blocked: McpTexts.notInstalled('github') });
    assert.equal(await service.runBlocker(app), McpTexts.notInstalled('github'));
  });
});
