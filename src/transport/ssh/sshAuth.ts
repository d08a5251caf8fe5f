/**
 * Authentication as OpenSSH does it: the agent first (sshAgent.ts), then the identity files,
 * whose passphrases are asked only for keys the agent could not sign with, then
 * keyboard-interactive and password (interactiveLogin.ts) where the server asks for them.
 */
import * as fs from 'node:fs';
import {
  utils as ssh2Utils,
  type AnyAuthMethod,
  type AuthHandlerMiddleware,
  type AuthenticationType,
  type ParsedKey,
} from 'ssh2';
import type { HandshakeDeadline } from './handshake';
import { readIdentityPublicKey } from './identityFiles';
import { HopLogin } from './interactiveLogin';
import { agentCandidates, SelectedAgent, type AgentCandidate } from './sshAgent';
import type { SshEndpoint } from './sshTargetTypes';
import type { DialContext } from './sshOptions';
import type { TransportError } from '../transport';
import { agentKeyTried } from '../../present/words/connectionWords';
import {
  keyNoPassphrase,
  keyNotFound,
  keyPublicOnly,
  keyUnparsable,
  keyUnreadable,
  keyWrongPassphrase,
  serverOnlyAllows,
} from '../../present/words/sshWords';

type AuthStep =
  | { readonly kind: 'key'; readonly path: string; readonly configured: boolean }
  | { readonly kind: 'agent' };

/** The agents to ask for this hop, in order. */
function agentsFor(ctx: DialContext, ep: SshEndpoint): AgentCandidate[] {
  const forced = ctx.options.agentSocket;
  if (forced !== undefined) return forced ? [{ kind: 'socket', path: forced, source: 'agentSocket option' }] : [];
  return agentCandidates({
    platform: ctx.options.platform ?? process.platform,
    env: ctx.options.env ?? process.env,
    identityAgent: ep.identityAgent,
  });
}

/**
 * OpenSSH's order: the agent's keys first (under IdentitiesOnly only those of the identity
 * files), then the identity files the agent did not already offer; a passphrase is asked only
 * when a file's key must be unlocked because the agent could not sign with it.
 */
export function authHandler(
  ctx: DialContext,
  ep: SshEndpoint,
  deadline: HandshakeDeadline,
  tried: string[],
  abort: (err: TransportError) => void,
  isOver: () => boolean,
): {
  handler: AuthHandlerMiddleware;
  finish(accepted: boolean): void;
  loginRefusal(): string | undefined;
  /** A login question is open (the user has not answered yet). */
  asking(): boolean;
} {
  const agents = agentsFor(ctx, ep);
  const steps: AuthStep[] = [
    ...(agents.length > 0 ? [{ kind: 'agent' as const }] : []),
    ...ep.identityFiles.map((p) => ({ kind: 'key' as const, path: p, configured: ep.identityFilesConfigured })),
  ];
  let agent: SelectedAgent | undefined;
  const login = new HopLogin(ctx, ep, deadline, abort, isOver);
  let lastOffered: { index: number; agent?: SelectedAgent } | undefined;
  /** The last key offered got a failure (rejected), a partial success (accepted: the server asks for more), or, at the end, nothing. */
  const settleLast = (outcome: 'rejected' | 'accepted' | 'none') => {
    if (lastOffered === undefined) return;
    const a = lastOffered.agent;
    const mark = { rejected: ' (rejected)', accepted: ' (accepted; the server asks for more)', none: '' }[outcome];
    tried[lastOffered.index] = a ? `${a.summary}${a.offered > 0 ? mark : ''}` : `${tried[lastOffered.index]}${mark}`;
    if (a) ctx.log(agentKeyTried(ep.alias, tried[lastOffered.index]));
    lastOffered = undefined;
  };

  // ssh2 passes null methods on the first call; `false` ends authentication (not in the typings).
  const handler = (
    methodsLeft: AuthenticationType[] | null,
    partial: boolean | null,
    next: (m: AnyAuthMethod) => void,
  ): void => {
    settleLast(partial === true ? 'accepted' : 'rejected');
    login.settle(partial === true, methodsLeft);
    const allows = (m: AuthenticationType) => methodsLeft === null || methodsLeft.includes(m);
    const advance = async (): Promise<AnyAuthMethod | false> => {
      while (steps.length > 0) {
        const step = steps.shift()!;
        if (!allows('publickey')) continue;
        if (step.kind === 'agent') {
          const allowed = ep.identitiesOnly ? await configuredPublicKeys(ep.identityFiles) : undefined;
          agent = new SelectedAgent(agents, allowed ? { allowed } : {});
          tried.push(agent.summary);
          lastOffered = { index: tried.length - 1, agent };
          return { type: 'agent', username: ep.username, agent };
        }
        if (agent) {
          const pub = await readIdentityPublicKey(step.path);
          if (pub && agent.offeredKey(pub)) continue; // the agent offered this very key already
        }
        const key = await loadKey(ctx, step, deadline, tried);
        if (key === undefined) continue;
        tried.push(step.path);
        lastOffered = { index: tried.length - 1 };
        return { type: 'publickey', username: ep.username, key };
      }
      const viaLogin = await login.next(methodsLeft, tried);
      if (viaLogin !== false) return viaLogin;
      if (methodsLeft && !methodsLeft.includes('publickey')) tried.push(serverOnlyAllows(methodsLeft));
      return false;
    };
    const end = () => next(false as unknown as AnyAuthMethod);
    advance().then((m) => (m === false ? end() : next(m)), end);
  };
  return {
    handler,
    finish: (accepted) => {
      settleLast('none');
      login.close();
      login.settle(accepted);
    },
    loginRefusal: () => login.refusal,
    asking: () => login.asking,
  };
}

