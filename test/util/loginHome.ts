// OpenSSH reads ~/.ssh/config from the login user's passwd home, whatever HOME says: a scenario
// that needs an SSH config of its own runs code-server in a mount namespace of its own, where the
// passwd home is a folder of the scenario's: its .ssh is the scenario's, every other entry a
// symbolic link to the real home's (seen through a second mount of it), so nothing else changes;
// the links stay in the folder, so commands run one after another in the same home.
// The machine's own home and its ~/.ssh are neither read nor written; the mounts end with the
// namespace, that is with code-server.
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

const SCRIPT = `set -eu
real=$1 orig=$2 home=$3
shift 3
mount --bind "$real" "$orig"
for e in "$orig"/* "$orig"/.[!.]* "$orig"/..?*; do
  { [ -e "$e" ] || [ -L "$e" ]; } || continue
  n=\${e##*/}
  [ "$n" = .ssh ] && continue
  { [ -e "$home/$n" ] || [ -L "$home/$n" ]; } && continue
  ln -s "$e" "$home/$n"
done
mount --bind "$home" "$real"
exec "$@"`;

export interface LoginHome {
  /** The folder that is ~/.ssh inside the namespace. */
  readonly sshDir: string;
  /** `command args...` run inside the namespace, with the home in place. */
  wrap(command: string, args: readonly string[]): { command: string; args: string[] };
  /**
   * Removes the mount point left in `dir` (empty outside the namespace); throws when it is not
   * empty, so that the caller never deletes through a mount of the real home.
   */
  release(): void;
}

/** A home with `sshConfig` as its ~/.ssh/config, under `dir` (a fresh folder of the caller's). */
export function loginHome(dir: string, sshConfig: string): LoginHome {
  const home = join(dir, 'home');
  const orig = join(dir, 'real-home');
  const sshDir = join(home, '.ssh');
  mkdirSync(sshDir, { recursive: true, mode: 0o700 });
  mkdirSync(orig, { mode: 0o700 });
  writeFileSync(join(sshDir, 'config'), sshConfig, { mode: 0o600 });
  const real = userInfo().homedir;
  return {
    sshDir,
    wrap: (command, args) => ({
      command: 'unshare',
      args: [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        SCRIPT,
        'login-home',
        real,
        orig,
        home,
        command,
        ...args,
      ],
    }),
    release: () => rmdirSync(orig),
  };
}
