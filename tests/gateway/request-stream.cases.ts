// The table the RequestStream test replays: inputs with the exact bytes the gateway sends upstream,
// holds after an upgrade, its failure status, and whether a head is still pending.
import { type FailStatus, MAX_CHUNK_SIZE_DIGITS, MAX_HEAD_BYTES } from '~/gateway/request-stream'

export const IP = 'X-Real-IP: 203.0.113.7\r\n'
/** Small, so cases can show both sides of the limit. */
export const BODY_LIMIT = 64

export interface Outcome {
  /** Everything sent upstream, in order (latin1, so any byte shows). */
  out: string
  fail?: FailStatus
  /** Bytes held after an upgrade request went upstream. */
  held?: string
  /** A head has started but not ended (the front's 408 sweep watches these). */
  waiting: boolean
}

export interface Case extends Outcome {
  name: string
  input: string
  maxBodyBytes?: number
  /** Play the app refusing the upgrade: the held bytes are parsed again. */
  declineUpgrade?: boolean
}

export const bytes = (s: string) => Buffer.from(s, 'latin1')
export const expected = (c: Case): Outcome => ({
  out: c.out,
  ...(c.fail ? { fail: c.fail } : {}),
  ...(c.held !== undefined ? { held: c.held } : {}),
  waiting: c.waiting,
})

const pad = (headLength: number) => {
  const fixed = 'GET / HTTP/1.1\r\nX-Pad: \r\n\r\n'
  return `GET / HTTP/1.1\r\nX-Pad: ${'a'.repeat(headLength - fixed.length)}\r\n\r\n`
}
export const chunkedHead = 'POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n'
const chunkedOut = `POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n${IP}\r\n`
const ok = { waiting: false }
const bad = { fail: 400 as const, waiting: false }

