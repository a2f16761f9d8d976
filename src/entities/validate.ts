/** Runs a valibot schema over request input and turns the first issue into a 400 naming the field. */
import * as v from 'valibot'
import { badRequest } from '../errors'

export function issuePath(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((p) => String(p.key)).join('.')
}

/** The issue as a sentence a client can act on: unknown fields and wrong types say so plainly. */
function describe(issue: v.BaseIssue<unknown>, path: string): string {
  if (issue.expected === 'never' && issue.kind === 'schema') return `unknown field '${path}'`
  if (issue.received === 'undefined') return `${path} is required`
  return `${path}: ${issue.message}`
}

/** The 400 an issue is answered with: the field it is about, or `what` (body, query) for the whole. */
export function describeIssue(issue: v.BaseIssue<unknown>, what = 'body') {
  const path = issuePath(issue)
  if (!path) return badRequest(`${what}: ${issue.message}`, what)
  return badRequest(describe(issue, path), path)
}

export function validate<S extends v.GenericSchema>(schema: S, input: unknown, what = 'body'): v.InferOutput<S> {
  const result = v.safeParse(schema, input)
  if (result.success) return result.output
  throw describeIssue(result.issues[0], what)
}
