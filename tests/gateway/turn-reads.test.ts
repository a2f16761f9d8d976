// When the front takes what clients sent: all of a turn's reading first, then each piece in the
// order it came, a client's end after what it sent before; one connection's failure ends it alone.
import { expect, test } from 'bun:test'
import { type Conn, TurnReads, TurnWrites } from '~/gateway/connection'

const conn = (name: string) => ({ name, client: { end: () => ended.push(name) }, toClient: [] }) as unknown as Conn
const nameOf = (c: Conn) => (c as unknown as { name: string }).name
let ended: string[] = []
const turnEnd = () => new Promise((resolve) => setImmediate(resolve))

test("a turn's reads are taken after it, in order, with each client's end after its data", async () => {
  const taken: string[] = []
  const reads = new TurnReads(
    (c, data) => taken.push(`${nameOf(c)}:${data.toString()}`),
    (c) => taken.push(`${nameOf(c)}:end`),
  )
  const [a, b] = [conn('a'), conn('b')]
  reads.add(a, Buffer.from('1'))
  reads.add(b, Buffer.from('1'))
  reads.add(a, null)
  reads.add(b, Buffer.from('2'))
  expect(taken).toEqual([]) // nothing while the loop reads
  await turnEnd()
  expect(taken).toEqual(['a:1', 'b:1', 'a:end', 'b:2'])
  reads.add(a, Buffer.from('later'))
  await turnEnd()
  expect(taken.at(-1)).toBe('a:later')
})

test('a connection whose data fails to be taken is ended; the others are still taken', async () => {
  ended = []
  const taken: string[] = []
  const reads = new TurnReads(
    (c) => {
      if (nameOf(c) === 'bad') throw new Error('boom')
      taken.push(nameOf(c))
    },
    () => {},
  )
  reads.add(conn('bad'), Buffer.from('x'))
  reads.add(conn('good'), Buffer.from('y'))
  await turnEnd()
  expect(ended).toEqual(['bad'])
  expect(taken).toEqual(['good'])
})

test("answers made while a turn's reads are taken go out at the end of that same turn", async () => {
  const written: string[] = []
  const writes = new TurnWrites((c) => void written.push(...(c.toClient.splice(0) as string[])))
  const c = conn('c')
  const reads = new TurnReads(
    (from) => writes.add(from, 'answer'),
    () => {},
  )
  // as the front's data callback: the read first, then the turn's writes are due
  reads.add(c, Buffer.from('request'))
  writes.readingNow()
  await turnEnd()
  expect(written).toEqual(['answer'])
})
