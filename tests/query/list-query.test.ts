// The list-parameter parser, table-driven: what each input becomes, and which inputs are refused and why.
import { describe, expect, test } from 'bun:test'
import { ApiError } from '~/errors'
import { FieldSet } from '~/query/fields'
import {
  MAX_FILTER_DEPTH,
  MAX_FILTER_NODES,
  MAX_IN_VALUES,
  MAX_MASK_ITEMS,
  parseListParams,
  type ListShape,
} from '~/query/list-query'

const shape: ListShape = {
  fields: new FieldSet(['id', 'type', 'status', 'n', 'opts.title', 'opts.isblocked', 'ext.ct', 'ext.lwt', 'value.*']),
  output: new FieldSet(['id', 'type', 'opts.title', 'ext.ct', 'ext.lwt']),
  limits: { defaultLimit: 100, maxLimit: 500 },
}
const parse = (params: Record<string, string>) => parseListParams(params, shape)
const p = (field: string) => ({ field })
const val = (value: unknown) => ({ value })

describe('accepted', () => {
  const cases: [string, Record<string, string>, unknown][] = [
    [
      'no parameters: defaults',
      {},
      { query: { filter: null, order: [], offset: 0, limit: 100 }, mask: null, flat: false },
    ],
    [
      'limit above the maximum is capped',
      { limit: '9999' },
      { query: { filter: null, order: [], offset: 0, limit: 500 }, mask: null, flat: false },
    ],
    [
      'offset, limit, flat',
      { offset: '20', limit: '5', flat: 'true' },
      { query: { filter: null, order: [], offset: 20, limit: 5 }, mask: null, flat: true },
    ],
    [
      'object filter: one equality',
      { filter: '{"type":"sip"}' },
      { filter: { op: '==', left: p('type'), right: val('sip') } },
    ],
    [
      'object filter: dotted path, boolean',
      { filter: '{"opts.isblocked":false,"type":"a"}' },
      {
        filter: {
          op: 'and',
          args: [
            { op: '==', left: p('opts.isblocked'), right: val(false) },
            { op: '==', left: p('type'), right: val('a') },
          ],
        },
      },
    ],
    [
      'prefix filter: and of == and >',
      { filter: '["and",["==",["property","status"],"new"],[">",["property","ext.ct"],"2026-01-01"]]' },
      {
        filter: {
          op: 'and',
          args: [
            { op: '==', left: p('status'), right: val('new') },
            { op: '>', left: p('ext.ct'), right: val('2026-01-01T00:00:00.000Z') }, // an instant field: the value in the stored form
          ],
        },
      },
    ],
    [
      'prefix filter: literal on the left',
      { filter: '["<",5,["property","n"]]' },
      { filter: { op: '<', left: val(5), right: p('n') } },
    ],
    [
      'prefix filter: in, like, ilike, isnull, not, or',
      {
        filter:
          '["or",["in",["property","type"],["a","b"]],["like",["property","type"],"x%"],["ilike",["property","type"],"Y_"],["not",["isnull",["property","value.k"]]]]',
      },
      {
        filter: {
          op: 'or',
          args: [
            { op: 'in', left: p('type'), values: ['a', 'b'] },
            { op: 'like', left: p('type'), pattern: 'x%' },
            { op: 'ilike', left: p('type'), pattern: 'Y_' },
            { op: 'not', arg: { op: 'isnull', arg: p('value.k') } },
          ],
        },
      },
    ],
    [
      'open object paths are known below their prefix',
      { filter: '{"value.deep.er":1}' },
      { filter: { op: '==', left: p('value.deep.er'), right: val(1) } },
    ],
    [
      'order: strings, minus, objects',
      { order: '["type","-ext.ct",{"n":"desc"},{"id":"asc"}]' },
      {
        order: [
          { field: 'type', desc: false },
          { field: 'ext.ct', desc: true },
          { field: 'n', desc: true },
          { field: 'id', desc: false },
        ],
      },
    ],
    [
      'order: plain comma list',
      { order: 'type,-n' },
      {
        order: [
          { field: 'type', desc: false },
          { field: 'n', desc: true },
        ],
      },
    ],
    ['mask: comma list', { mask: 'id, opts.title' }, { mask: ['id', 'opts.title'] }],
    ['mask: a parent expands to the listed fields below it', { mask: 'ext' }, { mask: ['ext.ct', 'ext.lwt'] }],
    ['mask: JSON array', { mask: '["type","id"]' }, { mask: ['type', 'id'] }],
  ]
  for (const [name, params, expected] of cases) {
    test(name, () => {
      const r = parse(params)
      const got = { query: r.query, mask: r.mask, flat: r.flat, filter: r.query.filter, order: r.query.order }
      expect(got).toMatchObject(expected as object)
    })
  }
})

