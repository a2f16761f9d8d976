// When the front writes what it answered: answers made while the loop reads sockets go out at the
// turn's end, together; answers released after the reading (a group commit, at the turn's end) go
// out in that same turn, a connection's first one at once and the rest at the next turn's end.
import { expect, test } from 'bun:test'
import { type Conn, TurnWrites } from '~/gateway/connection'

function recorder() {
  const written: string[] = []
  const writes = new TurnWrites((c) => {
    const pieces = c.toClient.splice(0) as string[]
    if (pieces.length) written.push(pieces.join('+')) // one write per flush of a connection
  })
  return { written, writes }
}
const conn = () => ({ toClient: [] }) as unknown as Conn
const afterMicrotasks = () => new Promise<void>((resolve) => queueMicrotask(resolve))

test('answers made while sockets are read wait for the turn to end, and go out together', async () => {
  const { written, writes } = recorder()
  const [a, b] = [conn(), conn()]
  writes.readingNow() // a socket callback
  writes.add(a, 'a1')
  await afterMicrotasks()
  writes.add(b, 'b1')
  writes.add(a, 'a2')
  expect(written).toEqual([]) // nothing during the reading turn
  await new Promise((resolve) => setImmediate(resolve))
  expect(written).toEqual(['a1+a2', 'b1'])
})

test('an answer released at the turn end goes out at once; more of the same connection at the next turn end', async () => {
  const { written, writes } = recorder()
  const c = conn()
  const seen: string[][] = []
  await new Promise<void>((resolve) => {
    // as a group commit does: it releases its answers at the turn's end
    setImmediate(() => {
      writes.add(c, 'committed')
      queueMicrotask(() => {
        seen.push([...written]) // written once the releasing code is done
        writes.add(c, 'pipelined 1') // what the connection is answered next, in the same turn
        writes.add(c, 'pipelined 2')
        queueMicrotask(() => seen.push([...written]))
        setImmediate(() => {
          seen.push([...written])
          resolve()
        })
      })
    })
  })
  expect(seen).toEqual([['committed'], ['committed'], ['committed', 'pipelined 1+pipelined 2']])
})

test('a commit that runs before the reading turn ends still has its answers written in that turn', async () => {
  const { written, writes } = recorder()
  const c = conn()
  let atTurnEnd: string[] = []
  await new Promise<void>((resolve) => {
    setImmediate(() => writes.add(c, 'committed')) // scheduled first, as by a commit of the last turn
    writes.readingNow() // then the loop reads a socket
    setImmediate(() => {
      atTurnEnd = [...written] // the last callback of this turn's end
      resolve()
    })
  })
  expect(atTurnEnd).toEqual(['committed'])
})
