/**
 * When a service task's runs are due, and on which sites: pure functions of the task, the domain's
 * working hours and the time (no I/O), for the scheduler that starts runs in the script runtime.
 *
 * A regular task's time is cut into periods of `intervalsec` aligned to `dtstart` (to the epoch
 * without one) and clipped to dtstart..dtstop; an irregular task has one period, dtstart..dtstop.
 * A run is due at the first moment of a period that the task's schedule allows, and `period` names
 * that period: the scheduler (task-runner.ts) claims `(task, period, site)` in the database, kept
 * until `ends`, so each period runs once across the processes of a cluster, however often they ask.
 *
 * Times of day (working hours, a task's periods) are read in the working hours' timezone, through
 * Intl, so daylight-saving changes follow the zone's rules. Days are ISO: 1 Monday to 7 Sunday; a
 * window includes `from` and excludes `to` (`24:00` is the end of the day).
 */

/** A weekly window of time: on these days (every day when absent), from..to local time. */
export interface TimeWindow {
  days?: readonly number[]
  from: string
  to: string
}

/** The domain setting `working_hours`. */
export interface WorkingHours {
  timezone: string
  days: readonly number[]
  from: string
  to: string
}

export const DEFAULT_WORKING_HOURS: WorkingHours = {
  timezone: 'UTC',
  days: [1, 2, 3, 4, 5],
  from: '09:00',
  to: '18:00',
}

/** What of a stored task decides when it runs. */
export interface TaskTiming {
  isenabled: number
  isregular: number
  intervalsec: number
  /** `YYYY-MM-DDTHH:MM:SSZ`, or '' for none. */
  dtstart: string
  dtstop: string
  schedule: Schedule
  periods: readonly TimeWindow[]
}

/**
 * The original's four schedules: a run may start always (`all`), within working hours (`work`),
 * outside them (`afterhours`), or within the task's own `periods`.
 */
export const SCHEDULES = ['all', 'work', 'afterhours', 'periods'] as const
export type Schedule = (typeof SCHEDULES)[number]

/**
 * The original's five site modes: all sites (`all`), any one site (`any`), all listed sites
 * (`alllisted`), one of the listed sites (`anylisted`), the first site (`firstsite`).
 */
export const SITE_MODES = ['all', 'any', 'alllisted', 'anylisted', 'firstsite'] as const
export type SiteMode = (typeof SITE_MODES)[number]

/** What of a stored task decides where it runs. */
export interface TaskSites {
  sitemode: SiteMode
  /** Comma-separated site names; '' lists none. */
  sites: string
}

export interface DueRun {
  /** The period's key: its start as `YYYY-MM-DDTHH:MM:SSZ`. */
  period: string
  /** The period's start (ms since the epoch). */
  at: number
  /** When the period ends (ms), so a lock on it may expire then; null when it never ends (irregular, no dtstop). */
  ends: number | null
}

export const WEEKDAYS = [1, 2, 3, 4, 5, 6, 7] as const
const DAY_NUMBER: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 }
const MINUTES_PER_DAY = 24 * 60

/** Minutes since midnight of `HH:MM`; `24:00` only as the end of a window. Null when malformed. */
export function parseClock(hhmm: string, end = false): number | null {
  const m = /^(\d\d):(\d\d)$/.exec(hhmm)
  if (!m || Number(m[2]) > 59) return null
  const minutes = Number(m[1]) * 60 + Number(m[2])
  return minutes < MINUTES_PER_DAY || (end && minutes === MINUTES_PER_DAY) ? minutes : null
}

/** Per time zone: making a formatter costs far more than using one, and a scheduler asks often. */
const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
    formatters.set(timezone, f)
  }
  return f
}

/** Whether Intl knows the time zone (`UTC`, `Europe/Berlin`, ...). */
export function isTimeZone(timezone: string): boolean {
  if (!timezone) return false
  try {
    formatter(timezone)
    return true
  } catch {
    return false
  }
}

