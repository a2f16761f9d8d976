/**
 * Web applications offered to a user: one JSON metadata file per application in WEBAPPS_DIR
 * (`name`, `description`, `order`, `icon`, `fa-icon`, `roles`, `url`, and any further members),
 * shown to users holding one of its `roles` (an application without roles is shown to everyone;
 * administrators see all). Files are re-read at most every few seconds.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isPlainObject, type Doc, stringsOf } from '~storage/doc'
import type { Deps } from '../deps'

const RELOAD_MS = 5000
let cache: { dir: string; at: number; apps: Doc[] } | undefined

function load(deps: Deps): Doc[] {
  const dir = deps.config.webappsDir
  const now = deps.clock.now()
  if (cache && cache.dir === dir && now - cache.at < RELOAD_MS && now >= cache.at) return cache.apps
  const apps: Doc[] = []
  let files: string[] = []
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
  } catch {
    // no directory: no applications
  }
  for (const file of files) {
    try {
      const app = JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown
      if (!isPlainObject(app) || typeof app.name !== 'string') throw new Error('expected an object with a string name')
      apps.push(app)
    } catch (err) {
      deps.log.warn('skipping web application metadata', { file: join(dir, file), error: (err as Error).message })
    }
  }
  cache = { dir, at: now, apps }
  return apps
}

export function webappsFor(deps: Deps, roles: readonly string[]): Doc[] {
  const admin = roles.includes('admin')
  return load(deps)
    .filter((app) => {
      const wanted = stringsOf(app.roles)
      return admin || wanted.length === 0 || wanted.some((r) => roles.includes(r))
    })
    .sort((a, b) => Number(a.order ?? 0) - Number(b.order ?? 0) || String(a.name).localeCompare(String(b.name)))
}
