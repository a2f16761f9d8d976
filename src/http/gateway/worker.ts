/** The gateway's thread: runs the front and reports the port it listens on. */
import { startFront, type FrontOptions } from './front'

declare const self: Worker

self.onmessage = (event: MessageEvent<FrontOptions>) => {
  try {
    const listener = startFront(event.data)
    self.postMessage({ type: 'listening', port: listener.port })
  } catch (err) {
    self.postMessage({ type: 'error', message: (err as Error).message })
  }
}
