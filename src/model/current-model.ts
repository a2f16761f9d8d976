/**
 * Record operations against the class as the database defines it now. With APP_PROCESSES > 1 a process
 * learns of another's class change by a message (../domain-cache.ts), and a record written in
 * between would be checked against the old definitions: a new default left unfilled, a value of a
 * type the class no longer has, a table that is gone. So every record write compares, in its own
 * transaction, the generation its definitions were read at with the database's
 * (~storage/model-generations.ts), and a write or read that failed on old definitions is made again
 * with the new ones.
 */
import type { TxStep } from '~storage/db'
import { modelGeneration } from '~storage/model-generations'
import type { Ctx } from '../context'
import { ApiError, conflict } from '../errors'
import type { ClassModel } from './class-model'

/** The write's class definitions are older than the database's. Callers that cannot retry answer it. */
class StaleModel extends ApiError {
  constructor(classname: string) {
    super(409, `the class ${classname} changed while the record was written; try again`, { field: 'classname' })
  }
}

/** In a record write's transaction: refuses it when its class definitions are no longer the database's. */
export function* definitionsCurrent(ctx: Ctx, model: ClassModel): TxStep<void> {
  if ((yield* modelGeneration(ctx.domain)) !== model.generation) throw new StaleModel(model.classname)
}

/**
 * Whether `err` came from old definitions: a refused write, a statement that failed on a changed
 * table, or a value the old rules refused (asked of the database only when something failed).
 */
export async function fromOldDefinitions(ctx: Ctx, model: ClassModel, err: unknown): Promise<boolean> {
  if (err instanceof StaleModel) return true
  return ctx.deps.model.changedSince(ctx.domain, model.generation).catch(() => false)
}

const ATTEMPTS = 3

/** Runs `op` with the class's definitions, and again with the database's while they turn out old. */
export async function withCurrentModel<T>(
  ctx: Ctx,
  model: ClassModel,
  op: (model: ClassModel) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op(model)
    } catch (err) {
      if (!(await fromOldDefinitions(ctx, model, err))) throw err
      if (attempt === ATTEMPTS)
        throw conflict(`the class ${model.classname} kept changing while its records were used; try again`, 'classname')
      model = await ctx.deps.model.reloaded(ctx.domain, model)
    }
  }
}
