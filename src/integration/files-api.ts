/**
 * The routes of channel files (/rest/v1/fs/targets/token; the area itself: ./files.ts) and who may
 * use them, decided in one place, `filesContext`.
 */
import { filePath, listFiles, type StoredFile, statFile } from '~storage/files'
import * as v from 'valibot'
import type { Ctx } from '../context'
import { ApiError, badRequest, forbidden, notFound } from '../errors'
import { NOT_FOUND } from '../http/collection-schemas'
import { parseBoolParam, parseListParams } from '../query/list-query'
import { applyListQuery } from '../query/list-memory'
import { present } from '../query/present'
import type { Req } from '../http/req'
import { BoolParam, LIST_PARAMS, NoQuery, queryOf } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer, ANY_MEDIA, errors, NoContent } from '../http/schemas'
import { rolesGrant } from '../http/authenticate'
import { channels } from './channels'
import { removeCounted, writeCounted } from './file-quota'
import {
  attachmentDisposition,
  chunksOf,
  contentTypeOf,
  dirOf,
  drainSize,
  fileName,
  listShape,
  listTime,
  nameProblem,
  written,
} from './files'
import { formDataBoundary, MultipartReader } from './multipart'

/**
 * The one access decision of the area. Routes admit any signed-in caller (`access: 'session'`) and
 * come here: users (and scripts, through their host API) need a role granting the method on the
 * path, as `permission` routes do (domain administrators always); a channel token (actor type
 * 'integration') when its channel has `opts.allow_files_api`.
 */
export async function filesContext(req: Req): Promise<Ctx> {
  const ctx = req.ctx
  // HEAD reads what GET reads: a role granting GET grants it
  const method = req.method === 'HEAD' ? 'GET' : req.method
  switch (ctx.actor.type) {
    case 'user':
    case 'script':
    case 'system':
      if (await rolesGrant(req, ctx.domain, ctx.roles, method)) return ctx
      throw forbidden(`no role of this session grants ${req.method} ${req.path}`)
    case 'integration': {
      const channel = await req.deps.repo(channels.table).get(ctx.domain, ctx.actor.id)
      if ((channel?.opts as { allow_files_api?: boolean } | undefined)?.allow_files_api === true) return ctx
      throw forbidden('channel files are open only to channels with opts.allow_files_api')
    }
  }
}

/** A file as the list presents it (a mask may leave members out). */
const Listed = v.strictObject({
  name: v.string(),
  size: v.pipe(v.number(), v.description('bytes')),
  last_modified: v.pipe(v.string(), v.description('YYYY-MM-DD HH:MM:SS, UTC')),
})

/** A file in the path: checked by `fileName`, after the caller was let in (a 403 tells nothing of names). */
const NameParams = v.object({ name: v.pipe(v.string(), v.description('the file name (NFC), no / or \\')) })

/** The bytes of a file, of the type its name gives (text/plain, image/png, ...). */
const FileBody = answer(
  v.pipe(v.string(), v.description('the bytes of the file, of the Content-Type its name gives')),
  ANY_MEDIA,
)

const WHO = 'Domain users whose role grants the method on the path; channels with `opts.allow_files_api`.'

export const listFilesRoute = defineRoute({
  access: 'session',
  summary: "List the domain's files",
  description: `Name, size and time of each, filtered, ordered and paged like any list. ${WHO}`,
  // the list is read whole from the directory: no count, no keyset paging
  query: queryOf({
    filter: LIST_PARAMS.filter,
    mask: LIST_PARAMS.mask,
    order: LIST_PARAMS.order,
    offset: LIST_PARAMS.offset,
    limit: LIST_PARAMS.limit,
    flat: LIST_PARAMS.flat,
  }),
  response: { 200: answer(v.array(Listed)) },
  async handle(req) {
    const ctx = await filesContext(req)
    const { query, mask, flat } = parseListParams(req.query, listShape)
    const docs = (await listFiles(dirOf(ctx))).map((f) => ({
      name: f.name,
      size: f.size,
      last_modified: listTime(f.mtimeMs),
    }))
    return applyListQuery(docs, query, 'name').map((d) => present(d, mask, flat))
  },
})

const UploadResult = v.strictObject({
  name: v.string(),
  size: v.pipe(v.number(), v.description('bytes received')),
  status: v.pipe(
    v.picklist(['ok', 'exists', 'invalid_name', 'over_quota']),
    v.description(
      "ok: stored; exists: a file of the name is kept as it was; invalid_name: refused; over_quota: the domain's quota is full",
    ),
  ),
})
type UploadResult = v.InferOutput<typeof UploadResult>

/**
 * POST: every file part is stored under its own file name, never over an existing file. Answers 200
 * with each file's result when at least one was stored; otherwise the error of the first failure
 * (409 `exists`, 400 `invalid_name`, 507 `over_quota`) with the results in `error_details.files`.
 */
