/**
 * POST and GET /rest/v1/domain/product_layer. An order (install, update, delete, clear) is recorded
 * at once (`registered`) together with its job on the durable queue, and carried out by the
 * layer-orders worker, one at a time per domain across the cluster; its record then says
 * `installed`, `identical`, `deleted`, `cleared` or `failure` (with the reason in `trace`). The
 * listing shows the current state (kind current, order 0) and the attempts after it (kind attempt,
 * order 1, 2, …): an identical or failed attempt leaves the current state as it was.
 */
import { join } from 'node:path'
import * as v from 'valibot'
import { Stopping, type TxStep } from '~storage/db'
import { type Doc, UnstorableValue } from '~storage/doc'
import { completeJob, LostClaim } from '~storage/queue'
import type { TableSpec } from '~storage/repository'
import { type Ctx, SYSTEM_ACTOR } from '../context'
import type { Deps } from '../deps'
import { commit, commitLong, type Unit } from '../entities/unit'
import { ApiError, badRequest, conflict, DomainGone } from '../errors'
import { FieldSet } from '../query/fields'
import { objectBody } from '../values'
import { parseListParams } from '../query/list-query'
import { present } from '../query/present'
import { newId } from '../ids'
import { enqueue, type JobOf, queueKind } from '../queue-kinds'
import { applyLayer, type Installed, removeLayer, requireLayerScriptsParse } from './apply'
import { LayerError, latestArchive, md5, readArchive } from './archive'

/** An order's job: the order's record, and who ordered it in which request (its changes are theirs). */
export const LAYER_ORDER = queueKind(
  'layer-order',
  v.object({
    opId: v.string(),
    actor: v.optional(
      v.object({ type: v.picklist(['user', 'integration', 'script', 'system']), id: v.string(), name: v.string() }),
    ),
    requestId: v.optional(v.string()),
  }),
)
export type LayerOrderJob = JobOf<v.InferOutput<typeof LAYER_ORDER.payload>>
/** An order whose carrying out crashed its process this often is given up as a failure. */
const MAX_ATTEMPTS = 3

/** The body of an order; all of it is optional (an install of the given prefix). */
export const Order = objectBody({
  operation: v.optional(
    v.picklist(['install', 'update', 'delete', 'clear'], 'operation is install, update, delete or clear'),
  ),
  prefix: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a prefix is letters, digits and _ . -'))),
  mode: v.optional(v.picklist(['default'], 'mode is default')),
})

/** An order as stored: written only here (`orderLayer`, then `finishStep` and `relabel`). */
type LayerOrder = {
  id: string
  operation: 'install' | 'update' | 'delete' | 'clear'
  prefix: string
  mode: string
  file: string
  site: string
  dt: string
  status: string
  md5: string
  trace: string
  kind: string
  order: number
  /** What the order installed (status `installed`). */
  installed?: Installed
}

/** One row per order, its state in the doc; the service's own bookkeeping, not journaled. */
export const layersTable: TableSpec<LayerOrder> = {
  table: 'product_layers',
  objtype: 'product_layer',
  stamps: false,
  journal: false,
}
const SETTLED_ELSEWHERE = new Set(['identical', 'failure'])

export const layersDir = (deps: Deps) => join(deps.config.dataDir, 'layers')

/** The operation whose result is the domain's layer now, for a prefix: the latest successful one. */
function installedOf(ops: LayerOrder[], prefix?: string): LayerOrder | undefined {
  return ops
    .filter((o) => (!prefix || o.prefix === prefix) && ['installed', 'deleted', 'cleared'].includes(o.status))
    .at(-1)
}

/** Every operation of a domain, oldest first (ids are time-ordered). */
const operations = (deps: Deps, domain: string) => deps.db.read(() => deps.repo(layersTable).all(domain))

