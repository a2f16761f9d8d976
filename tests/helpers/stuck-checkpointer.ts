// A checkpointer that hangs (a sync that never returns): its first passive checkpoint finds a short
// log, the next ones a long one, and it never answers a restart.
let passes = 0
process.on('message', (message: { id: number; mode: string }) => {
  if (message.mode === 'RESTART') return
  const frames = passes++ === 0 ? 0 : 5000
  process.send?.({ id: message.id, frames, busy: false })
})
// ends with the service, as the real one does (its standard input ends)
void (async () => {
  const reader = Bun.stdin.stream().getReader()
  while (!(await reader.read()).done) {}
  process.exit(0)
})()