/** The ISO weekday and the minute of the day at `now` in the time zone. */
export function localClock(now: number, timezone: string): { day: number; minute: number } {
  const parts = formatter(timezone).formatToParts(now)
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  return { day: DAY_NUMBER[part('weekday')] ?? 0, minute: Number(part('hour')) * 60 + Number(part('minute')) }
}

/** Whether the local clock falls in the window. */
export function inWindow(window: TimeWindow, local: { day: number; minute: number }): boolean {
  const from = parseClock(window.from)
  const to = parseClock(window.to, true)
  if (from === null || to === null) return false
  return (window.days ?? WEEKDAYS).includes(local.day) && local.minute >= from && local.minute < to
}

/** Whether the task's schedule lets a run start at `now`. */
export function allowedAt(task: Pick<TaskTiming, 'schedule' | 'periods'>, hours: WorkingHours, now: number): boolean {
  return task.schedule === 'all' || allowedLocally(task, hours, localClock(now, hours.timezone))
}

function allowedLocally(
  task: Pick<TaskTiming, 'schedule' | 'periods'>,
  hours: WorkingHours,
  local: { day: number; minute: number },
): boolean {
  if (task.schedule === 'all') return true
  if (task.schedule === 'work') return inWindow(hours, local)
  if (task.schedule === 'afterhours') return !inWindow(hours, local)
  return task.periods.some((p) => inWindow(p, local))
}

const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?(?:([Zz])|([+-])(\d\d):(\d\d))$/

/**
 * An RFC 3339 date and time (any offset) as ms since the epoch, fractions of a second dropped;
 * null when malformed or out of range (a 30 February, a leap second, a year past 9999 in UTC).
 */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text)
  if (!m) return null
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const local = new Date(0)
  local.setUTCFullYear(y, mo - 1, d) // not Date.UTC, which reads years 0-99 as 1900-1999
  local.setUTCHours(h, mi, s, 0)
  const exact =
    local.getUTCFullYear() === y &&
    local.getUTCMonth() === mo - 1 &&
    local.getUTCDate() === d &&
    local.getUTCHours() === h &&
    local.getUTCMinutes() === mi &&
    local.getUTCSeconds() === s
  const offH = Number(m[10] ?? 0)
  const offM = Number(m[11] ?? 0)
  if (!exact || offH > 23 || offM > 59) return null
  const ms = local.getTime() - (m[9] === '-' ? -1 : 1) * (offH * 60 + offM) * 60_000
  const year = new Date(ms).getUTCFullYear()
  return year >= 0 && year <= 9999 ? ms : null
}

/** `YYYY-MM-DDTHH:MM:SSZ` (milliseconds shown only when there are some). */
export function formatUtc(ms: number): string {
  const iso = new Date(ms).toISOString()
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso
}

/** A stored bound: ms, null for '', undefined for a value that does not parse (the task never runs). */
function bound(text: string): number | null | undefined {
  if (text === '') return null
  return parseRfc3339(text) ?? undefined
}

/**
 * The run of the task due at `now`: the current period, when the task is enabled, `now` lies in
 * dtstart..dtstop (dtstop excluded), the schedule allows `now`, and the period starts after
 * `lastPeriodStart` (the `at` of the last period that ran, for a caller that keeps it; the
 * scheduler's database claims already remember). Null when no run is due. Periods
 * missed entirely are not caught up: only the current one can be due.
 */
export function dueRun(task: TaskTiming, hours: WorkingHours, now: number, lastPeriodStart?: number): DueRun | null {
  if (task.isenabled !== 1) return null
  const start = bound(task.dtstart)
  const stop = bound(task.dtstop)
  if (start === undefined || stop === undefined) return null
  if ((start !== null && now < start) || (stop !== null && now >= stop)) return null
  let at: number
  let ends: number | null
  if (task.isregular === 1) {
    if (!Number.isSafeInteger(task.intervalsec) || task.intervalsec <= 0) return null
    const step = task.intervalsec * 1000
    const anchor = start ?? 0
    at = anchor + Math.floor((now - anchor) / step) * step
    ends = stop === null ? at + step : Math.min(at + step, stop)
  } else {
    if (start === null) return null // a task that runs once needs its moment
    at = start
    ends = stop
  }
  if (lastPeriodStart !== undefined && at <= lastPeriodStart) return null
  if (!allowedAt(task, hours, now)) return null
  return { period: formatUtc(at), at, ends }
}

