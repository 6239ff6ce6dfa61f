import { Controller, Get } from '@nestjs/common';
import type { SecurityPolicy } from '#contracts/api.js';
import { SystemService } from '#core/system/system.service.js';
import { ApiData } from '../openapi/api-data.js';
import { SECURITY_POLICY } from '../openapi/response-schemas.js';
import { str } from '../openapi/schema.js';
import type { SuccessBody } from '#contracts/errors.js';
import { ApiOperation, ApiTags } from '../openapi/swagger-decorators.js';

@ApiTags('System')
@Controller('api')
export class SystemController {
  constructor(private readonly system: SystemService) {}

  @Get('system/version')
  @ApiOperation({
    summary: "Read the server's version",
    description: "Answers the server's version string.",
  })
  @ApiData(str('The server version'))
  version(): SuccessBody<string> {
    return { success: true, data: this.system.version() };
  }

  @Get('security/policy')
  @ApiOperation({
    summary: 'Read the security policy (public)',
    description:
      'Public (no token needed). Answers the fixed policy `{tunnelSafe:false, browserAllowlistEditable:true}`.',
  })
  @ApiData(SECURITY_POLICY)
  policy(): SuccessBody<SecurityPolicy> {
    return { success: true, data: this.system.securityPolicy() };
  }
}
