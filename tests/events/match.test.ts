// The subscription matcher, table-driven: masks and objects as both sources send them, and which
// events a subscription's terms let through with which data. Filter operators: ../query/filter-eval.test.ts.
import { describe, expect, test } from 'bun:test'
import { ApiError } from '~/errors'
import { matches, parseEventMasks, parseObjects, shape, type SubscriptionTerms } from '~/events/match'
import { dataChanged, type PlatformEvent } from '~/events/event'
import type { Doc } from '~storage/doc'
import type { CmdType } from '~storage/journal'
import type { FilterNode } from '~storage/query'

/** The error a parser throws, for comparing its field, index and message. */
function refusal(run: () => unknown): { field?: string; index?: unknown; message: string } {
  try {
    run()
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    expect(err.status).toBe(400)
    return { field: err.details?.field, index: err.details?.index, message: err.message }
  }
  throw new Error('expected a refusal')
}

function telephony(cls: string, event: string, objects: PlatformEvent['objects'], data: Doc = {}): PlatformEvent {
  return { class: cls, event, domain: 'd1', time: '2026-01-01T00:00:00.000Z', objects, data }
}

/** A data change as the journal pump emits it. */
function change(cmdtype: CmdType, objtype: string, obj: Doc, prev: Doc | null = null): PlatformEvent {
  return dataChanged({
    seq: 1,
    domain: 'd1',
    dtutc: '2026-01-01T00:00:00.000Z',
    cmdtype,
    objtype,
    objid: String(obj.id),
    obj,
    prev,
    modifierid: 'u1',
    initiator: 'user',
  })
}

describe('event masks', () => {
  test('exact names and class wildcards are read', () => {
    expect(parseEventMasks(['modelevents.data_changed', 'callevents.*'])).toEqual([
      { class: 'modelevents', event: 'data_changed' },
      { class: 'callevents', event: '*' },
    ])
  })

  const malformed: [string, unknown, number][] = [
    ['no event part', ['callevents'], 0],
    ['three parts', ['callevents.call.start'], 0],
    ['wildcard class', ['*.call_start'], 0],
    ['everything', ['*'], 0],
    ['empty event', ['callevents.'], 0],
    ['spaces', ['callevents.*', 'states events.x'], 1],
    ['leading digit', ['1class.x'], 0],
    ['partial wildcard', ['callevents.call_*'], 0],
    ['not a string', ['callevents.*', 42], 1],
    ['an object', [{ class: 'callevents' }], 0],
  ]
  for (const [name, raw, index] of malformed)
    test(`refused: ${name}`, () => {
      const r = refusal(() => parseEventMasks(raw))
      expect(r).toMatchObject({ field: 'events', index })
      expect(r.message).toStartWith(`events[${index}]: `)
      expect(r.message).toContain(JSON.stringify((raw as unknown[])[index]))
    })

  test('not a non-empty array', () => {
    expect(refusal(() => parseEventMasks('callevents.*')).field).toBe('events')
    expect(refusal(() => parseEventMasks([])).field).toBe('events')
    expect(refusal(() => parseEventMasks(Array(101).fill('a.b'))).message).toContain('at most 100')
  })

  test('the field name is the caller’s', () => {
    expect(refusal(() => parseEventMasks(['x'], { field: 'subscribe.events' })).field).toBe('subscribe.events')
  })

  test('a class may require named events', () => {
    const options = { noWildcard: ['modelevents'] }
    expect(parseEventMasks(['modelevents.data_changed', 'callevents.*'], options)).toHaveLength(2)
    const r = refusal(() => parseEventMasks(['callevents.*', 'modelevents.*'], options))
    expect(r).toMatchObject({ field: 'events', index: 1 })
    expect(r.message).toContain('modelevents')
  })
})

