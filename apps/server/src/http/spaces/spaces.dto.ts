import { IsOptional } from 'class-validator';
import { normalizeSpaceName } from '#core/spaces/space-rules.js';
import { ArrayBodyAsEmpty, Check, Documented } from '../common/validation.js';

/** Request bodies of "Workspaces and files" (docs/api.md); the texts are the ones it fixes. */

const isString = (value: unknown): boolean => typeof value === 'string';

@ArrayBodyAsEmpty()
export class CreateSpaceDto {
  @Check((v) => normalizeSpaceName(v) !== null, 'name is required (1 to 200 characters)', {
    type: 'string',
    minLength: 1,
    maxLength: 200,
  })
  name: string;

  @IsOptional()
  @Check(isString, 'icon must be a string', { type: 'string' })
  icon?: string | null;

  @IsOptional()
  @Check(isString, 'color must be a string', { type: 'string' })
  color?: string | null;

  @IsOptional()
  @Check(isString, 'customPath must be a string', {
    type: 'string',
    description: 'An existing folder to use as the space folder',
  })
  customPath?: string | null;
}

@ArrayBodyAsEmpty()
export class ReorderSpacesDto {
  @Check((v) => Array.isArray(v) && v.every((id) => typeof id === 'string'), 'spaceIds must be an array of space ids', {
    type: 'array',
    items: { type: 'string' },
  })
  spaceIds: string[];
}

/** Checked by the service after the space is found (an unknown space answers 404 first). */
@ArrayBodyAsEmpty()
export class UpdateSpaceDto {
  @Documented({ type: 'string', minLength: 1, maxLength: 200 })
  name?: unknown;

  @Documented({ type: 'string' })
  icon?: unknown;

  @Documented({ type: 'string' })
  color?: unknown;
}

/** Checked by the service after the space is found and is not the temporary one (404, 403 first). */
@ArrayBodyAsEmpty()
export class WorkingDirDto {
  @Documented({ type: 'string', description: 'An existing folder outside the data folder' }, { required: true })
  workingDir?: unknown;
}

/** Merged into the stored preferences; checked by the service after the space is found. */
@ArrayBodyAsEmpty()
export class SpacePreferencesDto {
  @Documented({
    type: 'object',
    properties: {
      enabled: { type: 'boolean' },
      autoConsolidate: { type: 'boolean' },
      cadence: { type: 'string' },
    },
  })
  memory?: { enabled?: unknown; autoConsolidate?: unknown; cadence?: unknown };
}
