/**
 * What the directory's entities are, apart from what they do: each one's table spec, fields and
 * schemas, without hooks. The rules (users.ts, groups.ts, roles.ts, sipusers.ts, domains.ts,
 * maintain.ts, refresh.ts) import these, never each other's entities, so the cascades between
 * entities make no import circle; each rule module joins its declaration with its hooks
 * (`withHooks`), and the domains' in the registry, which hands them the tables a deletion purges.
 */
import * as v from 'valibot'
import { COMMON_FIELDS, defineEntity, ext, opts, requiredText, text, withDefaults } from '../entities/entity'
import { badRequest } from '../errors'
import { NIL_UUID } from '../ids'
import { METHODS, Uuid } from '../values'
import { email, login, roleList, roleName, uuid, uuidList } from './schemas'

const USER_OPTS = {
  email: v.optional(email),
  tags: v.optional(v.array(text(64))),
  self_registered: v.optional(v.boolean()),
}

/** Users (/rest/v1/domain/users): login unique per domain, write-only password, groups and roles. */
export const declaredUsers = defineEntity({
  name: 'user',
  // the password hash lives in a column of its own, so no read of the doc can leak it
  table: { table: 'users', objtype: 'user', columns: { login: 'login' }, hidden: { pwd_hash: 'pwd' } },
  path: '/rest/v1/domain/users',
  fields: [...COMMON_FIELDS, 'login', 'name', 'groups', 'roles', 'opts.email', 'opts.tags', 'opts.self_registered'],
  listFields: ['id', 'login', 'name', 'opts.title', 'opts.email', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'login'],
  create: {
    login,
    name: v.optional(text(255)),
    pwd: v.optional(v.string()),
    groups: v.optional(uuidList),
    roles: v.optional(roleList),
    opts: opts(USER_OPTS),
    ext,
  },
  doc: {
    name: v.string(),
    groups: uuidList,
    roles: roleList,
    // a self-registered account's opts are the domain's template as its administrator wrote it: any member.
    // Optional: a list leaves out opts without the members it lists (the first administrator's are empty)
    opts: v.optional(v.looseObject({ title: v.optional(v.string()), comment: v.optional(v.string()), ...USER_OPTS })),
  },
  // the password never reaches the doc: the users' prepare hook turns it into a hash in a hidden column
  virtual: ['pwd'],
  finish: (doc) => withDefaults(doc, { name: '', groups: [], roles: [] }),
})

/** Groups (/rest/v1/domain/groups): nested through `parents`, carrying roles; `members` are the users in them. */
export const declaredGroups = defineEntity({
  name: 'group',
  table: { table: 'groups', objtype: 'group', columns: { code: 'code' } },
  path: '/rest/v1/domain/groups',
  fields: [...COMMON_FIELDS, 'code', 'name', 'description', 'parents', 'roles'],
  listFields: ['id', 'code', 'name', 'description', 'parents', 'roles', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'code'],
  // moving or deleting a group refreshes the caches of all its deep users: seconds for a large one
  long: { patch: 'group change', remove: 'group deletion' },
  create: {
    code: requiredText(255),
    name: v.optional(text(255)),
    description: v.optional(text(4096)),
    parents: v.optional(uuidList),
    roles: v.optional(roleList),
    /** Users in the group: stored as each user's `groups`, accepted here for convenience. */
    members: v.optional(uuidList),
    opts: opts(),
    ext,
  },
  virtual: ['members'],
  doc: {
    description: v.string(),
    parents: uuidList,
    roles: roleList,
    members: v.pipe(v.array(Uuid), v.description('the users whose groups hold this one')),
  },
  finish: (doc) => withDefaults(doc, { description: '', parents: [], roles: [] }),
})

/** Roles every domain has without defining them. */
export const BUILTIN_ROLES = ['admin', 'user'] as const
export const isBuiltinRole = (name: string) => (BUILTIN_ROLES as readonly string[]).includes(name)

