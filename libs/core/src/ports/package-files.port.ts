/** A package's contents: the spec file and the other files by their path inside the package. */
export interface PackageContents {
  specYaml: string;
  /** Paths relative to the package root, `/`-separated (e.g. `skills/x/SKILL.md`). */
  files: Array<{ path: string; data: Uint8Array }>;
}

/**
 * Reads packages from the server's disk (`.dhpkg`, `.zip`, a `spec.yaml` or a folder) with the
 * limits and entry rules of core/store/archive-rules, and packs them. Reading refuses with a
 * DomainError before anything is installed.
 */
export abstract class PackageFiles {
  abstract read(filePath: string): Promise<PackageContents>;
  abstract pack(contents: PackageContents): Promise<Uint8Array>;
}
