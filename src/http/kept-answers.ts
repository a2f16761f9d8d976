/**
 * List answers kept until the next write: the database's generation (`Db.generation`) changes with
 * every write, this process's or another's, and the kept answers go with it. A list asked again
 * meanwhile skips parsing, planning, reading and presenting, and answers the same. Only for answers
 * that depend on the data and the request alone (a class whose records expire lists differently as
 * time passes: its lists are never kept). An answer over MAX_CHARS is not kept, and the kept ones
 * start again past TOTAL_CHARS. Calls that miss the same key while it is being made wait for that
 * one making (a hot list after a write is read once, not once per client).
 */
import type { Db } from '~storage/db'
import type { JsonText } from '~storage/json-text'

const MAX_CHARS = 256 * 1024
const TOTAL_CHARS = 16 * 1024 * 1024
/** Answers kept at most (an empty list asked with ever new cache-busting parameters costs its key). */
const MAX_ANSWERS = 10_000
/** What an answer costs besides its text and key, counted in characters. */
const ENTRY_COST = 256

export interface KeptAnswer {
  text: JsonText
  /** Headers that are part of the answer (X-Total-Count, X-Next-After). */
  headers: Record<string, string>
}

class KeptAnswers {
  private generation = -1
  private readonly answers = new Map<string, KeptAnswer>()
  /** Answers being made since the generation began, by key. */
  private readonly making = new Map<string, Promise<KeptAnswer>>()
  private chars = 0

  get(generation: number, key: string): KeptAnswer | undefined {
    if (generation !== this.generation) this.reset(generation)
    return this.answers.get(key)
  }

  /** `make` for `key`, shared with the calls that miss it meanwhile; kept when made in the same generation. */
  made(generation: number, key: string, make: () => Promise<KeptAnswer>): Promise<KeptAnswer> {
    const making = this.making.get(key)
    if (making) return making
    const made = make().then((answer) => {
      this.keep(generation, key, answer)
      return answer
    })
    this.making.set(key, made)
    // a making of an older generation was let go of by reset: only this one is removed
    const done = () => void (this.making.get(key) === made && this.making.delete(key))
    made.then(done, done)
    return made
  }

  keep(generation: number, key: string, answer: KeptAnswer): void {
    // a write that came while it was made has been seen by a later call: it is not kept
    if (generation !== this.generation) return
    if (answer.text.text.length > MAX_CHARS) return
    const chars = answer.text.text.length + key.length + ENTRY_COST
    if (this.chars + chars > TOTAL_CHARS || this.answers.size >= MAX_ANSWERS) this.reset(generation)
    this.answers.set(key, answer)
    this.chars += chars
  }

  private reset(generation: number): void {
    if (generation !== this.generation) this.making.clear() // what they read is older than the write
    this.generation = generation
    this.answers.clear()
    this.chars = 0
  }
}

const keptOf = new WeakMap<Db, KeptAnswers>()

/** The answer kept for `key` since the last write, or what `make` answers (kept where every write is seen). */
export async function keptAnswer(db: Db, key: string, make: () => Promise<KeptAnswer>): Promise<KeptAnswer> {
  const generation = db.generation?.()
  if (generation === undefined) return make()
  let kept = keptOf.get(db)
  if (!kept) {
    kept = new KeptAnswers()
    keptOf.set(db, kept)
  }
  return kept.get(generation, key) ?? kept.made(generation, key, make)
}
