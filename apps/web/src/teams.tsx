import type { AppDto } from '#contracts/apps.js';
import {
  type BoardTaskDto,
  type DeliveryReceipt,
  type EpochBoardDto,
  TASK_STATUSES,
  type TeamDetailDto,
  type TeamDto,
  type TeamEpochDto,
  type TeamMemberDto,
  teamMemberConversationId,
} from '#contracts/teams.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { appName } from './apps.js';
import { api, ApiError, q } from './api.js';
import { confirmAction } from './dialogs.js';
import { go, href } from './route.js';
import type { EventSocket } from './socket.js';
import type { Space } from './spaces.js';

/**
 * Teams (docs/web-app.md, "Teams"): the space's teams, creating one from installed digital
 * humans, and one team's page: roster with live status, run/pause, messages to a member, the
 * board of an epoch (tasks by status, findings, activity) and the epochs history. Loaded only
 * when the screen is opened (it is not part of the first screen).
 */
export function TeamsScreen(props: { space: Space; socket: EventSocket; teamId?: string }) {
  return props.teamId ? (
    <TeamPage key={props.teamId} teamId={props.teamId} socket={props.socket} />
  ) : (
    <TeamList space={props.space} socket={props.socket} />
  );
}

const STATUS_TEXT: Record<TeamDto['status'], string> = {
  idle: 'idle',
  running: 'running',
  waiting_user: 'waiting for you',
  error: 'error',
};