/** Moments tried at most for one answer: more than two weeks of half hours and window edges. */
const MOST_TRIES = 2000
const MINUTE_MS = 60_000

/** The minutes of the day where the schedule may change: its windows' edges and midnight. */
function edgesOf(task: Pick<TaskTiming, 'schedule' | 'periods'>, hours: WorkingHours): number[] {
  const windows = task.schedule === 'periods' ? task.periods : [hours]
  const edges = windows.flatMap((w) => [parseClock(w.from), parseClock(w.to, true)])
  return [...edges.filter((e): e is number => e !== null), MINUTES_PER_DAY].sort((a, b) => a - b)
}

/**
 * When the task's next run is due after `now`: the first moment the schedule allows of the first
 * period (within dtstart..dtstop) whose first such moment is still to come; a period whose moment
 * has passed is taken as run (whether it did is the scheduler's claims', not the schedule's). Null
 * when the task is disabled, has no run to come (an irregular one past its moment, dtstop passed),
 * or its schedule allows none within the moments tried (over two weeks of them).
 */
export function nextRun(task: TaskTiming, hours: WorkingHours, now: number): number | null {
  if (task.isenabled !== 1) return null
  const start = bound(task.dtstart)
  const stop = bound(task.dtstop)
  if (start === undefined || stop === undefined) return null
  const end = stop ?? Number.POSITIVE_INFINITY
  let tries = MOST_TRIES
  const edges = edgesOf(task, hours)
  // from a refused moment to the next edge of a window, at most half an hour on (so a change of
  // the zone's offset is not jumped over by more than that), on whole minutes as windows are
  const firstAllowed = (from: number, to: number): number | null => {
    for (let at = from; at < to && tries-- > 0; ) {
      if (task.schedule === 'all') return at
      const local = localClock(at, hours.timezone)
      if (allowedLocally(task, hours, local)) return at
      const edge = edges.find((e) => e > local.minute) ?? MINUTES_PER_DAY
      at = (Math.floor(at / MINUTE_MS) + Math.min(edge - local.minute, 30)) * MINUTE_MS
    }
    return null
  }
  if (task.isregular !== 1) {
    if (start === null) return null
    const at = firstAllowed(start, end)
    return at !== null && at > now ? at : null
  }
  if (!Number.isSafeInteger(task.intervalsec) || task.intervalsec <= 0) return null
  const step = task.intervalsec * 1000
  const anchor = start ?? 0
  for (let period = now < anchor ? anchor : anchor + Math.floor((now - anchor) / step) * step; period < end; ) {
    const at = firstAllowed(period, Math.min(period + step, end))
    if (at !== null && at > now) return at
    if (tries <= 0) return null
    period += step
  }
  return null
}

/** The names of a `sites` value, in order ('' is none). */
export function splitSites(sites: string): string[] {
  return sites === '' ? [] : sites.split(',').map((s) => s.trim())
}

/**
 * Where a period's run may start, given the sites that have a node able to run service scripts (the
 * sites "where the domain is served": every domain is served on every site), in the cluster's order
 * (by node name), which decides what is first. `sites` are those sites; `once` says the period runs
 * on one of them only (whichever process claims it first), else once on each.
 * - `all`: every such site; `any`: one of them;
 * - `alllisted`: every listed site that has one; `anylisted`: one of those;
 * - `firstsite`: the first such site.
 */
export function placement(task: TaskSites, sitesWithSvcNodes: readonly string[]): { sites: string[]; once: boolean } {
  const available = [...new Set(sitesWithSvcNodes)]
  const listed = splitSites(task.sites).filter((s) => available.includes(s))
  switch (task.sitemode) {
    case 'all':
      return { sites: available, once: false }
    case 'any':
      return { sites: available, once: true }
    case 'alllisted':
      return { sites: listed, once: false }
    case 'anylisted':
      return { sites: listed, once: true }
    case 'firstsite':
      return { sites: available.slice(0, 1), once: false }
  }
}
