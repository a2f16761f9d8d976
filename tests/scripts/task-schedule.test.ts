// When a service task's runs are due and on which sites: the pure module, table by table.
import { describe, expect, test } from 'bun:test'
import {
  DEFAULT_WORKING_HOURS,
  dueRun,
  formatUtc,
  isTimeZone,
  nextRun,
  parseClock,
  parseRfc3339,
  placement,
  type TaskSites,
  type TaskTiming,
  type WorkingHours,
} from '~/scripts/task-schedule'

const ms = (iso: string) => Date.parse(iso)
/** The run expected: its period's key and end. */
const p = (period: string, ends: string | null) => ({ period, ends })

/** Hourly from Monday 2026-03-02 08:15 UTC for a week, at any time. */
const hourly: TaskTiming = {
  isenabled: 1,
  isregular: 1,
  intervalsec: 3600,
  dtstart: '2026-03-02T08:15:00Z',
  dtstop: '2026-03-09T08:15:00Z',
  schedule: 'all',
  periods: [],
}
const UTC = DEFAULT_WORKING_HOURS

type Case = [
  name: string,
  task: Partial<TaskTiming>,
  now: string,
  expected: { period: string; ends: string | null } | null,
  options?: { hours?: WorkingHours; last?: string },
]

/** Each case: the task (`hourly` with changes), the time asked, the run due (its key and end) or null. */
function check(cases: Case[]) {
  for (const [name, changes, now, expected, options = {}] of cases) {
    const last = options.last === undefined ? undefined : ms(options.last)
    const run = dueRun({ ...hourly, ...changes }, options.hours ?? UTC, ms(now), last)
    const got = run && { period: run.period, ends: run.ends === null ? null : formatUtc(run.ends) }
    expect([name, got]).toEqual([name, expected])
    if (run) expect([name, run.at]).toEqual([name, ms(run.period)])
  }
}

describe('regular tasks: periods of intervalsec aligned to dtstart, within dtstart..dtstop', () => {
  test('alignment, period keys and ends', () => {
    check([
      ['at dtstart: the first period', {}, '2026-03-02T08:15:00Z', p('2026-03-02T08:15:00Z', '2026-03-02T09:15:00Z')],
      ['inside a period', {}, '2026-03-02T10:59:59Z', p('2026-03-02T10:15:00Z', '2026-03-02T11:15:00Z')],
      ['on a boundary: the new period', {}, '2026-03-02T11:15:00Z', p('2026-03-02T11:15:00Z', '2026-03-02T12:15:00Z')],
      ['days later', {}, '2026-03-05T00:20:00Z', p('2026-03-05T00:15:00Z', '2026-03-05T01:15:00Z')],
      [
        'the last period ends at dtstop',
        { intervalsec: 7200, dtstop: '2026-03-02T09:15:00Z' },
        '2026-03-02T08:30:00Z',
        p('2026-03-02T08:15:00Z', '2026-03-02T09:15:00Z'),
      ],
      [
        'no dtstart: aligned to the epoch',
        { dtstart: '' },
        '2026-03-02T10:20:00Z',
        p('2026-03-02T10:00:00Z', '2026-03-02T11:00:00Z'),
      ],
      [
        'no dtstart, daily',
        { dtstart: '', intervalsec: 86400 },
        '2026-03-04T17:00:00Z',
        p('2026-03-04T00:00:00Z', '2026-03-05T00:00:00Z'),
      ],
      [
        'no dtstart, 7 seconds from the epoch (1772445600 = 7k + 2)',
        { dtstart: '', intervalsec: 7 },
        '2026-03-02T10:00:00Z',
        p('2026-03-02T09:59:58Z', '2026-03-02T10:00:05Z'),
      ],
      [
        'no dtstop: never ends',
        { dtstop: '' },
        '2031-01-01T00:00:00Z',
        p('2030-12-31T23:15:00Z', '2031-01-01T00:15:00Z'),
      ],
    ])
  })

  test('before dtstart, at and after dtstop, disabled: nothing is due', () => {
    check([
      ['a second before dtstart', {}, '2026-03-02T08:14:59Z', null],
      ['at dtstop (excluded)', {}, '2026-03-09T08:15:00Z', null],
      ['after dtstop', {}, '2026-04-01T00:00:00Z', null],
      ['the last second before dtstop', {}, '2026-03-09T08:14:59Z', p('2026-03-09T07:15:00Z', '2026-03-09T08:15:00Z')],
      ['disabled', { isenabled: 0 }, '2026-03-02T10:00:00Z', null],
      ['an interval that is not positive', { intervalsec: 0 }, '2026-03-02T10:00:00Z', null],
      ['a stored time that does not parse', { dtstart: 'soon' }, '2026-03-02T10:00:00Z', null],
    ])
  })

  test('lastPeriodStart: a period that ran is not due again; the next one is', () => {
    check([
      ['same period', {}, '2026-03-02T10:40:00Z', null, { last: '2026-03-02T10:15:00Z' }],
      [
        'next period',
        {},
        '2026-03-02T11:40:00Z',
        p('2026-03-02T11:15:00Z', '2026-03-02T12:15:00Z'),
        { last: '2026-03-02T10:15:00Z' },
      ],
    ])
  })
})

