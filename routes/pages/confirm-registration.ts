import { confirmRegistration } from '~/pages/pages'

export const GET = confirmRegistration
