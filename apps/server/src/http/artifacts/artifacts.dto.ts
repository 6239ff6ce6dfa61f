import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { Check, QueryDto } from '../common/validation.js';

/**
 * Request shapes of the file operations. Fields are checked for type here; whether a
 * required one is present is the service's call, so its message names the field the way
 * the specification does ("Missing file path", "name is required").
 */

/** Only digits become a number; anything else stays a string and fails IsInt. */
const digitsToNumber = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;

@QueryDto()
export class ListArtifactsQuery {
  @IsOptional()
  @JSONSchema({ default: 2, description: 'Levels below the root to list (1: its own entries)' })
  @Transform(digitsToNumber)
  @IsInt({ message: 'maxDepth must be a non-negative integer' })
  @Min(0, { message: 'maxDepth must be a non-negative integer' })
  maxDepth?: number;
}

/**
 * The file's path: required (documented so), but judged by the service, whose message for a
 * missing one is the specification's ("Missing file path").
 */
@QueryDto()
export class PathQuery {
  @Check(
    (v) => v === undefined || typeof v === 'string',
    'path must be a string',
    {
      type: 'string',
      description:
        "The file's absolute path, inside a space's folder (an upload's may be relative to the space's root)",
    },
    { required: true },
  )
  path?: string;
}

export class PathBody {
  @IsOptional()
  @IsString()
  path?: string;
}

export class SaveBody {
  @IsOptional()
  @IsString()
  path?: string;

  @IsOptional()
  @IsString()
  content?: string;
}

export class ChildrenBody {
  @IsOptional()
  @IsString()
  dirPath?: string;
}

export class CreateFileBody {
  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @IsString()
  parentPath?: string;

  @IsOptional()
  @IsString()
  content?: string;
}

export class CreateFolderBody {
  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @IsString()
  parentPath?: string;
}

export class MoveBody {
  @IsOptional()
  @IsString()
  oldPath?: string;

  @IsOptional()
  @IsString()
  newParentPath?: string;
}

export class RenameBody {
  @IsOptional()
  @IsString()
  oldPath?: string;

  @IsOptional()
  @IsString()
  newName?: string;
}
