// `mask` paths are read and written as own members: a path through `__proto__` (a stored document
// may hold such a key, nested) reached Object.prototype and wrote to it for the whole process, and
// `constructor` read Object's own function.
import { afterEach, expect, test } from 'bun:test'
import { pick, present } from '~/query/present'

afterEach(() => {
  delete (Object.prototype as Record<string, unknown>).journal
})

test('a masked path through __proto__ neither reads nor writes Object.prototype', () => {
  const doc = JSON.parse('{"id":"x","ext":{"a":{"__proto__":{"journal":false}}}}')
  const shaped = pick(doc, ['ext.a.__proto__.journal', 'ext.b.__proto__.journal'])
  expect(({} as Record<string, unknown>).journal).toBeUndefined()
  // the stored key is kept as a key, and one that is not stored is not invented
  expect(JSON.stringify(shaped)).toBe('{"ext":{"a":{"__proto__":{"journal":false}}}}')
  expect(pick({ id: 'x' }, ['__proto__.journal', 'id'])).toEqual({ id: 'x' })
  expect(({} as Record<string, unknown>).journal).toBeUndefined()
})

test("names of Object.prototype's members are not found where the document has none", () => {
  expect(present({ id: 'x', opts: {} }, ['constructor', 'opts.toString', 'id'], false)).toEqual({ id: 'x' })
  expect(present({ id: 'x', opts: { toString: 'mine' } }, ['opts.toString'], true)).toEqual({ 'opts.toString': 'mine' })
})
