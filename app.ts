/**
 * The app's type: every route of the manifest with the schemas of its parameters, query, body and
 * answers. A typed client is made from it (client/index.ts, Eden treaty). A file of its own at the
 * root: src/ knows no route files (routes import src, never the other way).
 */
import type { api } from './routes/_manifest.gen'
import type { PlatformApp } from './src/app'

export type App = PlatformApp<typeof api>
