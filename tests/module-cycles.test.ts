// Some modules import each other at run time (directory entities cascade to one another; deleting a
// domain purges every registered table). That is safe only while no module uses an imported value
// while it is itself being loaded. Each module of such a cycle is imported here first thing in a
// fresh process: a value used too early fails the import with a ReferenceError.
import { expect, test } from 'bun:test'
import { Glob } from 'bun'
import { dirname, join, resolve } from 'node:path'

const root = join(import.meta.dir, '..')

/** Runtime imports between the project's modules (type-only imports are erased and do not count). */
async function runtimeGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>()
  for (const file of new Glob('{src,storage}/**/*.ts').scanSync(root)) {
    const text = await Bun.file(join(root, file)).text()
    const targets: string[] = []
    for (const m of text.matchAll(/^import\s+(type\s+)?(\{[^}]*\}|[\w*\s,]+)\s+from\s+'([^']+)'/gm)) {
      const names = m[2]!.trim()
      const onlyTypes =
        names.startsWith('{') &&
        names
          .slice(1, -1)
          .split(',')
          .every((n) => !n.trim() || n.trim().startsWith('type '))
      if (m[1] || onlyTypes) continue
      const spec = m[3]!
      const target = spec.startsWith('~/')
        ? `src/${spec.slice(2)}`
        : spec.startsWith('~storage/')
          ? `storage/${spec.slice(9)}`
          : spec.startsWith('.')
            ? resolve('/', dirname(file), spec).slice(1)
            : null
      if (target) targets.push(target.endsWith('.ts') ? target : `${target}.ts`)
    }
    graph.set(file, targets)
  }
  return graph
}

/** The modules that lie on some cycle of the graph. */
function onCycles(graph: Map<string, string[]>): string[] {
  const reaches = (from: string, to: string) => {
    const seen = new Set<string>()
    const stack = [...(graph.get(from) ?? [])]
    while (stack.length) {
      const next = stack.pop()!
      if (next === to) return true
      if (seen.has(next)) continue
      seen.add(next)
      stack.push(...(graph.get(next) ?? []))
    }
    return false
  }
  return [...graph.keys()].filter((m) => reaches(m, m)).sort()
}

test('every module on a runtime import cycle loads first in a fresh process', async () => {
  const modules = onCycles(await runtimeGraph())
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
