import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeConnectionRegistry, FakeReadinessProbe } from '#testing/fake-cluster.js';
import { FakeSettingsRepository } from '#testing/fake-settings.js';
import { FakeClock } from '#testing/fakes.js';
import type { AppConfig } from '../config/app-config.js';
import { SystemService } from './system.service.js';

const setup = () => {
  const counts = new Map<string, number>();
  const here = new FakeConnectionRegistry('a', counts);
  const settings = new FakeSettingsRepository();
  const probe = new FakeReadinessProbe();
  const clock = new FakeClock(Date.UTC(2026, 0, 2, 3, 4, 5));
  const service = new SystemService({ version: '9.8.7' } as AppConfig, here, probe, settings, clock);
  return { service, here, other: new FakeConnectionRegistry('b', counts), settings, probe, clock };
};

describe('SystemService', () => {
  it('answers the package version and a policy that withholds nothing', () => {
    const { service } = setup();
    assert.equal(service.version(), '9.8.7');
    assert.deepEqual(service.securityPolicy(), { tunnelSafe: false, browserAllowlistEditable: true });
  });

  it('counts the clients of every replica in the remote status', async () => {
    const { service, here, other } = setup();
    here.setLocalCount(2);
    other.setLocalCount(3);
    assert.deepEqual(await service.remoteStatus(), {
      active: true,
      clients: 5,
      version: '1.0.0',
      serverVersion: '9.8.7',
    });
    here.setLocalCount(0);
    assert.equal((await service.remoteStatus()).clients, 3);
  });

  it('reports readiness with no heartbeat until a worker records one', async () => {
    const { service, probe, clock } = setup();
    assert.deepEqual(await service.readiness(), {
      ready: true,
      checks: { database: { ok: true } },
      lastHeartbeatAt: null,
    });
    await service.recordHeartbeat();
    clock.advance(60_000);
    probe.fail('queue', 'no consumer');
    assert.deepEqual(await service.readiness(), {
      ready: false,
      checks: { database: { ok: true }, queue: { ok: false, error: 'no consumer' } },
      lastHeartbeatAt: '2026-01-02T03:04:05.000Z',
    });
  });

  it('still reports readiness when the heartbeat cannot be read', async () => {
    const { service, settings } = setup();
    settings.get = async () => {
      throw new Error('database away');
    };
    const report = await service.readiness();
    assert.equal(report.ready, true);
    assert.equal(report.lastHeartbeatAt, null);
  });
});