/** Current is the newest operation that did not end identical or failed; attempts are those after it. */
function* relabel(u: Unit): TxStep<void> {
  const repo = u.ctx.deps.repo(layersTable)
  const ops = yield* repo.all(u.w.domain)
  const currentAt = ops.findLastIndex((o) => !SETTLED_ELSEWHERE.has(o.status))
  for (const [i, o] of ops.entries()) {
    const kind = i === currentAt ? 'current' : i > currentAt ? 'attempt' : 'history'
    const order = i === currentAt ? 0 : i > currentAt ? i - currentAt : -1
    yield* repo.update(u.w, o.id, (doc) => ({ ...doc, kind, order }))
  }
}

export async function orderLayer(ctx: Ctx, o: v.InferOutput<typeof Order>): Promise<Doc> {
  const { deps } = ctx
  const operation = o.operation ?? 'install'
  let prefix = o.prefix
  let file = ''
  let sum = ''
  if (operation === 'install' || operation === 'update') {
    if (!prefix) throw badRequest(`${operation} needs a prefix`, 'prefix')
    const found = latestArchive(layersDir(deps), prefix)
    if (!found) throw badRequest(`no archive named ${prefix}*.zip in the layers directory`, 'prefix')
    file = found
    sum = md5(new Uint8Array(await Bun.file(join(layersDir(deps), found)).arrayBuffer()))
  } else {
    const current = installedOf(await operations(deps, ctx.domain), prefix)
    if (current?.status !== 'installed') {
      throw conflict(`no product layer${prefix ? ` ${prefix}` : ''} is installed in this domain`)
    }
    prefix = current.prefix
    file = current.file
  }
  const opId = newId()
  const doc: LayerOrder = {
    id: opId,
    operation,
    prefix,
    mode: o.mode ?? 'default',
    file,
    site: deps.config.site,
    dt: '',
    status: 'registered',
    md5: sum,
    trace: '',
    kind: 'current',
    order: 0,
  }
  await commit(ctx, function* (u) {
    yield* deps.repo(layersTable).insert(u.w, { ...doc, dt: u.w.now })
    yield* relabel(u)
    // the changes are the orderer's, made when the worker gets to them
    const payload = { opId, actor: ctx.actor, requestId: ctx.requestId }
    yield* enqueue(u, LAYER_ORDER, { serial: ctx.domain, payload })
  })
  const { id: _id, ...shown } = (await deps.repo(layersTable).get(ctx.domain, opId))!
  return shown
}

/** The order's final state, its listing labels and its job's completion: the last step of carrying it out. */
function* finishStep(u: Unit, job: LayerOrderJob, status: string, trace: string, installed?: Installed): TxStep<void> {
  const { opId } = job.payload
  const done = { status, trace, dt: u.w.now, ...(installed && { installed }) }
  yield* u.ctx.deps.repo(layersTable).update(u.w, opId, (doc) => ({ ...doc, ...done }))
  yield* relabel(u)
  yield* completeJob(job, u.w.now, { status })
}

/**
 * Carries out one order. The change, the order's final state and the job's completion commit in
 * one transaction: a crash before it leaves the job to run again, a crash after it leaves nothing,
 * and a holder whose claim was taken over (LostClaim) changes nothing.
 */
export async function carryOutOrder(deps: Deps, job: LayerOrderJob): Promise<void> {
  try {
    await carryOut(deps, job)
  } catch (err) {
    // deleted by another process meanwhile: the order and its job went with the domain
    if (!(err instanceof DomainGone)) throw err
    deps.log.info('product layer order dropped: its domain was deleted', { domain: job.domain, job: job.id })
  }
}

