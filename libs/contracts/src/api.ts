/** Response shapes of the platform operations (docs/api.md). */

export interface RemoteStatus {
  active: boolean;
  clients: number;
  version: string;
}

export interface SecurityPolicy {
  tunnelSafe: boolean;
  browserAllowlistEditable: boolean;
}

/** The remote-access protocol version; fixed, does not follow releases. */
export const REMOTE_PROTOCOL_VERSION = '1.0.0';
