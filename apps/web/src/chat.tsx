import type { AskQuestion, PendingApprovalDto, SessionState, Thought, TokenUsageDto } from '#contracts/agent.js';
import type {
  ConversationDto,
  ConversationSummaryDto,
  MessageAttachmentDto,
  MessageDto,
} from '#contracts/conversations.js';
import { CONVERSATION_UPDATED } from '#contracts/conversations.js';
import type { AppConfiguration } from '#contracts/models.js';
import type { EventEnvelope } from '#contracts/events.js';
import { STREAM_GAP_CHANNEL } from '#contracts/events.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from './api.js';
import { downscaled, SentAttachment, uploadAttachment } from './attachments.js';
import { BrowserToggle, ChatBrowserPanel } from './browser.js';
import { ask, confirmAction, SubmitOrCancel } from './dialogs.js';
import { drawMathAndDiagrams, renderMarkdown } from './markdown.js';
import { go, href } from './route.js';
import type { EventSocket } from './socket.js';
import type { Space } from './spaces.js';

/** A thinking block or a tool call of the running turn, shown as a collapsible step. */
interface Step {
  id: string;
  kind: 'thinking' | 'tool';
  name?: string;
  content: string;
  input?: unknown;
  result?: string;
  isError?: boolean;
  /** The model's tool-use id: tool-call and tool-result events name the step by it. */
  toolUseId?: string;
}
interface Live {
  text: string;
  steps: Step[];
  question: { id: string; questions: AskQuestion[] } | null;
  /** A tool call an approval policy holds until someone approves or rejects it. */
  approval: PendingApprovalDto | null;
  notice: string;
}
const EMPTY: Live = { text: '', steps: [], question: null, approval: null, notice: '' };

const usageText = (u: Partial<TokenUsageDto>): string =>
  `${(u.inputTokens ?? 0).toLocaleString()} in · ${(u.outputTokens ?? 0).toLocaleString()} out` +
  (u.totalCostUsd ? ` · $${u.totalCostUsd.toFixed(4)}` : '');

/** The steps of a finished message, from its stored thoughts (thinking and tool calls with their results). */
export function stepsFromThoughts(thoughts: Thought[]): Step[] {
  return thoughts.flatMap((t): Step[] => {
    if (t.type === 'thinking') return [{ id: t.id, kind: 'thinking', content: t.content ?? '' }];
    if (t.type !== 'tool_use') return [];
    return [
      {
        id: t.id,
        kind: 'tool',
        name: t.toolName,
        content: '',
        input: t.toolInput,
        result: t.toolOutput === undefined ? undefined : String(t.toolOutput),
        isError: t.isError,
        toolUseId: t.toolUseId,
      },
    ];
  });
}

/** An image sent inside a message (docs/api.md, "The assistant": `images`, base64): a digital human's chat. */
interface Attachment {
  name?: string;
  mediaType: string;
  data: string;
}
/** The message body must stay under 100 KB (docs/api.md, "Limits"): base64 images get most of it. */
const ATTACHMENTS_MAX_BASE64 = 90 * 1024;
const attachmentsOf = (m: MessageDto): Attachment[] =>
  (m.images ?? []).flatMap((i): Attachment[] => {
    if (typeof i === 'string') return [{ mediaType: 'image/png', data: i.replace(/^data:[^;]+;base64,/, '') }];
    const o = i as { mediaType?: unknown; data?: unknown };
    return typeof o?.data === 'string' ? [{ mediaType: String(o.mediaType ?? 'image/png'), data: o.data }] : [];
  });
/** Files of the space a message was sent with (docs/api.md, "Attachments"). */
const sentFilesOf = (m: MessageDto): MessageAttachmentDto[] => (Array.isArray(m.attachments) ? m.attachments : []);
/** What a message carries besides its text, as Retry and the retry rule compare it. */
const carried = (m: MessageDto): string =>
  JSON.stringify([attachmentsOf(m).map((a) => a.data), sentFilesOf(m).map((a) => a.path)]);
/** What goes with a message: base64 images (a digital human's chat) or files already in the space. */
interface Outgoing {
  images: Attachment[];
  files: MessageAttachmentDto[];
}
/** A file attached in the message box, uploaded when the message is sent (kept once uploaded). */
interface PendingFile {
  key: number;
  file: File;
  /** An object URL of an image, for its thumbnail. */
  preview: string | null;
  state: 'ready' | 'uploading' | 'uploaded' | 'failed';
  progress: number;
  uploaded?: MessageAttachmentDto;
  error?: string;
}
let pendingKeys = 0;
const pendingState = (p: PendingFile): string =>
  p.state === 'uploading'
    ? `Uploading… ${Math.round(p.progress * 100)}%`
    : p.state === 'uploaded'
      ? 'Uploaded'
      : p.state === 'failed'
        ? `Upload failed: ${p.error ?? 'unknown error'}`
        : '';
const readAsBase64 = (file: File): Promise<string> =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^;]*;base64,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('unreadable'));
    reader.readAsDataURL(file);
  });

/**
 * Messages replaced by a Retry, Regenerate or an edit, hidden: a user message sent again (the
 * next user message, with only failed replies between, has the same text, images and files) and those
 * failed replies; a message marked `superseded` (Regenerate and Edit mark the last one), and the
 * user message of its turn once another user message follows. The server leaves them out of
 * the model's context the same way (docs/api.md, "Agent").
 */
