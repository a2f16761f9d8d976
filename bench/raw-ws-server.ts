// The websocket baseline: plain Bun.serve whose sockets all join one topic. A POST (any path)
// publishes one frame of the service's size and shape carrying the body's `value.w`, then answers
// with the publish time as the record's `ext.lwt`, as the service's create answers its commit time.
import { pushFrameText, SUBSCRIBED } from './push-frame'

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request, s) {
    if (request.headers.get('upgrade')) return s.upgrade(request) ? undefined : new Response('no', { status: 400 })
    const { value } = (await request.json()) as { value: { w: number } }
    const at = new Date().toISOString()
    s.publish('all', pushFrameText(value.w, at))
    return new Response(`{"ext":{"lwt":"${at}"}}`, { headers: { 'content-type': 'application/json' } })
  },
  websocket: {
    open: (ws) => void ws.subscribe('all'),
    message: (ws) => void ws.send(SUBSCRIBED),
  },
})
console.log(`listening ${server.port}`)
