// Resolves `typescript` to the `typescript5` package (see ./register.mjs).
export async function resolve(specifier, context, next) {
  return next(specifier === 'typescript' ? 'typescript5' : specifier, context)
}
