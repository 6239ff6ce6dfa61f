import { ArrayBodyAsEmpty, Check } from '../common/validation.js';

/** Request bodies of "Model sources and the configuration" (docs/api.md). */

const nonBlank = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

@ArrayBodyAsEmpty()
export class SwitchSourceDto {
  @Check(nonBlank, 'sourceId is required (a string)', { type: 'string' })
  sourceId: string;
}

@ArrayBodyAsEmpty()
export class SetModelDto {
  @Check(nonBlank, 'modelId is required (a string)', { type: 'string' })
  modelId: string;
}
