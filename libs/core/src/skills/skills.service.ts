import { ErrorCodes } from '#contracts/errors.js';
import { dirname, join } from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { TEMP_SPACE_ID } from '#contracts/spaces.js';
import type { AgentTool } from '../kernel/tool.js';
import { ToolInputError, requireString } from '../kernel/tool.js';
import type { App } from '../kernel/app.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DomainError } from '../errors/domain-error.js';
import { FileStore } from '../ports/file-store.port.js';
import { SpaceFolders } from '../ports/space-folders.port.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import { SERVICE_FOLDER, SPACE_SKILLS_FOLDER, type Space } from '../kernel/space.js';
import {
  type InstalledSkill,
  loadedSkillPrompt,
  mergeSkills,
  safeSkillPath,
  SKILL_FILE,
  SKILL_OWNER_FILE,
  SKILL_READ_MAX_CHARS,
  SKILL_TOOL,
  type SkillFiles,
  skillFrontMatter,
  skillMarkdown,
  skillName,
  skillsPrompt,
  slashCommandOf,
} from './skill-rules.js';

/** What a turn gets from the installed skills. */
export interface TurnSkills {
  /** The `Skill` tool (absent when no skill is installed). */
  tools: AgentTool[];
  /** For the system prompt: the skills offered, and the one a slash command loaded. */
  prompt: string;
  /** Their names, for `agent:session-info` (`skills`, `slashCommands`). */
  names: string[];
}

/**
 * Skills (`type: skill` apps and the bundled skills of digital humans): their files live in
 * the skills folder of their scope — a space's `<folder>/.claude/skills/<name>/`, or
 * `<data>/skills/<name>/` for global ones. Installing writes them, uninstalling removes what
 * that app installed; turns are offered their names and descriptions and read them on use.
 */
@Injectable()
export class SkillsService {
  private readonly logger = new Logger('Skills');

  constructor(
    private readonly files: FileStore,
    private readonly folders: SpaceFolders,
    private readonly spaces: SpaceRepository,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'dataDir'>,
  ) {}

  // ── install and uninstall ──────────────────────────────────────────────────────────────

  /**
   * Writes the skills an app brings into its scope's skills folder: a skill app's own (its
   * `SKILL.md` made from the spec unless the files bring one) and the bundled skills a digital
   * human's `requires.skills` lists, from `bundled` (the package's or the store's files).
   */
  async installFor(app: App, bundled: SkillFiles[] = []): Promise<void> {
    const root = await this.rootOf(app.spaceId);
    if (app.spec.type === 'skill') {
      const name = skillName(app.spec.name);
      const own = bundled.find((b) => skillName(b.id) === name) ?? { id: name, files: [] };
      const files = own.files.some((f) => f.path === SKILL_FILE)
        ? own.files
        : [{ path: SKILL_FILE, base64: Buffer.from(skillMarkdown(app.spec)).toString('base64') }, ...own.files];
      await this.writeSkill(root, name, files, app.id);
      return;
    }
    for (const need of app.spec.requires?.skills ?? []) {
      const given = bundled.find((b) => b.id === need.id);
      if (!given || given.files.length === 0) continue;
      await this.writeSkill(root, skillName(need.id), given.files, app.id);
    }
  }

  /** Removes the skill folders this app installed (a skill's own, a digital human's bundled ones). */
  async removeFor(app: App): Promise<void> {
    const root = await this.rootOf(app.spaceId, false);
    for (const entry of await this.folderNames(root)) {
      const owner = await this.readText(join(root, entry), SKILL_OWNER_FILE, 200);
      if (owner?.trim() === app.id) await this.folders.removeRecursive(join(root, entry));
    }
  }

  private async writeSkill(root: string, name: string, files: SkillFiles['files'], ownerId: string): Promise<void> {
    if (name === '') throw DomainError.invalid('The skill has no usable name');
    for (const f of files) {
      if (safeSkillPath(f.path) === null)
        throw DomainError.invalid(`The skill ${name} has an unsafe file path: ${f.path}`);
    }
    const folder = join(root, name);
    // A reinstall replaces the folder as a whole: files the new version dropped go.
    await this.folders.removeRecursive(folder);
    await this.folders.ensureFolder(folder);
    for (const f of [...files, { path: SKILL_OWNER_FILE, base64: Buffer.from(ownerId).toString('base64') }]) {
      const target = await this.files.resolve({ roots: [folder], base: folder, path: f.path });
      await this.folders.ensureFolder(dirname(target.real));
      await this.files.writeAtomic(target, Buffer.from(f.base64, 'base64'));
    }
    this.logger.log({ msg: 'skill installed', skill: name, files: files.length });
  }

  // ── what turns see ─────────────────────────────────────────────────────────────────────

  /** The skills a turn in `spaceId` sees: the space's and the global ones. */
  async list(spaceId: string): Promise<InstalledSkill[]> {
    return this.listIn(spaceId === TEMP_SPACE_ID ? null : await this.spaceOf(spaceId));
  }

  /** `list` for a space already read (null: the temporary space, which has no skills of its own). */
  private async listIn(space: Space | null): Promise<InstalledSkill[]> {
    const own = space === null ? [] : await this.scan(await this.rootIn(space, false), 'space');
    return mergeSkills(own, await this.scan(await this.rootIn(null, false), 'global'));
  }

