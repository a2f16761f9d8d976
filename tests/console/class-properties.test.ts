// The class property editor's rows and the API's properties: what a class holds comes back as it
// was when its form is saved untouched (multi defaults with commas or objects, spaces in a text).
import { expect, test } from 'bun:test'
import { propertiesOf, rowsOf } from '../../src/console/app/class-properties'

test.each([
  ['multi strings holding commas', { name: 'a', data_type: 'string', multi: true, default: ['a,b', 'c'] }],
  ['multi attachments', { name: 'b', data_type: 'attachment', multi: true, default: [{ name: 'x' }] }],
  ['multi any', { name: 'c', data_type: 'any', multi: true, default: [{ a: 1 }, { b: 2 }] }],
  ['multi numbers', { name: 'd', data_type: 'float', multi: true, default: [1.5, 2] }],
  ['a text with spaces', { name: 'e', data_type: 'string', default: ' padded ' }],
  ['an enum', { name: 'f', data_type: 'enum', items: ['x', 'y'], default: 'y' }],
  ['a required boolean', { name: 'g', data_type: 'boolean', required: true, default: false }],
  ['an object of any', { name: 'h', data_type: 'any', default: { deep: [1, 'two'] } }],
])('%s: saved untouched, as it was', (_, property) => {
  expect(propertiesOf(rowsOf([property]), 'properties')).toEqual([property])
})

test('a multi default that is not an array of the type is refused, naming the row', () => {
  const [row] = rowsOf([{ name: 'n', data_type: 'int', multi: true }])
  expect(() => propertiesOf([{ ...row!, default: '1, 2' }], 'properties')).toThrow('is a JSON array')
  expect(() => propertiesOf([{ ...row!, default: '["1"]' }], 'properties')).toThrow('must be a number')
  expect(propertiesOf([{ ...row!, default: '[1, 2]' }], 'properties')[0]!.default).toEqual([1, 2])
})
