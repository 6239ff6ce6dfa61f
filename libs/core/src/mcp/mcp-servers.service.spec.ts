import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { AppChannels } from '#contracts/apps.js';
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
  let bus: RecordingEventBus;
  let service: McpServers;

  const make = (allowMcpCommands: boolean) => {
    const clock = new FakeClock();
    bus = new RecordingEventBus();
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

  it('keeps the connection a newer start opened while a lifecycle recheck was reading the app', async () => {
    connector.server('http:https://one.example.com/mcp', [tool('search')]);
    connector.server('http:https://two.example.com/mcp', [tool('search')]);
    const server = {
      id: 'srv',
      spaceId: null,
      status: 'active',
      userConfig: {},
      installedAt: new Date(0),
      spec: { type: 'mcp', name: 'Search', description: 'search', mcp_server: { url: 'https://one.example.com/mcp' } },
    } as unknown as App;
    apps.apps.set(server.id, server);
    service.onModuleInit();
    assert.equal((await service.chatTools('s1')).length, 1);

    // The recheck reads the entry, then waits on the repository while the app changes its
    // address and a chat opens the new connection under the same key.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const findById = apps.findById.bind(apps);
    apps.findById = async (id) => {
      await gate;
      return findById(id);
    };
    server.spec.mcp_server = { url: 'https://two.example.com/mcp' };
    await bus.publish(AppChannels.listChanged, { appId: server.id, change: 'installed' });
    assert.equal((await service.chatTools('s1')).length, 1);
    assert.equal(connector.openCount('http:https://two.example.com/mcp'), 1);
    release();
    await new Promise((resolve) => setImmediate(resolve));

    assert.equal(connector.openCount('http:https://one.example.com/mcp'), 0, 'the old connection was closed');
    assert.equal(connector.openCount('http:https://two.example.com/mcp'), 1, 'the new connection stays open');
    assert.deepEqual(
      service.statuses().map((s) => [s.appId, s.status]),
      [['srv', 'connected']],
    );
  });

  it('opens one connection when two turns find a changed server at once', async () => {
    connector.server('http:https://one.example.com/mcp', [tool('search')]);
    connector.server('http:https://two.example.com/mcp', [tool('search')]);
    const server = {
      id: 'srv',
      spaceId: null,
      status: 'active',
      userConfig: {},
      installedAt: new Date(0),
      spec: { type: 'mcp', name: 'Search', description: 'search', mcp_server: { url: 'https://one.example.com/mcp' } },
    } as unknown as App;
    apps.apps.set(server.id, server);
    // Closing takes a while (a process to stop), so the second turn looks while the first closes.
    const connect = connector.connect.bind(connector);
    connector.connect = async (launch, onLost) => {
      const connection = await connect(launch, onLost);
      const close = async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        await connection.close();
      };
      return { ...connection, close };
    };
    await service.chatTools('s1');
    server.spec.mcp_server = { url: 'https://two.example.com/mcp' };
    await Promise.all([service.chatTools('s1'), service.chatTools('s1')]);
    assert.equal(connector.openCount('http:https://one.example.com/mcp'), 0);
    assert.equal(connector.openCount('http:https://two.example.com/mcp'), 1, 'no connection left open outside the map');
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