  /**
   * The skills part of a turn in `space` (as the turn read it): the `Skill` tool, the prompt
   * naming the skills, and — when `message` starts with `/name` of an installed skill — that
   * skill's instructions loaded.
   */
  async forTurn(space: Space, message: string | null): Promise<TurnSkills> {
    const skills = await this.listIn(space.id === TEMP_SPACE_ID ? null : space);
    if (skills.length === 0) return { tools: [], prompt: '', names: [] };
    const parts = [skillsPrompt(skills)];
    const command = message ? slashCommandOf(message) : null;
    const loaded = command ? skills.find((s) => s.name === command.name) : undefined;
    if (loaded) {
      const text = (await this.readText(loaded.folder, SKILL_FILE, SKILL_READ_MAX_CHARS)) ?? '';
      parts.push(loadedSkillPrompt(loaded, text));
    }
    return { tools: [this.skillTool(skills)], prompt: parts.join('\n\n'), names: skills.map((s) => s.name) };
  }

  /** `Skill {name, file?}`: reads a skill's SKILL.md, or another of its files. */
  private skillTool(skills: InstalledSkill[]): AgentTool {
    return {
      name: SKILL_TOOL,
      description:
        'Reads an installed skill: its instructions (SKILL.md) by name, or one of its other files with `file` (a path inside the skill).',
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', enum: skills.map((s) => s.name), description: 'The skill' },
          file: { type: 'string', description: 'A file of the skill other than SKILL.md' },
        },
        required: ['name'],
      },
      run: async (input) => {
        const name = requireString(input, 'name');
        const skill = skills.find((s) => s.name === name);
        if (!skill) throw new ToolInputError(`No installed skill is named ${name}`);
        const file = typeof input.file === 'string' && input.file !== '' ? input.file : SKILL_FILE;
        if (safeSkillPath(file) === null || file === SKILL_OWNER_FILE)
          throw new ToolInputError(`file must be a path inside the skill`);
        const text = await this.readText(skill.folder, file, SKILL_READ_MAX_CHARS).catch(() => null);
        if (text === null) return { output: `The skill ${name} has no file ${file}`, isError: true };
        const others = file === SKILL_FILE ? await this.fileList(skill.folder) : [];
        const listing = others.length > 0 ? `\n\n(Other files of this skill: ${others.join(', ')})` : '';
        return { output: text + listing, isError: false };
      },
    };
  }

  // ── disk ───────────────────────────────────────────────────────────────────────────────

  /** The skills folder of a space (null: global); created when `create`. */
  private async rootOf(spaceId: string | null, create = true): Promise<string> {
    return this.rootIn(spaceId === null ? null : await this.spaceOf(spaceId), create);
  }

  /** `rootOf` for a space already read (null: global). */
  private async rootIn(space: Space | null, create: boolean): Promise<string> {
    let root = join(this.config.dataDir, 'skills');
    if (space !== null && space.id !== TEMP_SPACE_ID) {
      root = join(space.path, SPACE_SKILLS_FOLDER);
      await this.moveEarlierSkills(space.path, root);
    }
    if (create) await this.folders.ensureFolder(root);
    return root;
  }

  private async spaceOf(spaceId: string): Promise<Space> {
    const space = await this.spaces.findById(spaceId);
    if (!space) throw DomainError.notFound('Space not found', ErrorCodes.SPACE_NOT_FOUND);
    return space;
  }

  /** A space's skills from before they moved to `.claude/skills` move there once. */
  private async moveEarlierSkills(spacePath: string, root: string): Promise<void> {
    const earlier = join(spacePath, SERVICE_FOLDER, 'skills');
    if (!(await this.folders.isFolder(earlier)) || (await this.folders.isFolder(root))) return;
    await this.folders.ensureFolder(dirname(root));
    const roots = [spacePath];
    await this.files.move(
      await this.files.resolve({ roots, path: earlier }),
      await this.files.resolve({ roots, path: root }),
    );
    this.logger.log({ msg: 'skills moved to .claude/skills', space: spacePath });
  }

  private async scan(root: string, scope: InstalledSkill['scope']): Promise<InstalledSkill[]> {
    const out: InstalledSkill[] = [];
    for (const name of await this.folderNames(root)) {
      const folder = join(root, name);
      const text = await this.readText(folder, SKILL_FILE, 8_000);
      if (text === null) continue;
      const front = skillFrontMatter(text);
      out.push({ name, description: front.description ?? front.name ?? name, folder, scope });
    }
    return out;
  }

  private async folderNames(root: string): Promise<string[]> {
    if (!(await this.folders.isFolder(root))) return [];
    const folder = await this.files.resolve({ roots: [root], path: root, allowRoot: true });
    return (await this.files.readDir(folder)).filter((e) => e.kind === 'folder' && !e.symlink).map((e) => e.name);
  }

  private async fileList(folder: string, prefix = ''): Promise<string[]> {
    const at = await this.files.resolve({ roots: [folder], base: folder, path: prefix || '.', allowRoot: true });
    const out: string[] = [];
    for (const e of await this.files.readDir(at)) {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.kind === 'folder' && !e.symlink && out.length < 200) out.push(...(await this.fileList(folder, rel)));
      else if (e.kind === 'file' && rel !== SKILL_FILE && rel !== SKILL_OWNER_FILE) out.push(rel);
    }
    return out;
  }

  /** A file of a skill folder as text (at most `max` characters); null when missing. */
  private async readText(folder: string, path: string, max: number): Promise<string | null> {
    try {
      const target = await this.files.resolve({ roots: [folder], base: folder, path });
      const data = await this.files.readFile(target, max * 4);
      if (data === 'too-large') return null;
      const text = data.toString('utf8');
      return text.length > max ? `${text.slice(0, max)}\n[… left out]` : text;
    } catch {
      return null;
    }
  }
}