describe('refused with a 400 naming the parameter', () => {
  const deep = (n: number): unknown => (n === 0 ? ['==', ['property', 'n'], 1] : ['not', deep(n - 1)])
  const cases: [string, Record<string, string>, string, RegExp][] = [
    ['filter is not JSON', { filter: '{type:1}' }, 'filter', /not valid JSON/],
    ['filter names an unknown field (object)', { filter: '{"nope":1}' }, 'filter', /unknown field 'nope'/],
    [
      'filter names an unknown field (prefix)',
      { filter: '["==",["property","secret"],1]' },
      'filter',
      /unknown field 'secret'/,
    ],
    ['filter path with SQL in it', { filter: `{"type') OR 1=1 --":1}` }, 'filter', /unknown field/],
    [
      'filter value is an object',
      { filter: '{"type":{"$ne":1}}' },
      'filter',
      /must be a string, number, boolean or null/,
    ],
    ['unknown operator', { filter: '["regex",["property","type"],"x"]' }, 'filter', /unknown operator 'regex'/],
    ['wrong arity', { filter: '["==",["property","type"]]' }, 'filter', /takes 2 arguments/],
    ['malformed property operand', { filter: '["==",["prop","type"],1]' }, 'filter', /expected \["property", name\]/],
    ['not an expression', { filter: '"x"' }, 'filter', /object or an array/],
    ['too deep', { filter: JSON.stringify(deep(MAX_FILTER_DEPTH + 1)) }, 'filter', /deeper than/],
    [
      'too many nodes',
      {
        filter: JSON.stringify([
          'and',
          ...Array.from({ length: MAX_FILTER_NODES + 1 }, () => ['==', ['property', 'n'], 1]),
        ]),
      },
      'filter',
      /more than/,
    ],
    [
      'too many in values',
      { filter: JSON.stringify(['in', ['property', 'n'], Array.from({ length: MAX_IN_VALUES + 1 }, (_, i) => i)]) },
      'filter',
      /at most/,
    ],
    ['too long', { filter: JSON.stringify({ type: 'x'.repeat(9000) }) }, 'filter', /longer than/],
    ['order names an unknown field', { order: '["-nope"]' }, 'order', /unknown field 'nope'/],
    ['order direction is wrong', { order: '[{"type":"down"}]' }, 'order', /"asc" or "desc"/],
    ['order item is a number', { order: '[1]' }, 'order', /order items must be/],
    ['mask names a field the list does not output', { mask: 'id,n' }, 'mask', /unknown field 'n'/],
    ['mask is empty', { mask: ' , ' }, 'mask', /empty/],
    [
      'mask has too many fields',
      { mask: Array.from({ length: MAX_MASK_ITEMS + 1 }, () => 'id').join(',') },
      'mask',
      /at most/,
    ],
    ['offset is negative', { offset: '-1' }, 'offset', /non-negative integer/],
    ['limit is not a number', { limit: 'ten' }, 'limit', /non-negative integer/],
    ['limit is fractional', { limit: '1.5' }, 'limit', /non-negative integer/],
    ['flat is not a boolean', { flat: 'yes' }, 'flat', /true or false/],
  ]
  for (const [name, params, field, message] of cases) {
    test(name, () => {
      let err: unknown
      try {
        parse(params)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ApiError)
      const e = err as ApiError
      expect(e.status).toBe(400)
      expect(e.details?.field).toBe(field)
      expect(e.message).toMatch(message)
    })
  }
})