export function retriedMessages(messages: MessageDto[]): Set<string> {
  const hidden = new Set<string>();
  const failedReply = (m: MessageDto): boolean => m.role === 'assistant' && (Boolean(m.error) || m.superseded === true);
  messages.forEach((m, i) => {
    if (m.role !== 'user') {
      if (m.superseded === true) hidden.add(m.id);
      return;
    }
    let j = i + 1;
    while (j < messages.length && failedReply(messages[j]!)) j++;
    const next = messages[j];
    if (next?.role !== 'user') return;
    const between = messages.slice(i + 1, j);
    // A superseded message of yours stays shown until the edited one follows (its sending may fail).
    if (
      m.superseded === true ||
      between.some((r) => r.superseded === true) ||
      (next.content === m.content && carried(next) === carried(m))
    )
      for (const r of messages.slice(i, j)) hidden.add(r.id);
  });
  return hidden;
}

/** Steps of a stored assistant message, read once when the conversation is opened. */
function PastSteps(props: { path: string }) {
  const [steps, setSteps] = useState<Step[]>([]);
  useEffect(() => {
    let live = true;
    void api.get<Thought[]>(props.path).then(
      (thoughts) => live && setSteps(stepsFromThoughts(Array.isArray(thoughts) ? thoughts : [])),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [props.path]);
  return (
    <>
      {steps.map((s) => (
        <StepView key={s.id} step={s} />
      ))}
    </>
  );
}

/** Copies text to the clipboard; false where the browser refuses. */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Rendered Markdown with its math and diagrams drawn; each code block gets a **Copy code** button. */
export function Markdown(props: { text: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (box.current) drawMathAndDiagrams(box.current);
    for (const pre of Array.from(box.current?.querySelectorAll('pre') ?? [])) {
      if (pre.querySelector('.copy-code')) continue;
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'link copy-code';
      button.textContent = 'Copy code';
      button.addEventListener('click', () => {
        void copyText(pre.querySelector('code')?.textContent ?? '').then((ok) => {
          button.textContent = ok ? 'Copied' : 'Copy failed';
          setTimeout(() => (button.textContent = 'Copy code'), 1500);
        });
      });
      pre.prepend(button);
    }
  });
  return <div ref={box} class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(props.text) }} />;
}

/** A message's time: the clock time, with the date where it is not today; the full date and time on hover. */
function MessageTime(props: { at: string }) {
  const at = new Date(props.at);
  if (!props.at || Number.isNaN(at.getTime())) return null;
  const today = at.toDateString() === new Date().toDateString();
  const short = today
    ? at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return (
    <time dateTime={props.at} title={at.toLocaleString()}>
      {short}
    </time>
  );
}

/** A button that copies `text`, saying so for a moment. */
function CopyButton(props: { text: string; label: string }) {
  const [done, setDone] = useState('');
  return (
    <button
      type="button"
      class="link"
      aria-label={props.label}
      onClick={async () => {
        setDone((await copyText(props.text)) ? 'Copied' : 'Copy failed');
        setTimeout(() => setDone(''), 1500);
      }}
    >
      {done || 'Copy'}
    </button>
  );
}

/** The conversation as Markdown: its title, then each message under its author and time. */
export function conversationMarkdown(title: string, messages: MessageDto[]): string {
  const parts = [`# ${title}`];
  for (const m of messages) {
    const who = m.role === 'user' ? 'You' : m.role === 'assistant' ? 'Assistant' : m.role;
    parts.push(`## ${who}${m.createdAt ? ` (${m.createdAt})` : ''}`, m.content.trim());
  }
  return parts.join('\n\n') + '\n';
}

function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Applies one conversation event to the running turn's view (docs/api.md, "Conversation events"). */
export function applyEvent(live: Live, event: EventEnvelope): Live {
  const d = event.data as Record<string, unknown>;
  const steps = live.steps;
  const matches = (s: Step, id: string): boolean => s.id === id || s.toolUseId === id;
  const update = (id: string, change: (s: Step) => Step): Step[] => steps.map((s) => (matches(s, id) ? change(s) : s));
  switch (event.channel) {
    case 'agent:turn-start':
      return { ...EMPTY };
    case 'agent:message':
      if (typeof d.delta === 'string') return { ...live, text: live.text + d.delta };
      if (d.isNewTextBlock) return { ...live, text: live.text ? `${live.text}\n\n` : '' };
      return typeof d.content === 'string' && !d.isNewTextBlock ? { ...live, text: d.content } : live;
    case 'agent:thought': {
      const t = d.thought as {
        id: string;
        type: string;
        content?: string;
        toolName?: string;
        toolInput?: unknown;
        toolUseId?: string;
      };
      if (t.type !== 'thinking' && t.type !== 'tool_use') return live;
      if (steps.some((s) => matches(s, t.id) || (t.toolUseId !== undefined && matches(s, t.toolUseId)))) return live;
      const step: Step =
        t.type === 'thinking'
          ? { id: t.id, kind: 'thinking', content: t.content ?? '' }
          : { id: t.id, kind: 'tool', name: t.toolName, content: '', input: t.toolInput, toolUseId: t.toolUseId };
      return { ...live, steps: [...steps, step] };
    }
    case 'agent:thought-delta': {
      const id = String(d.thoughtId);
      if (d.isToolInput)
        return d.toolInput !== undefined ? { ...live, steps: update(id, (s) => ({ ...s, input: d.toolInput })) } : live;
      if (typeof d.delta === 'string')
        return { ...live, steps: update(id, (s) => ({ ...s, content: s.content + d.delta })) };
      if (typeof d.content === 'string')
        return { ...live, steps: update(id, (s) => ({ ...s, content: d.content as string })) };
      const result = d.toolResult as { output?: unknown; isError?: boolean } | undefined;
      if (result)
        return {
          ...live,
          steps: update(id, (s) => ({ ...s, result: String(result.output ?? ''), isError: Boolean(result.isError) })),
        };
      return live;
    }
    case 'agent:tool-call': {
      const id = String(d.id);
      const held: Partial<Pick<Live, 'approval'>> =
        d.requiresApproval === true
          ? {
              approval: {
                toolId: id,
                name: String(d.name),
                input: (d.input ?? {}) as Record<string, unknown>,
                deadline: String(d.deadline ?? ''),
              },
            }
          : live.approval?.toolId === id
            ? { approval: null }
            : {};
      live = { ...live, ...held };
      // The thought that announced this call carries no tool-use id: link the latest unlinked one of that name.
      const unlinked = [...steps].reverse().find((s) => s.kind === 'tool' && !s.toolUseId && s.name === d.name);
      if (!steps.some((s) => matches(s, id)) && unlinked) {
        return { ...live, steps: steps.map((s) => (s === unlinked ? { ...s, toolUseId: id, input: d.input } : s)) };
      }
      if (steps.some((s) => matches(s, id))) return { ...live, steps: update(id, (s) => ({ ...s, input: d.input })) };
      return {
        ...live,
        steps: [...steps, { id, kind: 'tool', name: String(d.name), content: '', input: d.input, toolUseId: id }],
      };
    }
    case 'agent:tool-result':
      return {
        ...live,
        approval: live.approval?.toolId === d.toolId ? null : live.approval,
        steps: update(String(d.toolId), (s) => ({ ...s, result: String(d.result ?? ''), isError: Boolean(d.isError) })),
      };
    case 'agent:ask-question':
      return { ...live, question: { id: String(d.id), questions: d.questions as AskQuestion[] } };
    case 'agent:api-retry': {
      const retry = d.retry as { attempt: number; maxRetries: number } | null;
      return {
        ...live,
        notice: retry ? `The model did not answer; retrying (attempt ${retry.attempt} of ${retry.maxRetries})…` : '',
      };
    }
    case 'agent:compact':
      return { ...live, notice: 'Earlier messages were summarized to fit the model’s context.' };
    default:
      return live;
  }
}

