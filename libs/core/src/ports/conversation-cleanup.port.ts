/** What deleting a space needs from the conversations context. */
export abstract class ConversationCleanup {
  abstract deleteAllInSpace(spaceId: string): Promise<void>;
}
