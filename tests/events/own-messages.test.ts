// Which of the pump's messages the publishing process delivers at once, and which it passes over
// when the store brings them back (src/events/own-messages.ts).
import { expect, test } from 'bun:test'
import { OwnMessages } from '~/events/own-messages'

const pumps = () => true
const notPumps = () => false
/** One that had its first message come back: it delivers its next at once. */
function caughtUp(first = 'm1'): OwnMessages {
  const own = new OwnMessages()
  own.deliverNow(first)
  own.received(first, pumps)
  return own
}

test('the first go through the store; once the last of them came back, the next are delivered at once and passed over on return', () => {
  const own = new OwnMessages()
  expect(own.deliverNow('m1')).toBe(false)
  expect(own.deliverNow('m2')).toBe(false)
  expect(own.received('m1', pumps)).toBe(true) // delivered on its return
  // m2 is still on its way: m3 delivered now could come before it
  expect(own.deliverNow('m3')).toBe(false)
  expect(own.received('m2', pumps)).toBe(true)
  expect(own.received('m3', pumps)).toBe(true)
  expect(own.deliverNow('m4')).toBe(true)
  expect(own.received('m4', pumps)).toBe(false) // delivered already
})

test("another process's pump message sends the next through the store again; its other messages do not", () => {
  const own = caughtUp()
  expect(own.received('an emit of another process', notPumps)).toBe(true)
  expect(own.deliverNow('m2')).toBe(true)
  expect(own.received('the last holder, late', pumps)).toBe(true)
  expect(own.deliverNow('m3')).toBe(false)
  expect(own.received('m2', pumps)).toBe(false) // delivered at once before: passed over
  expect(own.received('m3', pumps)).toBe(true)
  expect(own.deliverNow('m4')).toBe(true)
  // one delivered at once comes back while one sent through the store is still on its way: not caught up
  expect(own.received('the last holder, late again', pumps)).toBe(true)
  expect(own.deliverNow('m5')).toBe(false)
  expect(own.received('m4', pumps)).toBe(false)
  expect(own.deliverNow('m6')).toBe(false)
})

test('taking the pump back sends the next through the store, whatever came before', () => {
  const own = caughtUp()
  expect(own.deliverNow('m2')).toBe(true)
  own.behind() // the lease was elsewhere meanwhile; its holder's messages may not have come yet
  expect(own.deliverNow('m3')).toBe(false)
  expect(own.received('m2', pumps)).toBe(false) // delivered at once before: passed over, m3 still out
  expect(own.deliverNow('m4')).toBe(false)
  expect(own.received('m3', pumps)).toBe(true)
  expect(own.received('m4', pumps)).toBe(true)
  expect(own.deliverNow('m5')).toBe(true)
})

test('the same text twice is awaited twice; a failed publish is not awaited; a broken subscription starts again', () => {
  const own = caughtUp('m0')
  expect(own.deliverNow('same')).toBe(true)
  expect(own.deliverNow('same')).toBe(true)
  expect(own.received('same', pumps)).toBe(false)
  expect(own.received('same', pumps)).toBe(false)
  expect(own.received('same', pumps)).toBe(true) // a third is someone else's
  expect(own.deliverNow('lost')).toBe(false) // the third was a pump message of another
  own.failed('lost', false)
  expect(own.received('lost', pumps)).toBe(true) // not ours any more: delivered, and still not caught up
  expect(own.deliverNow('m5')).toBe(false)
  own.reset()
  expect(own.received('m5', pumps)).toBe(true)
  expect(own.deliverNow('m6')).toBe(false)
})
