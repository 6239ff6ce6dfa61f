import { FifoSlots } from '../../kernel/fifo-slots.js';

/**
 * How many runs of digital humans this process works on at once (SVC_APP_RUNS_PER_PROCESS):
 * a run waits, first come first served, for a slot; chats never wait here. A wait ends early
 * when the run is stopped.
 */
export class RunSlots extends FifoSlots {}
