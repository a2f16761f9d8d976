/**
 * The collections the console offers, read from the API description (/rest/v1/openapi.json): for
 * each known collection path, its list item schema (the list's columns and filter fields), its
 * create and change bodies (the forms), and whether an item can be read, changed and deleted.
 */
import { API, call } from './api'
import type { Schema } from './schema'

export type DomainKind = 'master' | 'working' | 'any'

interface Known {
  key: string
  title: string
  /** One item, for messages: "Delete the user ann?" */
  noun: string
  area: string
  kind: DomainKind
  /** The create button's word: "New", or "Start" for a handler. */
  createLabel?: string
  /** The journal's `objtype` of an item (its history). */
  objtype?: string
  /**
   * A page of its own instead of the list: `licence` (one object, replaced by a POST), `invite` (a
   * create the API does not list); `files` is a list whose rows download and whose create uploads.
   */
  page?: 'licence' | 'invite' | 'files'
}

/** The collections in navigation order, by area; those the description lacks are left out. */
export const CATALOGUE: Known[] = [
  { key: 'domain/users', title: 'Users', noun: 'user', area: 'Directory', kind: 'any', objtype: 'user' },
  { key: 'domain/groups', title: 'Groups', noun: 'group', area: 'Directory', kind: 'any', objtype: 'group' },
  { key: 'domain/roles', title: 'Roles', noun: 'role', area: 'Directory', kind: 'any', objtype: 'role' },
  { key: 'iam/invites', title: 'Invitations', noun: 'invitation', area: 'Directory', kind: 'any', page: 'invite' },
  {
    key: 'uc/sipusers',
    title: 'SIP accounts',
    noun: 'SIP account',
    area: 'Directory',
    kind: 'working',
    objtype: 'sipuser',
  },
  { key: 'domain/domains', title: 'Domains', noun: 'domain', area: 'Domain', kind: 'master', objtype: 'domain' },
  { key: 'domain/projects', title: 'Projects', noun: 'project', area: 'Domain', kind: 'working', objtype: 'project' },
  { key: 'domain/settings', title: 'Settings', noun: 'setting', area: 'Domain', kind: 'any', objtype: 'setting' },
  {
    key: 'master/borderrules',
    title: 'Border rules',
    noun: 'border rule',
    area: 'Domain',
    kind: 'master',
    objtype: 'borderrule',
  },
  { key: 'master/nodes', title: 'Nodes', noun: 'node', area: 'Domain', kind: 'master' },
  { key: 'master/license', title: 'Licence', noun: 'licence', area: 'Domain', kind: 'master', page: 'licence' },
  { key: 'design/classes', title: 'Classes', noun: 'class', area: 'Data', kind: 'any', objtype: 'class' },
  {
    key: 'reference/extobjs',
    title: 'External objects',
    noun: 'external object',
    area: 'Data',
    kind: 'any',
    objtype: 'extobj',
  },
  {
    key: 'service/svcscripts',
    title: 'Service scripts',
    noun: 'service script',
    area: 'Service',
    kind: 'any',
    objtype: 'svcscript',
  },
  {
    key: 'service/svctasks',
    title: 'Service tasks',
    noun: 'service task',
    area: 'Service',
    kind: 'any',
    objtype: 'svctask',
  },
  {
    key: 'service/svcscript_runtimes',
    title: 'Script handlers',
    noun: 'script handler',
    area: 'Service',
    kind: 'any',
    createLabel: 'Start a script',
  },
  {
    key: 'service/integration_points',
    title: 'Channels',
    noun: 'channel',
    area: 'Service',
    kind: 'any',
    objtype: 'integration_point',
  },
  {
    key: 'fs/targets/token',
    title: 'Channel files',
    noun: 'file',
    area: 'Service',
    kind: 'any',
    createLabel: 'Upload files',
    page: 'files',
  },
]

export interface Collection extends Known {
  path: string
  /** The path parameter naming an item (`id`, `key`, `name`), when items have a path of their own. */
  itemParam?: string
  listItem?: Schema
  item?: Schema
  create?: Schema
  change?: Schema
  changeMethod?: 'patch' | 'put'
  canDelete: boolean
  /** The list answers its total with `count=true` (a list read whole, like the files', has no count). */
  counts?: boolean
  /** Records under a date: the list needs `interval` (a partitioned model class). */
  partitioned?: boolean
  /** The create uploads files (multipart/form-data). */
  upload?: boolean
}

