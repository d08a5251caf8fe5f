/**
 * A PKCS#11 token in software (Debian's softhsm2, with opensc's pkcs11-tool) holding an RSA key
 * pair made on the token: its store in a folder of the test's own (SOFTHSM2_CONF), so this
 * machine's tokens are neither read nor touched. The private key never leaves the token; ssh,
 * ssh-agent and ssh-keygen reach it through the PKCS#11 module with SOFTHSM2_CONF in their
 * environment.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { waitFor } from '../util/waitFor';

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

/** Why this machine cannot make the token (a missing program or module), or undefined. */
export function softhsmMissing(): string | undefined {
  for (const p of [SOFTHSM_MODULE, '/usr/bin/softhsm2-util', '/usr/bin/pkcs11-tool'])
    if (!fs.existsSync(p))
      return `${p} is missing: apt-get install -y softhsm2 opensc (scripts/ensure-system-packages.sh)`;
  return undefined;
}

export interface Token {
  /** SOFTHSM2_CONF: whoever loads the module needs it. */
  readonly env: { readonly SOFTHSM2_CONF: string };
  readonly pin: string;
  /** The token's public key as an authorized_keys line (`ssh-keygen -D`). */
  readonly publicKey: string;
}

export function createToken(dir: string, pin = '246810'): Token {
  const tokens = path.join(dir, 'tokens');
  fs.mkdirSync(tokens, { recursive: true });
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const env = { SOFTHSM2_CONF: conf };
  const run = (file: string, args: string[]) =>
    execFileSync(file, args, { env: { ...process.env, ...env }, stdio: 'pipe', timeout: 60_000, encoding: 'utf8' });
  run('softhsm2-util', ['--init-token', '--free', '--label', 'kimi', '--pin', pin, '--so-pin', `so-${pin}`]);
  run('pkcs11-tool', [
    ...['--module', SOFTHSM_MODULE, '--token-label', 'kimi', '--login', '--pin', pin],
    ...['--keypairgen', '--key-type', 'rsa:2048', '--id', '01', '--label', 'ssh'],
  ]);
  const publicKey = run('ssh-keygen', ['-D', SOFTHSM_MODULE]).trim().split('\n')[0] ?? '';
  if (!/^ssh-rsa /.test(publicKey)) throw new Error(`ssh-keygen -D printed no RSA key: ${publicKey}`);
  return { env, pin, publicKey };
}

export interface TokenAgent {
  /** SSH_AUTH_SOCK / IdentityAgent of the agent. */
  readonly socket: string;
  stop(): Promise<void>;
}

/**
 * An ssh-agent (its socket in `dir`) holding the token's key, as a user loads it once in a
 * terminal: `ssh-add -s MODULE`, the PIN given to ssh-add. The agent loads the module itself
 * (SOFTHSM2_CONF in its environment) and signs with the token from then on, asking nothing.
 */
export async function tokenAgent(token: Token, dir: string): Promise<TokenAgent> {
  const env = { ...process.env, ...token.env };
  const socket = path.join(dir, 'agent.sock');
  const agent = spawn('ssh-agent', ['-D', '-a', socket], { env, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => agent.once('exit', () => resolve()));
  const stop = async () => {
    if (agent.exitCode === null && agent.signalCode === null) agent.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(() => fs.existsSync(socket), { message: 'ssh-agent listens' });
    const askpass = path.join(dir, 'askpass');
    fs.writeFileSync(askpass, `#!/bin/sh\necho '${token.pin}'\n`, { mode: 0o700 });
    execFileSync('ssh-add', ['-s', SOFTHSM_MODULE], {
      env: { ...env, SSH_AUTH_SOCK: socket, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: 'none' },
      stdio: 'pipe',
      timeout: 60_000,
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { socket, stop };
}
