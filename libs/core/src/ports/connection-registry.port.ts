/** Counts open WebSocket connections across every replica. */
export abstract class ConnectionRegistry {
  /** Reports this replica's current count. */
  abstract setLocalCount(count: number): void;
  abstract totalCount(): Promise<number>;
}
