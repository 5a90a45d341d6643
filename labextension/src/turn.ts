/** One exchange of a chat: what the person asked and the run that answered. */
import { IInstructionFile } from './events';
import { IRunView } from './run';

/** One exchange: what the person asked and the run that answered. */
export interface ITurn {
  /** What this browser sent; '' for a run started elsewhere (see {@link promptOf}). */
  user: string;
  run: IRunView;
}

/** What was asked in a turn: as sent from here, else as the run log kept it. */
export function promptOf(turn: ITurn): string {
  return turn.user || turn.run.prompt;
}

/** The project instructions the latest run of these turns read, and that run's id. */
export function latestInstructions(
  turns: readonly ITurn[]
): { runId: string; files: IInstructionFile[] } | null {
  for (let i = turns.length - 1; i >= 0; i--) {
    const run = turns[i].run;
    if (run.runId && !run.task) {
      return { runId: run.runId, files: run.instructions ?? [] };
    }
  }
  return null;
}
