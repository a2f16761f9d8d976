// The gateway's front alone (src/gateway/front.ts) answering the raw baseline's object in-process,
// whatever the path: what reading heads and writing answers on Bun.listen costs, with no app behind it.
import { startFront } from '../src/gateway/front'

const body = JSON.stringify({ id: '0192a3b4-0000-7000-8000-000000000001', type: 'bench', opts: { title: 'x' } })
const answer = {
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  cookies: [],
  body,
  bytes: body.length,
}
const front = startFront({
  hostname: '127.0.0.1',
  port: 0,
  upstream: '/nonexistent/app.sock', // every request of the bench is answered in-process
  maxBodyBytes: 1 << 20,
  serve: async () => answer,
})
console.log(`listening ${front.port}`)
