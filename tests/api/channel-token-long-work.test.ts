// A channel's token while its domain's deletion runs (issue 35 item 6). The deletion is long work:
// its purge runs in time slices inside one transaction, and reads on the service's connection
// between slices see its uncommitted deletions. The token is looked up before admission's gate, so
// it was refused (401) meanwhile, although the deletion then failed and rolled back, the row intact.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { systemCtx } from '~/context'
import { domains } from '~/entities/registry'
import { commitLong } from '~/entities/unit'
import { removeStep } from '~/entities/writes'
import { channels } from '~/integration/channels'
import { tx } from '~storage/db'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let domainId: string
let channel: { id: string; token_local: string }

beforeAll(async () => {
  t = await testService()
  domainId = (await t.createDomain('purged.master')).id
  const admin = await t.adminIn('purged.master')
  const body = { code: 'c1', type: 'public', opts: { roles: ['admin'] } }
  channel = (await t.call('POST', '/rest/v1/service/integration_points', { token: admin, body })).body
})
afterAll(() => t.close())

/** The domain's deletion, held open after it ran until `end`: then it commits, or fails and rolls back. */
function heldDeletion() {
  let ending: 'commit' | 'fail' | undefined
  let purged!: () => void
  const ran = new Promise<void>((resolve) => (purged = resolve))
  const ctx = systemCtx(t.deps, t.master.id, 'test')
  const done = commitLong(ctx, { kind: 'domain deletion', key: domainId, gates: [domainId] }, function* (u) {
    yield* removeStep(u, domains, domainId)
    purged()
    while (!ending) yield* tx.get('SELECT 1') // slices: the event loop serves requests between them
    if (ending === 'fail') throw new Error('the deletion failed midway')
  })
  return {
    ran,
    done,
    end: (how: 'commit' | 'fail') => {
      ending = how
    },
  }
}

/** Resolves once the token has been looked up (while the deletion is open). */
function tokenRead(): Promise<void> {
  const repo = t.deps.repo(channels.table)
  const findBy = repo.findBy
  return new Promise((resolve) => {
    repo.findBy = async (...args) => {
      repo.findBy = findBy
      const rows = await findBy.apply(repo, args)
      resolve()
      return rows
    }
  })
}

const asChannel = () =>
  t.call('GET', `/rest/v1/service/integration_points/${channel.id}`, { token: channel.token_local })

test('a token read while a deletion that rolls back runs is answered on the rows it leaves: 200', async () => {
  const deletion = heldDeletion()
  await deletion.ran
  const read = tokenRead()
  const asked = asChannel()
  await read // the purge's uncommitted view had no such token: the answer was a 401 here
  deletion.end('fail')
  await expect(deletion.done).rejects.toThrow('failed midway')
  const res = await asked
  expect(res.status).toBe(200)
  expect(res.body.id).toBe(channel.id)
})

test('a domain read as gone during a deletion that rolls back is not kept: the token is answered after', async () => {
  const deletion = heldDeletion()
  await deletion.ran
  // an ungated reader (a heartbeat, a socket's check) asks once the entry kept since admission lapsed
  t.clock.advance(60_000)
  expect(await t.deps.access.domainInfo(domainId)).toBeNull()
  deletion.end('fail')
  await expect(deletion.done).rejects.toThrow('failed midway')
  expect((await asChannel()).status).toBe(200)
})

test('once the deletion commits, the token is refused', async () => {
  const deletion = heldDeletion()
  await deletion.ran
  const read = tokenRead()
  const asked = asChannel()
  await read
  deletion.end('commit')
  await deletion.done
  expect((await asked).status).toBe(401)
})
