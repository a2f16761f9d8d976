/**
 * The classes of each domain as the record routes use them (compiled by class-model.ts), cached
 * per domain (DomainCaches): a change to a class invalidates its domain in every process.
 */
import type { Kv } from '~storage/kv/kv'
import { modelGeneration } from '~storage/model-generations'
import { createRecordTable } from '~storage/model-tables'
import type { Clock } from '../clock'
import type { ModelCatalog, Store } from '../ports'
import { type DomainCache, DomainCaches } from '../domain-cache'
import { notFound } from '../errors'
import { buildModels, type ClassModel } from './class-model'
import { classes } from './classes'

const CHANNEL = 'model-invalidate'

export class ModelRegistry implements ModelCatalog {
  private readonly caches: DomainCaches
  private readonly models: DomainCache<Map<string, ClassModel>>
  /** The generation each domain's definitions were read at (a domain without classes has no model to tell it). */
  private readonly generations = new WeakMap<Map<string, ClassModel>, number>()

  constructor(
    private readonly store: Store,
    kv: Kv,
    clock: Clock,
  ) {
    this.caches = new DomainCaches(kv, clock, CHANNEL)
    this.models = this.caches.cache()
  }

  start(): Promise<void> {
    return this.caches.start()
  }

  invalidate(domain: string): Promise<void> {
    return this.caches.invalidate(domain)
  }

  /** The classes of a domain by classname. */
  async classes(domain: string): Promise<Map<string, ClassModel>> {
    return this.models(domain, domain, async () => {
      const { db, repo } = this.store
      // the generation first: definitions read after it are at least as new, never older
      const { docs, generation } = await db.read(function* () {
        return { generation: yield* modelGeneration(domain), docs: yield* repo(classes.table).all(domain) }
      })
      const models = buildModels(
        domain,
        docs.sort((a, b) => (a.classname < b.classname ? -1 : 1)),
        generation,
      )
      this.generations.set(models, generation)
      return models
    })
  }

  /** Whether the domain's classes changed since `generation` (asked of the database). */
  async changedSince(domain: string, generation: number | undefined): Promise<boolean> {
    return (await this.store.db.read(() => modelGeneration(domain))) !== generation
  }

  /** Drops this process's definitions of the domain's classes (found older than the database's). */
  forget(domain: string): void {
    this.caches.forget(domain)
  }

  /**
   * The class as the database now defines it, after a write found `stale`'s definitions older than
   * the database's (another process changed the domain's classes, and its message is on its way).
   */
  async reloaded(domain: string, stale: ClassModel): Promise<ClassModel> {
    this.forget(domain)
    const model = (await this.classes(domain)).get(stale.classname)
    if (!model) throw notFound(`no class ${stale.classname} in this domain`)
    return model
  }

  /** The classes of a domain with every record table in place (SYNC). */
  async ready(domain: string): Promise<Map<string, ClassModel>> {
    const models = await this.classes(domain)
    await this.store.db.write(function* () {
      for (const m of models.values()) if (m.table) yield* createRecordTable(m.table.table)
    })
    return models
  }

  /**
   * The class a record path names: the longest classname that the path starts with, and what
   * follows it. Before answering none, the generation tells whether another process has just
   * created one (its message may not have come yet).
   */
  async resolve(domain: string, segments: string[]): Promise<{ model: ClassModel; rest: string[] } | null> {
    const models = await this.classes(domain)
    const found = longestClass(models, segments)
    if (found) return found
    if (!(await this.changedSince(domain, this.generations.get(models)))) return null
    this.forget(domain)
    return longestClass(await this.classes(domain), segments)
  }
}

function longestClass(models: Map<string, ClassModel>, segments: string[]) {
  for (let n = segments.length; n > 0; n--) {
    const model = models.get(segments.slice(0, n).join('/'))
    if (model) return { model, rest: segments.slice(n) }
  }
  return null
}
