/** Starts the runs of service tasks when they are due (src/scripts/task-runner.ts), on processes with role svc. */
import { startDueRuns } from '../scripts/task-runner'
import type { Worker } from './runner'

export const svcTasks: Worker = {
  name: 'svc-tasks',
  every: 1000,
  // every svc process looks; the database claim makes each run happen once
  lease: 'none',
  async step({ deps }) {
    await startDueRuns(deps)
    return 0 // one look per tick: a run started now is not due again this period
  },
}
