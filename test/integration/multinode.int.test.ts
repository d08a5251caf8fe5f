/**
 * Several simulated GPU hosts at once, each in its own network namespace on a private bridge
 * (test/gpu-host/netns.ts): two replicas watched together, and a two-node SGLang server whose
 * ranks meet over a real TCP rendezvous between the hosts. The fleet is the real one (ssh2 to
 * each host's sshd at its address, HTTP through rank 0's tunnel).
 */
import { targetFor } from '../../src/target/target';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseSettings } from '../../src/config/parseSettings';
import type { ServerProfile, Settings } from '../../src/config/config';
import { Fleet } from '../../src/fleet/fleet';
import { serverReport, waitReport } from '../../src/present/report';
import type { Verdict } from '../../src/monitor/state/loadStateTypes';
import { verifyServer } from '../../src/verify/serverVerification';
import { formatTable } from '../../src/present/verifyReport';
import { startGpuHost, type GpuHost, type GpuHostOptions } from '../gpu-host/harness';
import { createPrivateNetwork, type NetnsHost, type PrivateNetwork } from '../gpu-host/netns';
import { waitFor } from '../util/waitFor';
import { headlessFleet } from './simHost';
import { disposed } from '../util/disposed';

const PARSERS = '--tool-call-parser kimi_k2 --reasoning-parser kimi_k2';
// Short loads: 4 shards of 2 MB at 2 MB/s, about 4 s of weights per node.
const HOST: GpuHostOptions = {
  shards: 4,
  shardBytes: 2 * 1024 * 1024,
  sim: { readMBps: 2, warmReadMBps: 2, unbalancedLoadingTimeoutSeconds: 6 },
};

function nodeEntry(host: GpuHost): Record<string, unknown> {
  return {
    host: host.sshHost,
    port: host.sshPort,
    username: host.username,
    identityFile: host.clientKeyPath,
    unit: host.unitName,
  };
}

function replicaEntry(name: string, host: GpuHost): Record<string, unknown> {
  return { name, ...nodeEntry(host), url: host.serverUrl };
}

