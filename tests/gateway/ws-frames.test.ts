// RFC 6455 framing of the websockets the front serves itself: client frames read in any pieces,
// messages whole (fragments joined), control frames, and the refusals that close the socket.
import { expect, test } from 'bun:test'
import {
  acceptKey,
  closePayload,
  encodeFrame,
  FrameReader,
  MAX_FRAGMENTS,
  OP_CLOSE,
  OP_TEXT,
} from '~/gateway/ws-frames'

/** A client frame: masked, FIN unless `more`. */
function frame(opcode: number, payload: Buffer | string, more = false, mask = true): Buffer {
  const body = Buffer.from(payload)
  const n = body.length
  const head =
    n < 126
      ? Buffer.from([(more ? 0 : 0x80) | opcode, (mask ? 0x80 : 0) | n])
      : Buffer.from([(more ? 0 : 0x80) | opcode, (mask ? 0x80 : 0) | 126, n >> 8, n & 255])
  const key = Buffer.from([9, 200, 33, 7])
  return Buffer.concat([head, mask ? key : Buffer.alloc(0), mask ? body.map((b, i) => b ^ key[i % 4]!) : body])
}

test('the accept key of the RFC example, and none for a key that is not 16 bytes in base64', () => {
  expect(acceptKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=')
  expect(acceptKey('short')).toBeNull()
  expect(acceptKey(null)).toBeNull()
})

test('server frames are unmasked with 7, 16 and 64-bit lengths', () => {
  expect([...encodeFrame(OP_TEXT, 'hi')]).toEqual([0x81, 2, 104, 105])
  const mid = encodeFrame(OP_TEXT, 'x'.repeat(300))
  expect([mid[0], mid[1], mid.readUInt16BE(2), mid.length]).toEqual([0x81, 126, 300, 304])
  const big = encodeFrame(0x2, Buffer.alloc(70_000))
  expect([big[1], Number(big.readBigUInt64BE(2)), big.length]).toEqual([127, 70_000, 70_010])
  expect([...closePayload(4008, 'slow')]).toEqual([0x0f, 0xa8, 115, 108, 111, 119])
})

test('messages come whole however the bytes are cut, text as a string and binary as bytes', () => {
  const bytes = Buffer.concat([
    frame(OP_TEXT, 'héllo'),
    frame(0x2, Buffer.from([1, 2, 3])),
    frame(OP_TEXT, 'x'.repeat(200)),
  ])
  for (const size of [1, 2, 3, 7, bytes.length]) {
    const reader = new FrameReader(1024)
    const events = []
    for (let at = 0; at < bytes.length; at += size) events.push(...reader.read(bytes.subarray(at, at + size)))
    expect(events).toEqual([
      { is: 'message', data: 'héllo' },
      { is: 'message', data: Buffer.from([1, 2, 3]) },
      { is: 'message', data: 'x'.repeat(200) },
    ])
  }
})

test('fragments are joined, with pings between them answered on their own', () => {
  const reader = new FrameReader(1024)
  const events = reader.read(
    Buffer.concat([frame(OP_TEXT, 'one ', true), frame(0x9, 'p'), frame(0x0, 'two ', true), frame(0x0, 'three')]),
  )
  expect(events).toEqual([
    { is: 'ping', data: Buffer.from('p') },
    { is: 'message', data: 'one two three' },
  ])
  expect(reader.read(frame(0xa, ''))).toEqual([{ is: 'pong' }])
})

test("the client's close gives its code and reason, and nothing is read after it", () => {
  const reader = new FrameReader(1024)
  const events = reader.read(Buffer.concat([frame(OP_CLOSE, closePayload(1000, 'bye')), frame(OP_TEXT, 'late')]))
  expect(events).toEqual([{ is: 'close', code: 1000, reason: 'bye', byClient: true }])
  expect(reader.read(frame(OP_TEXT, 'later'))).toEqual([])
  expect(new FrameReader(10).read(frame(OP_CLOSE, ''))).toEqual([
    { is: 'close', code: 1005, reason: '', byClient: true },
  ])
})

test('what breaks the protocol closes the socket with its code: 1002, 1007, 1009', () => {
  const closeOf = (bytes: Buffer, max = 1024) => new FrameReader(max).read(bytes).at(-1)
  const refused = (code: number) => expect.objectContaining({ is: 'close', code, byClient: false })
  expect(closeOf(frame(OP_TEXT, 'plain', false, false))).toEqual(refused(1002)) // unmasked
  expect(closeOf(Buffer.from([0xc1, 0x80, 0, 0, 0, 0]))).toEqual(refused(1002)) // RSV1 without an extension
  expect(closeOf(frame(0x3, 'x'))).toEqual(refused(1002)) // a reserved opcode
  expect(closeOf(frame(0x9, 'x', true))).toEqual(refused(1002)) // a fragmented ping
  expect(closeOf(frame(0x0, 'x'))).toEqual(refused(1002)) // a continuation with no message begun
  expect(closeOf(Buffer.concat([frame(OP_TEXT, 'a', true), frame(OP_TEXT, 'b')]))).toEqual(refused(1002))
  expect(closeOf(frame(OP_CLOSE, Buffer.from([0x03, 0xed])))).toEqual(refused(1002)) // close code 1005 is not sent
  expect(closeOf(frame(OP_TEXT, Buffer.from([0xc3, 0x28])))).toEqual(refused(1007)) // not UTF-8
  expect(closeOf(frame(OP_TEXT, 'x'.repeat(11)), 10)).toEqual(refused(1009))
  expect(closeOf(Buffer.concat([frame(OP_TEXT, 'x'.repeat(6), true), frame(0x0, 'y'.repeat(6))]), 10)).toEqual(
    refused(1009),
  )
  // empty continuations count too: a message comes in at most MAX_FRAGMENTS frames
  const empties = Buffer.concat(Array.from({ length: MAX_FRAGMENTS + 1 }, () => frame(0x0, '', true)))
  expect(closeOf(Buffer.concat([frame(OP_TEXT, '', true), empties]))).toEqual(refused(1009))
  // a declared length past the limit is refused from the head, before its payload is awaited
  const head = Buffer.from([0x82, 0xff, 0, 0, 0, 1, 0, 0, 0, 0])
  expect(closeOf(head, 1 << 20)).toEqual(refused(1009))
})
