import { getUserInfo, patchUserInfo } from '~/identity/user-api'

export const GET = getUserInfo
export const PATCH = patchUserInfo
