import { type AgentEventPayloads, AgentChannels, type Thought } from '#contracts/agent.js';
import type { ConversationChannel } from '#contracts/events.js';
import type { ModelContentBlock, ModelStreamEvent } from '../../ports/model-provider.port.js';

export type Emit = <C extends ConversationChannel>(channel: C, payload: AgentEventPayloads[C]) => Promise<void>;
/** Emits without waiting (stream deltas); ordering with later emits is kept by the emitter. */
export type Fire = <C extends ConversationChannel>(channel: C, payload: AgentEventPayloads[C]) => void;

interface OpenBlock {
  kind: 'text' | 'thinking' | 'tool_use';
  thoughtId?: string;
  text: string;
  toolUseId?: string;
  toolName?: string;
}

/**
 * Turns one model response's neutral stream into the conversation events of docs/api.md ("Conversation events"),
 * in order, and collects what the turn must remember: the assistant content blocks (for
 * the next model call), the thoughts (for the record) and the reply text.
 */
export class StepEmitter {
  private readonly open = new Map<number, OpenBlock>();
  readonly blocks: ModelContentBlock[] = [];
  readonly textBlocks: string[] = [];
  streamedAnything = false;

  constructor(
    private readonly emit: Emit,
    private readonly thoughts: Thought[],
    private readonly now: () => Date = () => new Date(),
    /** Deltas are fired without a round trip each; defaults to awaiting `emit`. */
    private readonly fire: Fire = (channel, payload) => void emit(channel, payload),
    /** Calls of these tools wait for approval: the loop announces them once they are held. */
    private readonly held: (toolName: string) => boolean = () => false,
  ) {}

  /**
   * Emits what `event` means. Text deltas, the bulk of a stream, are fired and answered
   * without a promise (undefined); anything else returns one to await, so that later events
   * follow it.
   */
  handle(event: ModelStreamEvent): Promise<void> | undefined {
    if (event.type === 'text_delta') {
      this.streamedAnything = true;
      const block = this.open.get(event.index);
      if (block) block.text += event.delta;
      this.fire(AgentChannels.message, { delta: event.delta, isStreaming: true, isComplete: false });
      return undefined;
    }
    return this.handleOther(event);
  }

  private async handleOther(event: ModelStreamEvent): Promise<void> {
    if (event.type !== 'usage' && event.type !== 'end') this.streamedAnything = true;
    switch (event.type) {
      case 'text_start':
        this.open.set(event.index, { kind: 'text', text: '' });
        return this.emit(AgentChannels.message, {
          content: '',
          isNewTextBlock: true,
          isStreaming: false,
          isComplete: false,
        });
      case 'text_end': {
        this.open.delete(event.index);
        if (event.text !== '') {
          this.blocks.push({ type: 'text', text: event.text });
          this.textBlocks.push(event.text);
        }
        return this.emit(AgentChannels.message, { content: event.text, isStreaming: false, isComplete: false });
      }
      case 'thinking_start': {
        const thought = this.newThought('thinking', event.index);
        this.open.set(event.index, { kind: 'thinking', thoughtId: thought.id, text: '' });
        return this.emit(AgentChannels.thought, { thought: { ...thought, isStreaming: true } });
      }
      case 'thinking_delta': {
        const block = this.open.get(event.index);
        if (!block?.thoughtId) return;
        block.text += event.delta;
        return this.fire(AgentChannels.thoughtDelta, { thoughtId: block.thoughtId, delta: event.delta });
      }
      case 'thinking_end': {
        const block = this.open.get(event.index);
        this.open.delete(event.index);
        this.blocks.push({ type: 'thinking', thinking: event.thinking, signature: event.signature });
        if (!block?.thoughtId) return;
        this.updateThought(block.thoughtId, { content: event.thinking });
        return this.emit(AgentChannels.thoughtDelta, {
          thoughtId: block.thoughtId,
          content: event.thinking,
          isComplete: true,
        });
      }
      case 'tool_use_start': {
        const thought = this.newThought('tool_use', event.index, {
          toolName: event.name,
          toolInput: {},
          toolUseId: event.id,
        });
        this.open.set(event.index, {
          kind: 'tool_use',
          thoughtId: thought.id,
          text: '',
          toolUseId: event.id,
          toolName: event.name,
        });
        const { toolUseId: _omit, ...wire } = thought;
        return this.emit(AgentChannels.thought, { thought: { ...wire, isStreaming: true } });
      }
      case 'tool_input_delta': {
        const block = this.open.get(event.index);
        if (!block?.thoughtId) return;
        return this.fire(AgentChannels.thoughtDelta, {
          thoughtId: block.thoughtId,
          delta: event.delta,
          isToolInput: true,
        });
      }
      case 'tool_use_end': {
        const block = this.open.get(event.index);
        this.open.delete(event.index);
        this.blocks.push({ type: 'tool_use', id: event.id, name: event.name, input: event.input });
        if (block?.thoughtId) {
          this.updateThought(block.thoughtId, { toolInput: event.input });
          await this.emit(AgentChannels.thoughtDelta, {
            thoughtId: block.thoughtId,
            toolInput: event.input,
            isComplete: true,
            isToolInput: true,
          });
        }
        if (this.held(event.name)) return;
        return this.emit(AgentChannels.toolCall, {
          id: event.id,
          name: event.name,
          status: 'running',
          input: event.input,
        });
      }
      case 'usage':
      case 'end':
        return;
    }
  }

  /** Finished text blocks plus the text of blocks still streaming (a reply cut short keeps them). */
  partialTextBlocks(): string[] {
    const open = [...this.open.values()].filter((b) => b.kind === 'text' && b.text !== '').map((b) => b.text);
    return [...this.textBlocks, ...open];
  }

  /** Tool calls of this response, in order. */
  toolCalls(): Array<{ id: string; name: string; input: Record<string, unknown> }> {
    return this.blocks.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : []));
  }

  /** Announces a tool's result on the thought and as agent:tool-result. */
  async toolResult(toolUseId: string, output: string, isError: boolean): Promise<void> {
    const thought = this.thoughts.find((t) => t.toolUseId === toolUseId);
    const timestamp = this.now().toISOString();
    if (thought) {
      thought.toolOutput = output;
      thought.isError = isError;
      await this.emit(AgentChannels.thoughtDelta, {
        thoughtId: thought.id,
        toolResult: { output, isError, timestamp },
        isToolResult: true,
      });
    }
    await this.emit(AgentChannels.toolResult, { toolId: toolUseId, result: output, isError });
  }

  private newThought(type: Thought['type'], index: number, extra: Partial<Thought> = {}): Thought {
    const at = this.now();
    const kind = type === 'thinking' ? 'thinking' : 'tool';
    const thought: Thought = {
      id: `thought-${kind}-${at.getTime()}-${index}-${Math.random().toString(36).slice(2, 6)}`,
      type,
      content: '',
      timestamp: at.toISOString(),
      ...extra,
    };
    this.thoughts.push(thought);
    return thought;
  }

  private updateThought(id: string, patch: Partial<Thought>): void {
    const thought = this.thoughts.find((t) => t.id === id);
    if (thought) Object.assign(thought, patch);
  }
}
