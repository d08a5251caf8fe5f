/**
 * Which SSH agent to ask, in OpenSSH's order, and an ssh2 agent that asks it.
 *
 * Order (`agentCandidates`, pure, the platform injected): `IdentityAgent` from ~/.ssh/config
 * (`none` = no agent); else `$SSH_AUTH_SOCK`; on Windows then the Windows OpenSSH agent's pipe
 * `\\.\pipe\openssh-ssh-agent`, then Pageant. The first one that answers is used.
 *
 * `SelectedAgent` is an ssh2 `BaseAgent`: it lists the keys of the first agent that answers,
 * keeps only the configured identities under `IdentitiesOnly`, and remembers which keys it
 * offered and which it could not sign with, so a key file the agent already offered is not
 * unlocked again (no passphrase is asked for it).
 */
import {
  BaseAgent,
  createAgent,
  type IdentityCallback,
  type ParsedKey,
  type SignCallback,
  type SigningRequestOptions,
} from 'ssh2';
import { fingerprintSha256 } from './knownHosts';
import { NoAgentError } from '../errors';
import { NO_AGENT } from '../../present/words/sshWords';

export const WINDOWS_AGENT_PIPE = '\\\\.\\pipe\\openssh-ssh-agent';

export type AgentCandidate =
  | {
      readonly kind: 'socket';
      readonly path: string;
      readonly source: 'IdentityAgent' | 'SSH_AUTH_SOCK' | 'Windows OpenSSH agent' | 'agentSocket option';
    }
  | { readonly kind: 'pageant'; readonly source: 'Pageant' };

export interface AgentEnv {
  readonly platform: NodeJS.Platform;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** IdentityAgent of ~/.ssh/config, already expanded; `none` disables the agent; undefined = not set. */
  readonly identityAgent?: string;
}

/** The agents to try, first to last. */
export function agentCandidates(e: AgentEnv): AgentCandidate[] {
  if (e.identityAgent !== undefined) {
    if (e.identityAgent === '' || e.identityAgent.toLowerCase() === 'none') return [];
    return [{ kind: 'socket', path: e.identityAgent, source: 'IdentityAgent' }];
  }
  const out: AgentCandidate[] = [];
  const sock = e.env.SSH_AUTH_SOCK;
  if (sock) out.push({ kind: 'socket', path: sock, source: 'SSH_AUTH_SOCK' });
  if (e.platform === 'win32') {
    if (sock !== WINDOWS_AGENT_PIPE)
      out.push({ kind: 'socket', path: WINDOWS_AGENT_PIPE, source: 'Windows OpenSSH agent' });
    out.push({ kind: 'pageant', source: 'Pageant' });
  }
  return out;
}

export function describeAgent(c: AgentCandidate): string {
  return c.kind === 'pageant' ? 'Pageant' : `ssh-agent ${c.path} (${c.source})`;
}

/** The agent's keys to offer: all of them, or under IdentitiesOnly those whose public key is configured. */
export function selectIdentities<K extends { getPublicSSH(): Buffer }>(
  keys: readonly K[],
  allowed: readonly Buffer[] | undefined,
): K[] {
  if (allowed === undefined) return [...keys];
  return keys.filter((k) => {
    const blob = k.getPublicSSH();
    return allowed.some((a) => a.equals(blob));
  });
}

/** ssh2's own agent for a candidate: sockets and named pipes (OpenSSHAgent, Cygwin sockets on Windows), or Pageant. */
export function createSsh2Agent(c: AgentCandidate): BaseAgent {
  return createAgent(c.kind === 'pageant' ? 'pageant' : c.path);
}

export interface SelectedAgentOptions {
  /** IdentitiesOnly: the public keys of the configured identity files. */
  readonly allowed?: readonly Buffer[];
  readonly create?: (c: AgentCandidate) => BaseAgent;
}

export class SelectedAgent extends BaseAgent<ParsedKey> {
  private active?: BaseAgent;
  private readonly offeredKeys: ParsedKey[] = [];
  private readonly signFailed = new Set<string>();
  /** What happened, for the auth error's "tried" list and the log. */
  summary = '';
  /** Number of keys offered to the server (after IdentitiesOnly). */
  offered = 0;

  constructor(
    private readonly candidates: readonly AgentCandidate[],
    private readonly options: SelectedAgentOptions = {},
  ) {
    super();
    this.summary = candidates.map(describeAgent).join(', then ');
  }

  /** True when the agent offered this public key and did not fail to sign with it. */
  offeredKey(blob: Buffer): boolean {
    return this.offeredKeys.some((k) => k.getPublicSSH().equals(blob)) && !this.signFailed.has(blob.toString('base64'));
  }

  getIdentities(cb: IdentityCallback<ParsedKey>): void {
    const create = this.options.create ?? createSsh2Agent;
    const failures: string[] = [];
    const tryAt = (i: number): void => {
      if (i >= this.candidates.length) {
        this.summary = failures.length > 0 ? failures.join('; ') : 'no ssh-agent';
        // An empty list, not an error: ssh2 would report an agent error as a connection error.
        cb(undefined, []);
        return;
      }
      const c = this.candidates[i];
      let agent: BaseAgent;
      try {
        agent = create(c);
      } catch (err) {
        failures.push(`${describeAgent(c)}: ${(err as Error).message}`);
        tryAt(i + 1);
        return;
      }
      let answered = false;
      agent.getIdentities((err, keys) => {
        if (answered) return;
        answered = true;
        if (err || !keys) {
          failures.push(`${describeAgent(c)}: ${err?.message ?? 'no answer'}`);
          tryAt(i + 1);
          return;
        }
        this.active = agent;
        const parsed = keys.filter(isParsedKey);
        const chosen = selectIdentities(parsed, this.options.allowed);
        this.offeredKeys.push(...chosen);
        this.offered = chosen.length;
        const fps = chosen.map((k) => fingerprintSha256(k.getPublicSSH()));
        const only =
          this.options.allowed !== undefined ? ` (IdentitiesOnly: ${chosen.length} of ${parsed.length} keys)` : '';
        this.summary = `${describeAgent(c)}${only}${fps.length > 0 ? ` ${fps.join(' ')}` : ': no keys'}`;
        cb(undefined, chosen);
      });
    };
    tryAt(0);
  }

  sign(pubKey: ParsedKey, data: Buffer, options: SigningRequestOptions, cb?: SignCallback): void;
  sign(pubKey: ParsedKey, data: Buffer, cb: SignCallback): void;
  sign(
    pubKey: ParsedKey,
    data: Buffer,
    optionsOrCb: SigningRequestOptions | SignCallback,
    maybeCb?: SignCallback,
  ): void {
    const cb = (typeof optionsOrCb === 'function' ? optionsOrCb : maybeCb) ?? (() => undefined);
    const options = typeof optionsOrCb === 'function' ? {} : optionsOrCb;
    const agent = this.active;
    if (!agent) {
      cb(new NoAgentError(NO_AGENT));
      return;
    }
    agent.sign(pubKey, data, options, (err, sig) => {
      if (err) this.signFailed.add(pubKey.getPublicSSH().toString('base64'));
      cb(err, sig);
    });
  }
}

function isParsedKey(k: unknown): k is ParsedKey {
  return typeof k === 'object' && k !== null && typeof (k as ParsedKey).getPublicSSH === 'function';
}
