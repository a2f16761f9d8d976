/**
 * POST and GET /rest/v1/domain/product_layer. An order (install, update, delete, clear) is recorded
 * at once (`registered`) and carried out in the background, one at a time per domain; its record
 * then says `installed`, `identical`, `deleted`, `cleared` or `failure` (with the reason in `trace`).
 * The listing shows the current state (kind current, order 0) and the attempts after it (kind
 * attempt, order 1, 2, …): an identical or failed attempt leaves the current state as it was.
 */
import * as v from 'valibot'
import { join } from 'node:path'
import type { Doc } from '~storage/doc'
import type { WriteContext } from '~storage/journal'
import { insertLayerOperation, layerOperations, relabelLayerOperations, updateLayerOperation } from '~storage/layers'
import type { TableSpec } from '~storage/repository'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { validate } from '../entities/validate'
import { ApiError, badRequest, conflict } from '../http/errors'
import { FieldSet } from '../http/fields'
import { parseListParams } from '../http/list-query'
import { present } from '../http/present'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { latestArchive, LayerError, md5, readArchive } from './archive'
import { applyLayer, removeLayer, type Installed } from './apply'

const Order = v.strictObject({
  operation: v.optional(
    v.picklist(['install', 'update', 'delete', 'clear'], 'operation is install, update, delete or clear'),
  ),
  prefix: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a prefix is letters, digits and _ . -'))),
  mode: v.optional(v.picklist(['default'], 'mode is default')),
})

const layersTable: TableSpec = { table: 'product_layers', objtype: 'product_layer', stamps: false }
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
const SETTLED_ELSEWHERE = new Set(['identical', 'failure'])

export const layersDir = (deps: Deps) => join(deps.config.dataDir, 'layers')

/** The operation whose result is the domain's layer now, for a prefix: the latest successful one. */
function installedOf(ops: Doc[], prefix?: string): Doc | undefined {
  return ops
    .filter((o) => (!prefix || o.prefix === prefix) && ['installed', 'deleted', 'cleared'].includes(o.status as string))
    .at(-1)
}

export class LayerService {
  private readonly queues = new Map<string, Promise<void>>()

  constructor(private readonly deps: Deps) {}

  /** Waits until every order of the domain has been carried out. */
  async idle(domain: string): Promise<void> {
    while (this.queues.has(domain)) await this.queues.get(domain)
  }

  async order(req: Req, body: unknown): Promise<Doc> {
    const o = validate(Order, body ?? {})
    const operation = o.operation ?? 'install'
    const ops = await layerOperations(this.deps.db, req.domain)
    let prefix = o.prefix
    let file = ''
    let sum = ''
    if (operation === 'install' || operation === 'update') {
      if (!prefix) throw badRequest(`${operation} needs a prefix`, 'prefix')
      const found = latestArchive(layersDir(this.deps), prefix)
      if (!found) throw badRequest(`no archive named ${prefix}*.zip in the layers directory`, 'prefix')
      file = found
      sum = md5(new Uint8Array(await Bun.file(join(layersDir(this.deps), found)).arrayBuffer()))
    } else {
      const current = installedOf(ops, prefix)
      if (!current || current.status !== 'installed')
        throw conflict(`no product layer${prefix ? ` ${prefix}` : ''} is installed in this domain`)
      prefix = current.prefix as string
      file = current.file as string
    }
    const now = isoTime(this.deps.clock.now())
    const doc: Doc = {
      id: Bun.randomUUIDv7(),
      operation,
      prefix,
      mode: o.mode ?? 'default',
      file,
      site: this.deps.config.site,
      dt: now,
      status: 'registered',
      md5: sum,
      trace: '',
      kind: 'current',
      order: 0,
    }
    await insertLayerOperation(this.deps.db, req.domain, doc)
    await this.relabel(req.domain)
    const who = { domain: req.domain, actor: req.writeContext().actor, requestId: req.requestId }
    const previous = this.queues.get(req.domain) ?? Promise.resolve()
    const run = previous
      .then(() => this.carryOut(who, doc))
      .finally(() => {
        if (this.queues.get(req.domain) === run) this.queues.delete(req.domain)
      })
    this.queues.set(req.domain, run)
    const { id: _id, installed: _installed, ...shown } = doc
    return shown
  }