describe('multi-node servers and several hosts (private network)', function () {
  this.timeout(240_000);
  let network: PrivateNetwork;
  const hosts: GpuHost[] = [];
  const dirs: string[] = [];
  let fleet: Fleet | undefined;
  const logLines: string[] = [];

  before(async () => {
    network = await createPrivateNetwork();
  });
  afterEach(() => (fleet = disposed(fleet)));
  after(async () => {
    await Promise.all(hosts.splice(0).map((h) => h.stop()));
    await network?.dispose();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function startHosts(
    count: number,
    options: (rank: number, rank0: NetnsHost) => GpuHostOptions = () => HOST,
  ): Promise<GpuHost[]> {
    const places: NetnsHost[] = [];
    for (let i = 0; i < count; i++) places.push(await network.addHost());
    const started = await Promise.all(
      places.map((place, rank) => startGpuHost({ ...options(rank, places[0]!), network: place })),
    );
    hosts.push(...started);
    return started;
  }

  function startFleet(
    servers: Record<string, unknown>[],
    extra: Record<string, unknown> = {},
  ): { fleet: Fleet; settings: Settings } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kimi-multinode-'));
    dirs.push(dir);
    const knownHostsFile = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHostsFile, hosts.map((h) => h.knownHostsLine()).join('\n') + '\n');
    const result = parseSettings({
      servers,
      knownHostsFile,
      hostKeyPolicy: 'strict',
      pollIntervalSeconds: 0.5,
      stallSeconds: 30,
      unreachableTimeoutMinutes: 5,
      ...extra,
    });
    if (!result.ok) throw new Error(result.errors.join('\n'));
    const log = (level: string, message: string) => logLines.push(`${new Date().toISOString()} ${level} ${message}`);
    const created = headlessFleet(result.settings, log);
    fleet = created;
    return { fleet: created, settings: result.settings };
  }

  /** Every verdict a server's state went through, in order (repeats dropped). */
  function recordVerdicts(f: Fleet, server: ServerProfile): Verdict[] {
    const seen: Verdict[] = [];
    f.onEvent((event) => {
      if (event.type === 'state' && event.server.name === server.name && seen[seen.length - 1] !== event.state.verdict)
        seen.push(event.state.verdict);
    });
    return seen;
  }

  describe('two single-node replicas, each on its own host', () => {
    let replicas: GpuHost[];
    before(async () => {
      replicas = await startHosts(2);
    });

    it('live on the private network only: their own address, no route out', async () => {
      for (const host of replicas) {
        const routes = await host.nsExec('ip -4 route show');
        assert.deepEqual(
          routes.stdout
            .trim()
            .split('\n')
            .map((l) => l.split(' ')[0]),
          [network.subnet],
          routes.stdout,
        );
        assert.notEqual(
          (await host.nsExec('ip -4 route get 192.0.2.1')).code,
          0,
          'nothing is routed outside the bridge',
        );
        assert.match(
          (await host.nsExec('ip -4 -o addr show')).stdout,
          new RegExp(`inet ${host.sshHost.replace(/\./g, '\\.')}/24`),
        );
      }
    });

    it('are restarted and watched at once, both ready', async () => {
      const { fleet: f, settings } = startFleet([replicaEntry('r1', replicas[0]!), replicaEntry('r2', replicas[1]!)]);
      const [r1, r2] = settings.servers as [ServerProfile, ServerProfile];
      await Promise.all([f.restart(r1), f.restart(r2)]);
      const [w1, w2] = await Promise.all([f.waitFor(r1, { timeoutMs: 90_000 }), f.waitFor(r2, { timeoutMs: 90_000 })]);
      assert.equal(w1.kind, 'ready', serverReport(w1.snapshot).summary);
      assert.equal(w2.kind, 'ready', serverReport(w2.snapshot).summary);
      assert.equal(w1.snapshot.nodes, undefined, 'a single-node server has no node list');
      await waitFor(() => f.snapshot(r1).watching && f.snapshot(r2).watching && !f.snapshot(r1).loading, {
        message: 'steady watch',
      });
      const live = await Promise.all(replicas.map((h) => watchProcesses(h)));
      console.log(
        `      [measure] steady state, single-node server: live remote processes of the watch ${live.map((p) => `${p.length} (${p.join(', ')})`).join(' | ')}`,
      );
    });

    it('one host drops off the network: it reads unreachable, never ready; the other goes on loading to ready', async () => {
      const { fleet: f, settings } = startFleet([replicaEntry('r1', replicas[0]!), replicaEntry('r2', replicas[1]!)]);
      const [r1, r2] = settings.servers as [ServerProfile, ServerProfile];
      await Promise.all([f.waitFor(r1, { timeoutMs: 60_000 }), f.waitFor(r2, { timeoutMs: 60_000 })]);
      assert.equal(f.snapshot(r1).state?.verdict, 'ready');
      const r1Verdicts = recordVerdicts(f, r1);
      const restart = await f.restart(r2, { force: true });
      assert.equal(restart.kind, 'restarted');
      await waitFor(() => f.snapshot(r2).loading, { timeoutMs: 20_000, message: 'r2 loading' });
      await replicas[0]!.setNetworkLink(false);
      try {
        await waitFor(() => f.snapshot(r1).state?.verdict === 'unreachable', {
          timeoutMs: 60_000,
          message: 'r1 unreachable',
        });
        const w2 = await f.waitFor(r2, { timeoutMs: 90_000 });
        assert.equal(w2.kind, 'ready', serverReport(w2.snapshot).summary);
        assert.equal(f.snapshot(r1).state?.verdict, 'unreachable', 'the dropped host stays unreachable');
        assert.deepEqual(r1Verdicts, ['unreachable'], `r1 went through ${r1Verdicts.join(' -> ')}`);
        assert.match(serverReport(f.snapshot(r1)).summary, /unreachable/);
      } finally {
        await replicas[0]!.setNetworkLink(true);
      }
    });
  });

  describe('a two-node server (--nnodes 2, rendezvous at node rank 0)', () => {
    let nodes: GpuHost[];
    let server: ServerProfile;
    before(async () => {
      const distPort = 20_000 + Math.floor(Math.random() * 20_000);
      nodes = await startHosts(2, (rank, rank0) => ({
        ...HOST,
        extraServerArgs: `${PARSERS} --nnodes 2 --node-rank ${rank} --dist-init-addr ${rank0.address}:${distPort} --dist-timeout 8`,
      }));
    });
    const entry = () => ({ name: 'k2', nodes: nodes.map(nodeEntry), url: nodes[0]!.serverUrl });
    /** A fleet of the one two-node server (now `server`). */
    const fleetOfK2 = (extra: Record<string, unknown> = {}): Fleet => {
      const { fleet, settings } = startFleet([entry()], extra);
      server = settings.servers[0]!;
      return fleet;
    };
    /** A forced restart of a new fleet's server, its wait ending as `kind` within `timeoutMs`. */
    const restartEndingAs = async (kind: string, timeoutMs: number, extra: Record<string, unknown> = {}) => {
      const f = fleetOfK2(extra);
      await f.restart(server, { force: true });
      const done = await f.waitFor(server, { timeoutMs });
      assert.equal(done.kind, kind, serverReport(done.snapshot).summary);
      return { f, done };
    };

    it('reaches ready only when both nodes have loaded; parsers verified on node rank 0; steady remote processes counted', async () => {
      const f = fleetOfK2();
      const verdicts = recordVerdicts(f, server);
      // Overall progress is never ahead of the least advanced node.
      const aheadOfANode: string[] = [];
      f.onEvent((e) => {
        if (e.type !== 'state' || e.server.name !== server.name) return;
        const snap = f.snapshot(server);
        const least = Math.min(...(snap.nodes ?? []).map((n) => n.state?.progress ?? 0));
        if (e.state.readyAt === undefined && (e.state.progress ?? 0) > least)
          aheadOfANode.push(`${e.state.progress} > ${least}`);
      });
      let readyEventAt: number | undefined;
      f.onEvent((e) => {
        if (e.type === 'state' && e.state.verdict === 'ready' && readyEventAt === undefined) readyEventAt = Date.now();
      });
      const restart = await f.restart(server);
      assert.equal(restart.kind, 'restarted');
      const loading = await waitFor(
        () => {
          const nodesNow = f.snapshot(server).nodes;
          return nodesNow?.every((n) => n.state?.verdict === 'loading') ? nodesNow : undefined;
        },
        { timeoutMs: 30_000, message: 'both nodes loading' },
      );
      assert.deepEqual(
        loading.map((n) => n.label),
        [`node 0 (${nodes[0]!.sshHost})`, `node 1 (${nodes[1]!.sshHost})`],
      );
      const done = await f.waitFor(server, { timeoutMs: 120_000 });
      assert.equal(done.kind, 'ready', serverReport(done.snapshot).summary);
      assert.ok(
        done.snapshot.nodes?.every((n) => n.state?.verdict === 'ready'),
        JSON.stringify(done.snapshot.nodes?.map((n) => n.state?.verdict)),
      );
      assert.ok(!verdicts.slice(0, -1).includes('ready'), `ready before the end: ${verdicts.join(' -> ')}`);
      assert.deepEqual(aheadOfANode, []);

      // The time from the last node's ready (its journal line) to the server's ready.
      const lastNodeReadyAt = Math.max(
        (await nodes[0]!.firedUpAt()) ?? 0,
        await lastLineAt(nodes[1]!, 'Capture cuda graph end.'),
      );
      console.log(
        `      [measure] last node ready -> server ready: ${readyEventAt! - lastNodeReadyAt} ms (verdicts: ${verdicts.join(' -> ')})`,
      );

      // What Fleet.verifyParsers runs, on the session it gives (node rank 0's connection and tunnel).
      const session = await f.connect(server);
      const verify = await verifyServer(session.transport, session.client, targetFor(server), () => undefined);
      assert.equal(verify.allPassed, true, formatTable(verify));
      const requests = async (host: GpuHost) =>
        (await host.journal()).filter((l) => /"POST \/v1\/chat\/completions/.test(l)).length;
      assert.ok((await requests(nodes[0]!)) > 0, 'the checks reached node rank 0');
      assert.equal(await requests(nodes[1]!), 0, 'node rank 1 serves no HTTP');

      // Steady state: what runs on each host for the watch, and the commands it starts per minute.
      const before = await Promise.all(nodes.map((h) => h.execLog().then((l) => l.length)));
      const windowMs = 10_000;
      const started = Date.now();
      await waitFor(() => Date.now() - started >= windowMs, { timeoutMs: windowMs + 5_000, intervalMs: 500 });
      const after = await Promise.all(nodes.map((h) => h.execLog().then((l) => l.length)));
      const live = await Promise.all(nodes.map((h) => watchProcesses(h)));
      console.log(
        `      [measure] steady state, per node: live remote processes of the watch ${live.map((p) => `${p.length} (${p.join(', ')})`).join(' | ')}; stand-in commands in ${windowMs / 1000} s: ${after.map((a, i) => a - before[i]!).join(' | ')}`,
      );
      assert.equal(f.snapshot(server).state?.verdict, 'ready');
    });

    it('node 1 dying after ready fails the server, naming it, though node rank 0 still answers HTTP', async () => {
      const f = fleetOfK2();
      await readyServer(f, server);
      await nodes[1]!.killServer('SIGKILL');
      await waitFor(() => f.snapshot(server).state?.verdict === 'failed', {
        timeoutMs: 60_000,
        message: 'failed after node 1 died',
      });
      const report = serverReport(f.snapshot(server));
      assert.match(
        report.lastError ?? '',
        new RegExp(
          `^node 1 \\(${nodes[1]!.sshHost.replace(/\./g, '\\.')}\\): the service killed by signal 9 after it was ready`,
        ),
        report.summary,
      );
      const health = await nodes[0]!.ssh(`curl -s -o /dev/null -w '%{http_code}' ${nodes[0]!.serverUrl}/health`);
      assert.equal(
        health.stdout,
        '200',
        "node rank 0 still answers: only the other node's unit tells the group is broken",
      );
    });

    it('node 1 dropping off the network makes the ready server unreachable, naming it; back on the network, ready again', async () => {
      const f = fleetOfK2();
      await readyServer(f, server);
      const verdicts = recordVerdicts(f, server);
      await nodes[1]!.setNetworkLink(false);
      try {
        await waitFor(() => f.snapshot(server).state?.verdict === 'unreachable', {
          timeoutMs: 60_000,
          message: 'unreachable',
        });
        const report = serverReport(f.snapshot(server));
        assert.match(
          report.lastError ?? '',
          new RegExp(`^node 1 \\(${nodes[1]!.sshHost.replace(/\./g, '\\.')}\\): `),
          report.summary,
        );
        assert.equal(f.snapshot(server).nodes?.[0]?.state?.verdict, 'ready', 'node rank 0 is still seen serving');
      } finally {
        await nodes[1]!.setNetworkLink(true);
      }
      await waitFor(() => f.snapshot(server).state?.verdict === 'ready', {
        timeoutMs: 90_000,
        message: 'ready again after the link came back',
      });
      assert.deepEqual(verdicts, ['unreachable', 'ready']);
    });

    it('a node hanging mid-load makes the server stalled, naming that node (not the one waiting for it)', async () => {
      await nodes[1]!.configureSimulator({ fault: { hangAt: 'weights', afterShards: 1 } });
      // Node rank 0 waits for it longer than the stall time (else it fails first, on SGLang's barrier timeout).
      await nodes[0]!.configureSimulator({ unbalancedLoadingTimeoutSeconds: 300 });
      try {
        // The agents' wait ends as stalled, with what was last seen on that node and since when.
        const { f, done: waited } = await restartEndingAs('stalled', 60_000, { stallSeconds: 10 });
        const node1 = `node 1 \\(${nodes[1]!.sshHost.replace(/\./g, '\\.')}\\)`;
        assert.match(
          waitReport(waited, 0).next,
          new RegExp(
            `^Kimi on ${server.name} is stalled \\(${node1}\\): no witness has moved for 1\\ds; last seen: loading weights`,
          ),
        );
        const report = serverReport(f.snapshot(server));
        assert.match(report.summary, new RegExp(`${node1} makes no progress`), report.summary);
        assert.ok(!/node 0 .* makes no progress/.test(report.summary), report.summary);
        // It holds (per node, and for the server) while both hosts keep answering: watched past twice the 3-5 s within which a stall that does not hold would flip back.
        const verdicts: string[] = [];
        let lastStateAt = 0;
        const stalledAt = Date.now();
        const subscription = f.onEvent((event) => {
          if (event.type !== 'state' || event.server.name !== server.name) return;
          verdicts.push(event.state.verdict);
          lastStateAt = Date.now();
        });
        try {
          await waitFor(() => lastStateAt >= stalledAt + 12_000, {
            timeoutMs: 60_000,
            message: 'the nodes still reporting 12 s after the stall',
          });
        } finally {
          subscription.dispose();
        }
        assert.ok(verdicts.length >= 3, `states after the stall: ${verdicts.length}`);
        assert.deepEqual([...new Set(verdicts)], ['stalled'], `verdicts after the stall: ${verdicts}`);
        assert.equal(f.snapshot(server).nodes?.[1]?.state?.verdict, 'stalled');
      } finally {
        await nodes[1]!.configureSimulator({ fault: {} });
        await nodes[0]!.configureSimulator({ unbalancedLoadingTimeoutSeconds: 6 });
      }
    });

    it('one node crashing mid-load fails the server, naming that node and its error', async () => {
      await nodes[1]!.configureSimulator({ fault: { crashAt: 'weights', afterShards: 2 } });
      try {
        const { f, done } = await restartEndingAs('failed', 120_000);
        const report = serverReport(done.snapshot);
        assert.match(
          report.lastError ?? '',
          new RegExp(`^node 1 \\(${nodes[1]!.sshHost.replace(/\./g, '\\.')}\\): the service exited with status 1`),
          report.summary,
        );
        assert.match(report.lastError ?? '', /SafetensorError/, report.summary);
        // Node rank 0 then gives up at SGLang's barrier after the weights: recognised, and node 1 stays the one named.
        const rank0 = await waitFor(() => f.snapshot(server).nodes?.[0]?.state?.failure, {
          timeoutMs: 40_000,
          message: 'node rank 0 failed too',
        });
        assert.ok(
          rank0.lines.some((l) =>
            /ValueError: TP rank 0 could finish the model loading, but there are other ranks that didn't finish loading/.test(
              l,
            ),
          ),
          rank0.lines.join('\n'),
        );
        assert.match(serverReport(f.snapshot(server)).lastError ?? '', /^node 1 /);
        // The logs: both nodes' journals, merged, each line naming its node.
        const logs = await f.logs(server, 400);
        assert.ok(
          logs.journal.some((l) => l.includes(`node 1 (${nodes[1]!.sshHost}): `) && l.includes('SafetensorError')),
          logs.journal.slice(-20).join('\n'),
        );
        assert.ok(logs.journal.some((l) => l.includes(`node 0 (${nodes[0]!.sshHost}): `)));
      } finally {
        await nodes[1]!.configureSimulator({ fault: {} });
      }
    });

    it('one node never reaching the rendezvous: node rank 0 fails on the dist timeout, recognised, the missing node named', async () => {
      await nodes[1]!.configureSimulator({ fault: { hangAt: 'init' } });
      try {
        const { done } = await restartEndingAs('failed', 120_000);
        const report = serverReport(done.snapshot);
        assert.match(
          report.lastError ?? '',
          /^node 0 \(.*\): the service exited with status 1 — only 4 of 8 ranks reached the rendezvous/,
          report.summary,
        );
        assert.match(
          report.lastError ?? '',
          new RegExp(`behind: node 1 \\(${nodes[1]!.sshHost.replace(/\./g, '\\.')}\\)`),
          report.summary,
        );
        assert.match(
          report.lastError ?? '',
          /DistStoreError: Timed out after \d+ seconds waiting for clients\. 4\/8 clients joined/,
          report.summary,
        );
      } finally {
        await nodes[1]!.configureSimulator({ fault: {} });
      }
    });
  });
});

