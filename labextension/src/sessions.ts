/** A session's runs as the panel shows them: one turn per run, or per task with its steps. */
import { IRunInfo } from './validate';

/** What a session shows as one turn: a run, or a task with all of its steps. */
export interface ISessionItem {
  readonly kind: 'run' | 'task';
  /** The run's or the task's id. */
  readonly id: string;
  /** Epoch seconds. */
  readonly startedAt: number;
  /** Epoch seconds: the run's end, or the end of the task's last step; null while live. */
  endedAt: number | null;
  live: boolean;
}

/** A session's runs as turns, in order: the steps of one task (same `task_id`) make one. */
export function sessionItems(runs: readonly IRunInfo[]): ISessionItem[] {
  const items: ISessionItem[] = [];
  const tasks = new Map<string, ISessionItem>();
  for (const r of [...runs].sort((a, b) => a.started_at - b.started_at)) {
    const live = r.status === 'running';
    if (!r.task_id) {
      items.push({ kind: 'run', id: r.run_id, startedAt: r.started_at, endedAt: r.ended_at, live });
      continue;
    }
    let task = tasks.get(r.task_id);
    if (!task) {
      task = { kind: 'task', id: r.task_id, startedAt: r.started_at, endedAt: null, live: false };
      tasks.set(r.task_id, task);
      items.push(task);
    }
    task.live = task.live || live;
    if (r.ended_at !== null && (task.endedAt === null || r.ended_at > task.endedAt)) {
      task.endedAt = r.ended_at;
    }
  }
  for (const task of tasks.values()) {
    if (task.live) {
      task.endedAt = null;
    }
  }
  return items;
}
