/** JSON responses with the service's content type and request id. */

export const JSON_TYPE = 'application/json; charset=utf-8'

/** A JSON document already serialized (a stored doc passed through unparsed). */
export class JsonText {
  constructor(readonly text: string) {}
}

export function jsonResponse(body: unknown, status: number, headers: Record<string, string>): Response {
  const text = body instanceof JsonText ? body.text : JSON.stringify(body)
  return new Response(text, { status, headers: { 'content-type': JSON_TYPE, ...headers } })
}
