import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { Logger } from '@nestjs/common';
import { ErrorCodes } from '#contracts/errors.js';
import { TeamChannels, type TeamDto, type TeamMemberDto } from '#contracts/teams.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import { FakeTeamRepository } from '#testing/fake-teams.js';
import { FakeClock } from '#testing/fakes.js';
import type { AppsService } from '../apps/apps.service.js';
import { DomainError } from '../errors/domain-error.js';
import { TeamTexts } from './team-rules.js';
import { TeamsService } from './teams.service.js';

Logger.overrideLogger(false);

const refusal = (kind: DomainError['kind'], message: string, code?: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  assert.equal(err.message, message);
  if (code !== undefined) assert.equal(err.reason, code);
  return true;
};

const member = (teamId: string, appId: string, over: Partial<TeamMemberDto> = {}): TeamMemberDto => ({
  teamId,
  appId,
  memberName: appId,
  role: 'member',
  duty: null,
  isLead: false,
  aiProvisioned: false,
  addedAt: '2025-01-01T00:00:00.000Z',
  ...over,
});

/**
 * The record rules of TeamsService that need no run: what `create` refuses before anything is
 * looked up, `get`, `update` and `dissolve`. Runs, members' chats and AI provisioning are
 * covered by the teams e2e files; the collaborators only they use are not reached here.
 */
describe('TeamsService records', () => {
  let teams: FakeTeamRepository;
  let bus: RecordingEventBus;
  let deletedApps: string[];
  let service: TeamsService;
  let team: TeamDto;

  beforeEach(async () => {
    teams = new FakeTeamRepository();
    bus = new RecordingEventBus();
    deletedApps = [];
    // Dissolving deletes the AI-provisioned members through AppsService: only that is reached.
    const apps = {
      deletePermanently: async (appId: string) => void deletedApps.push(appId),
    } as unknown as AppsService;
    const unused = {} as never;
    service = new TeamsService(
      teams,
      unused,
      apps,
      unused,
      unused,
      unused,
      bus,
      new FakeClock(),
      unused,
      unused,
      unused,
      unused,
    );
    const id = randomUUID();
    team = {
      id,
      name: 'Launch',
      owningSpaceId: 'space-1',
      goal: 'Ship it',
      leadAppId: 'lead-app',
      memberSourcing: 'manual',
      collabMode: 'free',
      escalationRouting: 'user',
      status: 'idle',
      currentEpochId: null,
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
    };
    await teams.create(team, [
      member(id, 'lead-app', { isLead: true, role: 'lead', memberName: 'Lead', aiProvisioned: true }),
      member(id, 'writer-app', { memberName: 'Writer' }),
    ]);
  });

  describe('create refuses before looking anything up', () => {
    const base = { name: 'T', goal: 'G', owningSpaceId: 'space-1' };
    const cases: Array<[string, unknown, string]> = [
      ['no input', null, 'Missing required field: input'],
      ['no name', { ...base, name: ' ' }, 'Missing required field: name'],
      ['no goal', { ...base, goal: undefined }, 'Missing required field: goal'],
      ['no space', { ...base, owningSpaceId: 3 }, 'Missing required field: owningSpaceId'],
      ['a bad sourcing', { ...base, memberSourcing: 'hired' }, 'memberSourcing must be one of manual, ai'],
      ['a bad mode', { ...base, collabMode: 'chaos' }, 'collabMode must be one of structured, free'],
      ['a bad routing', { ...base, escalationRouting: 'boss' }, 'escalationRouting must be one of user, lead'],
      ['members not a list', { ...base, members: { appId: 'a' } }, 'members must be an array'],
      ['a lead id not text', { ...base, leadAppId: 5 }, 'leadAppId must be a string'],
    ];
    for (const [what, input, message] of cases) {
      it(what, async () => {
        await assert.rejects(service.create(input as never), refusal('invalid', message));
        assert.equal((await teams.list()).length, 1, 'no team was stored');
        assert.deepEqual(bus.published, []);
      });
    }
  });

  describe('get', () => {
    it('finds a team by id in any case; an unknown or malformed id is not found with its code', async () => {
      assert.equal((await service.get(team.id.toUpperCase())).id, team.id);
      const notFound = refusal('not_found', TeamTexts.teamNotFound, ErrorCodes.TEAM_NOT_FOUND);
      await assert.rejects(service.get(randomUUID()), notFound);
      await assert.rejects(service.get('launch'), notFound);
    });
  });

  describe('update', () => {
    it('changes the given fields, trimmed, and announces the team', async () => {
      const updated = await service.update(team.id, { name: '  Relaunch ', collabMode: 'structured' });
      assert.equal(updated.name, 'Relaunch');
      assert.equal(updated.collabMode, 'structured');
      assert.equal(updated.goal, 'Ship it', 'what is not given stays');
      const [event] = bus.on(TeamChannels.updated);
      assert.equal(event?.teamId, team.id);
      assert.equal(event?.changed, 'team');
      assert.equal((event?.team as TeamDto).name, 'Relaunch');
    });

    it('refuses bad fields naming them, and a lead that is not a member', async () => {
      await assert.rejects(service.update(team.id, { name: '' }), refusal('invalid', 'Missing required field: name'));
      await assert.rejects(
        service.update(team.id, { escalationRouting: 'nobody' }),
        refusal('invalid', 'escalationRouting must be one of user, lead'),
      );
      await assert.rejects(
        service.update(team.id, { leadAppId: 'stranger-app' }),
        refusal('invalid', TeamTexts.leadNotMember),
      );
      assert.equal((await teams.findById(team.id))?.name, 'Launch');
      assert.deepEqual(bus.published, []);
      const moved = await service.update(team.id, { leadAppId: 'writer-app' });
      assert.equal(moved.leadAppId, 'writer-app');
    });
  });

  describe('dissolve', () => {
    it('removes the team, announces it removed and deletes only the AI-provisioned members', async () => {
      await service.dissolve(team.id);
      assert.equal(await teams.findById(team.id), null);
      assert.deepEqual(bus.on(TeamChannels.updated), [{ teamId: team.id, removed: true }]);
      assert.deepEqual(deletedApps, ['lead-app']);
      await assert.rejects(service.dissolve(team.id), refusal('not_found', TeamTexts.teamNotFound));
    });
  });
});
