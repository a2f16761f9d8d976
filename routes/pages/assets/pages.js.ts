import { pagesScript } from '~/pages/assets'

export const GET = pagesScript
