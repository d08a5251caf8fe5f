/**
 * One process of the broker's integration test: a BrokeredFleet (the core, as a window's extension
 * host runs it) over the settings file in argv[2], sharing through the broker folder in argv[3].
 * Acts as a window's front would for its active server: watched from its first command on, its
 * parsers verified after a ready end that is its news (not quiet). Prints JSON lines on stdout: its role
 * (at each change), each fleet event, what it ran; reads commands on stdin: restart (forced), watch (nothing restarted),
 * http (5 GET /v1/models and a command, as a chat model's looks), slots (channel slots in use), exit.
 */
import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { BrokeredFleet } from '../../src/broker/brokeredFleet';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerSession } from '../../src/monitor/watch/session';
import { showCommand } from '../../src/target/systemd/systemd';
import { shellLine } from '../../src/transport/shell';
import { errorText } from '../../src/util/errors';
import { MemoryMemento } from './simHost';

const say = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ pid: process.pid, ...o })}\n`);

const parsed = parseSettings(JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')));
if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
const settings = parsed.settings;
const server = settings.servers[0]!;
const fleet = new BrokeredFleet(
  {
    ui: { trustUnknownHostKey: async () => false, requestPassphrase: async () => undefined },
    log: (level, message) => {
      if (level !== 'trace') say({ fleetLog: message, level });
    },
    history: new MemoryMemento(),
  },
  { dir: process.argv[3]!, log: (level, message) => say({ log: message, level }) },
);
fleet.configure(settings);

let role = '';
const showRole = () => {
  if (fleet.brokerRole === role) return;
  role = fleet.brokerRole;
  say({ role });
};
// The role changes on the broker's own events (a takeover): looked at often, said on change.
const roleTimer = setInterval(showRole, 100);

fleet.onEvent((event) => {
  const s = fleet.snapshot(event.server);
  say({
    event: event.type,
    verdict: s.state?.verdict,
    watching: s.watching,
    ...(event.type === 'end' ? { end: event.outcome.end, quiet: event.quiet } : {}),
    ...(event.type === 'verified' ? { summary: event.summary } : {}),
  });
  if (event.type === 'end' && !event.quiet && event.outcome.end === 'ready') {
    say({ ranVerification: true });
    fleet
      .verifyParsers(event.server, () => undefined)
      .then(
        (v) => say({ verification: v.verdict }),
        (error) => say({ verificationError: errorText(error) }),
      );
  }
});

// As a window: the active server is watched by its commands (a restart), not in the background.
void fleet.share().then(showRole);

readline.createInterface({ input: process.stdin }).on('line', (command) => {
  if (command === 'restart')
    fleet.restart(server, { force: true }).then(
      (r) =>
        say({
          restart: r.kind,
          ...(r.kind === 'restarted' ? { issued: r.issued, state: r.snapshot.state?.verdict } : {}),
        }),
      (error) => say({ restartError: errorText(error) }),
    );
  else if (command === 'watch')
    fleet.watch(server).then(
      (o) => say({ watched: o?.end }),
      (error) => say({ watchError: errorText(error) }),
    );
  else if (command === 'http')
    // As a client window's chat model: its looks at the server, over the owner's connection when it is a client.
    void (async () => {
      const session = (await fleet.sessionFor(server)) as ServerSession;
      const statuses: unknown[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await session.client.request('GET', '/v1/models');
        statuses.push(r.kind === 'http' ? r.status : r.kind);
      }
      // A command of the Target's (an operation the owner builds); any other would run on this process's own connection.
      const listed = await session.transport.exec(shellLine(showCommand(server.unit, ['MainPID'])));
      say({ http: statuses, exec: listed.stdout.trim().replace(/\d+$/, 'N') });
    })().catch((error) => say({ httpError: errorText(error) }));
  else if (command === 'slots')
    void fleet.sessionFor(server).then((s) => {
      const inner = (s.transport as unknown as { inner?: { slotsInUse?: number } }).inner;
      say({ slots: inner?.slotsInUse });
    });
  else if (command === 'exit') {
    clearInterval(roleTimer);
    fleet.dispose();
    say({ exited: true });
    process.exit(0);
  }
});
process.on('SIGTERM', () => {
  clearInterval(roleTimer);
  fleet.dispose();
  process.exit(0);
});