describe('objects', () => {
  const accepted: [string, unknown, unknown][] = [
    [
      'webhook form: the member named like the type',
      [{ type: 'sipuser', sipuser: '101' }],
      [{ type: 'sipuser', value: '101' }],
    ],
    ['webhook form: value', [{ type: 'conf', value: '700' }], [{ type: 'conf', value: '700' }]],
    ['both members agreeing', [{ type: 'other', other: '+100', value: '+100' }], [{ type: 'other', value: '+100' }]],
    [
      'websocket form: data class names',
      ['users', 'telephony/CallbackRequests'],
      [
        { type: 'class', value: 'users' },
        { type: 'class', value: 'telephony/CallbackRequests' },
      ],
    ],
    [
      'both forms in one list',
      ['users', { type: 'user', user: 'u1' }],
      [
        { type: 'class', value: 'users' },
        { type: 'user', value: 'u1' },
      ],
    ],
    ['empty', [], []],
  ]
  for (const [name, raw, expected] of accepted) test(name, () => expect(parseObjects(raw)).toEqual(expected as never))

  const refused: [string, unknown[], number, string][] = [
    ['empty class name', [''], 0, 'non-empty string'],
    ['no type', [{ sipuser: '101' }], 0, 'type'],
    ['type not a name', [{ type: 'sip user', value: '1' }], 0, 'type'],
    ['no value', ['users', { type: 'sipuser' }], 1, 'non-empty string'],
    ['number value', [{ type: 'conf', conf: 700 }], 0, 'non-empty string'],
    ['members disagree', [{ type: 'sipuser', sipuser: '101', value: '102' }], 0, 'disagree'],
    ['too long', ['x'.repeat(257)], 0, 'longer than 256'],
    ['neither form', [['users']], 0, 'expected'],
    ['null', [null], 0, 'expected'],
  ]
  for (const [name, raw, index, why] of refused)
    test(`refused: ${name}`, () => {
      const r = refusal(() => parseObjects(raw))
      expect(r).toMatchObject({ field: 'objects', index })
      expect(r.message).toStartWith(`objects[${index}]: `)
      expect(r.message).toContain(why)
    })

  test('not an array, too many', () => {
    expect(refusal(() => parseObjects({ type: 'sipuser' })).field).toBe('objects')
    expect(refusal(() => parseObjects(Array(1001).fill('users'))).message).toContain('at most 1000')
  })
})

