/**
 * The address helpers now live in src/net/cidr.ts. This re-export only keeps src/http/gateway and its
 * tests compiling until the gateway leaves src/http; delete it then.
 */
export * from '../net/cidr'
