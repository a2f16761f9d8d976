// What the deliveries of one batch look up once (src/integration/delivery-policy.ts BatchLookups):
// a channel and its secret per domain and channel, a target's checked addresses; a secret that does
// not open is the batch's answer, a store that fails is not kept (the batch's later jobs look again).
import { expect, test } from 'bun:test'
import type { Deps } from '~/deps'
import { BatchLookups } from '~/integration/delivery-policy'
import { SealedUnreadable } from '~/secret-box'

/** Ports enough for the lookups: a channel table whose reads are counted and may fail, and a sealer. */
function fakeDeps(options: { failReads?: number; unreadable?: boolean; hiddenDown?: boolean } = {}) {
  let failReads = options.failReads ?? 0
  const reads: string[] = []
  const repo = () => ({
    get: async (domain: string, id: string) => {
      reads.push(`${domain}/${id}`)
      if (failReads > 0) {
        failReads--
        throw new Error('the store is down')
      }
      return { id, type: 'subscr', url: `http://${domain}.example/hook` }
    },
    getHidden: async () => {
      if (options.hiddenDown) throw new Error('the store is down')
      return { secret: 'sealed' }
    },
  })
  const secrets = {
    open: async () => {
      if (options.unreadable) throw new SealedUnreadable('it does not open')
      return 'whsec_clear'
    },
  }
  return { deps: { repo, secrets, config: { webhookAllowPrivate: [] } } as unknown as Deps, reads }
}

test('a channel is read once per batch and per domain; another batch reads it again', async () => {
  const { deps, reads } = fakeDeps()
  const batch = new BatchLookups(deps, async () => ['93.184.216.34'])
  const [a, b, c] = await Promise.all([batch.channel('d1', 'ch'), batch.channel('d1', 'ch'), batch.channel('d2', 'ch')])
  expect([a.secret, b.secret, c.channel?.url]).toEqual(['whsec_clear', 'whsec_clear', 'http://d2.example/hook'])
  expect(reads).toEqual(['d1/ch', 'd2/ch'])
  await new BatchLookups(deps, async () => []).channel('d1', 'ch')
  expect(reads).toEqual(['d1/ch', 'd2/ch', 'd1/ch'])
})

test("a target's addresses are resolved once per batch", async () => {
  const { deps } = fakeDeps()
  let resolved = 0
  const batch = new BatchLookups(deps, async () => {
    resolved++
    return ['93.184.216.34']
  })
  const url = new URL('http://receiver.example/hook')
  const answers = await Promise.all([1, 2, 3].map(() => batch.addresses(url.href, url)))
  expect([answers, resolved]).toEqual([[['93.184.216.34'], ['93.184.216.34'], ['93.184.216.34']], 1])
})

test('a secret that does not open is the answer for the batch; a failing store is asked again', async () => {
  const sealed = fakeDeps({ unreadable: true })
  const { secret } = await new BatchLookups(sealed.deps, async () => []).channel('d1', 'ch')
  expect(secret).toBeInstanceOf(SealedUnreadable)
  // a store that fails while the secret is read is not a secret that does not open: nothing fails for good
  const hidden = fakeDeps({ hiddenDown: true })
  await expect(new BatchLookups(hidden.deps, async () => []).channel('d1', 'ch')).rejects.toThrow('the store is down')
  const down = fakeDeps({ failReads: 1 })
  const batch = new BatchLookups(down.deps, async () => [])
  await expect(batch.channel('d1', 'ch')).rejects.toThrow('the store is down')
  expect((await batch.channel('d1', 'ch')).secret).toBe('whsec_clear')
  expect(down.reads).toEqual(['d1/ch', 'd1/ch'])
})
