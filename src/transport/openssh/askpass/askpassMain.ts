/**
 * dist/askpass.js: the program OpenSSH runs as SSH_ASKPASS (through dist/askpass.sh). It asks the
 * transport that started the master, over the socket and with the token of its environment, and
 * prints the answer for OpenSSH; exit 1 when the question was cancelled or cannot be asked.
 */
import * as net from 'node:net';
import { decodeReply, encodeRequest, FirstLine, promptModeOf } from './protocol';

function fail(why: string): never {
  process.stderr.write(`kimi-service askpass: ${why}\n`);
  process.exit(1);
}

const socketPath = process.env.KIMI_ASKPASS_SOCKET;
const token = process.env.KIMI_ASKPASS_TOKEN;
if (!socketPath || !token) fail('not started by Kimi Service (no KIMI_ASKPASS_SOCKET)');
const mode = promptModeOf(process.env.SSH_ASKPASS_PROMPT);
const socket = net.createConnection(socketPath);
const line = new FirstLine();
let done = false;
socket.on('connect', () => socket.write(encodeRequest({ token, prompt: process.argv[2] ?? '', mode })));
socket.on('data', (chunk: Buffer) => {
  const got = line.push(chunk);
  if (got === undefined) return;
  done = true;
  socket.destroy();
  const reply = got === 'overflow' ? undefined : decodeReply(got);
  if (!reply) fail('no answer');
  if ('cancel' in reply) process.exit(1);
  if (mode === 'notice') process.exit(0);
  process.stdout.write(`${reply.answer}\n`, () => process.exit(0));
});
socket.on('error', (err) => fail(err.message));
socket.on('close', () => {
  if (!done) fail('the question was withdrawn');
});
