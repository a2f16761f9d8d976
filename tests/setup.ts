// Preloaded by bunfig.toml before every test file: quiet logs unless asked for.
process.env.LOG_LEVEL ??= 'error'
// every answer of a test run is checked against the schema its route declares (src/http/hooks/answer-checks.ts)
process.env.CHECK_ANSWERS ??= 'on'
