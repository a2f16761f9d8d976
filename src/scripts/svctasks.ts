/**
 * Service tasks (/rest/v1/service/svctasks): when and on which sites a domain's service script runs,
 * in any domain (as svcscripts). `svcscriptcode` names the script by code and need not exist yet
 * when the task is saved (a product layer may bring the script later, and deleting a script leaves
 * its tasks); the scheduler (being built with the script runtime) is to skip a task whose script
 * is missing. When runs are due and on which sites is src/scripts/task-schedule.ts (pure); the
 * shapes of time windows are ./time-windows.ts.
 */
import * as v from 'valibot'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText } from '../entities/entity'
import { badRequest } from '../errors'
import { scriptCode } from './svcscripts'
import { formatUtc, nextRun, parseRfc3339, SCHEDULES, SITE_MODES, splitSites, type WorkingHours } from './task-schedule'
import { timeWindow } from './time-windows'
import { type Doc, isStrings } from '~storage/doc'
import type { TxStep } from '~storage/db'
import { settingValueStep } from '../settings/settings'

const flag = v.picklist([0, 1], 'must be 0 or 1')

/** A year and a day: longer intervals are more likely a mistake than a plan. */
export const MAX_INTERVAL_SEC = 366 * 86400
export const DEFAULT_INTERVAL_SEC = 3600
const MAX_SITES = 100
const MAX_SITE_NAME = 64
const MAX_PERIODS = 100

/** RFC 3339 with any offset, stored in UTC as `YYYY-MM-DDTHH:MM:SSZ` (fractions dropped); '' is none. */
const moment = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(64, 'must be at most 64 characters'),
    v.check(
      (s) => s === '' || parseRfc3339(s) !== null,
      'must be an RFC 3339 date and time such as 2026-03-01T08:00:00Z, or empty',
    ),
    v.transform((s) => (s === '' ? '' : formatUtc(parseRfc3339(s)!))),
  ),
)

function sitesProblem(names: string[]): string | null {
  if (names.length > MAX_SITES) return `must name at most ${MAX_SITES} sites`
  for (const name of names) {
    if (name === '') return 'a site name must not be empty'
    if (name.length > MAX_SITE_NAME) return `a site name is at most ${MAX_SITE_NAME} characters`
    // biome-ignore lint/suspicious/noControlCharactersInRegex: site names with control characters are refused
    if (/[,\u0000-\u001f\u007f]/.test(name))
      return `site name ${JSON.stringify(name)} holds a comma or a control character`
  }
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  return twice === undefined ? null : `names site ${twice} twice`
}

/**
 * The spec shows a comma-separated string, the original's entity page an array of names: both are
 * accepted, and the string form is stored (names trimmed, `a,b`).
 */
const sites = v.optional(
  v.pipe(
    v.union(
      [v.pipe(v.string(), v.transform(splitSites)), v.array(v.string('must be a site name'))],
      'must be a comma-separated string of site names, or an array of them',
    ),
    v.transform((names) => names.map((n) => n.trim())),
    v.check(
      (names) => sitesProblem(names) === null,
      (issue) => (isStrings(issue.input) && sitesProblem(issue.input)) || 'invalid',
    ),
    v.transform((names) => names.join(',')),
  ),
)

