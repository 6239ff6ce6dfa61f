import { isAbsolute } from 'node:path';
import { ErrorCodes } from '#contracts/errors.js';
import { Injectable, Logger } from '@nestjs/common';
import type { App } from '../kernel/app.js';
import { AppsService } from '../apps/apps.service.js';
import type { AppSpec } from '../kernel/app-spec/app-spec.js';
import { isMap } from '../kernel/app-spec/spec-fields.js';
import { parseSpecYaml, specToYaml } from '../kernel/app-spec/spec-yaml.js';
import { DomainError } from '../errors/domain-error.js';
import { SpaceFolders } from '../ports/space-folders.port.js';
import { type PackageContents, PackageFiles } from '../ports/package-files.port.js';
import { SpaceRepository } from '../ports/space.repository.port.js';
import { type BundledSkill, type StoreInstall, StoreRepository } from '../ports/store.repository.port.js';
import {
  bundledSkillPath,
  EXPORT_MAX_BYTES,
  givenFiles,
  INSTALL_FILES_MAX_BYTES,
  secretProblem,
} from './archive-rules.js';
import { StoreCatalog } from './store-catalog.js';
import { commandName } from './store-query.js';
import { SKILL_FILE, skillMarkdown } from '../skills/skill-rules.js';
import { isSameOrInside } from '../spaces/space-rules.js';

export interface ExportedPackage {
  fileName: string;
  data: Uint8Array;
}

/**
 * `.dhpkg` packages (docs/api/store-and-packages.md, "Packages"): import from a file or folder on the
 * server's disk through AppsService.install, and export of an installed app with its skills.
 */
@Injectable()
export class PackagesService {
  private readonly log = new Logger('Packages');

  constructor(
    private readonly files: PackageFiles,
    private readonly apps: AppsService,
    private readonly repo: StoreRepository,
    private readonly catalog: StoreCatalog,
    private readonly spaces: SpaceRepository,
    private readonly folders: SpaceFolders,
  ) {}

  /**
   * Reads and checks the whole package before installing anything: entry names, limits,
   * and no file that looks like a credential (such a package is refused, never stripped).
   */
  async import(
    filePath: unknown,
    spaceId: string | null | undefined,
    caller: 'user' | 'assistant' = 'user',
    userConfig?: Record<string, unknown>,
  ): Promise<App> {
    if (typeof filePath !== 'string' || filePath === '') throw DomainError.invalid('filePath is required');
    const contents = await this.files.read(caller === 'assistant' ? await this.insideSpaces(filePath) : filePath);
    refuseLargeBundle(contents);
    await refuseSecretsYielding(contents);
    const skills = bundledSkills(contents);
    const raw = parseSpecYaml(contents.specYaml);
    const app = await this.apps.install({ spec: raw, spaceId: spaceId ?? null, skills, userConfig });
    await this.allOrNothing(app, {
      appId: app.id,
      registryId: null,
      slug: isMap(raw) && isMap(raw.store) && typeof raw.store.slug === 'string' ? raw.store.slug : null,
      authorSpec: app.spec as unknown as Record<string, unknown>,
      skills,
      ignoredVersions: [],
    });
    this.log.log({ msg: 'package imported', appId: app.id, skills: skills.length });
    return app;
  }

