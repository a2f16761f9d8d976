/**
 * The console's bundle carried by the compiled binary. From source it is undefined and the bundle is
 * built when first asked for (./bundle.ts); `scripts/build.ts` builds the bundle first and replaces
 * this module's text with the bundle's, so the binary needs neither the sources nor a bundler.
 */

/** The console's script and stylesheet. */
export interface ConsoleBundle {
  js: string
  css: string
}

export const embeddedBundle: ConsoleBundle | undefined = undefined
