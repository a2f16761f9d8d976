// `node --import` this before openapi-typescript: it reads TypeScript 5's compiler API, which the
// project's TypeScript 7 (the native compiler) does not have; `typescript5` is TypeScript 5.
import { register } from 'node:module'

register('./hooks.mjs', import.meta.url)
