import { Controller, HttpCode, Post } from '@nestjs/common';
import { type BackupReport, Backups } from '#core/ports/backup.port.js';
import { DomainError } from '#core/errors/domain-error.js';
import { ApiData } from '../openapi/api-data.js';
import { BACKUP_REPORT } from '../openapi/response-schemas.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

/**
 * Operations addition: `POST /api/system/backup` takes a backup of an embedded installation
 * while it serves, into `<data>/backups/<time>/` (the `backup` command calls it when the
 * server runs). With DATABASE_URL, back up with pg_dump and the data volume instead.
 */
@ApiTags('System')
@Controller('api/system')
export class BackupController {
  constructor(private readonly backups: Backups) {}

  @Post('backup')
  @ApiOperation({
    summary: 'Write a backup of the data folder and database',
    description:
      'Embedded installations only: copies the database and the data folder (spaces, temporary space, trash, password file) into `<data>/backups/<time>/` while the server serves, and answers `{path, databaseBytes, files}`. 400 on a server that uses DATABASE_URL (back up with pg_dump and the data volume instead).',
  })
  @HttpCode(200)
  @ApiData(BACKUP_REPORT)
  async backup(): Promise<SuccessBody<BackupReport>> {
    if (!this.backups.available()) {
      throw DomainError.invalid(
        'This server uses DATABASE_URL: back up the database with pg_dump and the data volume (README, "Backups")',
      );
    }
    return { success: true, data: await this.backups.backupNow() };
  }
}
