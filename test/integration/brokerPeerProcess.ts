/**
 * A process of the broker's integration tests (brokerPeer.ts, the core as a window runs it),
 * started with its settings and broker folder; its JSON lines on stdout collected, its commands
 * written to its stdin.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { waitFor } from '../util/waitFor';

const PEER = path.join(__dirname, 'brokerPeer.ts');

export type Line = Record<string, unknown>;

export interface Peer {
  readonly child: ChildProcess;
  readonly lines: Line[];
  send(command: string): void;
  /** The first line (from `from` on) that `match` accepts. */
  next(match: (line: Line) => boolean, what: string, from?: number): Promise<Line>;
}

export function startPeer(settingsFile: string, brokerDir: string): Peer {
  const child = spawn(
    process.execPath,
    ['--require', 'tsx/cjs', '--import', 'tsx/esm', PEER, settingsFile, brokerDir],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const lines: Line[] = [];
  let pending = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop()!;
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as Line);
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return {
    child,
    lines,
    send: (command) => child.stdin!.write(`${command}\n`),
    next: (match, what, from = 0) =>
      waitFor(() => lines.slice(from).find(match), {
        timeoutMs: 120_000,
        message: `${what} (pid ${child.pid}); seen: ${JSON.stringify(lines.slice(-8))} ${stderr.slice(-500)}`,
      }),
  };
}

export const role = (r: string) => (l: Line) => l.role === r;
