// When the front writes what it answered: answers made while the loop reads sockets go out at the
// turn's end, together; answers released after the reading (a group commit, at the turn's end)
// go out in that same turn, not the next one.
import { expect, test } from 'bun:test'
import { type Conn, TurnWrites } from '~/http/gateway/connection'

const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve))

test('answers made while sockets are read wait for the turn to end, and go out together', async () => {
  const written: string[] = []
  const writes = new TurnWrites((c) => written.push(...(c.toClient.splice(0) as string[])))
  const [a, b] = [{ toClient: [] }, { toClient: [] }] as unknown as Conn[]
  writes.readingNow() // a socket callback
  writes.add(a!, 'a1')
  await Promise.resolve()
  writes.add(b!, 'b1')
  expect(written).toEqual([]) // nothing during the reading turn
  await turnEnd()
  expect(written).toEqual(['a1', 'b1'])
})

test('answers released at the turn end go out in the same turn', async () => {
  const written: string[] = []
  const writes = new TurnWrites((c) => written.push(...(c.toClient.splice(0) as string[])))
  const c = { toClient: [] } as unknown as Conn
  writes.readingNow()
  const seen = await new Promise<string[]>((resolve) => {
    // as a group commit does: scheduled while reading, it releases its answers at the turn's end
    setImmediate(() => {
      writes.add(c, 'committed')
      // what the next turn would see
      setImmediate(() => resolve([...written]))
    })
  })
  expect(seen).toEqual(['committed'])
})
