// The import graph of src/, storage/ and routes/ must have no circle, type imports included: a
// circle of types is a circle of design (Deps once tied 73 files together that way; now it is in none). No circle
// remains: the list of known ones below is empty and stays so. Modules that import each other at run
// time are safe only while none uses an imported value while it is itself being loaded, so each is
// also imported first thing in a fresh process: a value used too early fails with a ReferenceError.
import { expect, test } from 'bun:test'
import { Glob } from 'bun'
import { dirname, join, resolve } from 'node:path'

const root = join(import.meta.dir, '..')

/**
 * Circles not broken yet, one line per strongly connected component (its files, sorted): none since
 * issue 36 (declarations apart from rules; the route table holds routes without their handlers). Never add one.
 */
const KNOWN: string[] = []

interface Edge {
  to: string
  /** `import type`, or every name imported is a type: erased at run time. */
  typeOnly: boolean
}

/** Imports and re-exports between the project's modules (`~/` and `~storage/` resolved). */
async function importGraph(): Promise<Map<string, Edge[]>> {
  const graph = new Map<string, Edge[]>()
  for (const file of new Glob('{src,storage,routes}/**/*.ts').scanSync(root)) {
    const text = await Bun.file(join(root, file)).text()
    const edges: Edge[] = []
    const found = text.matchAll(
      /^(?:import|export)\s+(type\s+)?(\{[^}]*\}|[\w*\s,]+)\s+from\s+'([^']+)'|^import\s+'([^']+)'/gm,
    )
    for (const m of found) {
      const names = m[2]?.trim() ?? ''
      const onlyTypes =
        names.startsWith('{') &&
        names
          .slice(1, -1)
          .split(',')
          .every((n) => !n.trim() || n.trim().startsWith('type '))
      const spec = (m[3] ?? m[4])!
      const target = spec.startsWith('~/')
        ? `src/${spec.slice(2)}`
        : spec.startsWith('~storage/')
          ? `storage/${spec.slice(9)}`
          : spec.startsWith('.')
            ? resolve('/', dirname(file), spec).slice(1)
            : null
      if (target) edges.push({ to: target.endsWith('.ts') ? target : `${target}.ts`, typeOnly: !!m[1] || onlyTypes })
    }
    graph.set(file, edges)
  }
  return graph
}

/** The strongly connected components of more than one module (Tarjan), each as its sorted files. */
function circles(graph: Map<string, Edge[]>, runtimeOnly: boolean): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    onStack.add(v)
    for (const { to, typeOnly } of graph.get(v) ?? []) {
      if ((runtimeOnly && typeOnly) || !graph.has(to)) continue
      if (!index.has(to)) {
        visit(to)
        low.set(v, Math.min(low.get(v)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1) found.push(component.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

test('no import circle, type imports included, beyond the known ones (which may only shrink)', async () => {
  const now = circles(await importGraph(), false).map((c) => c.join(' '))
  expect(now.filter((c) => !KNOWN.includes(c))).toEqual([]) // a new circle, or a known one grown
  expect(KNOWN.filter((c) => !now.includes(c))).toEqual([]) // a circle broken or shrunk: update KNOWN
})

test('every module on a runtime import cycle loads first in a fresh process', async () => {
  const modules = circles(await importGraph(), true)
    .flat()
    .sort()
  expect(modules.length).toBeLessThan(20) // a cycle that keeps growing is a design problem, not a test to loosen
  const failures: string[] = []
  await Promise.all(
    modules.map(async (module) => {
      const child = Bun.spawn([process.execPath, '-e', `await import(${JSON.stringify(join(root, module))})`], {
        cwd: root,
        stdout: 'ignore',
        stderr: 'pipe',
      })
      if ((await child.exited) !== 0) failures.push(`${module}: ${(await new Response(child.stderr).text()).trim()}`)
    }),
  )
  expect(failures).toEqual([])
})
