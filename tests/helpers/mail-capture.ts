/** A local stand-in for the Resend API (RESEND_BASE_URL points here): records what the service sends. */

export interface CapturedMail {
  from: string
  to: string | string[]
  subject: string
  text: string
  html: string
  authorization: string | null
  idempotencyKey: string | null
}

export async function startMailCapture() {
  const mails: CapturedMail[] = []
  let failing = false
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      if (req.method !== 'POST' || new URL(req.url).pathname !== '/emails')
        return new Response('not found', { status: 404 })
      if (failing)
        return Response.json(
          { name: 'internal_server_error', message: 'capture server told to fail', statusCode: 500 },
          { status: 500 },
        )
      const body = (await req.json()) as Omit<CapturedMail, 'authorization' | 'idempotencyKey'>
      mails.push({
        ...body,
        authorization: req.headers.get('authorization'),
        idempotencyKey: req.headers.get('idempotency-key'),
      })
      return Response.json({ id: `captured-${mails.length}` })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    mails,
    /** Mails to one address, oldest first. */
    to: (address: string) => mails.filter((m) => [m.to].flat().includes(address)),
    setFailing(on: boolean) {
      failing = on
    },
    /** The first link to one of the service's pages in a mail. */
    linkIn: (mail: CapturedMail) => /https?:\/\/\S+\/pages\/[a-z-]+\?id=[0-9a-f-]{36}/.exec(mail.text)?.[0],
    stop: () => server.stop(true),
  }
}
