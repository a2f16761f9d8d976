// The event pump writes data_changed events from the journal's stored text: what it publishes is
// exactly what JSON.stringify would make of the event built from the parsed record.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { dataChanged, dataChangedText } from '~/events/event'
import type { Doc } from '~storage/doc'
import type { JournalChangeText } from '~storage/journal'

const doc = fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue(), { maxKeys: 6 }) as fc.Arbitrary<Doc>

const record = fc.record({
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  domain: fc.uuid(),
  dtutc: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  cmdtype: fc.constantFrom('create' as const, 'update' as const, 'delete' as const),
  objtype: fc.oneof(fc.constantFrom('extobj', 'users', 'model/orders'), fc.string({ unit: 'binary' })),
  objid: fc.string({ unit: 'binary' }),
  obj: doc,
  prev: fc.option(doc),
  modifierid: fc.string({ unit: 'binary' }),
  initiator: fc.constantFrom('user' as const, 'websocket' as const, 'script' as const, 'system' as const),
})

test('dataChangedText is JSON.stringify(dataChanged(c)) for the record as stored', () => {
  fc.assert(
    fc.property(record, (c) => {
      // stored as the journal stores them; -0 and the like come back as JSON would give them
      const stored = { ...c, obj: JSON.stringify(c.obj), prev: c.prev === null ? null : JSON.stringify(c.prev) }
      const parsed = {
        ...c,
        obj: JSON.parse(stored.obj) as Doc,
        prev: stored.prev === null ? null : JSON.parse(stored.prev),
      }
      expect(dataChangedText(stored satisfies JournalChangeText)).toBe(JSON.stringify(dataChanged(parsed)))
    }),
    { numRuns: 500 },
  )
})