describe('irregular tasks run once at dtstart', () => {
  test('one period, dtstart..dtstop', () => {
    const once = { isregular: 0, intervalsec: 60, dtstart: '2026-03-02T08:00:00Z', dtstop: '2026-03-03T08:00:00Z' }
    check([
      ['before dtstart', once, '2026-03-02T07:59:59Z', null],
      ['at dtstart', once, '2026-03-02T08:00:00Z', p('2026-03-02T08:00:00Z', '2026-03-03T08:00:00Z')],
      ['later: the same period', once, '2026-03-02T20:00:00Z', p('2026-03-02T08:00:00Z', '2026-03-03T08:00:00Z')],
      ['once run, never again', once, '2026-03-02T20:00:00Z', null, { last: '2026-03-02T08:00:00Z' }],
      ['out of relevance at dtstop', once, '2026-03-03T08:00:00Z', null],
      [
        'no dtstop: relevant until it runs',
        { ...once, dtstop: '' },
        '2027-01-01T00:00:00Z',
        p('2026-03-02T08:00:00Z', null),
      ],
      ['no dtstart: never', { ...once, dtstart: '' }, '2026-03-02T20:00:00Z', null],
      ['disabled', { ...once, isenabled: 0 }, '2026-03-02T08:00:00Z', null],
    ])
  })
})