function StepView(props: { step: Step }) {
  const s = props.step;
  return (
    <details class="step">
      <summary>
        {s.kind === 'thinking' ? 'Thinking' : `Tool: ${s.name ?? 'tool'}`}
        {s.kind === 'tool' && (s.result === undefined ? ' (running…)' : s.isError ? ' (failed)' : ' (done)')}
      </summary>
      {s.kind === 'thinking' ? (
        <pre>{s.content}</pre>
      ) : (
        <>
          <p class="notice">Input</p>
          <pre>{JSON.stringify(s.input ?? {}, null, 2)}</pre>
          {s.result !== undefined && (
            <>
              <p class="notice">Result</p>
              <pre>{s.result}</pre>
            </>
          )}
        </>
      )}
    </details>
  );
}

/** A held tool call: what it will run with, and Approve / Reject (docs/api/agent.md, "Tool approvals"). */
export function ApprovalCard(props: { conversationId: string; approval: PendingApprovalDto; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const answer = async (path: 'approve' | 'reject') => {
    setBusy(true);
    try {
      await api.post(`/api/agent/${path}`, {
        conversationId: props.conversationId,
        toolId: props.approval.toolId,
        ...(path === 'reject' && reason.trim() ? { reason: reason.trim() } : {}),
      });
      props.onDone();
    } catch (err) {
      setError((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  const deadline = Date.parse(props.approval.deadline);
  return (
    <section class="panel stack" role="group" aria-label="Tool call waiting for approval">
      <p>
        The assistant wants to run <strong>{props.approval.name}</strong> with:
      </p>
      <pre>{JSON.stringify(props.approval.input, null, 2)}</pre>
      {Number.isFinite(deadline) && (
        <p class="muted">Rejected automatically at {new Date(deadline).toLocaleTimeString()} without an answer.</p>
      )}
      <label for={`approval-reason-${props.approval.toolId}`}>Reason (told to the assistant when you reject)</label>
      <input
        id={`approval-reason-${props.approval.toolId}`}
        value={reason}
        onInput={(e) => setReason(e.currentTarget.value)}
      />
      <div class="row">
        <button type="button" class="primary" disabled={busy} onClick={() => void answer('approve')}>
          Approve
        </button>
        <button type="button" disabled={busy} onClick={() => void answer('reject')}>
          Reject
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/** A question's answer: the options chosen (one at most unless multiSelect) and any text of its own. */
interface QuestionAnswer {
  chosen: string[];
  text: string;
}
const NO_ANSWER: QuestionAnswer = { chosen: [], text: '' };
const answerText = (a: QuestionAnswer): string => [...a.chosen, a.text.trim()].filter(Boolean).join(', ');

/**
 * An ask-question card answered in place: per question one choice (several when multiSelect) or
 * text of one's own. The answer cannot be taken back, so every question needs one before it is sent.
 */
function QuestionCard(props: {
  conversationId: string;
  question: { id: string; questions: AskQuestion[] };
  onDone: () => void;
}) {
  const [answers, setAnswers] = useState<Record<string, QuestionAnswer>>({});
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const keyOf = (q: AskQuestion) => q.header || q.question;
  const complete = props.question.questions.every((q) => answerText(answers[keyOf(q)] ?? NO_ANSWER) !== '');
  return (
    <form
      class="panel stack"
      aria-label="Question from the assistant"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!complete || busy) return;
        const payload = Object.fromEntries(
          props.question.questions.map((q) => [keyOf(q), answerText(answers[keyOf(q)] ?? NO_ANSWER)]),
        );
        setBusy(true);
        try {
          await api.post('/api/agent/answer-question', {
            conversationId: props.conversationId,
            id: props.question.id,
            answers: payload,
          });
          props.onDone();
        } catch (err) {
          setError((err as ApiError).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      {props.question.questions.map((q, i) => {
        const key = keyOf(q);
        const answer = answers[key] ?? NO_ANSWER;
        const set = (next: QuestionAnswer) => setAnswers({ ...answers, [key]: next });
        return (
          <fieldset key={key} class="stack" aria-describedby={`q${i}-hint`}>
            <legend>{q.question}</legend>
            <p id={`q${i}-hint`} class="muted">
              {q.options.length === 0
                ? 'Write your answer.'
                : q.multiSelect
                  ? 'Choose one or more, or write your own answer.'
                  : 'Choose one, or write your own answer.'}
            </p>
            {q.options.map((o) => (
              <label key={o.label} class="row">
                <input
                  type={q.multiSelect ? 'checkbox' : 'radio'}
                  name={`q${i}`}
                  checked={answer.chosen.includes(o.label)}
                  onChange={(e) => {
                    const on = e.currentTarget.checked;
                    if (!q.multiSelect) return set({ chosen: [o.label], text: '' });
                    set({
                      ...answer,
                      chosen: on ? [...answer.chosen, o.label] : answer.chosen.filter((c) => c !== o.label),
                    });
                  }}
                />
                <span>
                  {o.label}
                  {o.description && <span class="muted"> — {o.description}</span>}
                </span>
              </label>
            ))}
            <label class="stack">
              {q.options.length === 0 ? 'Your answer' : 'Other answer'}
              <input
                value={answer.text}
                onInput={(e) => {
                  const text = e.currentTarget.value;
                  // One answer to a single-choice question: own text replaces the option chosen.
                  set(q.multiSelect ? { ...answer, text } : { chosen: text.trim() ? [] : answer.chosen, text });
                }}
              />
            </label>
          </fieldset>
        );
      })}
      <button type="submit" class="primary" disabled={!complete || busy}>
        Answer
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/** Conversations of the current space, and the chat of the one opened. */
export function ChatScreen(props: { space: Space; socket: EventSocket; conversationId?: string }) {
  const [list, setList] = useState<ConversationSummaryDto[]>([]);
  const [status, setStatus] = useState('');
  /** The conversation this screen just created: its message box takes the focus. */
  const [created, setCreated] = useState<string | null>(null);
  const base = `/api/spaces/${props.space.id}/conversations`;
  const reload = async () => {
    try {
      setList(await api.get<ConversationSummaryDto[]>(base));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  useEffect(() => void reload(), [props.space.id]);
  // A title the model gave (after a conversation's first exchange) arrives as `conversation:updated`.
  useEffect(
    () =>
      props.socket.on((event) => {
        const d = event.data as { spaceId?: string };
        if (event.channel === CONVERSATION_UPDATED && d.spaceId === props.space.id) void reload();
      }),
    [props.space.id],
  );
  const act = async (work: () => Promise<unknown>) => {
    try {
      await work();
      await reload();
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  const [query, setQuery] = useState('');
  const search = useRef<HTMLInputElement>(null);
  const create = () =>
    act(async () => {
      const created = await api.post<{ id: string }>(base, {});
      setCreated(created.id);
      go('chat', created.id);
    });
  // Keyboard shortcuts (listed under the list): new conversation, focus the message box, search.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (mod && e.shiftKey && e.key.toLowerCase() === 'o') {
        e.preventDefault();
        void create();
      } else if (mod && !e.shiftKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        search.current?.focus();
      } else if (e.shiftKey && e.key === 'Escape') {
        e.preventDefault();
        document.getElementById('composer')?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [props.space.id]);
  const needle = query.trim().toLowerCase();
  const sorted = [...list]
    .filter((c) => !needle || c.title.toLowerCase().includes(needle))
    .sort((a, b) => Number(b.starred) - Number(a.starred) || b.updatedAt.localeCompare(a.updatedAt));
  return (
    <div class={props.conversationId ? 'chat has-open' : 'chat'}>
      <h1 class="sr-only">Chat</h1>
      <section class="panel stack" aria-labelledby="conversations-title">
        <h2 id="conversations-title">Conversations</h2>
        <button class="primary" onClick={() => void create()} aria-keyshortcuts="Control+Shift+O">
          New conversation
        </button>
        <label for="conversation-search" class="sr-only">
          Search conversations
        </label>
        <input
          id="conversation-search"
          ref={search}
          type="search"
          placeholder="Search titles"
          aria-keyshortcuts="Control+K"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        {needle && sorted.length === 0 && <p class="muted">No conversation title matches.</p>}
        <ul class="plain list stack" aria-label="Conversations">
          {sorted.map((c) => (
            <li key={c.id} class="row">
              <a
                class="item grow"
                href={href('chat', c.id)}
                aria-current={c.id === props.conversationId ? 'true' : undefined}
              >
                {c.title}
              </a>
              <button
                class="link"
                aria-pressed={c.starred}
                aria-label={c.starred ? `Unstar ${c.title}` : `Star ${c.title}`}
                onClick={() => act(() => api.post(`${base}/${c.id}/star`, { starred: !c.starred }))}
              >
                {c.starred ? '★' : '☆'}
              </button>
              <button
                class="link"
                aria-label={`Rename ${c.title}`}
                onClick={async () => {
                  const title = await ask('Rename conversation', 'Title', c.title, 'Rename');
                  if (title) await act(() => api.put(`${base}/${c.id}`, { title }));
                }}
              >
                ✎
              </button>
              <button
                class="link danger"
                aria-label={`Delete ${c.title}`}
                onClick={async () => {
                  if (!(await confirmAction(`Delete “${c.title}” and its history? This cannot be undone.`))) return;
                  await act(() => api.del(`${base}/${c.id}`));
                  if (c.id === props.conversationId) go('chat');
                }}
              >
                ✕
              </button>
            </li>
          ))}
        </ul>
        <p role="status" class="muted">
          {status}
        </p>
        <details class="shortcuts">
          <summary>Keyboard shortcuts</summary>
          <dl>
            <dt>
              <kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>Shift</kbd>+<kbd>O</kbd>
            </dt>
            <dd>New conversation</dd>
            <dt>
              <kbd>Shift</kbd>+<kbd>Esc</kbd>
            </dt>
            <dd>Focus the message box</dd>
            <dt>
              <kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>K</kbd>
            </dt>
            <dd>Search conversations</dd>
            <dt>
              <kbd>Enter</kbd> / <kbd>Shift</kbd>+<kbd>Enter</kbd>
            </dt>
            <dd>Send / new line</dd>
          </dl>
        </details>
      </section>
      {props.conversationId ? (
        <Conversation
          key={props.conversationId}
          space={props.space}
          socket={props.socket}
          conversationId={props.conversationId}
          title={list.find((c) => c.id === props.conversationId)?.title}
          onTurnEnd={reload}
          autoFocus={created === props.conversationId}
          browser
        />
      ) : (
        <section class="panel">
          <p class="muted">Open a conversation or start a new one.</p>
        </section>
      )}
    </div>
  );
}

/** How long after a replay from the start of the log its `agent:complete` events may be an earlier turn's. */
const REPLAY_WINDOW_MS = 3_000;
/** How long a replayed `agent:complete` waits for a later `agent:turn-start` that shows it was an earlier turn's. */
const REPLAY_SETTLE_MS = 400;
/** Steps of stored messages are read for this many latest assistant messages. */
const PAST_STEPS_MESSAGES = 30;

/**
 * One conversation: its stored messages (with their steps, token usage and attachments), and
 * the running turn built from the socket's events (text streamed as Markdown, steps, question,
 * notices). Opened while a turn runs, it replays the turn from the server's event log, so text
 * streamed before the page was opened is shown too. `send`, `stop` and `load` let a digital
 * human's chat use its own operations.
 */
export function Conversation(props: {
  space: Space;
  socket: EventSocket;
  conversationId: string;
  /** The title as the list knows it (renamed there): it wins over the one read with the messages. */
  title?: string;
  onTurnEnd?: () => void;
  send?: (message: string, images: Attachment[]) => Promise<unknown>;
  stop?: () => Promise<unknown>;
  load?: () => Promise<ConversationDto>;
  /** Where a stored message's thoughts are read; default: the conversation records' operation. */
  thoughtsPath?: (messageId: string) => string;
  /** The assistant's chat: the AI browser switch, and its pages' live view. */
  browser?: boolean;
  /** Focus the message box when shown (a conversation just created). */
  autoFocus?: boolean;
}) {
  const id = props.conversationId;
  const [conversation, setConversation] = useState<ConversationDto | null>(null);
  const [live, setLive] = useState<Live>(EMPTY);
  const [generating, setGenerating] = useState(false);
  const [draft, setDraft] = useState('');
  const [pending, setPending] = useState<PendingFile[]>([]);
  const [sending, setSending] = useState(false);
  /** The message in the box failed to go (an upload or the server refused it): Retry would send another one. */
  const [unsent, setUnsent] = useState(false);
  const [error, setError] = useState('');
  /** The last turn failed on the server (not a message the server refused, nor a stop): Retry is offered. */
  const [turnFailed, setTurnFailed] = useState(false);
  const [usage, setUsage] = useState<Partial<TokenUsageDto> | null>(null);
  /** The text of the last user message being edited (null: not editing). */
  const [editing, setEditing] = useState<string | null>(null);
  const editBox = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (editing !== null) editBox.current?.focus();
  }, [editing !== null]);
  const bottom = useRef<HTMLDivElement>(null);
  const composer = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (props.autoFocus) composer.current?.focus();
  }, []);
  const thoughtsPath =
    props.thoughtsPath ??
    ((messageId: string) =>
      `/api/spaces/${props.space.id}/conversations/${encodeURIComponent(id)}/messages/${encodeURIComponent(messageId)}/thoughts`);

  const load = async () => {
    try {
      setConversation(
        await (
          props.load ??
          (() => api.get<ConversationDto>(`/api/spaces/${props.space.id}/conversations/${encodeURIComponent(id)}`))
        )(),
      );
    } catch (err) {
      setError((err as ApiError).message);
    }
  };

  useEffect(() => {
    let replayUntil = 0;
    let pendingEnd: ReturnType<typeof setTimeout> | undefined;
    const finish = (tokenUsage?: TokenUsageDto) => {
      setGenerating(false);
      if (tokenUsage) setUsage(tokenUsage);
      void load().then(() => setLive(EMPTY));
      props.onTurnEnd?.();
    };
    void load();
    props.socket.subscribe(id);
    void api.get<SessionState>(`/api/agent/session/${encodeURIComponent(id)}`).then(
      (state) => {
        if (!state.active) return;
        setGenerating(true);
        // What is known at once (steps, a pending question); the replay then rebuilds the turn with its text.
        setLive((prev) =>
          prev.text || prev.steps.length
            ? prev
            : {
                ...EMPTY,
                steps: stepsFromThoughts(state.thoughts),
                question: state.pendingQuestion,
                approval: state.pendingApproval ?? null,
              },
        );
        replayUntil = Date.now() + REPLAY_WINDOW_MS;
        props.socket.replay(id);
      },
      () => undefined,
    );
    const off = props.socket.on((event) => {
      const d = event.data as {
        conversationId?: string;
        tokenUsage?: TokenUsageDto;
        error?: string;
        errorType?: string;
      };
      if (d.conversationId !== id) return;
      if (event.channel === STREAM_GAP_CHANNEL) return void load();
      if (event.channel === 'agent:turn-start') {
        clearTimeout(pendingEnd);
        setGenerating(true);
        setError('');
        setTurnFailed(false);
      }
      if (event.channel === 'agent:error') {
        setError(d.errorType === 'interrupted' ? 'Stopped.' : (d.error ?? 'The turn failed.'));
        setTurnFailed(d.errorType !== 'interrupted');
      }
      if (event.channel === 'agent:complete') {
        // Replayed from the log's start, this may end an earlier turn: a turn-start right after says so.
        if (Date.now() < replayUntil) pendingEnd = setTimeout(() => finish(d.tokenUsage), REPLAY_SETTLE_MS);
        else finish(d.tokenUsage);
        return;
      }
      setLive((prev) => applyEvent(prev, event));
    });
    return () => {
      clearTimeout(pendingEnd);
      off();
      props.socket.unsubscribe(id);
    };
  }, [id]);

  useEffect(() => bottom.current?.scrollIntoView({ block: 'end' }), [conversation, live]);

  const stored: MessageDto[] = conversation?.messages ?? [];
  const retried = retriedMessages(stored);
  const messages = stored.filter((m) => !retried.has(m.id));
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const last = messages.at(-1);
  // Only a failed turn offers Retry: a message the server refused (an attachment, say) stays in the box to fix.
  const failed = turnFailed || last?.role === 'user' || Boolean(last?.error);
  const assistantIds = messages.filter((m) => m.role === 'assistant' && !m.id.startsWith('local-')).map((m) => m.id);
  // Edit and Regenerate: the assistant's chat (a digital human's has operations of its own), between turns.
  const canRevise = !props.send && !generating && Boolean(lastUser) && !lastUser?.id.startsWith('local-');
  const conversationPath = `/api/spaces/${props.space.id}/conversations/${encodeURIComponent(id)}`;

  /**
   * Edit (another text) and Regenerate (the same text): the last message is marked `superseded`,
   * then the message is sent; the server then leaves the replaced turn out of the model's
   * context, as it does a failed turn's (docs/api.md, "Agent"). No branch is kept.
   */
  async function revise(message: string): Promise<void> {
    if (!lastUser) return;
    setError('');
    try {
      const marked = await api.put<MessageDto>(`${conversationPath}/messages/last`, { superseded: true });
      setConversation((c) =>
        c ? { ...c, messages: c.messages.map((m) => (m.id === marked.id ? { ...m, superseded: true } : m)) } : c,
      );
    } catch (err) {
      setError((err as ApiError).message);
      return;
    }
    if (await submit(message, { images: attachmentsOf(lastUser), files: sentFilesOf(lastUser) })) setEditing(null);
  }
  const withSteps = new Set(assistantIds.slice(-PAST_STEPS_MESSAGES));

  async function submit(message: string, attached: Outgoing): Promise<boolean> {
    setError('');
    setTurnFailed(false);
    const payload = attached.images.map(({ mediaType, data }) => ({ type: 'base64', mediaType, data }));
    const files = attached.files;
    // Shown before the request: a quick turn's agent:complete can arrive over the socket before
    // the request's answer, and must find the turn already on screen to end it.
    const localId = `local-${Date.now()}`;
    // A message sent during a turn joins it (docs/api.md, "Agent"): a refusal then leaves that turn on.
    const turnWasOn = generating;
    setGenerating(true);
    setConversation((c) =>
      c
        ? {
            ...c,
            messages: [
              ...c.messages,
              {
                id: localId,
                role: 'user',
                content: message,
                createdAt: new Date().toISOString(),
                ...(payload.length ? { images: payload } : {}),
                ...(files.length ? { attachments: files } : {}),
              },
            ],
          }
        : c,
    );
    try {
      if (props.send) await props.send(message, payload);
      else
        await api.post('/api/agent/message', {
          spaceId: props.space.id,
          conversationId: id,
          message,
          ...(payload.length ? { images: payload } : {}),
          ...(files.length ? { attachments: files.map((f) => ({ path: f.path })) } : {}),
        });
      return true;
    } catch (err) {
      if (!turnWasOn) setGenerating(false);
      setConversation((c) => (c ? { ...c, messages: c.messages.filter((m) => m.id !== localId) } : c));
      setError((err as ApiError).message);
      return false;
    }
  }

  const updatePending = (key: number, change: Partial<PendingFile>) =>
    setPending((list) => list.map((p) => (p.key === key ? { ...p, ...change } : p)));
  const dropPending = (list: PendingFile[]) => {
    for (const p of list) if (p.preview) URL.revokeObjectURL(p.preview);
  };

  /**
   * Uploads the attached files not uploaded yet (docs/web-app.md, "Attachments"); null when one
   * failed: the message is then not sent, and each file says how it went.
   */
  async function uploadPending(list: PendingFile[]): Promise<MessageAttachmentDto[] | null> {
    const sent: MessageAttachmentDto[] = [];
    let failures = 0;
    for (const p of list) {
      if (p.uploaded) {
        sent.push(p.uploaded);
        continue;
      }
      updatePending(p.key, { state: 'uploading', progress: 0, error: undefined });
      try {
        const uploaded = await uploadAttachment(props.space.id, p.file, (progress) =>
          updatePending(p.key, { progress }),
        );
        updatePending(p.key, { state: 'uploaded', uploaded });
        sent.push(uploaded);
      } catch (err) {
        updatePending(p.key, { state: 'failed', error: (err as ApiError).message });
        failures += 1;
      }
    }
    return failures === 0 ? sent : null;
  }

  /** A digital human's chat takes images inside the message (base64), within the body limit. */
  async function inlineImages(list: PendingFile[]): Promise<Attachment[] | null> {
    const images: Attachment[] = [];
    for (const p of list) images.push({ name: p.file.name, mediaType: p.file.type, data: await readAsBase64(p.file) });
    if (images.reduce((n, a) => n + a.data.length, 0) > ATTACHMENTS_MAX_BASE64) {
      setError('Attached images must stay under about 65 KB in all (a message is limited to 100 KB).');
      return null;
    }
    return images;
  }

  async function send(e: Event) {
    e.preventDefault();
    const message = draft.trim();
    if (!message || sending) return;
    setSending(true);
    try {
      const list = pending;
      let outgoing: Outgoing | null = null;
      if (props.send) {
        const images = await inlineImages(list);
        if (images) outgoing = { images, files: [] };
      } else {
        const files = await uploadPending(list);
        if (files) outgoing = { images: [], files };
        else
          setError('An attachment could not be uploaded, so your message was not sent. Remove it or press Send again.');
      }
      if (outgoing && (await submit(message, outgoing))) {
        setDraft('');
        dropPending(list);
        setPending([]);
        setUnsent(false);
      } else setUnsent(true);
    } finally {
      setSending(false);
    }
  }

  /** Attaches picked, dropped or pasted files; large photos are downscaled first. */
  async function attach(files: File[]) {
    const added: PendingFile[] = [];
    for (const original of files) {
      const isImage = original.type.startsWith('image/');
      if (props.send && !isImage) {
        setError(`${original.name} is not an image.`);
        continue;
      }
      const file = isImage ? await downscaled(original) : original;
      added.push({
        key: ++pendingKeys,
        file,
        preview: isImage ? URL.createObjectURL(file) : null,
        state: 'ready',
        progress: 0,
      });
    }
    setPending((list) => [...list, ...added]);
  }

  return (
    <section class="panel stack" aria-label={props.title ?? conversation?.title ?? 'Conversation'}>
      <div class="row">
        {props.browser && (
          <a class="phone-only" href={href('chat')}>
            ← Conversations
          </a>
        )}
        <h2 class="grow conversation-title">{props.title ?? conversation?.title ?? '…'}</h2>
        <button
          type="button"
          disabled={messages.length === 0}
          onClick={() => {
            const title = props.title ?? conversation?.title ?? 'Conversation';
            const file = `${title.replace(/[^\p{L}\p{N} _-]+/gu, '').trim() || 'conversation'}.md`;
            download(file, conversationMarkdown(title, messages), 'text/markdown');
          }}
        >
          Export as Markdown
        </button>
        {!props.send && conversation && (
          <ModelPicker
            path={conversationPath}
            conversation={conversation}
            onPinned={(pinned) => setConversation((c) => (c ? { ...c, ...pinned } : c))}
          />
        )}
        {props.browser && <BrowserToggle spaceId={props.space.id} conversationId={id} socket={props.socket} />}
      </div>
      <div class="conversation-body">
        <div class="messages" role="log" aria-label="Messages" aria-live="polite">
          {messages.map((m) => (
            <div key={m.id} class={`msg ${m.role}`}>
              <p class="msg-meta muted">
                <span>{m.role === 'user' ? 'You' : 'Assistant'}</span> <MessageTime at={m.createdAt} />{' '}
                <CopyButton text={m.content} label={m.role === 'user' ? 'Copy your message' : 'Copy reply'} />
                {canRevise && m === lastUser && editing === null && (
                  <button type="button" class="link" onClick={() => setEditing(m.content)}>
                    Edit
                  </button>
                )}
                {canRevise && m === last && m.role === 'assistant' && (
                  <button
                    type="button"
                    class="link"
                    aria-describedby="regenerate-help"
                    onClick={() => void revise(lastUser!.content)}
                  >
                    Regenerate
                  </button>
                )}
                {canRevise && m === last && m.role === 'assistant' && (
                  <span id="regenerate-help" class="sr-only">
                    Replaces this reply with a new one.
                  </span>
                )}
              </p>
              {m.role === 'assistant' && withSteps.has(m.id) && <PastSteps path={thoughtsPath(m.id)} />}
              {m === lastUser && editing !== null && canRevise ? (
                <form
                  class="stack"
                  aria-label="Edit your message"
                  onSubmit={(e) => {
                    e.preventDefault();
                    if (editing.trim()) void revise(editing.trim());
                  }}
                >
                  <label for="edit-message">Edit your message</label>
                  <textarea
                    id="edit-message"
                    rows={3}
                    value={editing}
                    ref={editBox}
                    onInput={(e) => setEditing(e.currentTarget.value)}
                    onKeyDown={(e) => {
                      if (e.key === 'Escape') setEditing(null);
                    }}
                  />
                  <SubmitOrCancel disabled={!editing.trim()} onCancel={() => setEditing(null)}>
                    Send edited message
                  </SubmitOrCancel>
                </form>
              ) : m.role === 'user' ? (
                <p class="pre-wrap">{m.content}</p>
              ) : (
                <Markdown text={m.content} />
              )}
              {(attachmentsOf(m).length > 0 || sentFilesOf(m).length > 0) && (
                <div class="row attachments">
                  {attachmentsOf(m).map((a, i) => (
                    <img key={i} src={`data:${a.mediaType};base64,${a.data}`} alt={`Attached image ${i + 1}`} />
                  ))}
                  {sentFilesOf(m).map((a, i) => (
                    <SentAttachment
                      key={a.path}
                      space={props.space}
                      attachment={a}
                      index={attachmentsOf(m).length + i}
                    />
                  ))}
                </div>
              )}
              {m.error && <p class="error">{m.error}</p>}
              {m.role === 'assistant' && m.tokenUsage && (
                <p class="notice usage" title="Token usage and cost of this reply">
                  {usageText(m.tokenUsage)}
                </p>
              )}
            </div>
          ))}
          {(generating || live.text || live.steps.length > 0) && (
            <div class="msg assistant" aria-busy={generating} data-live="true">
              {live.steps.map((s) => (
                <StepView key={s.id} step={s} />
              ))}
              {live.text ? <Markdown text={live.text} /> : generating && <p class="muted">Working…</p>}
              {live.notice && (
                <p class="notice" role="status">
                  {live.notice}
                </p>
              )}
            </div>
          )}
          {live.question && (
            <QuestionCard
              conversationId={id}
              question={live.question}
              onDone={() => setLive((l) => ({ ...l, question: null }))}
            />
          )}
          {live.approval && (
            <ApprovalCard
              conversationId={id}
              approval={live.approval}
              onDone={() => setLive((l) => ({ ...l, approval: null }))}
            />
          )}
          <div ref={bottom} />
        </div>
        {props.browser && <ChatBrowserPanel conversationId={id} socket={props.socket} />}
      </div>
      {usage && <p class="notice">Last turn: {usageText(usage)}</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!generating && lastUser && failed && !unsent && (
        <div class="row">
          <button
            type="button"
            onClick={() =>
              void submit(lastUser.content, { images: attachmentsOf(lastUser), files: sentFilesOf(lastUser) })
            }
            aria-describedby="retry-help"
          >
            Retry
          </button>
          <span id="retry-help" class="muted">
            Sends your last message again.
          </span>
        </div>
      )}
      <form class="stack" onSubmit={send}>
        <label for="composer">Message</label>
        <textarea
          ref={composer}
          id="composer"
          rows={3}
          value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) void send(e);
          }}
          onPaste={(e) => {
            // An image pasted from the clipboard (a screenshot, a copied picture) is attached.
            const files = Array.from(e.clipboardData?.files ?? []);
            if (files.length === 0) return;
            if (!e.clipboardData?.types.includes('text/plain')) e.preventDefault();
            void attach(files);
          }}
        />
        {pending.length > 0 && (
          <ul class="plain stack" aria-label="Attached files">
            {pending.map((p) => (
              <li key={p.key} class="row">
                {p.preview && <img class="thumb" src={p.preview} alt="" />}
                <span>{p.file.name}</span>
                <span class={p.state === 'failed' ? 'error' : 'muted'} role="status">
                  {p.state === 'uploading' && (
                    <progress max={1} value={p.progress} aria-label={`Uploading ${p.file.name}`} />
                  )}{' '}
                  {pendingState(p)}
                </span>
                <button
                  type="button"
                  class="link danger"
                  aria-label={`Remove ${p.file.name}`}
                  disabled={p.state === 'uploading'}
                  onClick={() => {
                    dropPending([p]);
                    setPending((list) => list.filter((other) => other.key !== p.key));
                  }}
                >
                  ✕
                </button>
              </li>
            ))}
          </ul>
        )}
        <div class="row">
          <button type="submit" class="primary" disabled={!draft.trim() || sending}>
            Send
          </button>
          <label class="button-like">
            {props.send ? 'Attach image' : 'Attach file'}
            <input
              type="file"
              accept={props.send ? 'image/*' : undefined}
              multiple
              class="sr-only"
              onChange={(e) => {
                void attach(Array.from(e.currentTarget.files ?? []));
                e.currentTarget.value = '';
              }}
            />
          </label>
          {generating && (
            <button
              type="button"
              onClick={() =>
                (props.stop ? props.stop() : api.post('/api/agent/stop', { conversationId: id })).catch(() => undefined)
              }
            >
              Stop
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

/** The value of a pin in the model picker ('' is the default model). */
const pinValue = (sourceId: string, modelId: string): string => JSON.stringify([sourceId, modelId]);

/**
 * The model a conversation runs on (docs/api.md, "Conversations": the pin of
 * `PUT …/conversations/:id`): the configured sources' models, or the default one (no pin,
 * the current source and its model).
 */
function ModelPicker(props: {
  path: string;
  conversation: ConversationDto;
  onPinned: (pin: { modelSourceId?: string; modelId?: string }) => void;
}) {
  const [config, setConfig] = useState<AppConfiguration | null>(null);
  const [status, setStatus] = useState('');
  useEffect(() => {
    void api.get<AppConfiguration>('/api/config').then(setConfig, () => undefined);
  }, []);
  const sources = config?.aiSources.sources ?? [];
  if (sources.length === 0) return null;
  const current = sources.find((s) => s.id === config?.aiSources.currentId);
  const { modelSourceId, modelId } = props.conversation;
  const pinned = modelSourceId && modelId ? pinValue(modelSourceId, modelId) : '';
  const options = sources.flatMap((s) =>
    [s.model, ...s.availableModels.map((m) => m.id).filter((m) => m !== s.model)].map((m) => ({
      value: pinValue(s.id, m),
      label: `${s.name} · ${m}`,
    })),
  );
  // A pin naming a removed source or an unlisted model still shows.
  if (pinned && !options.some((o) => o.value === pinned))
    options.push({ value: pinned, label: `${modelId} (not listed)` });
  return (
    <span class="row">
      <label for="conversation-model" class="sr-only">
        Model
      </label>
      <select
        id="conversation-model"
        value={pinned}
        onChange={async (e) => {
          const value = e.currentTarget.value;
          const [sourceId, model] = value ? (JSON.parse(value) as [string, string]) : [null, null];
          try {
            const updated = await api.put<ConversationDto>(props.path, { modelSourceId: sourceId, modelId: model });
            props.onPinned({ modelSourceId: updated.modelSourceId, modelId: updated.modelId });
            setStatus(model ? `Model: ${model}` : 'Model: default');
          } catch (err) {
            setStatus((err as ApiError).message);
          }
        }}
      >
        <option value="">Default{current ? ` (${current.name} · ${current.model})` : ''}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      <span role="status" class="sr-only">
        {status}
      </span>
    </span>
  );
}
