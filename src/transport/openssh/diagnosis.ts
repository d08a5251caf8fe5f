/** What a refused OpenSSH login is explained with: the certificates offered, a Kerberos ticket, locked keys. I/O only. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { all, first, yes, type EffectiveConfig } from './effectiveConfig';
import { certificateProblem, describeCertificate } from './certificates';
import { hasKerberosTicket } from './clientFacts';
import { agentCertificates, agentSocketOf, certificatesOf } from './identities';
import type { AuthDiagnosis } from '../../present/words/opensshWords';

const succeeds = (cmd: string, args: string[], env?: NodeJS.ProcessEnv) =>
  new Promise<boolean>((resolve) => execFile(cmd, args, { timeout: 5000, env }, (err) => resolve(!err)));

/** `dir`: the transport's own folder, where agent certificates are written to be read by ssh-keygen -L. */
export async function diagnoseRefusal(
  config: EffectiveConfig,
  env: NodeJS.ProcessEnv,
  dir: string,
): Promise<AuthDiagnosis> {
  const user = first(config, 'user') ?? '';
  const { files, beside } = certificatesOf(config);
  const fromAgent = await agentCertificates(config, env);
  const agentFiles = fromAgent.map((line, i) => {
    const file = path.join(dir, `agent-cert-${i}.pub`);
    fs.writeFileSync(file, `${line}\n`, { mode: 0o600 });
    return file;
  });
  const certificateProblems: string[] = [];
  const certificates: string[] = [];
  const now = new Date();
  for (const file of [...new Set([...files, ...beside]), ...agentFiles]) {
    const info = await describeCertificate(file);
    if (!info) continue;
    const shown = agentFiles.includes(file) ? { ...info, file: `in ssh-agent` } : info;
    const problem = certificateProblem(shown, user, now);
    if (problem) certificateProblems.push(problem);
    else certificates.push(shown.file);
  }
  const gssapi = yes(config, 'gssapiauthentication') ? { hasTicket: await hasKerberosTicket(env) } : undefined;
  const lockedKeys: string[] = [];
  for (const id of all(config, 'identityfile')) {
    if (!fs.existsSync(id)) continue;
    // -P '': a key with a passphrase cannot be read this way.
    if (!(await succeeds('ssh-keygen', ['-y', '-P', '', '-f', id]))) lockedKeys.push(id);
  }
  const pkcs11 = first(config, 'pkcs11provider');
  const agentSocket = agentSocketOf(config, env);
  const tokenKeysInAgent =
    pkcs11 !== undefined && pkcs11 !== 'none' && agentSocket !== undefined
      ? await tokenKeysIn(pkcs11, agentSocket, env)
      : false;
  return {
    certificateProblems,
    certificates,
    lockedKeys,
    ...(gssapi ? { gssapi } : {}),
    ...(pkcs11 !== undefined && pkcs11 !== 'none' ? { pkcs11Provider: pkcs11 } : {}),
    ...(agentSocket !== undefined ? { agentSocket } : {}),
    ...(tokenKeysInAgent ? { tokenKeysInAgent } : {}),
  };
}

const output = (cmd: string, args: string[], env: NodeJS.ProcessEnv) =>
  new Promise<string>((resolve) =>
    execFile(cmd, args, { timeout: 5000, env, encoding: 'utf8' }, (err, stdout) => resolve(err ? '' : stdout)),
  );

/** Whether the agent holds a key of the token (`ssh-keygen -D` lists the token's public keys without its PIN). */
async function tokenKeysIn(provider: string, agentSocket: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const blobs = (text: string) => text.split('\n').flatMap((l) => l.split(' ')[1] ?? []);
  const token = blobs(await output('ssh-keygen', ['-D', provider], env));
  const held = new Set(blobs(await output('ssh-add', ['-L'], { ...env, SSH_AUTH_SOCK: agentSocket })));
  return token.some((b) => held.has(b));
}