describe('schedule work: within the domain working hours, in their time zone', () => {
  const berlin: WorkingHours = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }
  const work = { schedule: 'work' as const, dtstart: '', dtstop: '', intervalsec: 900 }
  const at = (iso: string) => p(iso, formatUtc(ms(iso) + 900_000))

  test('weekdays, weekends and the edges (Berlin is UTC+1 in winter, UTC+2 from 29 March)', () => {
    check([
      ['Monday 08:59 Berlin', work, '2026-03-02T07:59:00Z', null, { hours: berlin }],
      [
        'Monday 09:00 Berlin: from is included',
        work,
        '2026-03-02T08:00:00Z',
        at('2026-03-02T08:00:00Z'),
        { hours: berlin },
      ],
      ['Friday 17:59 Berlin', work, '2026-03-06T16:59:00Z', at('2026-03-06T16:45:00Z'), { hours: berlin }],
      ['Friday 18:00 Berlin: to is excluded', work, '2026-03-06T17:00:00Z', null, { hours: berlin }],
      ['Saturday noon', work, '2026-03-07T11:00:00Z', null, { hours: berlin }],
      ['Sunday noon', work, '2026-03-08T11:00:00Z', null, { hours: berlin }],
      ['the same instant in UTC hours', work, '2026-03-02T08:30:00Z', null],
      ['Monday 09:00 UTC', work, '2026-03-02T09:00:00Z', at('2026-03-02T09:00:00Z')],
      ['after the DST change: 09:00 CEST', work, '2026-03-30T07:00:00Z', at('2026-03-30T07:00:00Z'), { hours: berlin }],
      ['after the DST change: 08:59 CEST', work, '2026-03-30T06:59:00Z', null, { hours: berlin }],
    ])
  })

  test('the local day decides: Sunday 23:30 UTC is Monday in Berlin, Friday evening UTC is Friday in New York', () => {
    const mondays: WorkingHours = { timezone: 'Europe/Berlin', days: [1], from: '00:00', to: '24:00' }
    const newYork: WorkingHours = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }
    check([
      [
        'Sunday 23:30 UTC, Monday 00:30 Berlin',
        work,
        '2026-03-08T23:30:00Z',
        at('2026-03-08T23:30:00Z'),
        { hours: mondays },
      ],
      ['Monday 23:30 UTC, Tuesday 00:30 Berlin', work, '2026-03-09T23:30:00Z', null, { hours: mondays }],
      [
        'Monday 22:59 UTC, Monday 23:59 Berlin',
        work,
        '2026-03-09T22:59:00Z',
        at('2026-03-09T22:45:00Z'),
        { hours: mondays },
      ],
      [
        'Monday 14:00 UTC, 09:00 in New York',
        work,
        '2026-03-02T14:00:00Z',
        at('2026-03-02T14:00:00Z'),
        { hours: newYork },
      ],
      ['Monday 13:59 UTC, 08:59 in New York', work, '2026-03-02T13:59:00Z', null, { hours: newYork }],
      ['Saturday 01:00 UTC, Friday 20:00 in New York', work, '2026-03-07T01:00:00Z', null, { hours: newYork }],
    ])
  })

  test('a run starts at the first moment of its period that the hours allow', () => {
    const twoHourly = { ...work, intervalsec: 7200, dtstart: '2026-03-02T08:00:00Z' }
    check([
      ['08:30 UTC: period 08:00, before the hours', twoHourly, '2026-03-02T08:30:00Z', null],
      [
        '09:00 UTC: period 08:00, now allowed',
        twoHourly,
        '2026-03-02T09:00:00Z',
        p('2026-03-02T08:00:00Z', '2026-03-02T10:00:00Z'),
      ],
    ])
  })
})

describe('schedule periods: within one of the listed periods, in the working hours time zone', () => {
  const tokyo: WorkingHours = { ...DEFAULT_WORKING_HOURS, timezone: 'Asia/Tokyo' } // UTC+9, no DST
  const task = {
    schedule: 'periods' as const,
    dtstart: '',
    dtstop: '',
    intervalsec: 60,
    periods: [
      { days: [6, 7], from: '10:00', to: '12:00' },
      { from: '22:00', to: '24:00' },
    ],
  }
  const at = (iso: string) => p(iso, formatUtc(ms(iso) + 60_000))

  test('days, edges, every day without days, the working days do not apply', () => {
    check([
      ['Saturday 10:00 JST', task, '2026-03-07T01:00:00Z', at('2026-03-07T01:00:00Z'), { hours: tokyo }],
      ['Saturday 09:59 JST', task, '2026-03-07T00:59:00Z', null, { hours: tokyo }],
      ['Saturday 12:00 JST: to is excluded', task, '2026-03-07T03:00:00Z', null, { hours: tokyo }],
      ['Sunday 11:59 JST', task, '2026-03-08T02:59:00Z', at('2026-03-08T02:59:00Z'), { hours: tokyo }],
      ['Monday 10:00 JST: not a listed day', task, '2026-03-02T01:00:00Z', null, { hours: tokyo }],
      ['Monday 22:30 JST: every day', task, '2026-03-02T13:30:00Z', at('2026-03-02T13:30:00Z'), { hours: tokyo }],
      ['Monday 23:59 JST', task, '2026-03-02T14:59:00Z', at('2026-03-02T14:59:00Z'), { hours: tokyo }],
      ['Tuesday 00:00 JST: 24:00 ended the day', task, '2026-03-02T15:00:00Z', null, { hours: tokyo }],
      ['Saturday 10:00 UTC hours', task, '2026-03-07T10:00:00Z', at('2026-03-07T10:00:00Z')],
      ['no periods: never', { ...task, periods: [] }, '2026-03-07T10:00:00Z', null],
    ])
  })
})

