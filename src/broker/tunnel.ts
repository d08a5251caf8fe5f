/**
 * TCP streams to a server's host through the owner's SSH connection, for a client window's HTTP
 * (the chat model's looks at /v1/models and /server_info, its chat requests): a connection of
 * its own to the broker's socket whose first line asks for host:port; the owner answers one byte
 * (1: open, then the bytes of the stream both ways; 0: a line saying why, then the end).
 */
import * as net from 'node:net';
import { Duplex } from 'node:stream';
import { encode, PROTOCOL_VERSION } from './protocol';
import { tunnelRefused } from '../present/words/brokerWords';

const OPEN = 1;
const REFUSED = 0;
/** A first line longer than this is not a message of ours. */
const MAX_FIRST_LINE = 64 * 1024;

/**
 * Reads a connection's first line (the hello of a peer, or a tunnel's request) and pauses the
 * connection: `all` is every byte read so far (the line included), `rest` what came after the
 * line. Undefined: closed, or no line within the limit.
 */
export function firstLine(
  socket: net.Socket,
  then: (line: string | undefined, read: { readonly all: Buffer; readonly rest: Buffer }) => void,
): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const done = (line: string | undefined, rest: Buffer) => {
    socket.removeListener('data', onData);
    socket.removeListener('close', onClose);
    socket.pause();
    then(line, { all: Buffer.concat(chunks), rest });
  };
  // Each chunk is scanned once: a slow writer of many small chunks costs no rescans.
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    const newline = chunk.indexOf(0x0a);
    if (newline >= 0) {
      const all = Buffer.concat(chunks);
      const at = bytes + newline;
      done(all.subarray(0, at).toString('utf8'), all.subarray(at + 1));
    } else if ((bytes += chunk.length) > MAX_FIRST_LINE) done(undefined, Buffer.alloc(0));
  };
  const onClose = () => done(undefined, Buffer.alloc(0));
  socket.on('data', onData);
  socket.on('close', onClose);
}

/** The owner's side: opens the stream, says whether it could, then pipes both ways. */
export function serveTunnel(socket: net.Socket, rest: Buffer, open: () => Promise<NodeJS.ReadWriteStream>): void {
  // Bytes the client sends before the stream is open wait in the paused socket (nothing is lost).
  if (rest.length > 0) socket.unshift(rest);
  open().then(
    (stream) => {
      if (socket.destroyed) return void (stream as unknown as Duplex).destroy?.();
      socket.write(Buffer.from([OPEN]));
      const remote = stream as unknown as Duplex;
      remote.on('error', () => socket.destroy());
      socket.on('error', () => remote.destroy());
      socket.on('close', () => remote.destroy());
      remote.on('close', () => socket.destroy());
      socket.pipe(remote);
      remote.pipe(socket);
    },
    (error: unknown) => {
      const why = error instanceof Error ? error.message : String(error);
      socket.end(Buffer.concat([Buffer.from([REFUSED]), Buffer.from(`${why.replace(/\n/g, ' ')}\n`)]));
    },
  );
}

/** The client's side: a stream to host:port from the server's host, through the owner. */
export function openTunnel(socketPath: string, server: string, host: string, port: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let phase: 'waiting' | 'open' | 'refused' = 'waiting';
    let refusal = '';
    const stream = new Duplex({
      read: () => void socket.resume(),
      write: (chunk: Buffer, _encoding, callback) => void socket.write(chunk, callback),
      final: (callback) => {
        socket.end();
        callback();
      },
      destroy: (error, callback) => {
        socket.destroy();
        callback(error);
      },
    });
    socket.on('connect', () => socket.write(encode({ t: 'tunnel', v: PROTOCOL_VERSION, server, host, port })));
    socket.on('data', (chunk: Buffer) => {
      if (phase === 'waiting') {
        phase = chunk[0] === OPEN ? 'open' : 'refused';
        chunk = chunk.subarray(1);
        if (phase === 'open') resolve(stream);
      }
      if (phase === 'refused') refusal += chunk.toString('utf8');
      else if (chunk.length > 0 && !stream.push(chunk)) socket.pause();
    });
    socket.on('end', () => {
      if (phase === 'open') stream.push(null);
    });
    socket.on('error', (error) => {
      if (phase === 'waiting') reject(error);
      stream.destroy(error);
    });
    socket.on('close', () => {
      if (phase !== 'open') reject(new Error(tunnelRefused(host, port, refusal.trim())));
      stream.destroy();
    });
  });
}
