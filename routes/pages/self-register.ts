import { selfRegister } from '~/pages/pages'

export const GET = selfRegister
