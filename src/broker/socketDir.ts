/**
 * Where the broker's socket lives, and whether that place can be trusted: a folder of this user
 * alone (mode 0700, owned by this uid, not a link), under $XDG_RUNTIME_DIR or the temp folder.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  belongsToUid,
  hasMode,
  isNotAFolder,
  isSymbolicLink,
  NO_UID,
  PIPE_UNCHECKABLE,
  unsafeBrokerDir,
} from '../present/words/brokerWords';

export const SOCKET_NAME = 'broker.sock';

/** The broker's folder: KIMI_SERVICE_BROKER_DIR (tests), else $XDG_RUNTIME_DIR/kimi-service, else tmp/kimi-service-UID. */
export function brokerDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KIMI_SERVICE_BROKER_DIR) return env.KIMI_SERVICE_BROKER_DIR;
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, 'kimi-service');
  return path.join(os.tmpdir(), `kimi-service-${process.getuid?.() ?? 'user'}`);
}

/**
 * Where the broker listens: `broker.sock` in its folder; on Windows a named pipe, whose names
 * live in `\\.\pipe\` and not in a folder (the user's name and the folder's hash keep two
 * users', and two test scenarios', brokers apart).
 */
export function brokerEndpoint(dir: string, platform: NodeJS.Platform = process.platform, user = userName()): string {
  if (platform !== 'win32') return path.join(dir, SOCKET_NAME);
  const hash = createHash('sha256').update(dir).digest('hex').slice(0, 12);
  return `\\\\.\\pipe\\kimi-service-${user.replace(/[^A-Za-z0-9_.-]/g, '_')}-${hash}`;
}

function userName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'user';
  }
}

/** Why a folder's owner and mode make it unfit for the socket, or undefined when fit. */
export function unsafeDirReason(
  stat: { isDirectory(): boolean; isSymbolicLink(): boolean; uid: number; mode: number },
  uid: number,
): string | undefined {
  if (stat.isSymbolicLink()) return isSymbolicLink();
  if (!stat.isDirectory()) return isNotAFolder();
  if (stat.uid !== uid) return belongsToUid(stat.uid, uid);
  if ((stat.mode & 0o077) !== 0) return hasMode((stat.mode & 0o777).toString(8));
  return undefined;
}

/** Creates the folder (0700) when absent and checks it; throws with the reason when it cannot be trusted. */
export function ensureBrokerDir(dir: string): void {
  // A named pipe's name is not guarded as a 0700 folder guards a socket: another user could take
  // it first, and Node cannot ask who serves a pipe. Not shared there until that can be checked.
  if (process.platform === 'win32') throw new Error(PIPE_UNCHECKABLE);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const uid = process.getuid?.();
  if (uid === undefined) throw new Error(NO_UID);
  const why = unsafeDirReason(fs.lstatSync(dir), uid);
  if (why) throw new Error(unsafeBrokerDir(dir, why));
}
