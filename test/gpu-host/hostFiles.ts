/**
 * The files the simulated GPU host runs (the stand-ins of bin/, their lib/, the simulator and the
 * published logs it replays), placed at each harness start in the fixture, where the host's
 * unprivileged login users can read them. The checkout itself may sit where only its owner can
 * (a clone under a 0700 folder: `mktemp -d`, /root): the stand-ins run as `kimi` would then fail
 * with "Cannot find module". See docs/development.md.
 *
 * Layout under `dir` (the same relative paths as in the repository, so the simulator's own
 * `__dirname`-relative paths, e.g. replay.js's ../../fixtures/real-logs, hold unchanged):
 *   dir/gpu-host/bin/*.js  dir/gpu-host/lib/*.js  dir/gpu-host/sglang-sim/*.js  dir/fixtures/real-logs/*
 * Folders 0755; files readable by all (placeReadable) whatever the clone's umask made them.
 * Nothing here needs node_modules.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as fsp from 'fs/promises';
import * as path from 'path';

// Both test/gpu-host/ and a bundle of it under out/desktop/ sit two levels below the repository.
const REPO = path.resolve(__dirname, '..', '..');
const SOURCES: ReadonlyArray<readonly [from: string, to: string]> = [
  ['test/gpu-host/bin', 'gpu-host/bin'],
  ['test/gpu-host/lib', 'gpu-host/lib'],
  ['test/gpu-host/sglang-sim', 'gpu-host/sglang-sim'],
  ['test/fixtures/real-logs', 'fixtures/real-logs'],
];

export interface HostFiles {
  dir: string;
  /** bin/NAME.js of a stand-in (systemctl, journalctl, nvidia-smi, sudo). */
  standIn(name: string): string;
  simMain: string;
  vllmSimMain: string;
}

export function hostFilesAt(dir: string): HostFiles {
  const sim = path.join(dir, 'gpu-host', 'sglang-sim');
  return {
    dir,
    standIn: (name) => path.join(dir, 'gpu-host', 'bin', `${name}.js`),
    simMain: path.join(sim, 'main.js'),
    vllmSimMain: path.join(sim, 'vllm.js'),
  };
}

/**
 * A hard link where the file is readable by all already (its folders are what the link gets
 * around; instant, and the replay logs are 2 MB), else (another filesystem, a 0600 file from a
 * umask 077 clone) a copy made 0644.
 */
async function placeReadable(src: string, dst: string): Promise<void> {
  if (((await fsp.stat(src)).mode & 0o004) !== 0) {
    try {
      await fsp.link(src, dst);
      return;
    } catch {
      /* EXDEV, EPERM (fs.protected_hardlinks): copy */
    }
  }
  await fsp.copyFile(src, dst);
  await fsp.chmod(dst, 0o644);
}

async function copyReadable(from: string, to: string): Promise<void> {
  await fsp.mkdir(to, { recursive: true });
  await fsp.chmod(to, 0o755);
  await Promise.all(
    (await fsp.readdir(from, { withFileTypes: true })).map(async (e) => {
      const src = path.join(from, e.name);
      const dst = path.join(to, e.name);
      if (e.isDirectory()) await copyReadable(src, dst);
      else if (e.isFile()) await placeReadable(src, dst);
    }),
  );
}

/** Places the host's files in `dir` (created 0755; its parents are the caller's to open). */
export async function installHostFiles(dir: string): Promise<HostFiles> {
  for (const d of [dir, path.join(dir, 'gpu-host'), path.join(dir, 'fixtures')]) {
    await fsp.mkdir(d, { recursive: true });
    await fsp.chmod(d, 0o755); // whatever the umask
  }
  await Promise.all(SOURCES.map(([from, to]) => copyReadable(path.join(REPO, from), path.join(dir, to))));
  return hostFilesAt(dir);
}

export interface PathNode {
  mode: number;
  uid: number;
  gid: number;
  isDirectory: boolean;
}
export interface Account {
  name: string;
  uid: number;
  gids: readonly number[];
}

/** Whether `who` holds permission bit `bit` (4 read, 1 search/execute) on `node`, as the kernel decides (uid, then group, then other). */
function allows(node: PathNode, who: Account, bit: number): boolean {
  if (who.uid === 0) return true;
  if (node.uid === who.uid) return ((node.mode >> 6) & bit) === bit;
  if (who.gids.includes(node.gid)) return ((node.mode >> 3) & bit) === bit;
  return (node.mode & bit) === bit;
}

