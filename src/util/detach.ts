/**
 * A copy of `s` that shares no memory with the string it was cut from. V8 keeps a slice
 * (`big.slice(0, 300)`, `trim()`, a regex group) pointing into its parent: keeping 300
 * characters of a 10 MB journal line would keep the 10 MB. UTF-16 round-trips every code unit.
 */
export function detach(s: string): string {
  return Buffer.from(s, 'utf16le').toString('utf16le');
}