  private async carryOut(who: Omit<WriteContext, 'now'>, op: Doc): Promise<void> {
    const { deps } = this
    const domain = who.domain
    // changes carry the time they are made, not the time the order came in
    const w: WriteContext = { ...who, now: isoTime(deps.clock.now()) }
    const finish = async (status: string, trace: string, installed?: Installed) => {
      const done = { ...op, status, trace, dt: isoTime(deps.clock.now()), ...(installed && { installed }) }
      await updateLayerOperation(deps.db, domain, done, done.dt)
      await this.relabel(domain)
    }
    try {
      const ops = await layerOperations(deps.db, domain)
      const current = installedOf(
        ops.filter((o) => o.id !== op.id),
        op.prefix as string,
      )
      if (op.operation === 'delete' || op.operation === 'clear') {
        if (current?.status !== 'installed')
          return await finish('failure', `no product layer ${op.prefix as string} is installed any more`)
        const kept = await deps.db.write(() =>
          removeLayer(deps, w, current!.installed as Installed, op.operation === 'clear'),
        )
        await finish(
          op.operation === 'clear' ? 'cleared' : 'deleted',
          kept.length ? `kept classes that hold records: ${kept.join(', ')}` : 'removed',
        )
      } else if (
        op.operation === 'install' &&
        current?.status === 'installed' &&
        current.md5 === op.md5 &&
        current.file === op.file
      ) {
        await finish('identical', `${op.file} is already installed`)
      } else {
        const { content } = await readArchive(layersDir(deps), op.file as string)
        const installed = await deps.db.write(() => applyLayer(deps, w, content))
        const n = (k: keyof Installed) => `${installed[k].length} ${k}`
        await finish(
          'installed',
          `${op.file}: ${n('classes')}, ${n('svcscripts')}, ${n('extobjs')}, ${n('settings')}`,
          installed,
        )
      }
    } catch (err) {
      const known = err instanceof LayerError || err instanceof ApiError
      if (!known)
        deps.log.error('product layer failed', {
          domain,
          operation: op.operation,
          error: String(err),
          stack: (err as Error).stack,
        })
      await finish('failure', known ? (err as Error).message : `internal error: ${(err as Error).message}`)
    } finally {
      await deps.model.invalidate(domain)
      deps.events.kick()
    }
  }

  /** Current is the newest operation that did not end identical or failed; attempts are those after it. */
  private async relabel(domain: string): Promise<void> {
    const ops = await layerOperations(this.deps.db, domain)
    const currentAt = ops.findLastIndex((o) => !SETTLED_ELSEWHERE.has(o.status as string))
    const labels = ops.map((o, i) => ({
      id: o.id as string,
      kind: i === currentAt ? 'current' : i > currentAt ? 'attempt' : 'history',
      order: i === currentAt ? 0 : i > currentAt ? i - currentAt : -1,
    }))
    await relabelLayerOperations(this.deps.db, domain, labels)
  }

  async list(req: Req): Promise<Doc[]> {
    const { query, mask, flat } = parseListParams(req.query, {
      fields: FIELDS,
      output: FIELDS,
      limits: { defaultLimit: 100, maxLimit: 1000 },
    })
    const shown: typeof query.filter = { op: 'in', left: { field: 'kind' }, values: ['current', 'attempt'] }
    query.filter = query.filter ? { op: 'and', args: [shown, query.filter] } : shown
    if (query.order.length === 0) query.order = [{ field: 'order', desc: false }]
    const docs = await this.deps.repo(layersTable).list(req.domain, query)
    return docs.map((d) => present(d, mask ?? OUTPUT, flat))
  }
}

export const orderLayer = defineRoute({ handle: async (req) => req.deps.layers.order(req, await req.json()) })
export const listLayers = defineRoute({ handle: (req) => req.deps.layers.list(req) })
