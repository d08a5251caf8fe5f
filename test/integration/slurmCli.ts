/**
 * The built command line (`node dist/cli.js`) as the Slurm tests run it: a servers file naming
 * the login user's job on the simulated host, and a run of the CLI with a home of its own.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GpuHost } from '../gpu-host/harness';
import { loginAs, serverEntry } from './simHost';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A servers file in `dir` for the server "cluster": the job `job` of `user`, its script, and the url when given. */
export function slurmCliConfig(
  dir: string,
  host: GpuHost,
  user: string,
  entry: { readonly job: string; readonly script: string; readonly url?: string },
): string {
  const file = path.join(dir, `${entry.job}.json`);
  const knownHosts = path.join(dir, 'known_hosts');
  fs.writeFileSync(knownHosts, `${host.knownHostsLine()}\n`);
  const server = {
    ...serverEntry(host, 'cluster'),
    ...loginAs(host, user, false),
    unit: undefined,
    slurm: { job: entry.job, script: entry.script },
    ...(entry.url ? { url: entry.url } : {}),
  };
  fs.writeFileSync(
    file,
    JSON.stringify({
      servers: [server],
      knownHostsFile: knownHosts,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
    }),
  );
  return file;
}

/** How to start a command instead of directly: e.g. in a mount namespace with a login home of its own (loginHome.ts). */
export type Wrap = (command: string, args: readonly string[]) => { command: string; args: string[] };

/**
 * `node dist/cli.js ARGS` with `dir` as its home (and `env` added), started through `wrap` when
 * given: its exit code, stdout (trimmed) and stderr.
 */
export function runCli(
  dir: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  wrap: Wrap = (command, rest) => ({ command, args: [...rest] }),
): Promise<CliRun> {
  return new Promise((resolve) => {
    const run = wrap(process.execPath, [CLI, ...args]);
    const child = spawn(run.command, run.args, {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        XDG_CONFIG_HOME: path.join(dir, 'config'),
        XDG_STATE_HOME: path.join(dir, 'state'),
        LANG: 'C.UTF-8',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout: stdout.trim(), stderr }));
  });
}
