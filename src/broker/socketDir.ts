/**
 * Where the broker's socket lives, and whether that place can be trusted: a folder of this user
 * alone (mode 0700, owned by this uid, not a link), under $XDG_RUNTIME_DIR or the temp folder.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const SOCKET_NAME = 'broker.sock';

/** The broker's folder: KIMI_SERVICE_BROKER_DIR (tests), else $XDG_RUNTIME_DIR/kimi-service, else tmp/kimi-service-UID. */
export function brokerDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KIMI_SERVICE_BROKER_DIR) return env.KIMI_SERVICE_BROKER_DIR;
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, 'kimi-service');
  return path.join(os.tmpdir(), `kimi-service-${process.getuid?.() ?? 'user'}`);
}

/** Why a folder's owner and mode make it unfit for the socket, or undefined when fit. */
export function unsafeDirReason(
  stat: { isDirectory(): boolean; isSymbolicLink(): boolean; uid: number; mode: number },
  uid: number,
): string | undefined {
  if (stat.isSymbolicLink()) return 'is a symbolic link';
  if (!stat.isDirectory()) return 'is not a folder';
  if (stat.uid !== uid) return `belongs to uid ${stat.uid}, not ${uid}`;
  if ((stat.mode & 0o077) !== 0) return `has mode ${(stat.mode & 0o777).toString(8)}, not 700`;
  return undefined;
}

/** Creates the folder (0700) when absent and checks it; throws with the reason when it cannot be trusted. */
export function ensureBrokerDir(dir: string): void {
  if (process.platform === 'win32') throw new Error('the broker needs a Unix socket (Windows named pipes: not yet)');
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const uid = process.getuid?.();
  if (uid === undefined) throw new Error('no uid to check the broker folder against');
  const why = unsafeDirReason(fs.lstatSync(dir), uid);
  if (why) throw new Error(`the broker folder ${dir} ${why}: not used`);
}
