/**
 * Schemas of the record routes (/rest/v1/model/...). A class defines its records' properties at run
 * time, so a record is any JSON object with its id; what each class holds is described separately,
 * per domain (the API description for a signed-in caller).
 */
import * as v from 'valibot'
import { answer, errors } from '../http/schemas'
import { JsonObject, Uuid } from '../values'

/** The rest of the path: the classname (slashes and all), then an optional partition and record id. */
export const ModelPath = v.object({
  '*': v.pipe(
    v.string(),
    v.description(
      '<classname>[/<YYYY-MM-DD>][/<id>]: the classname may hold slashes; the partition is a day, month or year',
    ),
  ),
})

/** `interval` of a partitioned class's list or LOOKUP. */
export const Interval = v.optional(
  v.pipe(v.string(), v.description('partitioned classes: JSON ["from","to"], dates or instants, both ends included')),
)

/** A record as stored: its id and the properties of its class. */
const StoredRecord = v.looseObject({ id: Uuid })
/** A record as a GET presents it: a mask, or the class's opts.max_mask, may leave the id out. */
const PresentedRecord = v.looseObject({ id: v.optional(Uuid) })
const Partition = v.strictObject({
  partition: v.pipe(v.string(), v.description('YYYY, YYYY-MM or YYYY-MM-DD, by the partition_interval of the class')),
  records: v.pipe(v.number(), v.integer()),
})

/** A write's body: the record's properties (checked against the class), and the id a create may give. */
export const RecordBody = JsonObject

/** GET: the list (on the class or a partition), one record (on /<id>), or the partitions (on a path ending in /). */
export const ModelGetAnswer = answer(v.union([v.array(PresentedRecord), PresentedRecord, v.array(Partition)]))
export const RecordAnswer = answer(StoredRecord)
export const Cleared = answer(v.strictObject({ deleted: v.pipe(v.number(), v.integer()) }))

/** 404: no such class or record; 405: a transaction log's records do not change; 412: If-Match. */
export const RECORD_WRITE_ERRORS = errors(404, 405, 412)
