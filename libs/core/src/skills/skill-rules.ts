import type { AppSpec } from '../kernel/app-spec/app-spec.js';

/** A skill's files as an install brings them: paths relative to the skill's folder, contents in base64. */
export interface SkillFiles {
  id: string;
  files: Array<{ path: string; base64: string }>;
}

/** An installed skill as turns see it. */
export interface InstalledSkill {
  /** The folder name, which is also its slash command (`/name`). */
  name: string;
  description: string;
  /** Absolute path of its folder. */
  folder: string;
  scope: 'space' | 'global';
}

export const SKILL_FILE = 'SKILL.md';
/** Marks which app installed a skill folder, so uninstalling that app removes it. */
export const SKILL_OWNER_FILE = '.installed-by';
/** Most characters of a skill file a turn reads. */
export const SKILL_READ_MAX_CHARS = 100_000;
/** The tool through which the model reads a skill. */
export const SKILL_TOOL = 'Skill';

/** A lower-case hyphenated slash-command name from a title; non-ASCII titles get a stable ASCII name. */
export function commandName(title: string | undefined): string {
  if (!title || title.trim() === '') return '';
  const ascii = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  if (ascii !== '') return ascii;
  // A title with no ASCII letter or digit: a short stable hash keeps names distinct.
  let h = 0x811c9dc5;
  for (const ch of title.trim()) h = Math.imul(h ^ ch.codePointAt(0)!, 0x01000193) >>> 0;
  return `skill-${h.toString(36)}`;
}

/** A skill's folder name and slash command: its name as a lower-case hyphenated command. */
export function skillName(idOrName: string): string {
  return commandName(idOrName);
}

/** `SKILL.md` for a skill given only as a spec: front matter (name, description), then its instructions. */
export function skillMarkdown(spec: Pick<AppSpec, 'name' | 'description' | 'system_prompt'>): string {
  const line = (s: string) => JSON.stringify(s);
  return `---\nname: ${line(skillName(spec.name))}\ndescription: ${line(spec.description)}\n---\n\n${spec.system_prompt ?? ''}\n`;
}

/** `name` and `description` from a SKILL.md's front matter (YAML-ish `key: value` lines, quotes allowed). */
export function skillFrontMatter(text: string): { name?: string; description?: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!match) return {};
  const out: Record<string, string> = {};
  for (const line of match[1]!.split(/\r?\n/)) {
    const kv = /^(name|description):\s*(.*)$/.exec(line.trim());
    if (!kv) continue;
    let value = kv[2]!.trim();
    if (value.startsWith('"')) {
      try {
        value = JSON.parse(value) as string;
      } catch {
        value = value.slice(1, value.endsWith('"') ? -1 : undefined);
      }
    } else if (value.startsWith("'") && value.endsWith("'")) value = value.slice(1, -1);
    out[kv[1]!] = value;
  }
  return out;
}

/** A file path inside a skill folder: relative, no `..`, no backslashes or odd characters; else null. */
export function safeSkillPath(path: string): string | null {
  const parts = path.split('/');
  if (path === '' || path.startsWith('/') || path.includes('\\') || path.includes('\0')) return null;
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return null;
  return path;
}

/** `/name rest` at the start of a message: the skill asked for and the rest; null otherwise. */
export function slashCommandOf(message: string): { name: string; rest: string } | null {
  const match = /^\/([a-z0-9][a-z0-9-]*)(?:\s+([\s\S]*))?$/i.exec(message.trim());
  return match ? { name: match[1]!.toLowerCase(), rest: (match[2] ?? '').trim() } : null;
}

/** What the system prompt says about the installed skills (nothing when there are none). */
export function skillsPrompt(skills: InstalledSkill[]): string {
  if (skills.length === 0) return '';
  const lines = skills.map((s) => `- ${s.name}: ${s.description}`);
  return [
    '## Skills',
    `Installed skills (instructions for particular tasks). When one applies, call ${SKILL_TOOL} with its name to read its instructions first, then follow them; ${SKILL_TOOL} with \`file\` reads the skill's other files.`,
    ...lines,
  ].join('\n');
}

/** The system prompt's part for a skill the user loaded with its slash command. */
export function loadedSkillPrompt(skill: InstalledSkill, instructions: string): string {
  return `## Skill /${skill.name} (loaded by the user's slash command)\nFollow these instructions for this request:\n\n${instructions}`;
}

/** The text of the conversation's latest user message (where a slash command would be). */
export function lastUserText(messages: ReadonlyArray<{ role: string; content: string }>): string | null {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]!.content;
  return null;
}

/** A system prompt with the skills part of the turn after it. */
export function withSkills(system: string, skills: { prompt: string }): string {
  return skills.prompt === '' ? system : `${system}\n\n${skills.prompt}`;
}

/** Skills of a space and the global ones; the space's own wins a name both have. Sorted by name. */
export function mergeSkills(space: InstalledSkill[], global: InstalledSkill[]): InstalledSkill[] {
  const byName = new Map<string, InstalledSkill>();
  for (const s of [...global, ...space]) byName.set(s.name, s);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
