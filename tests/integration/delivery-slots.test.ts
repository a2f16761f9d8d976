// A process's delivery slots (src/integration/delivery-slots.ts): a host is full when its name or
// its address and port has PER_HOST deliveries in flight, a few jobs wait for it and the rest are refused,
// a freed slot starts the next job that fits, and a domain holds at most DOMAIN_MAX jobs.
import { expect, test } from 'bun:test'
import { DeliverySlots, DOMAIN_MAX, PER_HOST, targetOf } from '~/integration/delivery-slots'

test('names of one address share its slots; a freed slot starts a waiting job', async () => {
  const slots = new DeliverySlots()
  const names = ['http://a.example/', 'http://b.example:80/', 'http://c.example/x']
  const started: string[] = []
  const waiting: Promise<boolean>[] = []
  for (let i = 0; i < PER_HOST + 2; i++) {
    const name = names[i % names.length]!
    const took = slots.take(targetOf('d1', new URL(name), '192.0.2.1')).then((ok) => {
      started.push(name)
      return ok
    })
    if (i < PER_HOST) expect(await took).toBe(true)
    else waiting.push(took)
  }
  expect(started).toHaveLength(PER_HOST)
  // another domain's deliveries to the same address have slots of their own
  const other = targetOf('d2', new URL(names[0]!), '192.0.2.1')
  expect(await slots.take(other)).toBe(true)
  // and so has the same address on another port
  expect(await slots.take(targetOf('d1', new URL('http://a.example:8080/'), '192.0.2.1'))).toBe(true)
  expect(slots.give(targetOf('d1', new URL(names[0]!), '192.0.2.1'), 5)).toBe(true)
  await waiting[0]
  expect(started).toHaveLength(PER_HOST + 1)
  expect(slots.give(other, 5)).toBe(false) // nobody of d2 waits
})

test('a full host lets a bounded number of jobs wait, then refuses', async () => {
  const slots = new DeliverySlots()
  const host = targetOf('d1', new URL('https://slow.example/'), '192.0.2.9')
  for (let i = 0; i < PER_HOST; i++) expect(await slots.take(host)).toBe(true)
  let waiting = 0
  while (waiting < 1000) {
    const r = await Promise.race([slots.take(host), Bun.sleep(0).then(() => 'waits' as const)])
    if (r === false) break
    waiting++
  }
  expect(waiting).toBeGreaterThan(0)
  expect(waiting).toBeLessThanOrEqual(DOMAIN_MAX - PER_HOST)
})

test('a domain holds at most DOMAIN_MAX jobs; then it is full and the others are not', () => {
  const slots = new DeliverySlots()
  for (let i = 0; i < DOMAIN_MAX; i++) slots.hold('d1')
  slots.hold('d2')
  expect(slots.room('d1')).toBe(0)
  expect(slots.room('d2')).toBe(DOMAIN_MAX - 1)
  expect(slots.full()).toEqual(['d1'])
  slots.drop('d1')
  expect(slots.full()).toEqual([])
  expect(slots.heldInAll).toBe(DOMAIN_MAX)
})
