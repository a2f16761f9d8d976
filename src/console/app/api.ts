/** Calls of the REST API from the console: same origin, the session cookie, JSON in and out. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    /** The error body's `error_details`. */
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
  }
}

export interface Answer<T> {
  data: T
  status: number
  headers: Headers
}

export const API = '/rest/v1'

export async function call<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json', ...headers } }
  // a form's files go as multipart/form-data, the browser writing its boundary
  if (body instanceof FormData) init.body = body
  else if (body !== undefined) {
    ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
    init.body = JSON.stringify(body)
  }
  const res = await fetch(url, init)
  const text = await res.text()
  let data: unknown = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = text
  }
  if (!res.ok) {
    const error = (data ?? {}) as { error_message?: string; error_details?: { field?: string } }
    const { error_details: details } = error
    throw new ApiError(res.status, error.error_message ?? `HTTP ${res.status}`, details?.field, details)
  }
  return { data: data as T, status: res.status, headers: res.headers }
}

/** A query string of the parameters that are set. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s ? `?${s}` : ''
}

export const errorText = (err: unknown): string =>
  err instanceof ApiError
    ? `${err.message}${err.field ? ` (${err.field})` : ''}`
    : err instanceof Error
      ? err.message
      : String(err)
