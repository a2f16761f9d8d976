// Preloaded by bunfig.toml before every test file: quiet logs unless asked for.
process.env.LOG_LEVEL ??= 'error'
