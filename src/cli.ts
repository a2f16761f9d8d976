/** The command line: `--help` and `--version` answer without starting anything; other arguments are refused. */
import { basename } from 'node:path'
import pkg from '../package.json' with { type: 'json' }
import { describeEnv } from './config-help'

export type Command =
  | { run: 'start' }
  | { run: 'print'; text: string }
  | { run: 'refuse'; message: string }
  | { run: 'backup' | 'restore'; file: string }
  | { run: 'reset-password'; login: string; domain?: string }

/** The single binary is named by its file; otherwise the service runs as a script. */
const PROGRAM = Bun.main.startsWith('/$bunfs/') ? basename(process.execPath) : 'bun server.ts'

export function readCommandLine(args: string[], program = PROGRAM): Command {
  if (args.length === 0) return { run: 'start' }
  if (args.length === 1 && args[0] === '--version') return { run: 'print', text: pkg.version }
  if (args.length === 1 && args[0] === '--help') return { run: 'print', text: usage(program) }
  const [verb, ...rest] = args
  if ((verb === 'backup' || verb === 'restore') && rest.length === 1) return { run: verb, file: rest[0]! }
  if (verb === 'reset-password') {
    if (rest.length === 1 && !rest[0]!.startsWith('-')) return { run: verb, login: rest[0]! }
    if (rest.length === 3 && rest[0] === '--domain') return { run: verb, login: rest[2]!, domain: rest[1]! }
  }
  if (verb === 'backup' || verb === 'restore' || verb === 'reset-password')
    return { run: 'refuse', message: `${program}: usage: ${USAGE[verb]} (try --help)` }
  return { run: 'refuse', message: `${program}: unknown argument ${JSON.stringify(args[0])} (try --help)` }
}

const USAGE = {
  backup: 'backup <file>',
  restore: 'restore <file>',
  'reset-password': 'reset-password [--domain <name>] <login>',
}

export function usage(program: string): string {
  const env = describeEnv()
  const width = Math.max(...env.map((e) => e.name.length))
  return `${pkg.name} ${pkg.version}: ${pkg.description}

usage: ${program}            start the service (SIGINT or SIGTERM stops it)
       ${program} --help     print this text
       ${program} --version  print the version
       ${program} backup <file>
                 a consistent copy of the database (through the running service, or of a stopped one)
       ${program} restore <file>
                 puts a backup back as the database of a stopped service (the old file is kept aside)
       ${program} reset-password [--domain <name>] <login>
                 a new password for an account (master domain by default), printed once

Configuration comes from environment variables, all optional (an empty one counts as unset;
a bad value stops the start with a message naming it):

${env.map((e) => `  ${e.name.padEnd(width)}  ${e.meaning}\n  ${''.padEnd(width)}  default: ${e.default}`).join('\n')}

Data: everything the service keeps is under DATA_DIR (./data in the working directory unless set):
the libSQL database platform.db (unless LIBSQL_URL names a server), product-layer archives in
layers/ and web-application metadata in webapps/. Sessions and counters are kept in Redis
(REDIS_URL) or in process memory. The first start on an empty database creates the master domain
and its administrator and writes a generated password to DATA_DIR/initial-admin-password. Webhook
signing secrets are stored sealed with the key in DATA_DIR/secrets.key (or SECRETS_KEY): keep a copy
of it apart from the backups. Temporary files (the gateway's socket, and in the single binary the
libSQL addon) go to TMPDIR.
`
}