const route = v.strictObject({
  path: v.pipe(
    v.string(),
    v.regex(/^\/[A-Za-z0-9_\-./*:]*$/, 'a path pattern starts with / (use * for one segment, ** for any)'),
    v.maxLength(512),
  ),
  methods: v.pipe(
    v.array(v.picklist([...METHODS, 'WEBSOCKET', '*'], `methods are ${[...METHODS, 'WEBSOCKET'].join(', ')} or *`)),
    v.minLength(1),
  ),
})

const ROUTES = v.pipe(v.array(route), v.maxLength(500))

/**
 * Roles (/rest/v1/domain/roles): a named set of routes (path pattern + methods) a user or group
 * can hold, inheriting the routes of its parent. `admin` and `user` are built in: `admin` grants
 * everything in its domain, `user` the endpoints every signed-in user may call.
 */
export const declaredRoles = defineEntity({
  name: 'role',
  table: { table: 'roles', objtype: 'role', columns: { name: 'name' } },
  path: '/rest/v1/domain/roles',
  fields: [...COMMON_FIELDS, 'name', 'description', 'parent_id', 'routes'],
  listFields: ['id', 'name', 'description', 'parent_id', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'name'],
  create: {
    name: roleName,
    description: v.optional(text(4096)),
    parent_id: v.optional(uuid),
    routes: v.optional(ROUTES),
    opts: opts(),
    ext,
  },
  doc: { description: v.string(), parent_id: v.pipe(uuid, v.description('the nil UUID: no parent')), routes: ROUTES },
  finish(doc) {
    if (isBuiltinRole(doc.name)) throw badRequest(`name: ${BUILTIN_ROLES.join(' and ')} are built-in roles`, 'name')
    return withDefaults(doc, { description: '', parent_id: NIL_UUID, routes: [] })
  },
})

/** SIP accounts (/rest/v1/uc/sipusers): login, phone number, the user they belong to; the password is for administrators' eyes only. */
export const declaredSipusers = defineEntity({
  name: 'sipuser',
  table: {
    table: 'sipusers',
    objtype: 'sipuser',
    columns: { login: 'login', phonenumber: 'phonenumber', iduser: 'iduser' },
    secrets: ['pwd'],
  },
  path: '/rest/v1/uc/sipusers',
  domainKind: 'working',
  fields: [...COMMON_FIELDS, 'login', 'phonenumber', 'iduser', 'name'],
  listFields: ['id', 'login', 'phonenumber', 'iduser', 'name', 'opts.title', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'login', 'phonenumber'],
  create: {
    login: v.pipe(
      v.string(),
      v.regex(/^[A-Za-z0-9._@+-]{1,128}$/, 'a SIP login is 1 to 128 letters, digits and . _ @ + -'),
    ),
    phonenumber: v.optional(
      v.pipe(v.string(), v.regex(/^[0-9*#+]{1,32}$/, 'a phone number is up to 32 digits, * # +')),
    ),
    iduser: v.optional(uuid),
    pwd: v.optional(v.pipe(v.string(), v.maxLength(128))),
    name: v.optional(text(255)),
    opts: opts(),
    ext,
  },
  doc: {
    iduser: v.pipe(uuid, v.description('the nil UUID: the account belongs to no user')),
    pwd: v.optional(v.pipe(v.string(), v.description("administrators' eyes only"))),
  },
  finish: (doc) => withDefaults(doc, { iduser: NIL_UUID }),
})

/**
 * Domains (/rest/v1/domain/domains), served in the master domain: the working domains below it.
 * A domain row's `domain` column holds its parent's id ('' for the master domain).
 */
export const declaredDomains = defineEntity({
  name: 'domain',
  table: { table: 'domains', objtype: 'domain', columns: { name: 'name' } },
  path: '/rest/v1/domain/domains',
  domainKind: 'master',
  fields: [...COMMON_FIELDS, 'name', 'solution', 'opts.isblocked'],
  listFields: ['id', 'name', 'solution', 'opts.title', 'opts.isblocked', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'name'],
  create: {
    name: v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(253)),
    solution: v.optional(text(64)),
    opts: opts({ isblocked: v.optional(v.boolean()) }),
    ext,
  },
  finish: (doc) =>
    withDefaults({ ...doc, opts: withDefaults(doc.opts ?? {}, { isblocked: false }) }, { solution: 'platform' }),
  // a deletion purges everything the domain holds; the master domain's views wait for it too
  long: { remove: 'domain deletion', gatesOwnDomain: true },
})