/** Heads refused with 400 before any of their bytes are passed on. */
const badHeads: [name: string, input: string][] = [
  ['a method with a non-token character', 'GE(T / HTTP/1.1\r\n\r\n'],
  ['a request line without a space', 'GET\r\nHost: x y\r\n\r\n'],
  ['a request line starting with a space', ' GET / HTTP/1.1\r\n\r\n'],
  ['an empty header name', 'GET / HTTP/1.1\r\n: x\r\n\r\n'],
  ['a space before the colon', 'GET / HTTP/1.1\r\nHost : x\r\n\r\n'],
  ['a tab before the colon', 'GET / HTTP/1.1\r\nHost\t: x\r\n\r\n'],
  ['obs-fold with a space', 'GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n'],
  ['obs-fold with a tab', 'GET / HTTP/1.1\r\nX-A: 1\r\n\tfolded\r\n\r\n'],
  ['a bare LF ending a line', 'GET / HTTP/1.1\nHost: x\r\n\r\n'],
  ['a bare CR inside a line', 'GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n'],
  ['two equal Content-Length headers', 'POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx'],
  ['conflicting Content-Length headers', 'POST / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 2\r\n\r\nxy'],
  ['a Content-Length list', 'POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx'],
  ['a signed Content-Length', 'POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\nx'],
  ['a 16-digit Content-Length', 'POST / HTTP/1.1\r\nContent-Length: 1000000000000000\r\n\r\n'],
  ['Transfer-Encoding: gzip', 'POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n'],
  ['Transfer-Encoding: gzip, chunked', 'POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'],
  [
    'Transfer-Encoding twice',
    'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  ],
  [
    'Content-Length then Transfer-Encoding',
    'POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  ],
  [
    'Transfer-Encoding then Content-Length, on LOOKUP',
    'LOOKUP / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n',
  ],
]

export const cases: Case[] = [
  // single requests
  { name: 'a GET without headers', input: 'GET / HTTP/1.1\r\n\r\n', out: `GET / HTTP/1.1\r\n${IP}\r\n`, ...ok },
  {
    name: 'a GET with headers: X-Real-IP goes last',
    input: 'GET /a?b=c HTTP/1.1\r\nHost: test.local\r\nAccept: */*\r\n\r\n',
    out: `GET /a?b=c HTTP/1.1\r\nHost: test.local\r\nAccept: */*\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'a Content-Length body passes untouched, even when it looks like a request',
    input: 'POST /a HTTP/1.1\r\nContent-Length: 22\r\n\r\nLOOKUP /x HTTP/1.1\r\n\r\n',
    out: `POST /a HTTP/1.1\r\nContent-Length: 22\r\n${IP}\r\nLOOKUP /x HTTP/1.1\r\n\r\n`,
    ...ok,
  },
  {
    name: 'Content-Length: 000 is an empty body; whitespace around the value is allowed',
    input: 'POST /a HTTP/1.1\r\ncontent-length: 000\r\n\r\nPOST /b HTTP/1.1\r\nCONTENT-LENGTH:\t3 \r\n\r\nabc',
    out: `POST /a HTTP/1.1\r\ncontent-length: 000\r\n${IP}\r\nPOST /b HTTP/1.1\r\nCONTENT-LENGTH:\t3 \r\n${IP}\r\nabc`,
    ...ok,
  },
  {
    name: 'a body that has not fully arrived is passed on as it comes',
    input: 'POST /a HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc',
    out: `POST /a HTTP/1.1\r\nContent-Length: 10\r\n${IP}\r\nabc`,
    ...ok,
  },
  {
    name: 'pipelined GET, POST, LOOKUP, GET',
    input:
      'GET /1 HTTP/1.1\r\n\r\nPOST /2 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc' +
      'LOOKUP /3 HTTP/1.1\r\nContent-Length: 3\r\n\r\n"k"GET /4 HTTP/1.1\r\n\r\n',
    out:
      `GET /1 HTTP/1.1\r\n${IP}\r\nPOST /2 HTTP/1.1\r\nContent-Length: 3\r\n${IP}\r\nabc` +
      `POST /3 HTTP/1.1\r\nContent-Length: 3\r\nX-HTTP-Method-Override: LOOKUP\r\n${IP}\r\n"k"GET /4 HTTP/1.1\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'blank lines between requests are passed on',
    input: 'GET /1 HTTP/1.1\r\n\r\n\r\n\r\nGET /2 HTTP/1.1\r\n\r\n',
    out: `GET /1 HTTP/1.1\r\n${IP}\r\n\r\n\r\nGET /2 HTTP/1.1\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'a CRLF after a body (some clients send one) leaves no head pending',
    input: 'POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\nx\r\n',
    out: `POST /a HTTP/1.1\r\nContent-Length: 1\r\n${IP}\r\nx\r\n`,
    ...ok,
  },
  {
    name: 'an incomplete head is held back, not passed on',
    input: 'GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n',
    out: `GET /1 HTTP/1.1\r\n${IP}\r\n`,
    waiting: true,
  },

  // LOOKUP, SYNC, CLEAR
  {
    name: 'LOOKUP with a body becomes POST + override',
    input: 'LOOKUP /rest/v1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n"key"',
    out: `POST /rest/v1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nX-HTTP-Method-Override: LOOKUP\r\n${IP}\r\n"key"`,
    ...ok,
  },
  {
    name: 'SYNC with a chunked body',
    input: 'SYNC /s HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    out: `POST /s HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX-HTTP-Method-Override: SYNC\r\n${IP}\r\n3\r\nabc\r\n0\r\n\r\n`,
    ...ok,
  },
  {
    name: 'CLEAR without headers',
    input: 'CLEAR /c HTTP/1.1\r\n\r\n',
    out: `POST /c HTTP/1.1\r\nX-HTTP-Method-Override: CLEAR\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'methods are case-sensitive: lookup and LOOKUPS are not rewritten',
    input: 'lookup /x HTTP/1.1\r\n\r\nLOOKUPS /x HTTP/1.1\r\n\r\n',
    out: `lookup /x HTTP/1.1\r\n${IP}\r\nLOOKUPS /x HTTP/1.1\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'a client-sent override on POST passes as sent (clients may use that form)',
    input: 'POST /x HTTP/1.1\r\nX-HTTP-Method-Override: CLEAR\r\n\r\n',
    out: `POST /x HTTP/1.1\r\nX-HTTP-Method-Override: CLEAR\r\n${IP}\r\n`,
    ...ok,
  },

  // chunked bodies
  {
    name: 'chunk extensions and trailers pass untouched (trailers are not heads), then the next request',
    input:
      chunkedHead +
      '5;ext=1\r\nhello\r\nA;a=b;c="d"\r\n0123456789\r\n0;last\r\nX-Real-IP: 6.6.6.6\r\nUpgrade: x\r\n\r\n' +
      'GET /next HTTP/1.1\r\n\r\n',
    out:
      chunkedOut +
      '5;ext=1\r\nhello\r\nA;a=b;c="d"\r\n0123456789\r\n0;last\r\nX-Real-IP: 6.6.6.6\r\nUpgrade: x\r\n\r\n' +
      `GET /next HTTP/1.1\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'chunk data made of CRLFs is counted, not parsed',
    input: `${chunkedHead}4\r\n\r\n\r\n\r\n0\r\n\r\n`,
    out: `${chunkedOut}4\r\n\r\n\r\n\r\n0\r\n\r\n`,
    ...ok,
  },
  {
    name: 'Transfer-Encoding in any case, upper-case hex sizes',
    input: `POST /c HTTP/1.1\r\nTRANSFER-ENCODING: Chunked\r\n\r\nF\r\n${'y'.repeat(15)}\r\n0\r\n\r\n`,
    out: `POST /c HTTP/1.1\r\nTRANSFER-ENCODING: Chunked\r\n${IP}\r\nF\r\n${'y'.repeat(15)}\r\n0\r\n\r\n`,
    ...ok,
  },
  {
    name: 'a chunk of exactly the body limit',
    input: `${chunkedHead}40\r\n${'x'.repeat(64)}\r\n0\r\n\r\n`,
    out: `${chunkedOut}40\r\n${'x'.repeat(64)}\r\n0\r\n\r\n`,
    ...ok,
  },
  {
    name: `a chunk size of ${MAX_CHUNK_SIZE_DIGITS} digits, leading zeros included`,
    input: `${chunkedHead}${'5'.padStart(MAX_CHUNK_SIZE_DIGITS, '0')}\r\nhello\r\n0\r\n\r\n`,
    out: `${chunkedOut}${'5'.padStart(MAX_CHUNK_SIZE_DIGITS, '0')}\r\nhello\r\n0\r\n\r\n`,
    ...ok,
  },
  {
    name: 'the largest chunk size that fits the digit bound stays exact (2^52 - 1, under a body limit above it)',
    maxBodyBytes: Number.MAX_SAFE_INTEGER,
    input: `${chunkedHead}${'f'.repeat(MAX_CHUNK_SIZE_DIGITS)}\r\nabc`,
    out: `${chunkedOut}${'f'.repeat(MAX_CHUNK_SIZE_DIGITS)}\r\nabc`,
    ...ok,
  },

  // upgrades
  {
    name: 'an Upgrade as the first request without a body: later bytes are held, unparsed',
    input: 'GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hiLOOKUP /x HTTP/1.1\r\n\r\n',
    out: `GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n${IP}\r\n`,
    held: '\x81\x02hiLOOKUP /x HTTP/1.1\r\n\r\n',
    ...ok,
  },
  {
    name: 'a declined upgrade: parsing resumes, and a second Upgrade is renamed',
    declineUpgrade: true,
    input:
      'GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\nLOOKUP /x HTTP/1.1\r\n\r\n' +
      'GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n',
    out:
      `GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n${IP}\r\nPOST /x HTTP/1.1\r\nX-HTTP-Method-Override: LOOKUP\r\n${IP}\r\n` +
      `GET /ws HTTP/1.1\r\nX-Upgrd: websocket\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'an Upgrade on a later request is renamed and not honoured',
    input: 'GET /1 HTTP/1.1\r\n\r\nGET /ws HTTP/1.1\r\nupgrade: websocket\r\n\r\nGET /3 HTTP/1.1\r\n\r\n',
    out: `GET /1 HTTP/1.1\r\n${IP}\r\nGET /ws HTTP/1.1\r\nX-Upgrd: websocket\r\n${IP}\r\nGET /3 HTTP/1.1\r\n${IP}\r\n`,
    ...ok,
  },
  {
    name: 'an Upgrade on a request with a body is renamed and not honoured',
    input: 'POST /ws HTTP/1.1\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\nhiGET / HTTP/1.1\r\n\r\n',
    out: `POST /ws HTTP/1.1\r\nX-Upgrd: h2c\r\nContent-Length: 2\r\n${IP}\r\nhiGET / HTTP/1.1\r\n${IP}\r\n`,
    ...ok,
  },

  // the client address
  {
    name: 'every client-sent X-Real-IP is renamed in place; similar names are left alone',
    input: 'LOOKUP / HTTP/1.1\r\nX-Real-IP: 6.6.6.6\r\nx-real-ip: 7.7.7.7\r\nX-Real-IPs: keep\r\n\r\n',
    out:
      'POST / HTTP/1.1\r\nX-Untr-IP: 6.6.6.6\r\nX-Untr-IP: 7.7.7.7\r\nX-Real-IPs: keep\r\n' +
      `X-HTTP-Method-Override: LOOKUP\r\n${IP}\r\n`,
    ...ok,
  },

  // malformed heads: 400, after passing on what came before
  ...badHeads.map(([name, input]): Case => ({ name, input, out: '', ...bad })),
  {
    name: 'a header line without a colon, after a good request',
    input: 'GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\nbad header\r\n\r\n',
    out: `GET /1 HTTP/1.1\r\n${IP}\r\n`,
    ...bad,
  },

  // malformed chunked framing: 400 at the offending byte, everything before it passed on
  { name: 'a chunk size that is not hex', input: `${chunkedHead}zz\r\n`, out: chunkedOut, ...bad },
  { name: 'an empty chunk size', input: `${chunkedHead}\r\nhello`, out: chunkedOut, ...bad },
  { name: 'a space after the chunk size', input: `${chunkedHead}5 \r\nhello`, out: `${chunkedOut}5`, ...bad },
  { name: 'a chunk size line ending in a bare LF', input: `${chunkedHead}5\nhello`, out: `${chunkedOut}5`, ...bad },
  { name: 'a chunk extension ending in a bare LF', input: `${chunkedHead}5;a\nhello`, out: `${chunkedOut}5;a`, ...bad },
  {
    name: 'chunk data not followed by CRLF',
    input: `${chunkedHead}5\r\nhello!\r\n`,
    out: `${chunkedOut}5\r\nhello`,
    ...bad,
  },
  {
    name: 'a trailer line ending in a bare LF',
    input: `${chunkedHead}0\r\nX-T: 1\nGET / HTTP/1.1\r\n\r\n`,
    out: `${chunkedOut}0\r\nX-T: 1`,
    ...bad,
  },
  {
    name: `more than ${MAX_CHUNK_SIZE_DIGITS} chunk size digits, even leading zeros`,
    input: `${chunkedHead}${'5'.padStart(MAX_CHUNK_SIZE_DIGITS + 1, '0')}\r\nhello\r\n0\r\n\r\n`,
    out: chunkedOut + '0'.repeat(MAX_CHUNK_SIZE_DIGITS),
    ...bad,
  },
  {
    name: 'the digit bound holds whatever the body limit',
    maxBodyBytes: Number.MAX_SAFE_INTEGER,
    input: `${chunkedHead}${'f'.repeat(MAX_CHUNK_SIZE_DIGITS + 1)}\r\n`,
    out: chunkedOut + 'f'.repeat(MAX_CHUNK_SIZE_DIGITS),
    ...bad,
  },

  // a declared length over the body limit: 413 at its head, which is not passed on
  {
    name: 'a Content-Length one byte over the body limit, after a request within it',
    input: `POST /a HTTP/1.1\r\nContent-Length: 64\r\n\r\n${'x'.repeat(64)}POST /b HTTP/1.1\r\nContent-Length: 65\r\n\r\nx`,
    out: `POST /a HTTP/1.1\r\nContent-Length: 64\r\n${IP}\r\n${'x'.repeat(64)}`,
    fail: 413,
    waiting: false,
  },

  // chunks over the body limit: 413 at the digit that passes it
  {
    name: 'a chunk one byte over the body limit',
    input: `${chunkedHead}41\r\n${'x'.repeat(65)}\r\n0\r\n\r\n`,
    out: `${chunkedOut}4`,
    fail: 413,
    waiting: false,
  },
  {
    name: 'a chunk size far above 2^53, after a good chunk and on SYNC',
    input: `SYNC /s HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\nfffffffffffffffffff\r\n`,
    out: `POST /s HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX-HTTP-Method-Override: SYNC\r\n${IP}\r\n1\r\nx\r\nf`,
    fail: 413,
    waiting: false,
  },

  // head size
  {
    name: 'a head of exactly MAX_HEAD_BYTES',
    input: pad(MAX_HEAD_BYTES),
    out: pad(MAX_HEAD_BYTES).replace(/\r\n$/, `${IP}\r\n`),
    ...ok,
  },
  {
    name: 'a head one byte over MAX_HEAD_BYTES: 431, after a good request',
    input: `GET /1 HTTP/1.1\r\n\r\n${pad(MAX_HEAD_BYTES + 1)}`,
    out: `GET /1 HTTP/1.1\r\n${IP}\r\n`,
    fail: 431,
    waiting: false,
  },
  {
    name: 'an unfinished head over MAX_HEAD_BYTES: 431 without waiting for its end',
    input: `GET / HTTP/1.1\r\nX-Pad: ${'a'.repeat(MAX_HEAD_BYTES)}`,
    out: '',
    fail: 431,
    waiting: false,
  },
]