/** The server ready: as it is (the tests in order leave it ready), else restarted to ready. */
async function readyServer(f: Fleet, server: ServerProfile): Promise<void> {
  if ((await f.waitFor(server, { timeoutMs: 60_000 })).kind === 'ready') return;
  const restart = await f.restart(server, { force: true });
  const end = await restart.outcome;
  assert.equal(end?.end, 'ready', end?.message);
}

/** Epoch ms of the last journal line of the host's unit containing `text` (0 when none). */
async function lastLineAt(host: GpuHost, text: string): Promise<number> {
  const entries = await host.journalEntries();
  const found = entries.filter((e) => e.msg.includes(text)).pop();
  return found ? Math.floor(found.t / 1000) : 0;
}

/** The host's processes that serve the watch (everything under a per-connection sshd), by name. */
async function watchProcesses(host: GpuHost): Promise<string[]> {
  const r = await host.nsExec('ps -eo pid=,ppid=,comm=,args= 2>/dev/null');
  const rows = r.stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    // A stand-in (node .../journalctl.js) by its script's name.
    .map(([pid, ppid, comm, ...args]) => ({
      pid: Number(pid),
      ppid: Number(ppid),
      comm: comm === 'node' ? path.basename(args[1] ?? 'node') : (comm ?? ''),
    }));
  const byPid = new Map(rows.map((p) => [p.pid, p]));
  const underSession = (p: { ppid: number }): boolean => {
    let parent = byPid.get(p.ppid);
    for (let i = 0; i < 20 && parent; i++) {
      if (parent.comm === 'sshd' && byPid.get(parent.ppid)?.comm === 'sshd') return true;
      parent = byPid.get(parent.ppid);
    }
    return false;
  };
  return rows
    .filter((p) => p.comm !== 'sshd' && underSession(p))
    .map((p) => p.comm)
    .sort();
}
