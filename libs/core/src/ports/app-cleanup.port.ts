/** What deleting a space needs from the digital-human context. */
export abstract class AppCleanup {
  /** Deletes every app installed in the space, for good (their data goes with the folder). */
  abstract deleteAllInSpace(spaceId: string): Promise<void>;
}
