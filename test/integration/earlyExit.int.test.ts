/**
 * A server that dies in its first second, through a real sshd and the simulated host's systemd
 * and journal: its one line is the cause the user is shown, not systemd's
 * "Main process exited" (an argparse error, a bare NCCL watchdog timeout, an import-time traceback).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGpuHost, type GpuHost } from '../gpu-host/harness';
import { failureMessage } from '../../src/present/messages';
import { FAST_WATCH, sessionForHost, type TestSession } from './simHost';
import { disposed } from '../util/disposed';

interface Case {
  readonly name: string;
  /** What the process prints (to stderr) before it exits. */
  readonly lines: readonly string[];
  readonly status: number;
  /** What the notification must say after "Cause: ". */
  readonly cause: RegExp;
}

const CASES: readonly Case[] = [
  {
    name: 'an argparse error (one line, exit 2)',
    lines: ['launch_server.py: error: unrecognized arguments: --reasoning_parser kimi_k2'],
    status: 2,
    cause: /Cause: launch_server\.py: error: unrecognized arguments: --reasoning_parser kimi_k2/,
  },
  {
    name: 'an NCCL watchdog timeout alone, without the [E...] prefix',
    lines: [
      '[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.',
    ],
    status: 1,
    cause: /Cause: \[Rank 3\] Watchdog caught collective operation timeout/,
  },
  {
    name: 'an import-time traceback, no SGLang line at all',
    lines: [
      'Traceback (most recent call last):',
      '  File "/sgl-workspace/sglang/python/sglang/srt/configs/utils.py", line 18, in register_image_processor',
      "TypeError: AutoImageProcessor.register() got multiple values for argument 'exist_ok'",
    ],
    status: 1,
    cause: /Cause: TypeError: AutoImageProcessor\.register\(\) got multiple values for argument 'exist_ok'/,
  },
];

/** A script that prints `lines` to stderr and exits at once with `status`; its ExecStart= line. */
function dyingExecStart(dir: string, name: string, lines: readonly string[], status: number): string {
  const script = path.join(dir, `${name}.sh`);
  fs.writeFileSync(script, `#!/bin/sh\ncat >&2 <<'EOF'\n${lines.join('\n')}\nEOF\nexit ${status}\n`, { mode: 0o755 });
  return `ExecStart=/bin/sh ${script}`;
}

describe('a server that dies in its first second shows its own line as the cause', function () {
  this.timeout(60_000);
  let host: GpuHost;
  let test: TestSession | undefined;

  before(async () => {
    host = await startGpuHost({ shards: 2, shardBytes: 1024 * 1024 });
  });
  afterEach(() => (test = disposed(test)));
  after(async () => {
    await host?.writeUnit(host.defaultUnitText).catch(() => undefined);
    await host?.stop();
  });

  CASES.forEach((c, i) => {
    it(c.name, async () => {
      await host.writeUnit(
        host.defaultUnitText.replace(
          /^ExecStart=.*(?:\\\n.*)*$/m,
          dyingExecStart(host.fixtureDir, `dying-${i}`, c.lines, c.status),
        ),
      );
      test = await sessionForHost(host);
      const outcome = await test.session.watch('restart', FAST_WATCH);
      assert.equal(outcome.end, 'failed', `${outcome.end}: ${outcome.message}`);
      assert.match(outcome.state.failure!.summary, new RegExp(`status ${c.status}`));
      const message = failureMessage(test.settings.servers[0]!, outcome);
      assert.match(message, c.cause, `${message}\nerror lines: ${JSON.stringify(outcome.state.failure!.lines)}`);
      assert.doesNotMatch(message.slice(0, message.indexOf('Cause: ')), /Main process exited/, message);
      const exitedAt = outcome.state.unit?.execMainExitedAt;
      if (exitedAt !== undefined) console.log(`      failed said ${Date.now() - exitedAt} ms after the exit`);
    });
  });
});
