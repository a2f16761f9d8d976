/** The small "Live" mark beside a list's title: whether changes made elsewhere appear by themselves. */
import type { LiveState } from './live'

const TEXT: Record<LiveState, string> = { live: 'Live', connecting: 'Connecting…', off: 'Not live' }
const TITLE: Record<LiveState, string> = {
  live: 'Changes made elsewhere appear here without reloading',
  connecting: 'Connecting to the live updates',
  off: 'This list does not update by itself: reload to see changes made elsewhere',
}

export function LiveBadge(props: { state: LiveState }) {
  return (
    <span class="live" id="live" title={TITLE[props.state]} data-state={props.state}>
      <span aria-hidden="true">● </span>
      {TEXT[props.state]}
    </span>
  )
}