describe('matches', () => {
  const call = telephony('callevents', 'call_start', [
    { type: 'sipuser', value: '101' },
    { type: 'other', value: '+15550100' },
  ])
  const state = telephony('statesevents', 'sipuser_state_changed', [{ type: 'sipuser', value: '102' }], {
    login: '102',
    state: 'busy',
  })
  const userCreated = change('create', 'user', { id: 'u1', login: 'ann', opts: { role: 'admin' } })
  const recordCreated = change('create', 'model/Orders', { id: 'o1', total: 5 })
  const masks = (...items: string[]) => parseEventMasks(items)

  const cases: [string, SubscriptionTerms, PlatformEvent, boolean][] = [
    ['exact mask', { domain: 'd1', events: masks('callevents.call_start') }, call, true],
    ["another domain's event, whatever else matches", { domain: 'd2', events: masks('callevents.*') }, call, false],
    ['class wildcard', { domain: 'd1', events: masks('callevents.*') }, call, true],
    ['other event of the class', { domain: 'd1', events: masks('callevents.call_end') }, call, false],
    ['other class', { domain: 'd1', events: masks('confevents.*', 'statesevents.*') }, call, false],
    ['one of several masks', { domain: 'd1', events: masks('confevents.*', 'callevents.call_start') }, call, true],
    ['no objects: any', { domain: 'd1', events: masks('callevents.*'), objects: [] }, call, true],
    [
      'bound object',
      { domain: 'd1', events: masks('callevents.*'), objects: parseObjects([{ type: 'sipuser', sipuser: '101' }]) },
      call,
      true,
    ],
    [
      'one of several objects',
      {
        domain: 'd1',
        events: masks('callevents.*'),
        objects: parseObjects([
          { type: 'sipuser', sipuser: '999' },
          { type: 'other', other: '+15550100' },
        ]),
      },
      call,
      true,
    ],
    [
      'object not bound',
      { domain: 'd1', events: masks('callevents.*'), objects: parseObjects([{ type: 'sipuser', sipuser: '102' }]) },
      call,
      false,
    ],
    [
      'same value, other type',
      { domain: 'd1', events: masks('callevents.*'), objects: parseObjects([{ type: 'user', user: '101' }]) },
      call,
      false,
    ],
    [
      'event bound to nothing',
      { domain: 'd1', events: masks('confevents.*'), objects: parseObjects([{ type: 'conf', conf: '1' }]) },
      telephony('confevents', 'conf_start', []),
      false,
    ],
    [
      'websocket class object',
      { domain: 'd1', events: masks('modelevents.data_changed'), objects: parseObjects(['user']) },
      userCreated,
      true,
    ],
    [
      'websocket class object, other class',
      { domain: 'd1', events: masks('modelevents.data_changed'), objects: parseObjects(['user']) },
      recordCreated,
      false,
    ],
    [
      'model record class',
      { domain: 'd1', events: masks('modelevents.data_changed'), objects: parseObjects(['Orders']) },
      recordCreated,
      true,
    ],
    ['collection', { domain: 'd1', events: masks('modelevents.data_changed'), collection: 'user' }, userCreated, true],
    [
      'other collection',
      { domain: 'd1', events: masks('modelevents.data_changed'), collection: 'Orders' },
      userCreated,
      false,
    ],
    [
      'collection on an event without a class',
      { domain: 'd1', events: masks('callevents.*'), collection: 'users' },
      call,
      false,
    ],
    [
      'filter on data of other events',
      { domain: 'd1', events: masks('statesevents.*'), filter: eq('state', 'busy') },
      state,
      true,
    ],
    [
      'filter on data fails',
      { domain: 'd1', events: masks('statesevents.*'), filter: eq('state', 'registered') },
      state,
      false,
    ],
    [
      'filter on the instance, not on data',
      { domain: 'd1', events: masks('modelevents.data_changed'), filter: eq('class', 'user') },
      userCreated,
      false,
    ],
    [
      'nested filter path',
      { domain: 'd1', events: masks('modelevents.data_changed'), filter: eq('opts.role', 'admin') },
      userCreated,
      true,
    ],
  ]
  for (const [name, terms, event, expected] of cases) test(name, () => expect(matches(terms, event)).toBe(expected))

  describe('a data change passes when the filter holds before or after it', () => {
    const terms = { domain: 'd1', events: masks('modelevents.data_changed'), filter: eq('status', 'active') }
    const active = { id: 'u1', status: 'active' }
    const blocked = { id: 'u1', status: 'blocked' }
    const cases: [string, PlatformEvent, boolean][] = [
      ['create of a match', change('create', 'user', active), true],
      ['create of another', change('create', 'user', blocked), false],
      ['update into a match', change('update', 'user', active, blocked), true],
      ['update out of a match', change('update', 'user', blocked, active), true],
      ['update outside', change('update', 'user', { ...blocked, name: 'x' }, blocked), false],
      ['delete of a match', change('delete', 'user', active), true],
      ['delete of another', change('delete', 'user', blocked), false],
    ]
    for (const [name, event, expected] of cases) test(name, () => expect(matches(terms, event)).toBe(expected))
  })
})

describe('shape', () => {
  const before = { id: 'u1', login: 'ann', pwd: '***', opts: { title: 'A', role: 'admin' } }
  const after = { ...before, opts: { title: 'B', role: 'admin' } }
  const update = change('update', 'user', after, before)
  const events = parseEventMasks(['modelevents.data_changed', 'statesevents.*'])

  test('no mask: the data as it is', () => {
    expect(shape({ domain: 'd1', events }, update)).toBe(update.data)
    expect(shape({ domain: 'd1', events, mask: [] }, update)).toBe(update.data)
  })
  test('a data change: the mask applies to both instances, the rest stays', () => {
    expect(shape({ domain: 'd1', events, mask: ['id', 'opts.title'] }, update)).toEqual({
      ...update.data,
      old: { id: 'u1', opts: { title: 'A' } },
      new: { id: 'u1', opts: { title: 'B' } },
    })
  })
  test('other events: the mask applies to data', () => {
    const state = telephony('statesevents', 'sipuser_state_changed', [], { login: '102', state: 'busy', extra: 1 })
    expect(shape({ domain: 'd1', events, mask: ['login', 'state'] }, state)).toEqual({ login: '102', state: 'busy' })
  })
  test('a missing instance stays missing', () => {
    const event = { ...update, data: { ...update.data, old: null } }
    expect(shape({ domain: 'd1', events, mask: ['id'] }, event)).toMatchObject({ old: null, new: { id: 'u1' } })
  })
})

function eq(field: string, value: string): FilterNode {
  return { op: '==', left: { field }, right: { value } }
}
