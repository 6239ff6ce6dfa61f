import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { FileStore } from '../ports/file-store.port.js';
import type { ModelToolSpec } from '../ports/model-provider.port.js';
import { ShellRunner } from '../ports/shell-runner.port.js';
import { WorkspaceSearch } from '../ports/workspace-search.port.js';
import { bashTool } from './tools/bash-tool.js';
import { editTool, readTool, writeTool } from './tools/file-tools.js';
import { globTool, grepTool } from './tools/search-tools.js';
import type { AgentTool } from './tools/tool.js';
import { ASK_USER_QUESTION_SCHEMA, todoWriteTool } from './tools/todo-tool.js';

export const ASK_USER_QUESTION = 'AskUserQuestion';

/** The built-in tools offered to the model (CONTRACT §3); Bash can be turned off. */
@Injectable()
export class ToolRegistry {
  private readonly tools = new Map<string, AgentTool>();

  constructor(files: FileStore, search: WorkspaceSearch, shell: ShellRunner, @Inject(APP_CONFIG) config: AppConfig) {
    const list = [
      readTool(files),
      writeTool(files),
      editTool(files),
      globTool(files, search),
      grepTool(files, search),
      todoWriteTool(),
    ];
    if (config.agent.bashEnabled) list.push(bashTool(shell, config.agent.bashTimeoutMs));
    for (const tool of list) this.tools.set(tool.name, tool);
  }

  get(name: string): AgentTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys(), ASK_USER_QUESTION];
  }

  specs(): ModelToolSpec[] {
    return [
      ...[...this.tools.values()].map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
      {
        name: ASK_USER_QUESTION,
        description:
          'Ask the user one or more multiple-choice questions and wait for the answers. Use it when a decision is needed that only the user can make.',
        inputSchema: ASK_USER_QUESTION_SCHEMA,
      },
    ];
  }
}
