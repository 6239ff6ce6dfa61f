import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TurnKind } from '#contracts/agent.js';
import type { AppConfig } from '../config/app-config.js';
import type { FileStore } from '../ports/file-store.port.js';
import type { ShellRunner } from '../ports/shell-runner.port.js';
import type { WorkspaceSearch } from '../ports/workspace-search.port.js';
import type { ChatPlanBuilder } from './chat-plan-builder.js';
import { ToolRegistry } from './tool-registry.js';
import { isRefusal, refuseTurn, TurnPlanBuilder, type TurnRefusal } from './turn-plan-builder.js';
import { TurnPlanBuilders } from './turn-plan-builders.js';

class RefusingBuilder extends TurnPlanBuilder {
  constructor(readonly kind: TurnKind) {
    super();
  }

  async build(): Promise<TurnRefusal> {
    return refuseTurn(`${this.kind} is not ready`, { errorCode: 'NOT_READY' });
  }
}

describe('TurnPlanBuilders', () => {
  const chat = new RefusingBuilder('chat') as unknown as ChatPlanBuilder;

  it('chat is built in; app-chat and app-run builders plug in by registering', async () => {
    const builders = new TurnPlanBuilders(chat);
    assert.equal(builders.for('chat'), chat);
    assert.throws(() => builders.for('app-run'), /no plan builder is registered for app-run turns/);
    const run = new RefusingBuilder('app-run');
    builders.register(run);
    assert.equal(builders.for('app-run'), run);
    const built = await builders.for('app-run').build({} as never, {} as never);
    assert.equal(isRefusal(built), true);
    assert.deepEqual(built, { refused: true, error: 'app-run is not ready', details: { errorCode: 'NOT_READY' } });
  });

  it('a kind has one builder', () => {
    const builders = new TurnPlanBuilders(chat);
    assert.throws(() => builders.register(new RefusingBuilder('chat')), /already registered/);
  });
});

describe('ToolRegistry', () => {
  const registry = (bashEnabled: boolean): ToolRegistry =>
    new ToolRegistry(
      {} as FileStore,
      {} as WorkspaceSearch,
      { sandboxed: true } as ShellRunner,
      {
        agent: { bash: bashEnabled ? 'sandboxed' : 'off', bashTimeoutMs: 1000 },
      } as AppConfig,
    );

  /** The file and task tools every turn may have, in the order of docs/api.md, "The assistant's tools". */
  const FILES_AND_TASKS = ['Read', 'Write', 'Edit', 'Glob', 'Grep', 'TodoWrite'];

  it('built-ins in the documented order (docs/api.md), Bash only where configured', () => {
    assert.deepEqual(registry(true).names(), [...FILES_AND_TASKS, 'Bash', 'AskUserQuestion']);
    assert.deepEqual(registry(false).names(), [...FILES_AND_TASKS, 'AskUserQuestion']);
  });

  it('a turn can leave Bash and AskUserQuestion out, but not turn Bash on against the configuration', () => {
    assert.deepEqual(registry(true).builtins({ bash: false, askUser: false }).names(), FILES_AND_TASKS);
    assert.equal(registry(false).builtins({ bash: true }).get('Bash'), undefined);
  });
});
