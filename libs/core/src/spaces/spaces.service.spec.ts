import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import { RecordingEventBus } from '#testing/fake-agent-ports.js';
import {
  FakeSpaceActivity,
  FakeSpaceFolders,
  RecordingAppCleanup,
  RecordingConversationCleanup,
} from '#testing/fake-space-ports.js';
import { FakeSpaceRepository } from '#testing/fake-spaces.js';
import type { AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { Replica } from '../ports/replica.port.js';
import { SPACE_CHANGED, type SpaceChange } from '#contracts/spaces.js';
import { SpaceErrors, SpacesService } from './spaces.service.js';

const refusal = (kind: DomainError['kind'], message: string) => (err: unknown) => {
  assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
  assert.equal(err.kind, kind);
  assert.equal(err.message, message);
  return true;
};

const tick = () => new Promise((r) => setImmediate(r));

describe('SpacesService', () => {
  let spaces: FakeSpaceRepository;
  let folders: FakeSpaceFolders;
  let activity: FakeSpaceActivity;
  let conversations: RecordingConversationCleanup;
  let apps: RecordingAppCleanup;
  let bus: RecordingEventBus;
  let config: AppConfig;
  let heard: Array<[string, SpaceChange]>;

  const make = (replica = Replica.alone()) => {
    const service = new SpacesService(spaces, folders, activity, conversations, apps, bus, config, replica);
    service.onChange((spaceId, change) => heard.push([spaceId, change]));
    return service;
  };

  beforeEach(() => {
    spaces = new FakeSpaceRepository();
    folders = new FakeSpaceFolders().add('/data', '/work/projects');
    activity = new FakeSpaceActivity();
    conversations = new RecordingConversationCleanup();
    apps = new RecordingAppCleanup();
    bus = new RecordingEventBus();
    config = { dataDir: '/data', spaceRoots: null } as AppConfig;
    heard = [];
  });

  describe('start', () => {
    it('creates the temporary space under the data folder, once', async () => {
      const service = make();
      await service.onApplicationBootstrap();
      await service.onApplicationBootstrap();
      const temp = await service.get(TEMP_SPACE_ID);
      assert.equal(temp.path, '/data/temp');
      assert.equal(temp.isTemp, true);
      assert.equal(temp.name, 'svc');
      assert.ok(folders.folders.has('/data/temp'));
      assert.equal(spaces.spaces.size, 1);
      assert.deepEqual(await service.list(), [], 'the temporary space is not listed');
    });

    it('follows a data folder that moved', async () => {
      await make().onApplicationBootstrap();
      config = { dataDir: '/restored', spaceRoots: null } as AppConfig;
      await make().onApplicationBootstrap();
      assert.equal((await spaces.findById(TEMP_SPACE_ID))?.path, '/restored/temp');
    });

    it('sweeps every orphaned temporary file when alone, only old ones beside replicas', async () => {
      folders.addTempFile('/data/temp/a.svc-tmp', 0).addTempFile('/data/temp/b.svc-tmp', 11 * 60_000);
      await make(new Replica('r1', 'services', true)).onApplicationBootstrap();
      await tick();
      assert.deepEqual(
        folders.tempFiles.map((f) => f.path),
        ['/data/temp/a.svc-tmp'],
      );
      await make(Replica.alone()).onApplicationBootstrap();
      await tick();
      assert.deepEqual(folders.tempFiles, []);
    });
  });

  describe('create', () => {
    it('creates a space in its own default folder and announces it', async () => {
      const service = make();
      const space = await service.create({ name: '  Research  ', color: '#aa0000' });
      assert.equal(space.name, 'Research');
      assert.equal(space.icon, '📁');
      assert.equal(space.color, '#aa0000');
      assert.equal(space.path, `/data/spaces/${space.id}`);
      assert.equal(space.ownsFolder, true);
      assert.ok(folders.folders.has(space.path));
      assert.deepEqual(bus.on(SPACE_CHANGED), [{ spaceId: space.id, change: 'created' }]);
      assert.deepEqual(heard, [[space.id, 'created']]);
    });

    it('refuses a missing name and non-string fields', async () => {
      const service = make();
      await assert.rejects(
        service.create({ name: '   ' }),
        refusal('invalid', 'name is required (1 to 200 characters)'),
      );
      await assert.rejects(service.create({ name: 'x', icon: 3 }), refusal('invalid', 'icon must be a string'));
      await assert.rejects(
        service.create({ name: 'x', customPath: 'relative/dir' }),
        refusal('invalid', 'customPath must be an absolute path'),
      );
      assert.equal(spaces.spaces.size, 0);
      assert.deepEqual(bus.published, []);
    });

    it('does not own a custom folder that already existed, and owns one it created', async () => {
      const service = make();
      const brought = await service.create({ name: 'Brought', customPath: '/work/projects' });
      assert.equal(brought.path, '/work/projects');
      assert.equal(brought.ownsFolder, false);
      const fresh = await service.create({ name: 'Fresh', customPath: '/work/new/' });
      assert.equal(fresh.path, '/work/new');
      assert.equal(fresh.ownsFolder, true);
    });

    it('refuses the data folder, system folders, taken and nested folders', async () => {
      const service = make();
      await assert.rejects(
        service.create({ name: 'x', customPath: '/data/inner' }),
        refusal(
          'invalid',
          "customPath: the folder must lie outside the service's data folder (neither inside it nor containing it).",
        ),
      );
      await assert.rejects(
        service.create({ name: 'x', customPath: '/etc/app' }),
        refusal(
          'invalid',
          'customPath: a system folder (such as /, /etc, /proc, /usr or /home itself) cannot be a space folder.',
        ),
      );
      await service.create({ name: 'First', customPath: '/work/projects' });
      await assert.rejects(
        service.create({ name: 'x', customPath: '/work/projects' }),
        refusal('conflict', SpaceErrors.folderTaken),
      );
      await assert.rejects(
        service.create({ name: 'x', customPath: '/work/projects/sub' }),
        refusal('conflict', SpaceErrors.nested('customPath')),
      );
      await assert.rejects(
        service.create({ name: 'x', customPath: '/work' }),
        refusal('conflict', SpaceErrors.nested('customPath')),
      );
      folders.link('/work/alias', '/work/projects');
      await assert.rejects(
        service.create({ name: 'x', customPath: '/work/alias' }),
        refusal('conflict', SpaceErrors.folderTaken),
        'a symlink to a used folder is the same folder',
      );
      assert.equal(spaces.spaces.size, 1);
    });

    it('lets the assistant choose a folder only inside the operator space roots', async () => {
      await assert.rejects(
        make().create({ name: 'x', customPath: '/work/projects' }, 'assistant'),
        refusal('forbidden', SpaceErrors.assistantFolder('customPath')),
      );
      config = { dataDir: '/data', spaceRoots: ['/work'] } as AppConfig;
      const service = make();
      const space = await service.create({ name: 'Mine', customPath: '/work/projects' }, 'assistant');
      assert.equal(space.path, '/work/projects');
      await assert.rejects(
        service.create({ name: 'x', customPath: '/srv/elsewhere' }),
        refusal('forbidden', SpaceErrors.outsideRoots('customPath', ['/work'])),
      );
      // The assistant may always use a default folder under the data folder.
      assert.equal((await service.create({ name: 'Default' }, 'assistant')).ownsFolder, true);
    });
  });

  describe('update, get and reorder', () => {
    it('renames and recolours, keeping what was not given, and announces it', async () => {
      const service = make();
      const space = await service.create({ name: 'Old', icon: '🧪' });
      const updated = await service.update(space.id, { name: 'New', color: '#123456' });
      assert.equal(updated.name, 'New');
      assert.equal(updated.icon, '🧪');
      assert.equal(updated.color, '#123456');
      assert.deepEqual(heard.at(-1), [space.id, 'updated']);
      assert.deepEqual(bus.on(SPACE_CHANGED).at(-1), { spaceId: space.id, change: 'updated' });
    });

    it('refuses an empty name and an unknown space', async () => {
      const service = make();
      const space = await service.create({ name: 'Old' });
      await assert.rejects(
        service.update(space.id, { name: '' }),
        refusal('invalid', 'name must be 1 to 200 characters'),
      );
      await assert.rejects(service.update('nope', { name: 'x' }), refusal('not_found', 'Space not found'));
      await assert.rejects(service.get('nope'), refusal('not_found', 'Space not found'));
    });

    it('reorders only known user spaces, once each', async () => {
      const service = make();
      await service.onApplicationBootstrap();
      const a = await service.create({ name: 'A' });
      await service.create({ name: 'B' });
      const c = await service.create({ name: 'C' });
      await service.reorder([c.id, 'unknown', TEMP_SPACE_ID, a.id, c.id]);
      assert.deepEqual(
        (await service.list()).map((s) => s.name),
        ['C', 'A', 'B'],
      );
      assert.deepEqual(
        (await service.listAll()).map((s) => s.name),
        ['C', 'A', 'svc', 'B'],
        'unlisted spaces follow in their previous order',
      );
    });
  });

  describe('delete', () => {
    it('removes its own folder, conversations, digital humans and record, then announces it', async () => {
      const service = make();
      const space = await service.create({ name: 'Gone' });
      heard = [];
      await service.delete(space.id);
      assert.deepEqual(folders.removed, [space.path]);
      assert.equal(folders.folders.has(space.path), false);
      assert.deepEqual(conversations.deletedSpaces, [space.id]);
      assert.deepEqual(apps.deletedSpaces, [space.id]);
      assert.equal(await spaces.findById(space.id), null);
      assert.deepEqual(heard, [[space.id, 'deleted']]);
      assert.deepEqual(bus.on(SPACE_CHANGED).at(-1), { spaceId: space.id, change: 'deleted' });
    });

    it('leaves a folder the user brought in place', async () => {
      const service = make();
      const space = await service.create({ name: 'Brought', customPath: '/work/projects' });
      await service.delete(space.id);
      assert.deepEqual(folders.removed, []);
      assert.ok(folders.folders.has('/work/projects'));
      assert.equal(await spaces.findById(space.id), null);
    });

    it('refuses the temporary space and unknown spaces', async () => {
      const service = make();
      await service.onApplicationBootstrap();
      await assert.rejects(service.delete(TEMP_SPACE_ID), refusal('forbidden', SpaceErrors.tempUndeletable));
      await assert.rejects(service.delete('nope'), refusal('not_found', 'Space not found'));
      assert.ok(await spaces.findById(TEMP_SPACE_ID));
      assert.deepEqual(conversations.deletedSpaces, []);
    });

    it('refuses to remove a folder that holds the data folder', async () => {
      const service = make();
      const space = await service.create({ name: 'Tricked', customPath: '/work/projects' });
      await spaces.update(space.id, { path: '/', ownsFolder: true });
      await assert.rejects(service.delete(space.id), refusal('forbidden', SpaceErrors.unsafeFolder));
      assert.deepEqual(folders.removed, []);
      assert.ok(await spaces.findById(space.id));
    });
  });

  describe('setWorkingDir', () => {
    it('points the space at an existing folder it will not delete, and announces it', async () => {
      const service = make();
      const space = await service.create({ name: 'Moving' });
      folders.link('/work/link', '/work/projects');
      const updated = await service.setWorkingDir(space.id, '/work/link');
      assert.equal(updated.path, '/work/projects', 'the canonical folder is stored');
      assert.equal(updated.ownsFolder, false);
      assert.deepEqual(heard.at(-1), [space.id, 'folder-changed']);
      assert.deepEqual(bus.on(SPACE_CHANGED).at(-1), { spaceId: space.id, change: 'folder-changed' });
      assert.ok(folders.folders.has(space.path), 'the old folder is not moved or removed');
    });

    it('refuses the temporary space, missing and relative folders', async () => {
      const service = make();
      await service.onApplicationBootstrap();
      const space = await service.create({ name: 'S' });
      await assert.rejects(
        service.setWorkingDir(TEMP_SPACE_ID, '/work/projects'),
        refusal('forbidden', SpaceErrors.tempImmutable),
      );
      await assert.rejects(service.setWorkingDir(space.id, ' '), refusal('invalid', 'workingDir is required'));
      await assert.rejects(
        service.setWorkingDir(space.id, 'work/projects'),
        refusal('invalid', 'workingDir must be an absolute path'),
      );
      await assert.rejects(
        service.setWorkingDir(space.id, '/work/absent'),
        refusal('invalid', SpaceErrors.folderMissing),
      );
      await assert.rejects(
        service.setWorkingDir(space.id, '/data'),
        refusal(
          'invalid',
          "workingDir: the folder must lie outside the service's data folder (neither inside it nor containing it).",
        ),
      );
    });

    it('refuses while work is in progress in the space', async () => {
      const service = make();
      const space = await service.create({ name: 'Busy' });
      activity.busy.add(space.id);
      await assert.rejects(service.setWorkingDir(space.id, '/work/projects'), refusal('conflict', SpaceErrors.busy));
      assert.equal((await service.get(space.id)).path, space.path);
      activity.busy.clear();
      assert.equal((await service.setWorkingDir(space.id, '/work/projects')).path, '/work/projects');
    });

    it('refuses a second change while one is under way', async () => {
      const service = make();
      const space = await service.create({ name: 'Racing' });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      activity.isBusy = async () => {
        await gate;
        return false;
      };
      const first = service.setWorkingDir(space.id, '/work/projects');
      await tick();
      await assert.rejects(
        service.setWorkingDir(space.id, '/work/projects'),
        refusal('conflict', SpaceErrors.changing),
      );
      release();
      assert.equal((await first).path, '/work/projects');
    });
  });

  describe('preferences', () => {
    it('answers the defaults for what is not stored, and merges a patch', async () => {
      const service = make();
      const space = await service.create({ name: 'Prefs' });
      assert.deepEqual(service.preferencesOf(space), {
        memory: { enabled: true, autoConsolidate: true, cadence: 'diligent' },
      });
      const once = await service.updatePreferences(space.id, { memory: { enabled: false } });
      const twice = await service.updatePreferences(space.id, { memory: { cadence: 'economical' } });
      assert.deepEqual(once.preferences, { memory: { enabled: false } });
      assert.deepEqual(service.preferencesOf(twice), {
        memory: { enabled: false, autoConsolidate: true, cadence: 'economical' },
      });
    });

    it('refuses malformed preferences and leaves them unchanged', async () => {
      const service = make();
      const space = await service.create({ name: 'Prefs' });
      await assert.rejects(
        service.updatePreferences(space.id, { memory: [] as never }),
        refusal('invalid', 'memory must be an object'),
      );
      await assert.rejects(
        service.updatePreferences(space.id, { memory: { autoConsolidate: 'yes' } }),
        refusal('invalid', 'memory.autoConsolidate must be a boolean'),
      );
      await assert.rejects(
        service.updatePreferences(space.id, { memory: { cadence: 'hourly' } }),
        refusal('invalid', 'memory.cadence must be one of diligent, balanced, economical'),
      );
      assert.deepEqual((await service.get(space.id)).preferences, {});
    });
  });

  it('maps a space to its transfer shape, leaving out an absent colour', async () => {
    const service = make();
    const space = await service.create({ name: 'Dto' });
    const dto = service.toDto(space);
    assert.equal(dto.id, space.id);
    assert.equal(dto.path, space.path);
    assert.equal('color' in dto, false);
    assert.equal(dto.createdAt, space.createdAt.toISOString());
  });
});
