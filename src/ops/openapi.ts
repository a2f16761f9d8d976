/**
 * The API description (OpenAPI 3.1), made from the routes' own declarations: each route file's
 * specs (schemas of parameters, query, body and every answer; summary; who may call it), tagged
 * by area; for a signed-in caller, each model class of its domain as collection and record paths
 * of their own with the class's properties as the schema (./openapi-classes.ts). Made by hand
 * rather than by Elysia's OpenAPI plugin: the plugin reads Elysia's routes, which hold no LOOKUP,
 * SYNC or CLEAR that a client can send, no per-caller classes, and no named components.
 */
import type * as v from 'valibot'
import pkg from '../../package.json' with { type: 'json' }
import { OVERRIDE_METHODS } from '../http/route'
import type { DeclaredEntry } from '../http/route-declaration'
import { METHODS, type Method, nameOf } from '../values'
import type { ClassModel } from '../model/class-model'
import { classPaths } from './openapi-classes'
import { type Components, type Json, jsonSchema, operationOf } from './openapi-operation'

/** What each area of the API holds, as the description tells it. */
const AREAS: Record<string, string> = {
  api: "This description, and the websocket's (AsyncAPI)",
  iam: 'Sessions, passwords, invitations and self-registration',
  user: "The signed-in user's own data and callback orders",
  domain: 'Domains, the directory (users, groups, roles, caches), projects, settings and product layers',
  uc: 'SIP accounts',
  reference: 'External objects',
  design: 'The data model: classes',
  model: "Records of the data model's classes",
  journal: 'The change journal',
  service: 'Service scripts, tasks, integration channels, webhooks and events',
  fs: "Integration channels' files",
  integration: 'Incoming requests to integration channels',
  master: 'Master domain: nodes, licence, border rules',
  operations: 'Liveness, readiness and metrics',
}

/** The area of a URL: the folder after /rest/v1 (a file there is a description: `api`), else operations. */
function areaOf(url: string): string {
  const parts = url.split('/')
  if (parts[1] !== 'rest') return 'operations'
  return parts.length > 4 ? parts[3]! : 'api'
}

/** `/a/:id/*` -> `/a/{id}/{path}` and the names of its parameters. */
export function openApiPath(url: string): { path: string; params: string[] } {
  const params: string[] = []
  const path = url
    .split('/')
    .map((seg) => {
      const name = seg === '*' ? 'path' : seg.startsWith(':') ? seg.slice(1) : undefined
      if (name === undefined) return seg
      params.push(name)
      return `{${name}}`
    })
    .join('/')
  return { path, params }
}

/**
 * Where an operation is described. LOOKUP, SYNC and CLEAR are no OpenAPI methods: each is a `post`
 * under the path with `#METHOD` after it, which a client's URL drops (a fragment) and which keeps it
 * apart from the POST of the same path; its X-HTTP-Method-Override header names the method.
 */
export const pathKeyOf = (path: string, method: Method) => (OVERRIDE_METHODS.has(method) ? `${path}#${method}` : path)

/** `Read a user` -> `readAUser`: an operation id from its summary. */
const camel = (text: string) =>
  text
    .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))
    .replace(/^./, (c) => c.toLowerCase())

/** Components the document names: each named schema once, referred to wherever it is used. */
function componentsOf(schemas: Json): Components {
  const made = new Map<string, object>()
  return {
    ref(schema: v.GenericSchema) {
      const name = nameOf(schema)
      if (!name) return undefined
      if (!made.has(name)) {
        made.set(name, schema)
        schemas[name] = jsonSchema(schema)
      }
      return { $ref: `#/components/schemas/${name}` }
    },
    define(name, schema) {
      schemas[name] = schema
    },
  }
}

export function openApiDocument(routes: readonly DeclaredEntry[], classes: ClassModel[] = []): Json {
  const paths: Record<string, Json> = {}
  const schemas: Json = {}
  const components = componentsOf(schemas)
  const ids = new Set<string>()
  const idFor = (summary: string, method: string, path: string) => {
    let id = camel(summary)
    if (ids.has(id)) id = camel(`${method} ${path}`)
    ids.add(id)
    return id
  }
  const tags = new Set<string>()
  for (const entry of routes) {
    const { path, params } = openApiPath(entry.url)
    for (const method of METHODS) {
      const spec = entry.module[method]
      if (!spec || method === 'HEAD' || spec.hook.detail.hide) continue
      const tag = areaOf(entry.url)
      tags.add(tag)
      const key = pathKeyOf(path, method)
      const verb = OVERRIDE_METHODS.has(method) ? 'post' : method.toLowerCase()
      const id = idFor(spec.hook.detail.summary, method, path)
      paths[key] = { ...paths[key], [verb]: operationOf(spec, method, tag, id, params, components) }
    }
  }
  for (const [key, item] of Object.entries(classPaths(classes, components, idFor))) {
    paths[key] = item
    tags.add('model')
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Platform service',
      version: pkg.version,
      description:
        `${pkg.description}. Sign in with POST /rest/v1/iam/sessions; send the session token as ` +
        '`Authorization: Bearer <token>` or keep the RSession cookie. Errors are `{error_code, error_message, ' +
        'error_details}`; error_details.field names the part at fault. LOOKUP, SYNC and CLEAR are sent as POST with ' +
        'X-HTTP-Method-Override naming them (their paths here end in #LOOKUP, #SYNC, #CLEAR: a fragment, which a ' +
        'client does not send). The websocket /ws is described by /rest/v1/asyncapi.json.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'this service' }],
    security: [{ bearer: [] }, { cookie: [] }],
    tags: [...tags].sort().map((name) => ({ name, description: AREAS[name] ?? name })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'a session token or an integration channel token' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'RSession', description: 'the session cookie of a sign-in' },
      },
    },
  }
}
