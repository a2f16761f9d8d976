import { pagesStyle } from '~/pages/assets'

export const GET = pagesStyle
