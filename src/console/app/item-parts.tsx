/**
 * What an item's page adds for some collections, past the fields every item has: a channel's
 * webhook deliveries (and, for a `subscr` channel in a working domain, its subscriptions), a
 * service script's start with parameters, a node's log level control in place of its form.
 */
import type { JSX } from 'preact'
import { Deliveries } from './deliveries'
import { NodeLogLevel } from './node-level'
import { get } from './schema'
import { ScriptRun } from './script-run'
import { useSession } from './session'
import type { Collection } from './spec'
import { Subscriptions } from './subscriptions'

interface PartProps {
  collection: Collection
  url: string
  doc: unknown
  reload: () => Promise<void>
}

const text = (doc: unknown, path: string) => {
  const value = get(doc, path)
  return typeof value === 'string' ? value : ''
}

/** A form of the collection's own in place of the one its change schema makes, if it has one. */
export function ownForm(c: Collection): ((p: PartProps) => JSX.Element) | undefined {
  if (c.key === 'master/nodes')
    return (p) => (
      <NodeLogLevel collection={p.collection} url={p.url} current={text(p.doc, 'maxLogLevel')} onSaved={p.reload} />
    )
  return undefined
}

export function ItemParts(props: PartProps & { unsaved: boolean }) {
  const { session } = useSession()
  const { collection: c, doc } = props
  if (c.key === 'service/integration_points') {
    const token = text(doc, 'token_local')
    return (
      <>
        {text(doc, 'type') === 'subscr' && !session.domain_is_master && token ? (
          <Subscriptions token={token} channelUrl={text(doc, 'url')} />
        ) : null}
        <Deliveries channelUrl={props.url} />
      </>
    )
  }
  if (c.key === 'service/svcscripts' && text(doc, 'code'))
    return <ScriptRun code={text(doc, 'code')} unsaved={props.unsaved} />
  return null
}
