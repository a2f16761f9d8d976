// A checkpointer that hangs (a sync that never returns): its first passive checkpoint finds a short
// log, the next ones a long one that nothing writes to, and it answers only as many restarts as
// its argument says (none by default), then never again.
let passes = 0
let answers = Number(process.argv[2] ?? 0)
process.on('message', (message: { id: number; mode: string }) => {
  if (message.mode === 'RESTART' && answers-- <= 0) return
  const frames = passes++ === 0 ? 0 : 5000
  process.send?.({ id: message.id, frames, busy: false })
})
// ends with the service, as the real one does (its standard input ends)
void (async () => {
  const reader = Bun.stdin.stream().getReader()
  while (!(await reader.read()).done) {}
  process.exit(0)
})()
