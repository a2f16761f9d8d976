/**
 * What a session may do, answered from in-process caches: the roles of each user (from the
 * users_caches table), the routes of each role (with inheritance) and the state of each domain.
 * A change to the directory or to a domain invalidates a domain's entries in every process
 * through pub/sub; a short lifetime bounds staleness if a message is lost.
 */
import { findDomainById } from '~storage/directory'
import type { Db } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { Kv } from '~storage/kv/kv'
import type { Clock } from '../clock'
import { isBlocked, isMasterDomain } from './directory'
import type { Session } from './sessions'

const CHANNEL = 'access-invalidate'
const TTL_MS = 30_000
const MAX_ENTRIES = 50_000

export interface DomainInfo {
  id: string
  name: string
  isMaster: boolean
  blocked: boolean
  solution: string
}

/** A role's grant: a path pattern (`*` one segment, `**` any number) and its methods (`*` = all). */
export interface RouteGrant {
  pattern: RegExp
  methods: Set<string> | null
}

export function compileGrant(path: string, methods: readonly string[]): RouteGrant {
  let source = ''
  for (const seg of path.split('/').filter(Boolean)) {
    if (seg === '**') source += '(?:/[^/]+)*'
    else if (seg === '*') source += '/[^/]+'
    else source += '/' + seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }
  return { pattern: new RegExp(`^${source}/?$`), methods: methods.includes('*') ? null : new Set(methods) }
}

interface Entry<T> {
  gen: number
  until: number
  value: T
}

export class AccessCache {
  private readonly generations = new Map<string, number>()
  private readonly userRoles = new Map<string, Entry<string[]>>()
  private readonly grants = new Map<string, Entry<Map<string, RouteGrant[]>>>()
  private readonly domains = new Map<string, Entry<DomainInfo | null>>()

  constructor(
    private readonly db: Db,
    private readonly kv: Kv,
    private readonly clock: Clock,
  ) {}

  async start(): Promise<void> {
    await this.kv.subscribe(CHANNEL, (domain) => this.bump(domain))
    this.kv.onSubscriberReset(() => {
      this.userRoles.clear()
      this.grants.clear()
      this.domains.clear()
    })
  }

  /** After a change to a domain's directory or to the domain itself, in every process. */
  async invalidate(domain: string): Promise<void> {
    this.bump(domain)
    await this.kv.publish(CHANNEL, domain)
  }

  private bump(domain: string): void {
    this.generations.set(domain, (this.generations.get(domain) ?? 0) + 1)
  }

  private cached<T>(map: Map<string, Entry<T>>, key: string, domain: string, load: () => Promise<T>): T | Promise<T> {
    const gen = this.generations.get(domain) ?? 0
    const now = this.clock.now()
    const hit = map.get(key)
    if (hit && hit.gen === gen && hit.until > now) return hit.value
    return load().then((value) => {
      if (map.size >= MAX_ENTRIES) map.clear()
      map.set(key, { gen, until: now + TTL_MS, value })
      return value
    })
  }

  /** Direct and inherited (through groups) roles of a user; none when the user no longer exists. */
  rolesOf(domain: string, userId: string): string[] | Promise<string[]> {
    return this.cached(this.userRoles, `${domain}:${userId}`, domain, async () => {
      const row = await this.db.get('SELECT doc FROM users_caches WHERE domain = ? AND id = ?', [domain, userId])
      return row ? ((JSON.parse(row[0] as string) as Doc).deep_roles as string[]) : []
    })
  }

  /** The grants of every custom role of a domain, each including those of its ancestors. */
  grantsOf(domain: string): Map<string, RouteGrant[]> | Promise<Map<string, RouteGrant[]>> {
    return this.cached(this.grants, domain, domain, async () => {
      const rows = await this.db.all('SELECT doc FROM roles WHERE domain = ?', [domain])
      const roles = rows.map((r) => JSON.parse(r[0] as string) as Doc)
      const byId = new Map(roles.map((r) => [r.id as string, r]))
      const out = new Map<string, RouteGrant[]>()
      for (const role of roles) {
        const grants: RouteGrant[] = []
        const seen = new Set<string>()
        for (let r: Doc | undefined = role; r && !seen.has(r.id as string); r = byId.get(r.parent_id as string)) {
          seen.add(r.id as string)
          for (const g of (r.routes as { path: string; methods: string[] }[] | undefined) ?? []) grants.push(compileGrant(g.path, g.methods))
        }
        out.set(role.name as string, grants)
      }
      return out
    })
  }

  domainInfo(domainId: string): DomainInfo | null | Promise<DomainInfo | null> {
    return this.cached(this.domains, domainId, domainId, async () => {
      const d = await findDomainById(this.db, domainId)
      if (!d) return null
      return { id: d.id, name: d.name, isMaster: isMasterDomain(d), blocked: isBlocked(d), solution: (d.doc.solution as string | undefined) ?? 'platform' }
    })
  }

  /**
   * The roles a session holds in its current domain, read live. A master-domain administrator who
   * switched into another domain administers it while it still holds `admin` at home.
   */
  async sessionRoles(s: Session): Promise<string[]> {
    if (s.domainId === s.homeDomainId) return this.rolesOf(s.domainId, s.userId)
    return s.homeIsMaster && (await this.rolesOf(s.homeDomainId, s.userId)).includes('admin') ? ['admin'] : []
  }
}

/** Whether the roles grant `method` on `path`: `admin` grants everything in its domain. */
export function grants(roles: readonly string[], byRole: Map<string, RouteGrant[]>, method: string, path: string): boolean {
  if (roles.includes('admin')) return true
  for (const role of roles) {
    for (const g of byRole.get(role) ?? []) if ((g.methods === null || g.methods.has(method)) && g.pattern.test(path)) return true
  }
  return false
}
