/**
 * The dates a partitioned class's list covers (`interval=["from","to"]`, both days included): the
 * last 31 days at first, any range picked with two date inputs.
 */
import { useState } from 'preact/hooks'

export type Interval = [string, string]

const day = (d: Date) => d.toISOString().slice(0, 10)

export function lastDays(n: number): Interval {
  const to = new Date()
  return [day(new Date(to.getTime() - (n - 1) * 86_400_000)), day(to)]
}

export function IntervalPicker(props: { applied: Interval; onApply: (i: Interval) => void }) {
  const [from, setFrom] = useState(props.applied[0])
  const [to, setTo] = useState(props.applied[1])
  const [error, setError] = useState('')
  const apply = (e: Event) => {
    e.preventDefault()
    if (!from || !to) return setError('Give both dates.')
    if (from > to) return setError('The first date is after the last.')
    setError('')
    props.onApply([from, to])
  }
  return (
    <form class="interval" onSubmit={apply} aria-label="Dates shown">
      <label for="interval-from">Records from</label>
      <input id="interval-from" type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
      <label for="interval-to">to</label>
      <input id="interval-to" type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
      <button type="submit">Show</button>
      {error ? (
        <span class="error" role="alert">
          {error}
        </span>
      ) : null}
    </form>
  )
}
