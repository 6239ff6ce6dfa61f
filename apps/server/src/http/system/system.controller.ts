import { Controller, Get } from '@nestjs/common';
import type { SecurityPolicy } from '#contracts/api.js';
import { SystemService } from '#core/system/system.service.js';

@Controller('api')
export class SystemController {
  constructor(private readonly system: SystemService) {}

  @Get('system/version')
  version(): { success: true; data: string } {
    return { success: true, data: this.system.version() };
  }

  @Get('security/policy')
  policy(): { success: true; data: SecurityPolicy } {
    return { success: true, data: this.system.securityPolicy() };
  }
}
