/**
 * An answer before it is a Response (made by ./hooks/answers.ts). The gateway, which answers
 * in-process, writes it as bytes itself (src/gateway/inline.ts): for its requests the Response
 * carries no headers or body of its own, only this. A module of its own, since the call (./req.ts)
 * and the gateway's requests (./inline-request.ts) hold it, and the answering hook reads them.
 */
export interface Answer {
  status: number
  headers: Record<string, string>
  cookies: string[]
  /** The body; a Response of the route's own (a file, a page) carries its body, status and headers itself. */
  body: string | Uint8Array | null | Response
  /** Bytes of the body as sent (compressed when it was); of a text, its length in UTF-8. */
  bytes: number
}
