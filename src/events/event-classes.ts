/**
 * The event classes a webhook subscription may name: those the service emits itself (data changes
 * from the journal, `customevents` from scripts' `emit`) and the telephony classes the spec and the
 * original name, which the platform's other components publish through event ingest
 * (src/events/ingest.ts). A mask naming another class, or an event `modelevents` never has, would
 * never match: it is a 400 naming the item instead of a silent subscription.
 */
import { badRequest } from '../errors'
import type { EventMask } from './match'

/** Each class with the events it has, or null for any event name (scripts and ingest name their own). */
export const EVENT_CLASSES: ReadonlyMap<string, readonly string[] | null> = new Map([
  ['modelevents', ['data_changed']],
  ['customevents', null],
  ['callevents', null],
  ['confevents', null],
  ['providerevents', null],
  ['statesevents', null],
  ['registrarevents', null],
  ['ccsevents', null],
  ['ivrevents', null],
])

/** A 400 naming `field` and the index of the first mask of a class or event no source emits. */
export function requireKnownClasses(masks: readonly EventMask[], field = 'events'): void {
  for (const [index, m] of masks.entries()) {
    const known = EVENT_CLASSES.get(m.class)
    const fail = (why: string) => badRequest(`${field}[${index}]: ${why}`, field, { index })
    if (known === undefined)
      throw fail(`no event class ${JSON.stringify(m.class)}; the classes are ${[...EVENT_CLASSES.keys()].join(', ')}`)
    if (known && m.event !== '*' && !known.includes(m.event))
      throw fail(`${m.class} has no event ${JSON.stringify(m.event)}; it has ${known.join(', ')}`)
  }
}
