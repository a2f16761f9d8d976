export {} // a module: its names stay its own
// The websocket baseline: plain Bun.serve whose sockets all join one topic. A POST (any path)
// publishes one frame of the service's size and shape carrying the body's `value.w`, then answers
// with the publish time as the record's `ext.lwt`, as the service's create answers its commit time.
const record = (w: number, at: string) =>
  JSON.stringify({
    id: '01a227b4-1b91-7143-bff5-47298261c390',
    type: 'push',
    value: { w },
    opts: { title: '', comment: '' },
    ext: { ct: at, lwt: at },
  })
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request, s) {
    if (request.headers.get('upgrade')) return s.upgrade(request) ? undefined : new Response('no', { status: 400 })
    const { value } = (await request.json()) as { value: { w: number } }
    const at = new Date().toISOString()
    const rec = record(value.w, at)
    s.publish(
      'all',
      `["event",{"subscription":"s","class":"modelevents","event":"data_changed","seq":${value.w},"data":{"class":"extobj","operation":1,"id":"01a227b4-1b91-7143-bff5-47298261c390","old":${rec},"new":${rec},"initiator_type":"user","initiator_id":"01a227b4-1926-741f-8d27-19518da966f4"}}]`,
    )
    return new Response(`{"ext":{"lwt":"${at}"}}`, { headers: { 'content-type': 'application/json' } })
  },
  websocket: {
    open: (ws) => void ws.subscribe('all'),
    message: (ws) => void ws.send('["subscribe",{"id":"s","expires":3600}]'),
  },
})
console.log(`listening ${server.port}`)
