import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * sshd_config lines (GpuHostOptions.sshdConfig) of a GPU host that takes certificates signed by
 * the CA key `userCa` (its public half at `${userCa}.pub`) and no authorized key.
 */
export function certificateOnly(userCa: string) {
  return ({ sshDir }: { sshDir: string }): string[] => {
    const ca = path.join(sshDir, 'user_ca.pub');
    fs.copyFileSync(`${userCa}.pub`, ca);
    // The harness's own checks log in with its key: a certificate beside it lets them in.
    execFileSync(
      'ssh-keygen',
      ['-q', '-s', userCa, '-I', 'harness', '-n', 'root', path.join(sshDir, 'harness_ed25519.pub')],
      {
        stdio: 'pipe',
      },
    );
    return [`TrustedUserCAKeys ${ca}`, 'AuthorizedKeysFile none'];
  };
}
