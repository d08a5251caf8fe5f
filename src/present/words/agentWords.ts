/** What an agent's tools say when a restart or a check failed for another reason than the connection. */

export function notRestarted(unit: string, server: string, why: string): string {
  return `${unit} on ${server} was not restarted: ${why}`;
}

export function notVerified(server: string, why: string): string {
  return `${server}: not verified (${why}). Is it ready? kimi_status says; kimi_wait waits for it.`;
}