/** The parsed private key, or undefined to skip it (missing, cancelled, unreadable, public only). */
async function loadKey(
  ctx: DialContext,
  step: { path: string; configured: boolean },
  deadline: HandshakeDeadline,
  tried: string[],
): Promise<ParsedKey | undefined> {
  let data: Buffer;
  try {
    data = await fs.promises.readFile(step.path);
  } catch (err) {
    if (step.configured)
      tried.push((err as NodeJS.ErrnoException).code === 'ENOENT' ? keyNotFound(step.path) : keyUnreadable(step.path));
    return undefined;
  }
  let parsed = ssh2Utils.parseKey(data, ctx.passphrases.get(step.path));
  if (!(parsed instanceof Error)) return privateOnly(parsed, step.path, tried);
  if (!/passphrase|encrypted/i.test(parsed.message)) {
    tried.push(keyUnparsable(step.path, parsed.message));
    return undefined;
  }
  for (let i = 0; i < 3; i++) {
    deadline.pause();
    let passphrase: string | undefined;
    try {
      passphrase = await ctx.options.requestPassphrase(step.path, i > 0 || ctx.passphrases.has(step.path));
    } finally {
      deadline.resume();
    }
    if (passphrase === undefined) {
      tried.push(keyNoPassphrase(step.path));
      return undefined;
    }
    parsed = ssh2Utils.parseKey(data, passphrase);
    if (!(parsed instanceof Error)) {
      ctx.passphrases.set(step.path, passphrase);
      return privateOnly(parsed, step.path, tried);
    }
  }
  ctx.passphrases.delete(step.path);
  tried.push(keyWrongPassphrase(step.path));
  return undefined;
}

/** A public key file (IdentityFile ~/.ssh/key.pub, as agent users write) selects agent keys but cannot sign. */
function privateOnly(key: ParsedKey, file: string, tried: string[]): ParsedKey | undefined {
  if (key.isPrivateKey()) return key;
  tried.push(keyPublicOnly(file));
  return undefined;
}

async function configuredPublicKeys(files: readonly string[]): Promise<Buffer[]> {
  const keys = await Promise.all(files.map((f) => readIdentityPublicKey(f)));
  return keys.filter((k): k is Buffer => k !== undefined);
}
