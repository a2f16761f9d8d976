import { modelClear, modelDelete, modelGet, modelLookup, modelPatch, modelPost, modelPut } from '~/model/records-api'

export const GET = modelGet
export const POST = modelPost
export const PUT = modelPut
export const PATCH = modelPatch
export const DELETE = modelDelete
export const LOOKUP = modelLookup
export const CLEAR = modelClear
