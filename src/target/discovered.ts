/**
 * A host's model servers as a target kind finds them ("Kimi Service: Add server", `kimi-service
 * discover`), and the name a new `kimiService.servers` entry gets. Pure; each kind that can list
 * a host's servers gives a HostDiscovery (target.ts lists them).
 */
import type { HostCommand } from '../transport/shell';

export interface DiscoveredUnit {
  /** What the server entry names as its `unit`: e.g. "sglang-k26.service". */
  readonly unit: string;
  readonly description: string;
  readonly activeState: string;
  readonly fragmentPath: string;
  /** The command line that launches the model server. */
  readonly argv: readonly string[];
  readonly modelPath: string | undefined;
  /** The server's address as seen from the host, from --host/--port. */
  readonly url: string;
}

/** One remote command that lists the host's servers of a kind, and the reader of its output. */
export interface HostDiscovery {
  /** A request as every Target operation's (run through `targetIo`); its output's first line is the login's uid (`id -u`): restarts need sudo when it is not root. */
  readonly command: HostCommand;
  parse(stdout: string): DiscoveredUnit[];
}

/** "gpu1-sglang-k26" (host, then the unit without .service), made unique among `taken`. */
export function proposeServerName(host: string, unit: string, taken: readonly string[]): string {
  const base = `${host}-${unit.replace(/\.service$/, '')}`.slice(0, 60);
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** Why a name typed by the user cannot be used, or undefined when it can. */
export function serverNameProblem(name: string, taken: readonly string[]): string | undefined {
  if (name.trim() === '') return 'A name is needed.';
  if (name.length > 64) return 'At most 64 characters.';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'No control characters.';
  if (taken.includes(name)) return `"${name}" is already the name of a server in kimiService.servers.`;
  return undefined;
}