function TeamList(props: { space: Space; socket: EventSocket }) {
  const [teams, setTeams] = useState<TeamDto[] | null>(null);
  const [status, setStatus] = useState('');
  const reload = async () => {
    try {
      setTeams(await api.get<TeamDto[]>(`/api/teams?spaceId=${q(props.space.id)}`));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  useEffect(() => {
    void reload();
    return props.socket.on((event) => {
      if (event.channel === 'team:updated') void reload();
    });
  }, [props.space.id]);
  return (
    <div class="stack">
      <section class="panel stack" aria-labelledby="teams-title">
        <h1 id="teams-title">Teams</h1>
        {teams === null ? (
          <p class="muted">{status || 'Loading…'}</p>
        ) : teams.length === 0 ? (
          <p class="muted">No team in this space yet.</p>
        ) : (
          <ul class="plain cards" aria-label="Teams of this space">
            {teams.map((t) => (
              <li key={t.id} class="panel stack">
                <a href={href('teams', t.id)}>
                  <strong>{t.name}</strong>
                </a>
                <span class="muted">{t.goal}</span>
                <span class="row">
                  <span class="badge">{STATUS_TEXT[t.status]}</span>
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <CreateTeam space={props.space} onCreated={(id) => go('teams', id)} />
    </div>
  );
}

interface Pick {
  memberName: string;
  role: string;
}

/** A member `propose-members` suggests. */
interface Proposal {
  memberName: string;
  role: string;
  responsibility: string;
}

function CreateTeam(props: { space: Space; onCreated: (teamId: string) => void }) {
  const [apps, setApps] = useState<AppDto[]>([]);
  const [name, setName] = useState('');
  const [goal, setGoal] = useState('');
  const [leadAppId, setLeadAppId] = useState('');
  const [picked, setPicked] = useState<Record<string, Pick>>({});
  const [proposals, setProposals] = useState<Array<Proposal & { keep: boolean }>>([]);
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const propose = async () => {
    setBusy(true);
    setStatus('Asking the model for members…');
    try {
      const found = await api.post<Proposal[]>('/api/teams/propose-members', { goal, owningSpaceId: props.space.id });
      setProposals(found.map((p) => ({ ...p, keep: true })));
      setStatus(found.length ? `${found.length} member(s) proposed.` : 'The model proposed nobody.');
    } catch (err) {
      setStatus((err as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    void api
      .get<AppDto[]>('/api/apps')
      .then((all) =>
        setApps(all.filter((a) => a.status !== 'uninstalled' && (a.spaceId === null || a.spaceId === props.space.id))),
      )
      .catch((err: ApiError) => setStatus(err.message));
  }, [props.space.id]);
  const toggle = (app: AppDto, on: boolean) => {
    const next = { ...picked };
    if (on) next[app.id] = { memberName: appName(app), role: '' };
    else delete next[app.id];
    setPicked(next);
  };
  return (
    <form
      class="panel stack"
      aria-labelledby="team-create-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          const members = Object.entries(picked)
            .filter(([appId]) => appId !== leadAppId)
            .map(([appId, p]) => ({
              appId,
              ...(p.memberName.trim() ? { memberName: p.memberName.trim() } : {}),
              ...(p.role.trim() ? { role: p.role.trim() } : {}),
            }));
          const kept = proposals.filter((p) => p.keep).map(({ keep: _keep, ...p }) => p);
          const team = await api.post<TeamDto>('/api/teams', {
            input: {
              name,
              goal,
              owningSpaceId: props.space.id,
              members,
              ...(leadAppId ? { leadAppId } : {}),
              ...(kept.length > 0 ? { memberSourcing: 'ai' } : {}),
            },
            ...(kept.length > 0 ? { confirmedProposal: kept } : {}),
          });
          setStatus('Team created.');
          props.onCreated(team.id);
        } catch (err) {
          setStatus((err as ApiError).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2 id="team-create-title">New team</h2>
      <label for="team-name">Name</label>
      <input id="team-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="team-goal">Goal</label>
      <textarea id="team-goal" required rows={3} value={goal} onInput={(e) => setGoal(e.currentTarget.value)} />
      <label for="team-lead">Lead</label>
      <select id="team-lead" value={leadAppId} onChange={(e) => setLeadAppId(e.currentTarget.value)}>
        <option value="">Provision a lead for this team</option>
        {apps.map((a) => (
          <option key={a.id} value={a.id}>
            {appName(a)}
          </option>
        ))}
      </select>
      <fieldset class="stack">
        <legend>Members (installed digital humans)</legend>
        {apps.length === 0 && <p class="muted">Install digital humans first (Digital humans, Store).</p>}
        {apps
          .filter((a) => a.id !== leadAppId)
          .map((a) => (
            <div key={a.id} class="row">
              <label class="row">
                <input
                  type="checkbox"
                  checked={Boolean(picked[a.id])}
                  onChange={(e) => toggle(a, e.currentTarget.checked)}
                />{' '}
                {appName(a)}
              </label>
              {picked[a.id] && (
                <>
                  <label for={`member-name-${a.id}`} class="sr-only">
                    Member name of {appName(a)}
                  </label>
                  <input
                    id={`member-name-${a.id}`}
                    value={picked[a.id]!.memberName}
                    onInput={(e) =>
                      setPicked({ ...picked, [a.id]: { ...picked[a.id]!, memberName: e.currentTarget.value } })
                    }
                  />
                  <label for={`member-role-${a.id}`} class="sr-only">
                    Role of {appName(a)}
                  </label>
                  <input
                    id={`member-role-${a.id}`}
                    placeholder="Role"
                    value={picked[a.id]!.role}
                    onInput={(e) => setPicked({ ...picked, [a.id]: { ...picked[a.id]!, role: e.currentTarget.value } })}
                  />
                </>
              )}
            </div>
          ))}
      </fieldset>
      <fieldset class="stack">
        <legend>Proposed members (provisioned with the team, removed when it is dissolved)</legend>
        <button type="button" disabled={busy || !goal.trim()} onClick={() => void propose()}>
          Propose members from the goal
        </button>
        {proposals.map((p, i) => (
          <label key={p.memberName} class="row">
            <input
              type="checkbox"
              checked={p.keep}
              onChange={(e) =>
                setProposals(proposals.map((x, j) => (j === i ? { ...x, keep: e.currentTarget.checked } : x)))
              }
            />{' '}
            {p.memberName}{' '}
            <span class="muted">
              ({p.role}: {p.responsibility})
            </span>
          </label>
        ))}
      </fieldset>
      <button type="submit" class="primary" disabled={busy || !name.trim() || !goal.trim()}>
        Create team
      </button>
      <p role="status" class="muted">
        {status}
      </p>
    </form>
  );
}

type MemberState = 'working' | 'idle';

function TeamPage(props: { teamId: string; socket: EventSocket }) {
  const { teamId } = props;
  const [detail, setDetail] = useState<TeamDetailDto | null>(null);
  const [epochs, setEpochs] = useState<TeamEpochDto[]>([]);
  const [shownEpochId, setShownEpochId] = useState<string | null>(null);
  const [board, setBoard] = useState<EpochBoardDto | null>(null);
  const [working, setWorking] = useState<Record<string, MemberState>>({});
  /** Counts read-backs, so an open transcript reads itself again with the rest. */
  const [tick, setTick] = useState(0);
  const [status, setStatus] = useState('');
  // The latest values for the socket listener (registered once).
  const shown = useRef<string | null>(null);
  shown.current = shownEpochId;

  const loadDetail = async (): Promise<TeamDetailDto | null> => {
    try {
      const d = await api.get<TeamDetailDto>(`/api/teams/${q(teamId)}/detail`);
      setDetail(d);
      return d;
    } catch (err) {
      setStatus((err as ApiError).message);
      return null;
    }
  };
  const loadEpochs = async (): Promise<TeamEpochDto[]> => {
    const list = await api.get<TeamEpochDto[]>(`/api/teams/${q(teamId)}/epochs`).catch(() => [] as TeamEpochDto[]);
    setEpochs(list);
    return list;
  };
  const loadBoard = async (epochId: string | null) => {
    if (!epochId) return setBoard(null);
    try {
      setBoard(await api.get<EpochBoardDto>(`/api/teams/${q(teamId)}/epochs/${q(epochId)}/board`));
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };
  /** Who works now: a member with an active turn in the epoch shown. */
  const loadWorking = async (d: TeamDetailDto | null, epochId: string | null) => {
    if (!d || !epochId) return setWorking({});
    const sessions = await api.get<string[]>('/api/agent/sessions').catch(() => [] as string[]);
    setWorking(
      Object.fromEntries(
        d.members.map((m) => [
          m.appId,
          sessions.includes(teamMemberConversationId(m.appId, teamId, epochId)) ? 'working' : 'idle',
        ]),
      ),
    );
  };
  const refresh = async (preferCurrent = false) => {
    const [d, list] = await Promise.all([loadDetail(), loadEpochs()]);
    const current = d?.team.currentEpochId ?? null;
    const epochId =
      preferCurrent || !shown.current || !list.some((e) => e.id === shown.current)
        ? (current ?? list[0]?.id ?? null)
        : shown.current;
    setShownEpochId(epochId);
    await Promise.all([loadBoard(epochId), loadWorking(d, epochId)]);
    setTick((t) => t + 1);
  };

  useEffect(() => {
    void refresh(true);
    let pending: ReturnType<typeof setTimeout> | null = null;
    // Bursts of events (a busy run) are read back at most every 300 ms.
    const soon = (preferCurrent: boolean) => {
      if (pending) clearTimeout(pending);
      pending = setTimeout(() => void refresh(preferCurrent), 300);
    };
    const off = props.socket.on((event) => {
      const d = event.data as { teamId?: string; changed?: string; removed?: boolean };
      if (d?.teamId !== teamId) return;
      if (event.channel === 'team:updated' && d.removed) return go('teams');
      if (event.channel === 'team:updated') soon(d.changed === 'epoch-opened');
      else if (
        event.channel === 'team:blackboard' ||
        event.channel === 'team:member-history' ||
        event.channel === 'team:message'
      )
        soon(false);
    });
    return () => {
      off();
      if (pending) clearTimeout(pending);
    };
  }, [teamId]);

  if (!detail) return <p class="muted">{status || 'Loading…'}</p>;
  const { team, members } = detail;
  const nameOf = (appId: string | null) =>
    appId === null ? 'the team' : (members.find((m) => m.appId === appId)?.memberName ?? 'a former member');
  const running =
    team.currentEpochId !== null && epochs.some((e) => e.id === team.currentEpochId && e.lifecycle === 'run');
  const act = async (what: () => Promise<unknown>, done: string) => {
    try {
      await what();
      setStatus(done);
      await refresh(true);
    } catch (err) {
      setStatus((err as ApiError).message);
    }
  };

  return (
    <div class="stack">
      <section class="panel stack" aria-labelledby="team-title">
        <p>
          <a href={href('teams')}>← Teams</a>
        </p>
        <h1 id="team-title">{team.name}</h1>
        <p class="muted">{team.goal}</p>
        <span class="row">
          <span class="badge" aria-label="Team status">
            {STATUS_TEXT[team.status]}
          </span>
          <button
            class="primary"
            disabled={running}
            onClick={() => act(() => api.post(`/api/teams/${q(teamId)}/run`), 'The run started.')}
          >
            Run
          </button>
          <button disabled={!running} onClick={() => act(() => api.post(`/api/teams/${q(teamId)}/pause`), 'Paused.')}>
            Pause
          </button>
          <button
            class="danger"
            onClick={async () => {
              const question = `Dissolve the team "${team.name}"? Members it provisioned are uninstalled.`;
              if (!(await confirmAction(question, 'Dissolve'))) return;
              await act(() => api.del(`/api/teams/${q(teamId)}`), 'Dissolved.');
              go('teams');
            }}
          >
            Dissolve
          </button>
        </span>
        <p role="status" class="muted">
          {status}
        </p>
      </section>

      <section class="panel stack" aria-labelledby="roster-title">
        <h2 id="roster-title">Roster</h2>
        <ul class="plain stack" aria-label="Members">
          {members.map((m) => (
            <li key={m.appId} class="row" data-member={m.memberName}>
              <a href={href('apps', m.appId)}>
                <strong>{m.memberName}</strong>
              </a>
              <span class="muted">
                {m.role}
                {m.isLead && m.role !== 'lead' ? ' · lead' : ''}
                {m.aiProvisioned ? ' · provisioned' : ''}
              </span>
              <span class={`badge${working[m.appId] === 'working' ? ' ok' : ''}`}>
                {team.status === 'waiting_user' && detail.pendingEscalations.some((p) => p.appId === m.appId)
                  ? 'waiting for you'
                  : (working[m.appId] ?? 'idle')}
              </span>
              {shownEpochId && <Transcript teamId={teamId} member={m} epochId={shownEpochId} tick={tick} />}
            </li>
          ))}
        </ul>
        {detail.pendingEscalations.map((p) => (
          <p key={p.entryId} class="notice">
            {p.memberName} asks: {p.question} <a href={href('apps', p.appId)}>Answer on its page</a>
          </p>
        ))}
      </section>

      <SendMessage teamId={teamId} members={members} leadAppId={team.leadAppId} />

      <section class="panel stack" aria-labelledby="board-title">
        <h2 id="board-title">Board</h2>
        {epochs.length > 0 && (
          <>
            <label for="epoch-pick">Epoch</label>
            <select
              id="epoch-pick"
              value={shownEpochId ?? ''}
              onChange={(e) => {
                const id = e.currentTarget.value;
                setShownEpochId(id);
                void loadBoard(id);
                void loadWorking(detail, id);
              }}
            >
              {epochs.map((e) => (
                <option key={e.id} value={e.id}>
                  {epochLabel(e)}
                </option>
              ))}
            </select>
          </>
        )}
        {!board ? <p class="muted">No run yet: Run starts one.</p> : <Board board={board} nameOf={nameOf} />}
      </section>

      <section class="panel stack" aria-labelledby="epochs-title">
        <h2 id="epochs-title">Epochs</h2>
        {epochs.length === 0 ? (
          <p class="muted">None yet.</p>
        ) : (
          <table aria-label="Epochs history">
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Kind</th>
                <th scope="col">Trigger</th>
                <th scope="col">End</th>
                <th scope="col">Outcome</th>
                <th scope="col">Summary</th>
              </tr>
            </thead>
            <tbody>
              {epochs.map((e) => (
                <tr key={e.id}>
                  <td>{new Date(e.startedAt).toLocaleString()}</td>
                  <td>{e.lifecycle}</td>
                  <td>{e.triggerType ?? '—'}</td>
                  <td>{e.endedAt ? (e.endReason ?? 'ended') : 'open'}</td>
                  <td>{e.outcome ?? '—'}</td>
                  <td>{e.summary ?? e.title ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}

const epochLabel = (e: TeamEpochDto): string =>
  `${new Date(e.startedAt).toLocaleString()} · ${e.title ?? e.lifecycle}${e.endedAt ? ` · ${e.endReason ?? 'ended'}` : ' · open'}`;

const TASK_STATUS_TEXT: Record<BoardTaskDto['status'], string> = {
  pending: 'Pending',
  in_progress: 'In progress',
  blocked: 'Blocked',
  done: 'Done',
  rejected: 'Rejected',
};

function Board(props: { board: EpochBoardDto; nameOf: (appId: string | null) => string }) {
  const { board, nameOf } = props;
  return (
    <div class="stack">
      <p class="muted" aria-label="Epoch state">
        {board.epoch.endedAt
          ? `Ended: ${board.epoch.endReason ?? ''}${board.epoch.outcome ? ` (${board.epoch.outcome})` : ''}${board.epoch.summary ? `. ${board.epoch.summary}` : ''}`
          : 'Open'}
      </p>
      <h3>Tasks</h3>
      <div class="cards" aria-label="Tasks by status">
        {TASK_STATUSES.map((s) => {
          const tasks = board.tasks.filter((t) => t.status === s);
          return (
            <section key={s} class="panel stack" aria-label={TASK_STATUS_TEXT[s]} data-status={s}>
              <h4>
                {TASK_STATUS_TEXT[s]} ({tasks.length})
              </h4>
              <ul class="plain stack">
                {tasks.map((t) => (
                  <li key={t.id}>
                    <strong>{t.title}</strong> <span class="muted">→ {nameOf(t.assigneeAppId)}</span>
                    {t.note && <div class="muted">{t.note}</div>}
                  </li>
                ))}
              </ul>
            </section>
          );
        })}
      </div>
      <h3>Findings</h3>
      {board.findings.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <ul class="stack" aria-label="Findings">
          {board.findings.map((f) => (
            <li key={f.id}>
              <strong>{nameOf(f.authorAppId)}:</strong> {f.body}
              {f.ref && <span class="muted"> ({f.ref})</span>}
            </li>
          ))}
        </ul>
      )}
      <h3>Activity</h3>
      {board.activities.length === 0 ? (
        <p class="muted">Nothing yet.</p>
      ) : (
        <ol class="stack" aria-label="Activity">
          {board.activities.map((a) => (
            <li key={a.id}>
              <span class="muted">{new Date(a.createdAt).toLocaleTimeString()}</span> {nameOf(a.actorAppId)}
              {a.targetAppId ? ` → ${nameOf(a.targetAppId)}` : ''}: {a.subject}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** A member's transcript in the epoch shown, read when opened (and again while open, as the team works). */
function Transcript(props: { teamId: string; member: TeamMemberDto; epochId: string; tick: number }) {
  const [open, setOpen] = useState(false);
  const [messages, setMessages] = useState<Array<{ id: string; role: string; content: string }> | null>(null);
  useEffect(() => {
    if (!open) return;
    void api
      .get<Array<{ id: string; role: string; content: string }>>(
        `/api/teams/${q(props.teamId)}/chat-messages?appId=${q(props.member.appId)}&epochId=${q(props.epochId)}`,
      )
      .then(setMessages, () => setMessages([]));
  }, [open, props.epochId, props.tick]);
  return (
    <details onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Transcript of {props.member.memberName}</summary>
      {messages === null ? (
        <p class="muted">Loading…</p>
      ) : messages.length === 0 ? (
        <p class="muted">Nothing in this epoch.</p>
      ) : (
        <ol class="stack" aria-label={`Transcript of ${props.member.memberName}`}>
          {messages.map((m) => (
            <li key={m.id}>
              <strong>
                {m.role === 'user' ? 'Received' : m.role === 'assistant' ? props.member.memberName : m.role}:
              </strong>{' '}
              <span class="pre-wrap">{m.content}</span>
            </li>
          ))}
        </ol>
      )}
    </details>
  );
}

function SendMessage(props: { teamId: string; members: TeamMemberDto[]; leadAppId: string | null }) {
  const [to, setTo] = useState(props.leadAppId ?? props.members[0]?.appId ?? '');
  const [message, setMessage] = useState('');
  const [status, setStatus] = useState('');
  const RECEIPT: Record<DeliveryReceipt, string> = {
    mid_turn: 'Delivered while it works.',
    queued: 'Delivered: it answers in its next turn.',
    undelivered: 'Not delivered: the run has ended.',
  };
  return (
    <form
      class="panel stack"
      aria-labelledby="team-send-title"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const sent = await api.post<{ delivery: DeliveryReceipt }>(
            `/api/teams/${q(props.teamId)}/members/${q(to)}/send`,
            { message },
          );
          setMessage('');
          setStatus(RECEIPT[sent.delivery] ?? sent.delivery);
        } catch (err) {
          setStatus((err as ApiError).message);
        }
      }}
    >
      <h2 id="team-send-title">Message the team</h2>
      <label for="team-send-to">To</label>
      <select id="team-send-to" value={to} onChange={(e) => setTo(e.currentTarget.value)}>
        {props.members.map((m) => (
          <option key={m.appId} value={m.appId}>
            {m.memberName}
            {m.isLead ? ' (lead)' : ''}
          </option>
        ))}
      </select>
      <label for="team-send-text">Message</label>
      <textarea id="team-send-text" rows={3} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      <button type="submit" disabled={!message.trim() || !to}>
        Send
      </button>
      <p role="status" class="muted">
        {status}
      </p>
    </form>
  );
}
