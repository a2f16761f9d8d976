/**
 * Process entry: the command line, configuration, the service, a generated first password shown on a
 * terminal (never in the log), and a clean stop on signals.
 */
import { CHECKPOINT_FILE_ENV, runCheckpointer } from '~storage/db-checkpointer'
import { readCommandLine } from './cli'
import { appProcessRole, endWithParent } from './cluster/app-processes'
import { type Config, ConfigError, loadConfig } from './config'
import type { Manifest } from './app'
import { runOperation } from './ops/commands'
import pkg from '../package.json' with { type: 'json' }
import { type Service, type StopCause, startService } from './service'
import { shareStdout, writeLinesOffThread } from './log'
import { StartError } from './startup'

export async function main(manifest: Manifest, args = process.argv.slice(2)): Promise<void> {
  // started by a service to checkpoint its database file (storage/db-checkpointer.ts)
  const checkpointFile = process.env[CHECKPOINT_FILE_ENV]
  if (checkpointFile) return endWithParent(runCheckpointer(checkpointFile))
  const command = readCommandLine(args)
  if (command.run === 'print') {
    console.log(command.text)
    return
  }
  if (command.run === 'refuse') {
    console.error(command.message)
    process.exit(2)
  }
  let config: Config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`)
      process.exit(2)
    }
    throw err
  }
  if (command.run !== 'start') process.exit(await runOperation(config, manifest, command))
  const appProcess = appProcessRole()
  if (appProcess || config.appProcesses > 1) shareStdout()
  writeLinesOffThread()
  // a name given to the service names its first process; the others add their index
  if (appProcess && process.env.NODE_NAME) config.nodeName = `${process.env.NODE_NAME}-${appProcess.index}`
  const exit = async (running: Service, why: StopCause) => {
    await running.stop(why)
    process.exit(0)
  }
  let service: Service
  try {
    // a node termination request (DELETE /rest/v1/master/nodes/<name>) ends the process like SIGTERM
    service = await startService(config, manifest, {
      appProcess,
      onTerminate: (s) => void exit(s, { reason: 'node termination request' }),
    })
  } catch (err) {
    console.error(`cannot start: ${(err as Error).message}`)
    // a setting or the world around the service is wrong (2); anything else is a fault of its own (1)
    process.exit(err instanceof StartError ? 2 : 1)
  }
  // one line per process: the first's is `listening`, the others' `app process listening`
  service.deps.log.info(appProcess ? 'app process listening' : 'listening', {
    url: service.url,
    version: pkg.version,
    appProcess: appProcess?.index ?? 0,
    appProcesses: config.appProcesses,
    background: config.background,
    gateway: config.gateway,
    node: config.nodeName,
    pid: process.pid,
  })
  if (appProcess) endWithParent(() => service.stop({ reason: 'the first app process is gone' }))
  if (!appProcess) for (const notice of config.renamedSettings) service.deps.log.warn(notice)
  // a person at a terminal sees the generated password at once; a log collector never does (the
  // log names the file it is in)
  const generated = service.bootstrap.generated
  if (generated && process.stdout.isTTY)
    process.stdout.write(`\nadministrator password (also in ${generated.file}): ${generated.password}\n\n`)
  // its private half is in the repository: anyone can sign licences this key accepts
  if (config.licenseKey.development && !appProcess)
    service.deps.log.warn('licences are verified with the development key: set LICENSE_PUBLIC_KEY in production')
  const running = service
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => void exit(running, { signal, reason: `${signal} received` }))
}