export const uploadFilesRoute = defineRoute({
  access: 'session',
  summary: 'Upload files',
  description:
    'multipart/form-data: each file part is stored under its file name, never over an existing file. 200 with ' +
    "each file's result when one was stored; else the first failure's 409 (exists), 400 (invalid name) or 507 " +
    "(the domain's files quota, FILES_QUOTA_BYTES or FILES_QUOTA_FILES, is full), with " +
    `the results in \`error_details.files\`. ${WHO}`,
  parse: 'none', // streamed to disk, multipart
  maxBody: 'files',
  query: NoQuery,
  response: { 200: answer(v.array(UploadResult)), ...errors(409, 507) },
  async handle(req) {
    const ctx = await filesContext(req)
    const boundary = formDataBoundary(req.header('content-type'))
    if (!boundary) throw badRequest('an upload of files is multipart/form-data', 'Content-Type')
    const dir = dirOf(ctx)
    const parts = new MultipartReader(req.stream(req.bodyLimit), boundary)
    const results: UploadResult[] = []
    let overQuota: ApiError | undefined
    try {
      for (let head = await parts.next(); head; head = await parts.next()) {
        if (head.filename === null) continue // a plain form field
        const name = head.filename.normalize('NFC')
        if (nameProblem(name)) {
          results.push({ name, size: await drainSize(parts.body()), status: 'invalid_name' })
          continue
        }
        // an existing name is not even written (link() below still settles a race between two uploads)
        const { size, placed, refused } = (await statFile(dir, name))
          ? { size: await drainSize(parts.body()), placed: false, refused: undefined }
          : await written(ctx, () => writeCounted(ctx, dir, name, parts.body(), 'create'))
        overQuota ??= refused
        results.push({ name, size, status: placed ? 'ok' : refused ? 'over_quota' : 'exists' })
      }
    } finally {
      await parts.cancel()
    }
    if (results.length === 0) throw badRequest('the upload holds no file part (a part with a filename)', 'file')
    if (results.some((r) => r.status === 'ok')) return results
    const first = results[0]!
    const details = { field: 'name', files: results }
    if (first.status === 'exists') throw new ApiError(409, `file ${first.name} already exists`, details)
    if (first.status === 'over_quota')
      throw new ApiError(507, overQuota!.message, { ...overQuota!.details, ...details })
    throw new ApiError(400, `name: ${nameProblem(first.name)}`, details)
  },
})

/** GET and HEAD: the file, with its type, length and time; `attachment=true` adds Content-Disposition. */
export const readFileRoute = defineRoute({
  access: 'session',
  summary: 'Download a file',
  description: `The file with its type, length and time; \`attachment=true\` adds a Content-Disposition naming it. ${WHO}`,
  params: NameParams,
  query: queryOf({ attachment: v.optional(BoolParam) }),
  response: { 200: FileBody, ...NOT_FOUND },
  async handle(req) {
    const ctx = await filesContext(req)
    const name = fileName(req.params.name)
    const attachment = parseBoolParam(req.query.attachment, 'attachment')
    const dir = dirOf(ctx)
    const file: StoredFile | null = await statFile(dir, name)
    if (!file) throw notFound(`file ${name} not found`)
    const headers: Record<string, string> = {
      'content-type': contentTypeOf(name),
      'last-modified': new Date(file.mtimeMs).toUTCString(),
      // shown inline (HTML, SVG) it is a document of an origin of its own with no script: an
      // uploader's page must not act as the service's own for whoever opens the link
      'content-security-policy': "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'",
    }
    if (attachment) headers['content-disposition'] = attachmentDisposition(name)
    // HEAD: the length of the body a GET would send, and no body
    if (req.isHead) return new Response(null, { headers: { ...headers, 'content-length': String(file.size) } })
    return new Response(Bun.file(filePath(dir, name)), { headers })
  },
})

/** PUT: creates or replaces the file from the raw body, or from the first file part of a multipart body. */
export const putFileRoute = defineRoute({
  access: 'session',
  summary: 'Create or replace a file',
  description: `From the raw body, or from the first file part of a multipart/form-data body. ${WHO}`,
  parse: 'none', // streamed to disk
  maxBody: 'files',
  params: NameParams,
  query: NoQuery,
  response: { 204: NoContent, ...errors(507) },
  async handle(req) {
    const ctx = await filesContext(req)
    const name = fileName(req.params.name)
    const boundary = formDataBoundary(req.header('content-type'))
    const body = req.stream(req.bodyLimit)
    const put = async (chunks: AsyncIterable<Uint8Array>) => {
      const { refused } = await written(ctx, () => writeCounted(ctx, dirOf(ctx), name, chunks, 'replace'))
      if (refused) throw refused
    }
    if (!boundary) {
      await put(chunksOf(body))
      return undefined
    }
    const parts = new MultipartReader(body, boundary)
    try {
      let head = await parts.next()
      while (head && head.filename === null) head = await parts.next()
      if (!head) throw badRequest('the multipart body holds no file part (a part with a filename)', 'file')
      await put(parts.body())
    } finally {
      await parts.cancel()
    }
    return undefined
  },
})

export const deleteFileRoute = defineRoute({
  access: 'session',
  summary: 'Delete a file',
  description: WHO,
  params: NameParams,
  query: NoQuery,
  response: { 204: NoContent, ...NOT_FOUND },
  async handle(req) {
    const ctx = await filesContext(req)
    const name = fileName(req.params.name)
    if (!(await removeCounted(ctx, dirOf(ctx), name))) throw notFound(`file ${name} not found`)
    return undefined
  },
})
