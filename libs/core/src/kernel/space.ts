import type { SpacePreferences } from '#contracts/spaces.js';

/** A workspace as core sees it. `path` is the working folder (default, customPath or working-dir). */
export interface Space {
  id: string;
  name: string;
  path: string;
  icon: string;
  color: string | null;
  isTemp: boolean;
  /**
   * Whether the server created this folder (a default folder, or a customPath that did not
   * exist yet). Deleting the space removes only such a folder; a folder the user brought
   * (an existing customPath, a working-dir) stays.
   */
  ownsFolder: boolean;
  sortOrder: number;
  /** Stored preferences; absent fields mean the defaults. */
  preferences: Partial<{ memory: Partial<SpacePreferences['memory']> }>;
  createdAt: Date;
  updatedAt: Date;
}

export const DEFAULT_SPACE_ICON = '📁';
/** The service's own records inside a working folder; hidden from listings, trees and search. */
export const SERVICE_FOLDER = '.svc';
/**
 * A space's skills, where the digital-human protocol puts them (`browser_run` paths such as
 * `.claude/skills/<id>/index.js` name files there). Earlier versions kept them in `.svc/skills`.
 */
export const SPACE_SKILLS_FOLDER = '.claude/skills';
