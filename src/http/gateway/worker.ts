/** The gateway's thread: runs the front, reports the port it listens on, and stops accepting when told. */
import { type Front, startFront, type FrontOptions } from './front'

declare const self: Worker

/** The first message starts the front; `{close: true}` stops accepting (open connections go on). */
type Message = FrontOptions | { close: true }
let listener: Front | undefined

self.onmessage = (event: MessageEvent<Message>) => {
  if ('close' in event.data) {
    listener?.stop(false)
    self.postMessage({ type: 'closed' })
    return
  }
  try {
    listener = startFront(event.data)
    self.postMessage({ type: 'listening', port: listener.port })
  } catch (err) {
    // the code (EADDRINUSE) says more than Bun's message ("Failed to listen at ...")
    const { code, message } = err as { code?: string; message: string }
    self.postMessage({ type: 'error', message: code ? `${code}: ${message}` : message })
  }
}
