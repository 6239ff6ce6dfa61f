import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { storableText } from '../errors/text-rules.js';
import { FileStore } from '../ports/file-store.port.js';
import { ShellRunner } from '../ports/shell-runner.port.js';
import { WorkspaceSearch } from '../ports/workspace-search.port.js';
import { ToolSet } from './engine/tool-set.js';
import { ASK_USER_QUESTION, askUserQuestionTool } from './tools/ask-user-question-tool.js';
import { bashOffered, bashTool } from './tools/bash-tool.js';
import { editTool, readTool, writeTool } from './tools/file-tools.js';
import { globTool, grepTool } from './tools/search-tools.js';
import { todoWriteTool } from './tools/todo-tool.js';
import type { AgentTool } from '../kernel/tool.js';

export interface BuiltinToolOptions {
  /** Offer Bash (only where the server's configuration allows it at all). Default: as configured. */
  bash?: boolean;
  /** Offer AskUserQuestion (a turn with nobody to answer leaves it out). Default: true. */
  askUser?: boolean;
}

/** A tool whose output (a shell's `printf 'a\0b'`, say) is text the record can hold, the same live and stored. */
function withStorableOutput(tool: AgentTool): AgentTool {
  return {
    ...tool,
    run: async (input, ctx) => {
      const outcome = await tool.run(input, ctx);
      return { ...outcome, output: storableText(outcome.output) };
    },
  };
}

/** The built-in tools (docs/api.md, "The assistant's tools"), from which each turn's plan takes its ToolSet. */
@Injectable()
export class ToolRegistry {
  private readonly all: ToolSet;
  private readonly bash: AgentTool;
  private readonly bashAllowed: boolean;

  constructor(files: FileStore, search: WorkspaceSearch, shell: ShellRunner, @Inject(APP_CONFIG) config: AppConfig) {
    // Bash only where the sandbox works, unless the operator chose to run it unsandboxed.
    this.bashAllowed = bashOffered(config.agent.bash, shell.sandboxed);
    this.bash = bashTool(shell, config.agent.bashTimeoutMs);
    this.all = new ToolSet(
      [
        readTool(files),
        writeTool(files),
        editTool(files),
        globTool(files, search),
        grepTool(files, search),
        todoWriteTool(),
        this.bash,
        askUserQuestionTool(),
      ].map(withStorableOutput),
    );
  }

  /** The built-ins a turn offers; the server's configuration caps what options can turn on. */
  builtins(options: BuiltinToolOptions = {}): ToolSet {
    const left: string[] = [];
    if (!this.bashAllowed || options.bash === false) left.push(this.bash.name);
    if (options.askUser === false) left.push(ASK_USER_QUESTION);
    return this.all.without(...left);
  }

  /** Names of the built-ins a chat turn offers (capabilities). */
  names(): string[] {
    return this.builtins().names();
  }
}