export const svctasks = defineEntity({
  name: 'svctask',
  table: { table: 'svctasks', objtype: 'svctask' },
  path: '/rest/v1/service/svctasks',
  fields: [
    ...COMMON_FIELDS,
    'name',
    'isenabled',
    'svcscriptcode',
    'sitemode',
    'sites',
    'isregular',
    'overlap',
    'intervalsec',
    'dtstart',
    'dtstop',
    'schedule',
    'periods',
  ],
  // the spec's list fields, exactly: the original's list leaves out sites, periods and opts
  listFields: [
    'id',
    'name',
    'isenabled',
    'svcscriptcode',
    'sitemode',
    'isregular',
    'overlap',
    'intervalsec',
    'dtstart',
    'dtstop',
    'schedule',
    'ext.lwt',
    'ext.ct',
  ],
  lookupFields: ['id'],
  create: {
    name: requiredText(255),
    isenabled: v.optional(flag),
    svcscriptcode: scriptCode,
    sitemode: v.optional(v.picklist(SITE_MODES, `must be one of ${SITE_MODES.join(', ')}`)),
    sites,
    isregular: v.optional(flag),
    overlap: v.optional(flag),
    intervalsec: v.optional(
      v.pipe(
        v.number(),
        v.safeInteger('must be an integer'),
        v.minValue(1, 'must be greater than 0'),
        v.maxValue(MAX_INTERVAL_SEC, `must be at most ${MAX_INTERVAL_SEC} (366 days)`),
      ),
    ),
    dtstart: moment,
    dtstop: moment,
    schedule: v.optional(v.picklist(SCHEDULES, `must be one of ${SCHEDULES.join(', ')}`)),
    periods: v.optional(v.pipe(v.array(timeWindow), v.maxLength(MAX_PERIODS, `must list at most ${MAX_PERIODS}`))),
    opts: opts(),
    ext,
  },
  // what the defaults below leave set on every task, and the stored forms of sites and moments
  doc: {
    isenabled: flag,
    sitemode: v.picklist(SITE_MODES),
    sites: v.pipe(v.string(), v.description("site names joined by commas, for alllisted and anylisted; '' lists none")),
    isregular: flag,
    overlap: flag,
    intervalsec: v.pipe(v.number(), v.integer()),
    dtstart: v.pipe(v.string(), v.description("YYYY-MM-DDTHH:MM:SSZ, or '' for none")),
    dtstop: v.pipe(v.string(), v.description("YYYY-MM-DDTHH:MM:SSZ, or '' for none")),
    schedule: v.picklist(SCHEDULES),
    periods: v.array(timeWindow),
    next_run: v.pipe(
      v.nullable(v.string()),
      v.description(
        'computed, read-only: when the next run is due (YYYY-MM-DDTHH:MM:SSZ), or null when none is to come',
      ),
    ),
  },
  // the answer's next run, from the schedule, the domain's working hours and the time (never stored)
  hooks: {
    *view(ctx, doc): TxStep<Doc> {
      const hours = yield* settingValueStep<WorkingHours>(ctx, 'working_hours')
      const at = nextRun(doc as never, hours, ctx.deps.clock.now())
      return { ...doc, next_run: at === null ? null : formatUtc(at) }
    },
    // the next run moves with the clock: a task's version (its ETag, If-Match) is the rest
    live: ['next_run'],
  },
  // defaults, the checks across fields (on the whole task, so also after a PATCH), and the members
  // in the order of the original's example
  finish: ({
    id,
    name,
    isenabled = 1,
    svcscriptcode,
    sitemode = 'all',
    sites = '',
    isregular = 1,
    overlap = 0,
    intervalsec = DEFAULT_INTERVAL_SEC,
    dtstart = '',
    dtstop = '',
    schedule = 'all',
    periods = [],
    ...rest
  }) => {
    if (isregular === 0 && dtstart === '')
      throw badRequest('dtstart is required for a task that runs once (isregular 0)', 'dtstart')
    // both are normalized to the same UTC form, so text order is time order
    if (dtstart !== '' && dtstop !== '' && dtstop <= dtstart)
      throw badRequest('dtstop: must be later than dtstart', 'dtstop')
    if ((sitemode === 'alllisted' || sitemode === 'anylisted') && sites === '')
      throw badRequest(`sites: must list at least one site when sitemode is ${sitemode}`, 'sites')
    if (schedule === 'periods' && periods.length === 0)
      throw badRequest('periods: must list at least one period when schedule is periods', 'periods')
    return {
      id,
      name,
      isenabled,
      svcscriptcode,
      sitemode,
      sites,
      isregular,
      overlap,
      intervalsec,
      dtstart,
      dtstop,
      schedule,
      periods,
      ...rest,
    }
  },
})
