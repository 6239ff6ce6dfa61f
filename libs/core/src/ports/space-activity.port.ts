/**
 * Whether work is in progress in a space (a reply, a digital-human run, a background task).
 * Changing a space's working folder is refused while it is. The agent engine provides the
 * real answer; until then nothing runs, so nothing is busy.
 */
export abstract class SpaceActivity {
  abstract isBusy(spaceId: string): Promise<boolean>;
}

export class IdleSpaceActivity extends SpaceActivity {
  async isBusy(): Promise<boolean> {
    return false;
  }
}
