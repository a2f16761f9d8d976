/** Process entry: configuration, the service, the first-start banner, and a clean stop on signals. */
import { ConfigError, loadConfig } from './config'
import type { RouteEntry } from './http/route'
import { startService } from './service'

export async function main(routes: RouteEntry[]): Promise<void> {
  let config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`)
      process.exit(2)
    }
    throw err
  }
  const service = await startService(config, routes)
  const { bootstrap } = service
  if (bootstrap.created) {
    console.log(`first start: created master domain "${config.masterDomain}" with administrator "${bootstrap.login}"`)
    if (bootstrap.generatedPassword) console.log(`administrator password (shown once): ${bootstrap.generatedPassword}`)
  }
  service.deps.log.info('listening', { url: service.url, gateway: config.gateway, node: config.nodeName })
  const stop = async () => {
    await service.stop()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
