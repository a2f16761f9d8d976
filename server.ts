// Entry point of the service: `npm start` runs this file.
import { api, routes } from './routes/_manifest.gen'
import { main } from './src/main'

await main({ routes, api })