interface Operation {
  parameters?: { name: string; in: string; required?: boolean }[]
  requestBody?: { content?: Record<string, { schema?: Schema }> }
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>
}
type PathItem = Record<string, Operation | undefined>
interface OpenApi {
  paths: Record<string, PathItem>
  components?: { schemas?: Record<string, Schema> }
}

/** The schema with its $refs replaced (the description's are local: #/components/schemas/X). */
function resolver(doc: OpenApi) {
  const resolve = (s: Schema | undefined, depth = 0): Schema | undefined => {
    if (!s || depth > 20) return s
    if (s.$ref) return resolve(doc.components?.schemas?.[s.$ref.split('/').at(-1)!], depth + 1)
    if (s.allOf) {
      // the parts merged: their properties and required members together
      const parts = s.allOf.map((x) => resolve(x, depth + 1)!)
      return {
        type: 'object',
        properties: Object.assign({}, ...parts.map((x) => x.properties ?? {})),
        required: parts.flatMap((x) => x.required ?? []),
      }
    }
    const out: Schema = { ...s }
    if (s.properties)
      out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, resolve(v, depth + 1)!]))
    if (s.items) out.items = resolve(s.items, depth + 1)
    if (s.anyOf) out.anyOf = s.anyOf.map((x) => resolve(x, depth + 1)!)
    return out
  }
  return resolve
}

const bodyOf = (op: Operation | undefined) => op?.requestBody?.content?.['application/json']?.schema
const answerOf = (op: Operation | undefined) => op?.responses?.['200']?.content?.['application/json']?.schema

export function collectionsOf(doc: OpenApi): Collection[] {
  const resolve = resolver(doc)
  const out: Collection[] = []
  for (const known of CATALOGUE) {
    const path = `${API}/${known.key}`
    const list = doc.paths[path]
    // an invitation is only created: its page needs the POST alone
    if (!list?.get && !(known.page === 'invite' && list?.post)) continue
    const itemPath = Object.keys(doc.paths).find(
      (p) => /^\/\{[a-z_]+\}$/.test(p.slice(path.length)) && p.startsWith(path),
    )
    const item = itemPath ? doc.paths[itemPath] : undefined
    const listAnswer = resolve(answerOf(list.get))
    out.push({
      ...known,
      path,
      itemParam: itemPath?.slice(path.length + 2, -1),
      listItem: known.page === 'licence' ? undefined : listAnswer?.items,
      item: known.page === 'licence' ? listAnswer : resolve(answerOf(item?.get)),
      create: resolve(bodyOf(list.post)),
      change: resolve(bodyOf(item?.patch ?? item?.put)),
      changeMethod: item?.patch ? 'patch' : item?.put ? 'put' : undefined,
      canDelete: Boolean(item?.delete),
      counts: Boolean(list.get?.parameters?.some((p) => p.name === 'count' && p.in === 'query')),
      // the description declares no body for a streamed multipart upload: the files page knows it
      upload: known.page === 'files' && Boolean(list.post),
    })
  }
  // the records of each model class the description names (a signed-in caller's domain's classes)
  for (const [path, list] of Object.entries(doc.paths)) {
    const classname = /^\/rest\/v1\/model\/([^{#]+)$/.exec(path)?.[1]
    if (!classname || !list.get) continue
    const item = doc.paths[`${path}/{id}`]
    // a record's PATCH takes any object: its form is the record's body, as PUT declares it
    const body = resolve(bodyOf(list.post) ?? bodyOf(item?.put))
    out.push({
      key: `model/${classname}`,
      title: classname,
      noun: 'record',
      area: 'Records',
      kind: 'any',
      objtype: `model/${classname}`,
      path,
      itemParam: item ? 'id' : undefined,
      listItem: resolve(answerOf(list.get))?.items,
      item: resolve(answerOf(item?.get)),
      create: body,
      change: item?.patch || item?.put ? body : undefined,
      changeMethod: item?.patch ? 'patch' : item?.put ? 'put' : undefined,
      canDelete: Boolean(item?.delete),
      partitioned: Boolean(list.get.parameters?.some((p) => p.name === 'interval' && p.required)),
    })
  }
  return out
}

let loaded: Promise<Collection[]> | undefined

/** The description as the signed-in caller sees it, read once per page load (again after a domain switch). */
export function loadCollections(again = false): Promise<Collection[]> {
  if (again || !loaded) loaded = call<OpenApi>('GET', `${API}/openapi.json`).then((a) => collectionsOf(a.data))
  return loaded
}

export const available = (c: Collection, isMaster: boolean) => c.kind === 'any' || (c.kind === 'master') === isMaster