function modeString(n: PathNode): string {
  const rwx = (b: number) => `${b & 4 ? 'r' : '-'}${b & 2 ? 'w' : '-'}${b & 1 ? 'x' : '-'}`;
  return `${n.isDirectory ? 'd' : '-'}${rwx(n.mode >> 6)}${rwx(n.mode >> 3)}${rwx(n.mode)}`;
}

/**
 * Why `who` cannot reach `target` (an absolute, symlink-free path): the first folder on the way
 * it may not search, or the target itself it may not read (and, with `execute`, run). undefined
 * when nothing in the modes stands in the way. `stat` returns undefined for a missing path.
 */
export function accessBlocker(
  target: string,
  who: Account,
  stat: (p: string) => PathNode | undefined,
  o: { execute?: boolean } = {},
): string | undefined {
  const parts = target.split('/').filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const p = `/${parts.slice(0, i).join('/')}`;
    const node = stat(p);
    if (!node) return `${p} does not exist`;
    const last = i === parts.length;
    if (!last || node.isDirectory) {
      if (!allows(node, who, 1)) return `${who.name} may not enter ${p} (${modeString(node)}, owner uid ${node.uid})`;
      continue;
    }
    const need = o.execute ? 5 : 4;
    if (!allows(node, who, need))
      return `${who.name} may not ${o.execute ? 'run' : 'read'} ${p} (${modeString(node)}, owner uid ${node.uid})`;
  }
  return undefined;
}

function statNode(p: string): PathNode | undefined {
  try {
    const s = fs.statSync(p);
    return { mode: s.mode & 0o7777, uid: s.uid, gid: s.gid, isDirectory: s.isDirectory() };
  } catch {
    return undefined;
  }
}

function accountOf(name: string, uid: number): Account {
  const r = spawnSync('id', ['-G', name], { encoding: 'utf8' });
  return { name, uid, gids: r.status === 0 ? r.stdout.trim().split(/\s+/).map(Number) : [] };
}

/**
 * Throws, saying which path is in the way, unless the login user can run `node` on the copied
 * stand-ins (tried for real: node started as the user reads them). Node itself cannot be copied
 * (its shared libraries, its install prefix): when it lives under a folder the user may not
 * enter (e.g. nvm under /root), the suite cannot run and says so.
 */
export function assertUserCanRun(
  user: string,
  id: { uid: number; gid: number },
  node: string,
  files: HostFiles,
  names: readonly string[],
): void {
  const scripts = names.map((n) => files.standIn(n));
  // setpriv (util-linux): the user's uid, gid and groups, as sshd's login gives them. A shell
  // execs node, as the stand-in wrappers do: setpriv's own exec of it passes where the user's would not.
  const r = spawnSync(
    'setpriv',
    [
      `--reuid=${id.uid}`,
      `--regid=${id.gid}`,
      '--init-groups',
      '--',
      '/bin/sh',
      '-c',
      'exec "$0" "$@"',
      node,
      '-e',
      'for (const f of process.argv.slice(1)) require("fs").accessSync(f, require("fs").constants.R_OK)',
      ...scripts,
    ],
    { cwd: '/', encoding: 'utf8', env: { PATH: '/usr/bin:/bin' }, timeout: 30_000 },
  );
  if (r.status === 0) return;
  if (r.error) throw new Error(`setpriv (util-linux) could not start node as ${user}: ${r.error.message}`);
  const who = accountOf(user, id.uid);
  const nodeReal = fs.realpathSync(node);
  const nodeWhy = accessBlocker(nodeReal, who, statNode, { execute: true });
  if (nodeWhy || r.status === 127 || r.status === 126) {
    throw new Error(
      `The simulated GPU host cannot run: its login user ${user} cannot run node (${nodeReal}): ${nodeWhy ?? r.stderr.trim()}. ` +
        'The stand-ins the user runs are node scripts, and node cannot be copied out of its install; run the tests with a node every user can run (e.g. /usr/bin/node, or an nvm install outside /root).',
    );
  }
  const why = scripts.map((s) => accessBlocker(s, who, statNode)).find(Boolean);
  throw new Error(
    `The simulated GPU host cannot run: its login user ${user} cannot read the stand-ins copied to ${files.dir}: ` +
      `${why ?? (r.stderr || `exit ${r.status}`).trim()}. The fixture lives under the temporary folder (TMPDIR, now ${path.dirname(path.dirname(files.dir))}); point TMPDIR at a folder every user may enter.`,
  );
}