describe('schedule afterhours: outside the domain working hours', () => {
  const berlin: WorkingHours = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }
  const after = { schedule: 'afterhours' as const, dtstart: '', dtstop: '', intervalsec: 900 }
  const at = (iso: string) => p(iso, formatUtc(ms(iso) + 900_000))
  test('evenings, nights and weekends run; working hours do not', () => {
    check([
      [
        'Monday 08:59 Berlin: before hours',
        after,
        '2026-03-02T07:59:00Z',
        at('2026-03-02T07:45:00Z'),
        { hours: berlin },
      ],
      ['Monday 09:00 Berlin: hours begin', after, '2026-03-02T08:00:00Z', null, { hours: berlin }],
      ['Wednesday noon Berlin', after, '2026-03-04T11:00:00Z', null, { hours: berlin }],
      ['Friday 18:00 Berlin: hours end', after, '2026-03-06T17:00:00Z', at('2026-03-06T17:00:00Z'), { hours: berlin }],
      ['Saturday noon', after, '2026-03-07T11:00:00Z', at('2026-03-07T11:00:00Z'), { hours: berlin }],
      ['Monday 03:00 UTC, default hours', after, '2026-03-02T03:00:00Z', at('2026-03-02T03:00:00Z')],
      ['Monday 10:00 UTC, default hours', after, '2026-03-02T10:00:00Z', null],
    ])
  })
})

describe("nextRun: when the next run is due (the answer's next_run)", () => {
  const berlin: WorkingHours = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }
  const daily = { intervalsec: 86_400, dtstart: '', dtstop: '', schedule: 'work' as const }
  const cases: [name: string, task: Partial<TaskTiming>, now: string, expected: string | null, hours?: WorkingHours][] =
    [
      ['the next period', {}, '2026-03-02T09:00:00Z', '2026-03-02T09:15:00Z'],
      ['at a period start its run is taken as come: the next', {}, '2026-03-02T09:15:00Z', '2026-03-02T10:15:00Z'],
      ['before dtstart: dtstart', {}, '2026-03-01T00:00:00Z', '2026-03-02T08:15:00Z'],
      ['the last period: none after it', {}, '2026-03-09T07:30:00Z', null],
      ['after dtstop', {}, '2026-03-10T00:00:00Z', null],
      ['disabled', { isenabled: 0 }, '2026-03-02T09:00:00Z', null],
      ['once, to come', { isregular: 0 }, '2026-03-01T00:00:00Z', '2026-03-02T08:15:00Z'],
      ['once, passed', { isregular: 0 }, '2026-03-02T08:15:00Z', null],
      ['work, Saturday: Monday 09:00 Berlin', daily, '2026-03-07T12:00:00Z', '2026-03-09T08:00:00Z', berlin],
      ['work, Monday before hours: today', daily, '2026-03-09T07:00:00Z', '2026-03-09T08:00:00Z', berlin],
      ['work, Monday in hours: tomorrow', daily, '2026-03-09T10:00:00Z', '2026-03-10T08:00:00Z', berlin],
      [
        'work, never before dtstop',
        { ...daily, dtstart: '2026-03-07T00:00:00Z', dtstop: '2026-03-08T23:00:00Z' },
        '2026-03-07T01:00:00Z',
        null,
        berlin,
      ],
    ]
  test('periods, bounds, once, schedules in the time zone', () => {
    for (const [name, changes, now, expected, hours] of cases) {
      const at = nextRun({ ...hourly, ...changes }, hours ?? UTC, ms(now))
      expect([name, at === null ? null : formatUtc(at)]).toEqual([name, expected])
    }
  })
})

