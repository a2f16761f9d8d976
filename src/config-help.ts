/** What `--help` says of each configuration variable (src/config.ts holds the schema). */
import * as v from 'valibot'
import { EnvSchema } from './config'

type EnvName = keyof typeof EnvSchema.entries

/**
 * What `--help` says of each variable. Typed by the schema, so a variable cannot be added without
 * its line here; `computed` describes a default that depends on other variables (the schema's own
 * defaults are read from it).
 */
const ENV_HELP: Record<EnvName, { meaning: string; computed?: string }> = {
  PORT: { meaning: 'public port (0 picks a free one)' },
  HOST: { meaning: 'bind address' },
  DATA_DIR: { meaning: 'libSQL file and other local data' },
  LIBSQL_URL: {
    meaning: 'file: uses the embedded driver; libsql://, http(s):// a libSQL server (cluster)',
    computed: 'file:$DATA_DIR/platform.db',
  },
  LIBSQL_AUTH_TOKEN: { meaning: 'token for a libSQL server' },
  REDIS_URL: { meaning: 'redis://host:6379; required for a cluster', computed: 'unset (the in-process store)' },
  KV_PREFIX: { meaning: 'prefix of every Redis key and channel (several services on one Redis)' },
  KV_TIMEOUT_MS: {
    meaning: 'longest wait for one Redis call; past it (or while Redis is down) what needs Redis answers 503',
  },
  MASTER_DOMAIN: { meaning: 'name of the master domain created on the first start' },
  ADMIN_LOGIN: { meaning: 'login of the first administrator' },
  ADMIN_PASSWORD: {
    meaning: 'password of the first administrator',
    computed: 'generated into $DATA_DIR/initial-admin-password (0600)',
  },
  PUBLIC_URL: { meaning: 'base of links in e-mails; https: also marks cookies Secure', computed: 'http://HOST:PORT' },
  RESEND_API_KEY: {
    meaning: 'Resend API key; mail is delivered through Resend',
    computed: 'unset (mail is only logged)',
  },
  RESEND_BASE_URL: { meaning: 'Resend endpoint', computed: "Resend's" },
  MAIL_FROM: { meaning: 'sender of mail' },
  SITE: { meaning: 'site of this process in a cluster' },
  NODE_NAME: { meaning: 'name of this process in a cluster', computed: 'host name + pid' },
  TRUST_PROXY: { meaning: 'CIDR list whose X-Forwarded-For is believed' },
  LOG_LEVEL: { meaning: 'error, warn, info or debug' },
  WEBHOOK_ALLOW_PRIVATE: { meaning: 'CIDR list of private addresses webhook deliveries may reach' },
  GATEWAY: {
    meaning: 'off binds Bun.serve directly (no LOOKUP/SYNC/CLEAR on the wire, no pipelining, no connection cap)',
  },
  GATEWAY_INLINE: {
    meaning:
      "off: the gateway relays every request and websocket to the app's Bun.serve instead of serving it in-process (slower; to tell a bug of one path from the other)",
  },
  BACKGROUND: { meaning: 'off: this process serves requests only; background work runs in other processes' },
  APP_PROCESSES: {
    meaning: 'app processes sharing the public port, the database and REDIS_URL (required above 1): about one per core',
  },
  APP_RESTART_MAX_MS: {
    meaning:
      'longest pause before an app process that died is started again: 1 s, doubling while it keeps dying within this',
  },
  WEBAPPS_DIR: { meaning: 'web-application metadata files offered in the session', computed: '$DATA_DIR/webapps' },
  MAX_BODY_BYTES: { meaning: 'largest request body (but uploads of channel files); larger ones get 413' },
  FILES_MAX_BYTES: {
    meaning:
      'largest upload request to channel files (/rest/v1/fs/targets/token), so also its largest file; 413 beyond',
  },
  FILES_QUOTA_BYTES: {
    meaning: "each domain's channel files together hold at most this many bytes (0: no bound); 507 beyond",
  },
  FILES_QUOTA_FILES: { meaning: 'each domain holds at most this many channel files (0: no bound); 507 beyond' },
  SESSION_IDLE_TIMEOUT_SEC: { meaning: 'sliding idle lifetime of a session' },
  SESSION_MAX_PER_USER: { meaning: 'concurrent sessions per user; the oldest is ended beyond it' },
  SHUTDOWN_GRACE_SEC: { meaning: 'on a stop, how long requests in flight may take to finish' },
  LOG_REQUESTS: { meaning: 'share of requests logged at info, one JSON line each (1: all, 0.1: one in ten, 0: none)' },
  CORS_ORIGINS: { meaning: 'web origins (https://app.example.com, comma list) that may call the API with credentials' },
  COOKIE_SAMESITE: { meaning: 'SameSite of the session cookie: Strict, Lax, or None (always Secure) for another site' },
  COMPRESS_MIN_BYTES: { meaning: 'JSON answers of at least this size are sent gzip or brotli when the client accepts' },
  METRICS_TOKEN: {
    meaning: 'when set, GET /metrics needs Authorization: Bearer <this token>',
    computed: 'unset (open)',
  },
  CHECK_ANSWERS: {
    meaning:
      'on: every answer is checked against the schema its route declares for its status; one that does not match is a 500 naming why (the tests turn it on)',
  },
  GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: {
    meaning:
      'open connections one client address (IPv6: its /64) may hold on the public port (0: no cap; TRUST_PROXY peers are not capped)',
  },
  LIST_SORT_MAX_RECORDS: {
    meaning:
      'a class list ordered without an index that serves the order is refused (naming the index to declare) beyond this many records',
  },
  LIST_SCAN_MAX_RECORDS: {
    meaning:
      'a class list filtered by what no index serves reads at most this many records; a page they leave short is refused, naming the index',
  },
  LIST_ASIDE_MIN_ROWS: {
    meaning:
      'a list no index serves over a table of more rows of the domain runs in a reader thread, the service answering other requests meanwhile',
  },
  STARTUP_RETRIES: {
    meaning: 'tries to reach Redis and a libSQL server at start (pauses grow to 1 s) before exiting with code 2',
  },
  JOURNAL_KEEP_DAYS: { meaning: 'journal records older than this many days are removed (0: kept forever)' },
  JOURNAL_KEEP_PER_DOMAIN: {
    meaning: "beyond this many records, a domain's oldest journal records are removed (0: no limit)",
  },
  WS_IDLE_TIMEOUT_SEC: { meaning: 'a websocket with no traffic (pings included) for this long is closed' },
  WS_MAX_FRAME_BYTES: { meaning: 'largest websocket frame a client may send; larger ones close the socket (1009)' },
  WS_BACKPRESSURE_BYTES: {
    meaning: 'what a websocket may hold unsent for a client that does not read; past it the socket is closed',
  },
  WS_FRAMES_PER_SEC: { meaning: 'frames a websocket client may send per second; beyond it they are refused' },
  NODE_ROLES: { meaning: 'roles of this process beyond serving requests: svc runs service scripts; none for none' },
  SCRIPT_MEMORY_MB: { meaning: 'memory limit of one script handler' },
  SCRIPT_STACK_KB: { meaning: 'stack limit of one script handler' },
  SCRIPT_CPU_SEC: { meaning: 'CPU time one script handler may use' },
  SCRIPT_DURATION_SEC: { meaning: 'how long one script handler may run, waiting included' },
  SCRIPT_MAX_PER_DOMAIN: { meaning: 'script handlers of one domain running at once on this process' },
  SCRIPT_THREADS: {
    meaning: 'threads that run the scripts of this process (one domain takes at most all but one of them)',
  },
  SCRIPT_TOKEN_LOGIN_SEC: {
    meaning:
      'how long the iam_token_svcscript_code script may take; past it a token login answers 503 (not counted as a failed sign-in)',
  },
  SCRIPT_HTTP_ALLOW: {
    meaning: 'hosts (name, *.suffix) and CIDR blocks scripts may call with http(); private addresses only if listed',
    computed: 'none',
  },
  SCRIPT_HTTP_TIMEOUT_SEC: { meaning: 'timeout of a script http() call' },
  SCRIPT_HTTP_MAX_BYTES: { meaning: 'largest response body a script http() call reads' },
  LICENSE_PUBLIC_KEY: {
    meaning: "licensor's public key (Ed25519 or P-256), PEM text or a file path; licences are verified with it",
    computed: 'the development key keys/licence-dev.pub.pem (not for production)',
  },
  SECRETS_KEY: {
    meaning:
      'the key the stored webhook signing secrets are sealed with: the base64 of 32 random bytes (openssl rand -base64 32); keep it apart from the backups',
    computed: 'unset (the key file)',
  },
  SECRETS_KEY_FILE: {
    meaning: 'file holding that key when SECRETS_KEY is unset; made (0600) at the first start; must be 0600',
    computed: '$DATA_DIR/secrets.key',
  },
}

/** Every variable the service reads, with its default and meaning, in the schema's order. */
export function describeEnv(): { name: string; default: string; meaning: string }[] {
  return (Object.keys(EnvSchema.entries) as EnvName[]).map((name) => {
    const { meaning, computed } = ENV_HELP[name]
    const fallback = v.getDefault(EnvSchema.entries[name])
    const shown = computed ?? (fallback === undefined ? 'unset' : fallback === '' ? 'empty' : String(fallback))
    return { name, default: shown, meaning }
  })
}
