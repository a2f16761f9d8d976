/**
 * What a session may do, answered from in-process caches (DomainCaches): the roles of each user
 * (from the users_caches table), the routes of each role (with inheritance) and the state of each
 * domain. A change to the directory or to a domain invalidates the domain's entries everywhere.
 */
import type { Kv } from '~storage/kv/kv'
import type { Clock } from '../clock'
import type { AccessReader, DomainInfo, LongWorkGate, RouteGrant, Store } from '../ports'
import { usersCaches } from '../directory/cache-collections'
import { domainCreated, findDomainById, isBlocked, isMasterDomain } from '../directory/domains'
import { roles } from '../directory/roles'
import { type DomainCache, DomainCaches } from '../domain-cache'
import { chainOf } from '../entities/tree'
import { compilePathPattern, matchesPath, namesRecordOf, pathSegments } from './path-pattern'
import type { Session } from './sessions'
import { optStr, stringsOf } from '~storage/doc'

const CHANNEL = 'access-invalidate'
/** The roles of a master administrator switched into another domain (one array, so it compares equal). */
const ADMIN_ONLY = ['admin']

export type { DomainInfo, RouteGrant } from '../ports'

export function compileGrant(path: string, methods: readonly string[]): RouteGrant {
  return { pattern: compilePathPattern(path), methods: methods.includes('*') ? null : new Set(methods) }
}

export class AccessCache implements AccessReader {
  private readonly caches: DomainCaches
  private readonly roles: DomainCache<string[]>
  private readonly grantMaps: DomainCache<Map<string, RouteGrant[]>>
  private readonly domains: DomainCache<DomainInfo | null>

  constructor(
    private readonly store: Store,
    kv: Kv,
    clock: Clock,
    private readonly longWork: LongWorkGate,
  ) {
    this.caches = new DomainCaches(kv, clock, CHANNEL)
    this.roles = this.caches.cache()
    this.grantMaps = this.caches.cache()
    this.domains = this.caches.cache()
  }

  start(): Promise<void> {
    return this.caches.start()
  }

  /** After a change to a domain's directory or to the domain itself, in every process. */
  invalidate(domain: string): Promise<void> {
    return this.caches.invalidate(domain)
  }

  /** Told of every change to a domain's directory or to the domain itself, from any process. */
  onChange(listener: (domain: string) => void): () => void {
    return this.caches.onChange(listener)
  }

  /** Direct and inherited (through groups) roles of a user; none when the user no longer exists. */
  rolesOf(domain: string, userId: string): string[] | Promise<string[]> {
    return this.roles(domain, `${domain}:${userId}`, async () => {
      const cache = await this.store.repo(usersCaches.table).get(domain, userId)
      return stringsOf(cache?.deep_roles)
    })
  }

  /** The grants of every custom role of a domain, each including those of its ancestors. */
  grantsOf(domain: string): Map<string, RouteGrant[]> | Promise<Map<string, RouteGrant[]>> {
    return this.grantMaps(domain, domain, async () => {
      const { db, repo } = this.store
      const all = await db.read(() => repo(roles.table).all(domain))
      const byId = new Map(all.map((r) => [r.id, r]))
      const out = new Map<string, RouteGrant[]>()
      for (const role of all) {
        const chain = chainOf(role.id, byId)
        const routes = chain.flatMap((r) => (r.routes as { path: string; methods: string[] }[] | undefined) ?? [])
        out.set(
          role.name,
          routes.map((g) => compileGrant(g.path, g.methods)),
        )
      }
      return out
    })
  }

  /**
   * A domain read as missing while long work runs is not kept: a deletion in flight shows this
   * process's reads its uncommitted rows, and kept, a deletion that then rolled back left its domain
   * refused (401) to every session and channel until the entry lapsed.
   */
  domainInfo(domainId: string): DomainInfo | null | Promise<DomainInfo | null> {
    return this.domains(
      domainId,
      domainId,
      async () => {
        const d = await findDomainById(this.store, domainId)
        if (!d) return null
        return {
          id: d.id,
          name: d.name,
          isMaster: isMasterDomain(d),
          blocked: isBlocked(d),
          solution: optStr(d.doc, 'solution') ?? 'platform',
          created: domainCreated(d),
        }
      },
      (info) => info !== null || !this.longWork.idle(),
    )
  }

  /**
   * The roles a session holds in its current domain, read live. A master-domain administrator who
   * switched into another domain administers it while it still holds `admin` at home. Answered at
   * once while cached: pushes ask it for every subscribed socket.
   */
  sessionRoles(s: Session): string[] | Promise<string[]> {
    if (s.domainId === s.homeDomainId) return this.rolesOf(s.domainId, s.userId)
    const home = this.rolesOf(s.homeDomainId, s.userId)
    const switched = (roles: string[]) => (s.homeIsMaster && roles.includes('admin') ? ADMIN_ONLY : [])
    return home instanceof Promise ? home.then(switched) : switched(home)
  }
}

/** Whether the roles grant `method` on `path`: `admin` grants everything in its domain. */
export function grants(
  roles: readonly string[],
  byRole: Map<string, RouteGrant[]>,
  method: string,
  path: string,
): boolean {
  if (roles.includes('admin')) return true
  // split once: a role may hold hundreds of routes
  const segments = pathSegments(path)
  return segments !== null && someGrant(roles, byRole, method, matchesPath, segments)
}

/**
 * Whether the roles grant `method` on some record of the collection at `collectionPath` named by its
 * id (`…/extobjs/<id>`), though on no other: such a role reads those records.
 */
export function grantsNamedRecord(
  roles: readonly string[],
  byRole: Map<string, RouteGrant[]>,
  method: string,
  collectionPath: string,
): boolean {
  const collection = pathSegments(collectionPath)
  return collection !== null && someGrant(roles, byRole, method, namesRecordOf, collection)
}

/** Whether a grant of the roles takes `method` and its pattern passes `test` with `segments`. */
function someGrant(
  roles: readonly string[],
  byRole: Map<string, RouteGrant[]>,
  method: string,
  test: (pattern: RouteGrant['pattern'], segments: readonly string[]) => boolean,
  segments: readonly string[],
): boolean {
  for (const role of roles) {
    for (const g of byRole.get(role) ?? [])
      if ((g.methods === null || g.methods.has(method)) && test(g.pattern, segments)) return true
  }
  return false
}
