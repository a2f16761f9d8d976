/**
 * The console: the signed-in session (or a sign-in link), the header, navigation by area and the
 * page the address names.
 */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { errorText, call } from './api'
import { CreatePage } from './create'
import { Dialogs } from './dialogs'
import { UploadPage } from './files'
import { HandlerPage } from './handler'
import { Header } from './header'
import { InvitePage } from './invite'
import { ItemPage } from './item'
import { JournalPage } from './journal'
import { LicencePage } from './licence'
import { ListPage } from './list'
import { areasOf, Nav } from './nav'
import { go, href, useRoute } from './router'
import { readSession, type Session, SESSION_URL, SessionContext, useSession } from './session'
import { available, type Collection, loadCollections } from './spec'

function Overview(props: { collections: Collection[] }) {
  const { session } = useSession()
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Overview</h1>
      <p>
        Signed in as <strong>{session.name_login}</strong> in the domain <strong>{session.domain}</strong>
        {session.domain_is_master ? ', the master domain' : ''}. Every change is in the{' '}
        <a href={href.journal()}>journal</a>.
      </p>
      <div class="cards">
        {areasOf(props.collections).map(([area, list]) => (
          <div class="card" key={area}>
            <h2>{area}</h2>
            <ul>
              {list.map((c) => (
                <li key={c.key}>
                  <a href={href.list(c.key)}>{c.title}</a>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
    </section>
  )
}

function Shell() {
  const { session, refresh } = useSession()
  const route = useRoute()
  const [all, setAll] = useState<Collection[] | null>(null)
  const [error, setError] = useState('')
  const [menu, setMenu] = useState(false)
  useEffect(() => {
    loadCollections().then(setAll, (err) => setError(errorText(err)))
  }, [])
  const collections = (all ?? []).filter((c) => available(c, session.domain_is_master))
  const switchTo = async (domain: string) => {
    await call('PATCH', SESSION_URL, { domain })
    setAll(await loadCollections(true))
    await refresh()
    go(href.home())
  }
  const collection = 'key' in route ? collections.find((c) => c.key === route.key) : undefined
  // a class made since the description was read: read it again, once per address
  const [reread, setReread] = useState('')
  useEffect(() => {
    if (!all || collection || !('key' in route) || !route.key.startsWith('model/') || reread === route.key) return
    setReread(route.key)
    loadCollections(true).then(setAll, (err) => setError(errorText(err)))
  }, [all, collection, 'key' in route && route.key])
  let page: JSX.Element | undefined
  if (error)
    page = (
      <p class="error" role="alert">
        {error}
      </p>
    )
  else if (!all) page = <p role="status">Loading…</p>
  else if (route.page === 'home') page = <Overview collections={collections} />
  else if (route.page === 'journal') page = <JournalPage collections={collections} />
  else if (!collection) page = <p role="alert">This page is not available in the domain {session.domain}.</p>
  else if (route.page === 'list' && collection.page === 'licence')
    page = <LicencePage key={collection.key} collection={collection} />
  else if (route.page === 'list' && collection.page === 'invite')
    page = <InvitePage key={collection.key} collection={collection} />
  else if (route.page === 'list') page = <ListPage key={collection.key} collection={collection} />
  else if (route.page === 'new' && collection.upload) page = <UploadPage key={collection.key} collection={collection} />
  else if (route.page === 'new') page = <CreatePage key={collection.key} collection={collection} />
  else if (route.page === 'item' && collection.key === 'service/svcscript_runtimes')
    page = <HandlerPage key={route.id} collection={collection} id={route.id} />
  else if (route.page === 'item')
    page = <ItemPage key={`${collection.key}/${route.id}`} collection={collection} id={route.id} />
  return (
    <>
      <a class="skip" href="#main">
        Skip to the content
      </a>
      <Header menuOpen={menu} onMenu={() => setMenu(!menu)} onSwitch={switchTo} />
      <div class="layout">
        <Nav collections={collections} route={route} open={menu} onPick={() => setMenu(false)} />
        <main id="main" tabIndex={-1}>
          {page}
        </main>
      </div>
      <Dialogs />
    </>
  )
}

function SignedOut() {
  return (
    <main id="main" class="signed-out">
      <h1>Console</h1>
      <div id="signin">
        <p>
          Sign in first: <a href="/pages/sign-in">sign in</a>, then come back here.
        </p>
      </div>
    </main>
  )
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const refresh = async () => setSession(await readSession())
  useEffect(() => {
    void refresh()
  }, [])
  if (session === undefined) return <p role="status">Loading…</p>
  if (session === null) return <SignedOut />
  return (
    <SessionContext.Provider value={{ session, refresh }}>
      <Shell />
    </SessionContext.Provider>
  )
}
