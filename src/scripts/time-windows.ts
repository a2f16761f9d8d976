/**
 * Valibot shapes of weekly time windows, shared by the domain setting `working_hours` and a service
 * task's `periods`, so both are checked as src/scripts/task-schedule.ts reads them.
 */
import * as v from 'valibot'
import { isTimeZone, parseClock, WEEKDAYS } from './task-schedule'

const clock = (end: boolean) =>
  v.pipe(
    v.string(),
    v.check(
      (s) => parseClock(s, end) !== null,
      end ? 'must be a time HH:MM (00:00 to 24:00)' : 'must be a time HH:MM (00:00 to 23:59)',
    ),
  )

/** ISO days, 1 Monday to 7 Sunday, each at most once. */
export const weekdays = v.pipe(
  v.array(v.picklist(WEEKDAYS, 'must be a day from 1 (Monday) to 7 (Sunday)')),
  v.minLength(1, 'must name at least one day'),
  v.check((days) => new Set(days).size === days.length, 'must not name a day twice'),
)

export const timeZone = v.pipe(
  v.string(),
  v.check(isTimeZone, 'must be a time zone known to Intl, such as UTC or Europe/Berlin'),
)

/** `to` after `from` on the same day; a window across midnight is two windows. */
const laterTo = (w: { from: string; to: string }) => parseClock(w.from)! < parseClock(w.to, true)!
const LATER_TO = 'must be later than from (a window across midnight is two windows)'

const windowEntries = { from: clock(false), to: clock(true) }

/** A task's period: `{days?, from, to}`, every day when `days` is absent. */
export const timeWindow = v.pipe(
  v.strictObject({ days: v.optional(weekdays), ...windowEntries }, 'must be an object {days?, from, to}'),
  v.forward(
    v.check((w) => laterTo(w), LATER_TO),
    ['to'],
  ),
)

/** The value of the setting `working_hours`. */
export const workingHours = v.pipe(
  v.strictObject(
    { timezone: timeZone, days: weekdays, ...windowEntries },
    'must be an object {timezone, days, from, to}',
  ),
  v.forward(
    v.check((w) => laterTo(w), LATER_TO),
    ['to'],
  ),
)