async function carryOut(deps: Deps, job: LayerOrderJob): Promise<void> {
  const { payload } = job
  const ctx: Ctx = {
    deps,
    domain: job.domain,
    actor: payload.actor ?? SYSTEM_ACTOR,
    roles: ['admin'],
    requestId: payload.requestId ?? job.id,
  }
  const op = await deps.repo(layersTable).get(job.domain, payload.opId)
  if (!op) return void (await commit(ctx, (u) => completeJob(job, u.w.now)))
  try {
    if (job.attempts > MAX_ATTEMPTS) throw new LayerError(`gave up after ${MAX_ATTEMPTS} attempts that did not finish`)
    const ops = await operations(deps, job.domain)
    const current = installedOf(
      ops.filter((o) => o.id !== op.id),
      op.prefix,
    )
    if (op.operation === 'delete' || op.operation === 'clear') {
      if (current?.status !== 'installed') {
        throw new LayerError(`no product layer ${op.prefix} is installed any more`)
      }
      await commitLong(ctx, { kind: `layer ${op.operation}`, key: op.id }, function* (u) {
        const kept = yield* removeLayer(u, current.installed as Installed, op.operation === 'clear')
        const status = op.operation === 'clear' ? 'cleared' : 'deleted'
        yield* finishStep(
          u,
          job,
          status,
          kept.length ? `kept classes that hold records: ${kept.join(', ')}` : 'removed',
        )
      })
    } else if (
      op.operation === 'install' &&
      current?.status === 'installed' &&
      current.md5 === op.md5 &&
      current.file === op.file
    ) {
      await commit(ctx, (u) => finishStep(u, job, 'identical', `${op.file} is already installed`))
    } else {
      const { content } = await readArchive(layersDir(deps), op.file)
      await requireLayerScriptsParse(content)
      await commitLong(ctx, { kind: `layer ${op.operation}`, key: op.id }, function* (u) {
        const installed = yield* applyLayer(u, content)
        const n = (k: keyof Installed) => `${installed[k].length} ${k}`
        const trace = `${op.file}: ${n('classes')}, ${n('svcscripts')}, ${n('extobjs')}, ${n('settings')}`
        yield* finishStep(u, job, 'installed', trace, installed)
      })
    }
  } catch (err) {
    if (err instanceof LostClaim || err instanceof DomainGone) throw err // another process carries it out, or deleted it
    if (err instanceof Stopping) throw err // rolled back: the order runs again at the next start
    const known = err instanceof LayerError || err instanceof ApiError || err instanceof UnstorableValue
    if (!known) {
      const failure = { domain: job.domain, operation: op.operation, error: String(err), stack: (err as Error).stack }
      deps.log.error('product layer failed', failure)
    }
    const trace = known ? (err as Error).message : `internal error: ${(err as Error).message}`
    await commit(ctx, (u) => finishStep(u, job, 'failure', trace))
  }
}

const FIELDS = new FieldSet([
  'operation',
  'prefix',
  'mode',
  'site',
  'status',
  'dt',
  'file',
  'md5',
  'trace',
  'kind',
  'order',
])
const OUTPUT = ['mode', 'site', 'status', 'dt', 'file', 'md5', 'trace', 'kind', 'order']

export async function listLayers(ctx: Ctx, params: Record<string, string | undefined>): Promise<Doc[]> {
  const limits = { defaultLimit: 100, maxLimit: 1000 }
  const { query, mask, flat } = parseListParams(params, { fields: FIELDS, output: FIELDS, limits })
  const shown: typeof query.filter = { op: 'in', left: { field: 'kind' }, values: ['current', 'attempt'] }
  query.filter = query.filter ? { op: 'and', args: [shown, query.filter] } : shown
  if (query.order.length === 0) query.order = [{ field: 'order', desc: false }]
  const docs = await ctx.deps.repo(layersTable).list(ctx.domain, query)
  return docs.map((d) => {
    const shown = present(d, mask ?? OUTPUT, flat)
    // an order being carried out: how far it has got (its rows are invisible until it commits)
    const progress = d.status === 'registered' && ctx.deps.longWork.progress(ctx.domain, d.id)
    return progress ? { ...shown, progress: { done: progress.done, total: progress.total } } : shown
  })
}
