/**
 * Puts the built-in classes (builtin.ts) into a working domain: a step of the transaction that
 * creates the domain, and of the start-up pass that completes domains created before a built-in
 * class existed. Each class goes through the classes entity's own step, so it is journaled and its
 * records table is created with it.
 */
import type { TxStep } from '~storage/db'
import type { DocOf } from '../entities/entity'
import type { Unit } from '../entities/unit'
import { validate } from '../entities/validate'
import { insertStep } from '../entities/writes'
import { newId } from '../ids'
import { BUILTIN_CLASSES } from './builtin'
import { classes } from './classes'

/** Adds the built-in classes the unit's domain lacks; returns their classnames. */
export function* addBuiltinClasses(u: Unit): TxStep<string[]> {
  const present = yield* u.ctx.deps.repo(classes.table).existing(
    u.w.domain,
    'classname',
    BUILTIN_CLASSES.map((c) => c.classname),
  )
  const added: string[] = []
  for (const body of BUILTIN_CLASSES) {
    if (present.has(body.classname)) continue
    const valid = { id: newId(), ...validate(classes.create, body) } as DocOf<typeof classes>
    const doc = classes.finish!(valid)
    yield* insertStep(u, { entity: classes, doc, input: doc, hidden: {} })
    added.push(body.classname)
  }
  return added
}
