// The streaming multipart reader: parts and their bodies whatever the chunking of the stream,
// file names in their plain, escaped and RFC 5987 forms, and malformed bodies refused with a 400.
import { describe, expect, test } from 'bun:test'
import { ApiError } from '~/errors'
import { dispositionParams, formDataBoundary, MultipartReader } from '~/integration/multipart'

const B = 'xYz-boundary'
const text = new TextEncoder()

/** A stream of `bytes` cut into chunks of the given sizes (repeated), as a socket might deliver them. */
function streamOf(bytes: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let at = 0
  let i = 0
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close()
      const n = sizes[i++ % sizes.length]!
      c.enqueue(bytes.slice(at, at + n))
      at += n
    },
  })
}

async function readAll(body: Uint8Array, sizes: number[]) {
  const reader = new MultipartReader(streamOf(body, sizes), B)
  const parts: { name: string | null; filename: string | null; type?: string; data: string }[] = []
  for (let head = await reader.next(); head; head = await reader.next()) {
    const chunks: Uint8Array[] = []
    for await (const c of reader.body()) chunks.push(Buffer.from(c))
    parts.push({
      name: head.name,
      filename: head.filename,
      type: head.headers['content-type'],
      data: Buffer.concat(chunks).toString(),
    })
  }
  return parts
}

// data that looks like a delimiter without being one, and CRLFs at the edges
const tricky = `\r\n--${B.slice(0, 5)}\r\n--xYz-boundar\r\nend\r\n`
const BODY = text.encode(
  'preamble to ignore\r\n' +
    `--${B}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n` +
    `--${B}\r\nContent-Disposition: form-data; name="filename"; filename="a \\"q\\".txt"\r\nContent-Type: text/plain\r\n\r\n${tricky}\r\n` +
    `--${B}  \r\nContent-Disposition: form-data; name="f"; filename="x.bin"; filename*=UTF-8''%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82.txt\r\n\r\n\r\n` +
    `--${B}\r\nContent-Disposition: form-data; name="f"; filename="файл.txt"\r\n\r\nдата\r\n` +
    `--${B}--\r\nepilogue`,
)
const EXPECTED = [
  { name: 'note', filename: null, type: undefined, data: 'hello' },
  { name: 'filename', filename: 'a "q".txt', type: 'text/plain', data: tricky },
  { name: 'f', filename: 'привет.txt', type: undefined, data: '' },
  { name: 'f', filename: 'файл.txt', type: undefined, data: 'дата' },
]

describe('parts and bodies', () => {
  test('the same parts whatever the chunk sizes (1 byte, small odd sizes, one chunk)', async () => {
    for (const sizes of [[1], [2, 3, 7], [13], [64, 1], [BODY.length]])
      expect(await readAll(BODY, sizes)).toEqual(EXPECTED)
  })

  test('a part not read is skipped by next()', async () => {
    const reader = new MultipartReader(streamOf(BODY, [5]), B)
    const names: (string | null)[] = []
    for (let head = await reader.next(); head; head = await reader.next()) names.push(head.filename)
    expect(names).toEqual([null, 'a "q".txt', 'привет.txt', 'файл.txt'])
  })

  test('a large part arrives in pieces, never whole', async () => {
    const big = new Uint8Array(3 * 1024 * 1024).fill(120)
    const body = Buffer.concat([
      text.encode(`--${B}\r\nContent-Disposition: form-data; name="f"; filename="big"\r\n\r\n`),
      big,
      text.encode(`\r\n--${B}--\r\n`),
    ])
    const reader = new MultipartReader(streamOf(body, [65536]), B)
    await reader.next()
    let total = 0
    let largest = 0
    for await (const c of reader.body()) {
      total += c.byteLength
      largest = Math.max(largest, c.byteLength)
    }
    expect(total).toBe(big.length)
    expect(largest).toBeLessThanOrEqual(65536 + B.length + 4)
    expect(await reader.next()).toBeNull()
  })
})

describe('malformed bodies are a 400', () => {
  const cases: [string, string][] = [
    ['no boundary at all', 'just text'],
    ['ends inside a part', `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nunfinished`],
    ['ends inside the headers', `--${B}\r\nContent-Disposition: form-data`],
    ['header without a colon', `--${B}\r\nnonsense\r\n\r\nx\r\n--${B}--`],
    ['text after a boundary', `--${B}garbage\r\n\r\nx\r\n--${B}--`],
  ]
  for (const [what, body] of cases)
    test(what, async () => {
      const err = await readAll(text.encode(body), [3]).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(ApiError)
      expect((err as ApiError).status).toBe(400)
    })

  test('over-long part headers', async () => {
    const body = `--${B}\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\nx\r\n--${B}--`
    expect(((await readAll(text.encode(body), [4096]).catch((e: unknown) => e)) as ApiError).status).toBe(400)
  })
})

describe('headers', () => {
  test('the boundary of multipart/form-data, quoted or not; other types have none', () => {
    expect(formDataBoundary('multipart/form-data; boundary=abc')).toBe('abc')
    expect(formDataBoundary('Multipart/Form-Data;boundary="a b:c"')).toBe('a b:c')
    expect(formDataBoundary('application/octet-stream')).toBeNull()
    expect(formDataBoundary(null)).toBeNull()
    expect(() => formDataBoundary('multipart/form-data')).toThrow(ApiError)
  })

  test('Content-Disposition parameters: quoted with escapes, token, RFC 5987 in UTF-8', () => {
    expect(dispositionParams(`form-data; name=f; filename="a\\\\b \\"c\\""`)).toEqual({
      name: 'f',
      filename: 'a\\b "c"',
    })
    expect(dispositionParams(`attachment; filename*=utf-8'en'%E2%82%AC%20rates`)).toEqual({ 'filename*': '€ rates' })
    // another charset is ignored (the plain form applies)
    expect(dispositionParams(`attachment; filename="x"; filename*=iso-8859-1''%A3`)).toEqual({ filename: 'x' })
  })
})