  /** The install record is written with the app, or the app goes again: an import is all-or-nothing. */
  private async allOrNothing(app: App, install: StoreInstall): Promise<void> {
    try {
      await this.repo.saveInstall(install);
    } catch (err) {
      await this.apps.deletePermanently(app.id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * A turn (through the assistant's listener) imports only packages inside a space's folder,
   * where it can put them itself: any other path on this host would let it read files outside
   * every space. Answers the path with symlinks resolved (403 otherwise).
   */
  private async insideSpaces(filePath: string): Promise<string> {
    const real = isAbsolute(filePath) && !filePath.includes('\0') ? await this.folders.canonical(filePath) : null;
    if (real !== null) {
      for (const space of await this.spaces.listAll()) {
        const root = await this.folders.canonical(space.path);
        if (real !== root && isSameOrInside(real, root)) return real;
      }
    }
    throw DomainError.forbidden('filePath: the assistant can import packages from inside a space folder only');
  }

  /**
   * `POST /api/apps/install` with skill files (`files`: package paths to contents): a skill
   * app's own files at the root (`SKILL.md`, `scripts/run.py`, as its exported .zip holds
   * them), a digital human's bundled skills under `skills/<id>/` (as a .dhpkg holds them). They
   * are installed the way import and the Store install them (same checks: names, sizes, no
   * credentials) and kept for export. Without files this is a plain install.
   */
  async installGiven(input: {
    spec: unknown;
    spaceId?: string | null;
    userConfig?: unknown;
    files?: unknown;
  }): Promise<App> {
    let files: PackageContents['files'];
    try {
      files = givenFiles(input.files);
    } catch (err) {
      throw DomainError.invalid(err instanceof Error ? err.message : String(err));
    }
    const install = { spec: input.spec, spaceId: input.spaceId, userConfig: input.userConfig };
    if (files.length === 0) return this.apps.install(install);
    refuseSecrets({ specYaml: '', files });
    const raw = isMap(input.spec) ? input.spec : {};
    let skills: BundledSkill[];
    if (raw.type === 'skill') {
      skills = [
        {
          id: commandName(String(raw.name ?? '')),
          files: files.map((f) => ({ path: f.path, base64: Buffer.from(f.data).toString('base64') })),
        },
      ];
    } else {
      const stray = files.find((f) => bundledSkillPath(f.path) === null);
      if (stray) {
        throw DomainError.invalid(
          `files: ${stray.path} is not a bundled skill file (skills/<id>/<file>, the id listed in requires.skills)`,
        );
      }
      skills = bundledSkills({ specYaml: '', files });
    }
    const app = await this.apps.install({ ...install, skills });
    await this.allOrNothing(app, {
      appId: app.id,
      registryId: null,
      slug: app.spec.store?.slug ?? null,
      authorSpec: app.spec as unknown as Record<string, unknown>,
      skills,
      ignoredVersions: [],
    });
    this.log.log({ msg: 'installed with skill files', appId: app.id, files: files.length });
    return app;
  }

  /**
   * `<slug>-<version>.dhpkg` holding the spec (no webhook secrets, no MCP environment values),
   * every bundled skill and every required skill that no Store source provides. A skill app
   * exports as `<slug>-<version>.zip` with SKILL.md at the root.
   */
  async export(appId: string): Promise<ExportedPackage> {
    const app = await this.apps.get(appId);
    const install = await this.repo.findInstall(app.id);
    const spec = withoutSecrets(app.spec);
    const kept = new Map((install?.skills ?? []).map((s) => [s.id, s]));
    const slug = (install?.slug ?? app.spec.store?.slug ?? commandName(app.spec.name)).split('/').pop()!;
    const base = `${slug}-${app.spec.version}`.replace(/[^A-Za-z0-9._-]+/g, '-');
    const files: PackageContents['files'] = [];

    if (app.spec.type === 'skill') {
      const own = [...kept.values()].flatMap((s) => s.files);
      if (!own.some((f) => f.path === 'SKILL.md')) {
        files.push({ path: 'SKILL.md', data: new TextEncoder().encode(skillMarkdown(app.spec)) });
      }
      for (const f of own) files.push({ path: f.path, data: Buffer.from(f.base64, 'base64') });
      files.push({ path: 'spec.yaml', data: new TextEncoder().encode(specToYaml(spec)) });
      return { fileName: `${base}.zip`, data: await this.pack(null, files) };
    }

    const provided = await this.skillsInSources();
    for (const req of spec.requires?.skills ?? []) {
      const have = kept.get(req.id);
      if (req.bundled || !provided.has(req.id)) {
        if (!have) {
          throw DomainError.notFound(
            `Export stopped: skill ${req.id} is neither in a Store source nor installed with this digital human`,
            ErrorCodes.STORE_REQUIREMENT_MISSING,
          );
        }
        req.bundled = true;
        req.files = have.files.map((f) => f.path);
        for (const f of have.files)
          files.push({ path: `skills/${req.id}/${f.path}`, data: Buffer.from(f.base64, 'base64') });
      }
    }
    return { fileName: `${base}.dhpkg`, data: await this.pack(specToYaml(spec), files) };
  }

  private async pack(specYaml: string | null, files: PackageContents['files']): Promise<Uint8Array> {
    const total = files.reduce((n, f) => n + f.data.byteLength, specYaml?.length ?? 0);
    if (total > EXPORT_MAX_BYTES)
      throw new DomainError('too_large', 'Export stopped: the files exceed 50 MB', ErrorCodes.TOO_LARGE);
    return this.files.pack({ specYaml: specYaml ?? '', files });
  }

  /** Ids of skills some enabled Store source lists (by slug or its last segment). */
  private async skillsInSources(): Promise<Set<string>> {
    const { entries } = await this.catalog.catalog().catch(() => ({ entries: [] }));
    return new Set(
      entries.filter((e) => e.entry.type === 'skill').flatMap((e) => [e.entry.slug, e.entry.slug.split('/').pop()!]),
    );
  }
}

function refuseSecrets(contents: PackageContents): void {
  secretCheck('spec.yaml', contents.specYaml);
  for (const f of contents.files) secretCheck(f.path, new TextDecoder().decode(f.data));
}

function secretCheck(path: string, text: string): void {
  const what = secretProblem(text);
  if (what) {
    throw DomainError.invalid(
      `The package is refused: ${path} holds what looks like ${what}; a package must never hold API keys, tokens or passwords`,
    );
  }
}

/** Bytes scanned for credentials between two yields to the event loop. */
const SECRET_SCAN_SLICE_BYTES = 2 * 1024 * 1024;

/**
 * refuseSecrets for an imported package, which may unpack to 200 MB: scanning all of it at once
 * held the event loop for over a second, so every other request waited. The scan yields after
 * each SECRET_SCAN_SLICE_BYTES.
 */
async function refuseSecretsYielding(contents: PackageContents): Promise<void> {
  secretCheck('spec.yaml', contents.specYaml);
  let sinceYield = 0;
  for (const f of contents.files) {
    secretCheck(f.path, new TextDecoder().decode(f.data));
    sinceYield += f.data.byteLength;
    if (sinceYield >= SECRET_SCAN_SLICE_BYTES) {
      sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

/**
 * The bundled skill files are kept with the install record (for export and updates): at most
 * INSTALL_FILES_MAX_BYTES in all, as for a Store item, checked before anything is written.
 */
function refuseLargeBundle(contents: PackageContents): void {
  let total = 0;
  for (const f of contents.files) if (bundledSkillPath(f.path)) total += f.data.byteLength;
  if (total > INSTALL_FILES_MAX_BYTES) {
    throw new DomainError(
      'too_large',
      `The package is refused: its bundled skill files exceed ${INSTALL_FILES_MAX_BYTES / (1024 * 1024)} MB in all`,
      ErrorCodes.TOO_LARGE,
    );
  }
}

function bundledSkills(contents: PackageContents): BundledSkill[] {
  const byId = new Map<string, BundledSkill>();
  for (const f of contents.files) {
    const at = bundledSkillPath(f.path);
    if (!at) continue;
    const skill = byId.get(at.id) ?? { id: at.id, files: [] };
    skill.files.push({ path: at.file, base64: Buffer.from(f.data).toString('base64') });
    byId.set(at.id, skill);
  }
  return [...byId.values()].map(withSkillMarkdown);
}

/**
 * A bundled skill shipped as its own spec file (`skills/<id>/<id>.yaml` with `type: skill`, as
 * the protocol's bundled example does) rather than a SKILL.md: its SKILL.md is written from that
 * spec (name, description, system_prompt), as a skill app's is on export, so it installs like
 * any other. The spec file stays beside it. A skill with a SKILL.md is left as it is.
 */
export function withSkillMarkdown(skill: BundledSkill): BundledSkill {
  if (skill.files.some((f) => f.path === SKILL_FILE)) return skill;
  const specFile = skill.files.find((f) => [`${skill.id}.yaml`, `${skill.id}.yml`, 'spec.yaml'].includes(f.path));
  if (!specFile) return skill;
  let raw: unknown;
  try {
    raw = parseSpecYaml(Buffer.from(specFile.base64, 'base64').toString('utf8'));
  } catch {
    return skill; // not YAML: installed as shipped
  }
  if (!isMap(raw) || raw.type !== 'skill') return skill;
  const markdown = skillMarkdown({
    name: typeof raw.name === 'string' && raw.name.trim() !== '' ? raw.name : skill.id,
    description: typeof raw.description === 'string' ? raw.description : '',
    system_prompt: typeof raw.system_prompt === 'string' ? raw.system_prompt : '',
  });
  return {
    ...skill,
    files: [{ path: SKILL_FILE, base64: Buffer.from(markdown).toString('base64') }, ...skill.files],
  };
}

/** A copy of the spec without secrets: webhook shared secrets and MCP environment values are emptied. */
export function withoutSecrets(spec: AppSpec): AppSpec {
  const copy = structuredClone(spec);
  for (const sub of copy.subscriptions ?? []) {
    if (typeof sub.source.config.secret === 'string') sub.source.config.secret = '';
  }
  if (copy.mcp_server?.env) {
    copy.mcp_server.env = Object.fromEntries(Object.keys(copy.mcp_server.env).map((k) => [k, '']));
  }
  return copy;
}
