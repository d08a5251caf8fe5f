/**
 * Who serves: connect to the broker's socket (a client), or claim it (the owner). The claim is
 * atomic: the owner listens on a socket of its own, then hard-links it to the shared name, which
 * fails when someone else's is there already. A socket file nobody listens on (its owner died) is
 * detected by a refused connect and removed. The owner checks that the name still points at its
 * socket (`stillOwner`) and steps down when it does not.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { brokerEndpoint } from './socketDir';
import { neitherReachNorClaim } from '../present/words/brokerWords';

export type Claim =
  | { readonly role: 'client'; readonly socket: net.Socket }
  | { readonly role: 'owner'; readonly server: net.Server; readonly socketPath: string; readonly inode: number };

const ATTEMPTS = 8;
/** The wait before trying an owner that reset the connect again (times the attempt). */
const RETRY_MS = 50;

function connect(socketPath: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

function listen(server: net.Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

function inodeOf(file: string): number | undefined {
  try {
    return fs.lstatSync(file).ino;
  } catch {
    return undefined;
  }
}

/** Connects to the owner, or becomes it; `onConnection` serves the clients of an owner. */
export async function claim(dir: string, onConnection: (socket: net.Socket) => void): Promise<Claim> {
  const socketPath = brokerEndpoint(dir);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const before = inodeOf(socketPath);
    try {
      return { role: 'client', socket: await connect(socketPath) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ECONNRESET' || code === 'EAGAIN') {
        // An owner on its way out (killed while this connect sat in its queue), or one too busy
        // to take it now: look again in a moment (a dead one refuses then; a live one answers).
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS * (attempt + 1)));
        continue;
      }
      if (code === 'ECONNREFUSED') {
        // Nobody listens: a stale socket. Removed only if it is still the one that refused.
        if (before !== undefined && inodeOf(socketPath) === before) fs.rmSync(socketPath, { force: true });
      } else if (code !== 'ENOENT') throw error;
    }
    const own = path.join(dir, `owner-${process.pid}-${attempt}.sock`);
    fs.rmSync(own, { force: true });
    const server = net.createServer(onConnection);
    await listen(server, own);
    try {
      fs.chmodSync(own, 0o600);
      fs.linkSync(own, socketPath);
      const inode = fs.lstatSync(own).ino;
      fs.rmSync(own, { force: true });
      return { role: 'owner', server, socketPath, inode };
    } catch (error) {
      server.close();
      fs.rmSync(own, { force: true });
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Someone claimed it first: connect to them.
    }
  }
  throw new Error(neitherReachNorClaim(socketPath));
}

/** The shared name still points at this owner's socket. */
export function stillOwner(socketPath: string, inode: number): boolean {
  return inodeOf(socketPath) === inode;
}

/** The owner leaves: its name is removed (only if still its own) so the next comer claims at once. */
export function release(socketPath: string, inode: number, server: net.Server): void {
  if (stillOwner(socketPath, inode)) fs.rmSync(socketPath, { force: true });
  server.close();
}

/** A claim made for a process that is leaving meanwhile: given back at once. */
export function abandon(claimed: Claim): void {
  if (claimed.role === 'owner') release(claimed.socketPath, claimed.inode, claimed.server);
  else claimed.socket.destroy();
}
