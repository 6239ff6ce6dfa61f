import type { ModelToolSpec } from '../../ports/model-provider.port.js';
import type { AgentTool } from '../../kernel/tool.js';

/**
 * The tools one turn offers the model, in the order the model sees them. Assembled per turn
 * by the plan (built-ins as configured, then extras such as `report_to_user` for runs or
 * `mcp__<server>__<tool>`); immutable, so a plan can derive its own set from a shared one.
 */
export class ToolSet {
  private readonly byName: ReadonlyMap<string, AgentTool>;

  constructor(tools: readonly AgentTool[] = []) {
    const byName = new Map<string, AgentTool>();
    for (const tool of tools) {
      // Two tools of one name would leave the model unable to say which one it calls.
      if (byName.has(tool.name)) throw new Error(`Two tools are named ${tool.name}`);
      byName.set(tool.name, tool);
    }
    this.byName = byName;
  }

  /** This set plus `tools`, appended in order. */
  with(...tools: AgentTool[]): ToolSet {
    return new ToolSet([...this.byName.values(), ...tools]);
  }

  /** This set without the named tools. */
  without(...names: string[]): ToolSet {
    return new ToolSet([...this.byName.values()].filter((t) => !names.includes(t.name)));
  }

  get(name: string): AgentTool | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  specs(): ModelToolSpec[] {
    return [...this.byName.values()].map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
    }));
  }
}
