/**
 * What the login tests share (ssh-login*.int.test.ts): the TOTP secret of the simulated hosts
 * with one-time codes, codes pam_oath takes (never a replayed one) or refuses, a recorder of the
 * questions asked, a transport straight to a host (or through jump hosts), sshd's log counts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoginAnswer, LoginQuestion } from '../../src/fleet/sessions/sessionFactory';
import type { SshEndpoint } from '../../src/transport/ssh/sshTargetTypes';
import { SshTransport } from '../../src/transport/ssh/sshTransport';
import type { SshTransportOptions } from '../../src/transport/ssh/sshOptions';
import type { GpuHost } from '../gpu-host/harness';
import { totpCode } from '../gpu-host/pamOath';
import { waitFor } from '../util/waitFor';

export const USER = 'kimi';
export const SECRET = '3132333435363738393031323334353637383930';

export { transportRejection as rejection } from '../util/rejection';

/** A code that none of the steps pam_oath accepts now (window=1: the previous, this and the next). */
export function wrongCode(): string {
  const valid = new Set([-1, 0, 1, 2].map((k) => totpCode(SECRET, Date.now() + k * 30_000)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!valid.has(c)) return c;
  }
}

const stepOf = (ms: number) => Math.floor(ms / 30_000);
const lastStep = new Map<GpuHost, number>();
/**
 * A code pam_oath takes on `h`: a step later than the last one given there (it refuses a
 * replayed code), within its window (this step or the next); waits for the clock otherwise.
 */
export async function freshCode(h: GpuHost): Promise<string> {
  const step = await waitFor(
    () => {
      const now = stepOf(Date.now());
      const next = Math.max(now, (lastStep.get(h) ?? -1) + 1);
      return next <= now + 1 ? next : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200, message: 'a TOTP step not used yet' },
  );
  lastStep.set(h, step);
  return totpCode(SECRET, step * 30_000);
}

export type Login = (q: LoginQuestion) => Promise<LoginAnswer | undefined>;

/** The questions asked, and the answers' verdicts (settled). */
export function answering(answer: (q: LoginQuestion) => string | undefined | Promise<string | undefined>) {
  const asked: LoginQuestion[] = [];
  const verdicts: boolean[] = [];
  const login: Login = async (q) => {
    asked.push(q);
    const a = await answer(q);
    return a === undefined ? undefined : { answers: [a], settled: (ok) => verdicts.push(ok) };
  };
  return { asked, verdicts, login };
}

export function endpoint(h: GpuHost, alias: string, identityFiles = [h.clientKeyPath]): SshEndpoint {
  return {
    alias,
    hostName: h.sshHost,
    port: h.sshPort,
    username: USER,
    identityFiles,
    identityFilesConfigured: identityFiles.length > 0,
  };
}

/** An SshTransport to `h` as kimi (through `jumps`), host keys from a known_hosts file in `dir`. */
export function transportTo(
  dir: string,
  h: GpuHost,
  login: Login,
  o: { jumps?: GpuHost[]; over?: Partial<SshTransportOptions>; identityFiles?: string[] } = {},
): SshTransport {
  const knownHostsFile = path.join(dir, 'known_hosts');
  fs.writeFileSync(knownHostsFile, [h, ...(o.jumps ?? [])].map((x) => `${x.knownHostsLine()}\n`).join(''));
  return new SshTransport({
    target: {
      ...endpoint(h, 'gpu', o.identityFiles),
      jumps: (o.jumps ?? []).map((j, i) => endpoint(j, i === 0 ? 'bastion' : `bastion${i + 1}`)),
    },
    knownHostsFile,
    agentSocket: '',
    decideUnknownHostKey: async () => 'reject',
    requestPassphrase: async () => undefined,
    requestLogin: login,
    ...o.over,
  });
}

export const sshdCount = (h: GpuHost, re: RegExp): number => h.sshdLog().filter((l) => re.test(l)).length;
/**
 * Connections of kimi's that sshd ended before the login completed (a refused or abandoned one).
 * Not those of logged-in sessions: a session closed by the previous test ends later, and would
 * otherwise pass for the end of the connection a test waits for.
 */
export const endedBeforeLogin = (h: GpuHost): number =>
  sshdCount(h, /(Connection closed by|Disconnected from) authenticating user kimi|Timeout before authentication/);