describe('site modes: where a period runs', () => {
  const cluster = ['s1', 's2', 's3']
  const cases: [TaskSites, readonly string[], { sites: string[]; once: boolean }][] = [
    // all: every site with an svc node (sites is not read)
    [{ sitemode: 'all', sites: '' }, cluster, { sites: ['s1', 's2', 's3'], once: false }],
    [{ sitemode: 'all', sites: 's2' }, cluster, { sites: ['s1', 's2', 's3'], once: false }],
    [{ sitemode: 'all', sites: '' }, ['s1', 's1', 's2'], { sites: ['s1', 's2'], once: false }],
    [{ sitemode: 'all', sites: '' }, [], { sites: [], once: false }],
    // any: one of them, whichever claims first
    [{ sitemode: 'any', sites: '' }, cluster, { sites: ['s1', 's2', 's3'], once: true }],
    // alllisted: every listed site with a node, in the listed order
    [{ sitemode: 'alllisted', sites: 's3,s1' }, cluster, { sites: ['s3', 's1'], once: false }],
    [{ sitemode: 'alllisted', sites: 's4,s2' }, cluster, { sites: ['s2'], once: false }],
    [{ sitemode: 'alllisted', sites: 's4' }, cluster, { sites: [], once: false }],
    // anylisted: one of the listed sites with a node
    [{ sitemode: 'anylisted', sites: 's2,s3' }, cluster, { sites: ['s2', 's3'], once: true }],
    [{ sitemode: 'anylisted', sites: 's4' }, cluster, { sites: [], once: true }],
    // firstsite: the first site in the cluster's order (by node name)
    [{ sitemode: 'firstsite', sites: '' }, cluster, { sites: ['s1'], once: false }],
    [{ sitemode: 'firstsite', sites: 's3' }, ['s2', 's3'], { sites: ['s2'], once: false }],
    [{ sitemode: 'firstsite', sites: '' }, [], { sites: [], once: false }],
  ]
  test('all, any, alllisted, anylisted, firstsite', () => {
    for (const [task, available, expected] of cases)
      expect([task, available, placement(task, available)]).toEqual([task, available, expected])
  })
})

describe('times', () => {
  test('parseRfc3339 takes any offset and drops fractions; formatUtc writes the stored form', () => {
    const cases: [string, string | null][] = [
      ['2019-02-20T08:00:00Z', '2019-02-20T08:00:00Z'],
      ['2019-02-20t08:00:00z', '2019-02-20T08:00:00Z'],
      ['2019-02-20T11:00:00+03:00', '2019-02-20T08:00:00Z'],
      ['2019-02-20T08:00:00.999Z', '2019-02-20T08:00:00Z'],
      ['2024-02-29T23:59:59-00:30', '2024-03-01T00:29:59Z'],
      ['2019-02-29T08:00:00Z', null],
      ['2019-02-20T24:00:00Z', null],
      ['2019-02-20T08:00:60Z', null],
      ['2019-02-20T08:00:00+24:00', null],
      ['2019-02-20T08:00:00', null],
      ['2019-02-20 08:00:00Z', null],
      ['2019-02-20', null],
      ['9999-12-31T23:59:59-01:00', null],
    ]
    for (const [text, stored] of cases) {
      const parsed = parseRfc3339(text)
      expect([text, parsed === null ? null : formatUtc(parsed)]).toEqual([text, stored])
    }
  })

  test('parseClock: HH:MM, 24:00 only as an end; isTimeZone asks Intl', () => {
    expect(
      ['00:00', '09:30', '23:59', '24:00', '24:00', '9:30', '23:60', '24:01'].map((s, i) => parseClock(s, i === 4)),
    ).toEqual([0, 570, 1439, null, 1440, null, null, null])
    expect(['UTC', 'Europe/Berlin', 'Asia/Tokyo', 'Mars/Olympus', ''].map(isTimeZone)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ])
  })
})
