// The baseline: plain Bun.serve answering a small JSON object, whatever the path.
const body = JSON.stringify({ id: '0192a3b4-0000-7000-8000-000000000001', type: 'bench', opts: { title: 'x' } })
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8' } }),
})
console.log(`listening ${server.port}`)
