/** Response shapes of the platform operations (docs/api.md). */

export interface RemoteStatus {
  active: boolean;
  clients: number;
  /** The remote-access protocol version, fixed at 1.0.0 by the specification (not the release). */
  version: string;
  /** The server's release (package.json `version`, as `GET /api/system/version`); an addition to the spec's shape. */
  serverVersion: string;
}

export interface SecurityPolicy {
  tunnelSafe: boolean;
  browserAllowlistEditable: boolean;
}

/** The remote-access protocol version; fixed, does not follow releases. */
export const REMOTE_PROTOCOL_VERSION = '1.0.0';
