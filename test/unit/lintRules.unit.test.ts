// The layering rules of eslint.config.mjs fire where they should: probes linted as if they were files of src/.
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const ROOT = path.join(__dirname, '..', '..');

async function ruleHits(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint layering rules', function () {
  this.timeout(240_000); // runs ESLint with type information: minutes on a busy machine

  it('a lower layer importing a higher one is refused, with the rule in words', async () => {
    const hits = await ruleHits(
      'src/monitor/probe.ts',
      "import { Fleet } from '../fleet/fleet';\nexport const f = Fleet;\n",
    );
    assert.equal(hits.length, 1, hits.join('\n'));
    assert.match(hits[0], /^import-x\/no-restricted-paths: .*Layering: monitor may import only the layers below it/);
  });

  it('fleet reaches nothing of the broker: the broker implements the verbs, the fleet never asks it', async () => {
    for (const [file, from] of [
      ['src/fleet/probe.ts', '../broker/brokeredFleet'],
      ['src/fleet/restart/probe.ts', '../../broker/client'],
    ]) {
      const hits = await ruleHits(file, `import { BrokeredFleet } from '${from}';\nexport const s = BrokeredFleet;\n`);
      assert.equal(hits.length, 1, `${file}: ${hits.join('\n')}`);
      assert.match(hits[0], /^import-x\/no-restricted-paths: .*Layering: fleet may import only the layers below it/);
    }
  });

  it('a higher layer importing a lower one is fine', async () => {
    assert.deepEqual(
      await ruleHits(
        'src/fleet/probe.ts',
        "import { foldNodeStates } from '../monitor/state/multiNodeState';\nexport const f = foldNodeStates;\n",
      ),
      [],
    );
  });

  it('vscode is imported by the VS Code fronts only', async () => {
    const code = "import * as vscode from 'vscode';\nexport const v = vscode;\n";
    assert.deepEqual(await ruleHits('src/fronts/vscode/probe.ts', code), []);
    for (const file of ['src/fleet/probe.ts', 'src/fronts/cli/probe.ts', 'src/fronts/mcp/probe.ts']) {
      const hits = await ruleHits(file, code);
      assert.equal(hits.length, 1, `${file}: ${hits.join('\n')}`);
      assert.match(hits[0], /^no-restricted-imports: .*Only src\/fronts/);
    }
  });

  it("engine and target keep out of each other's internals, and the target kinds out of each other", async () => {
    const intoSystemd = "import { parseShow } from '../target/systemd/systemd';\nexport const p = parseShow;\n";
    assert.match((await ruleHits('src/engine/probe.ts', intoSystemd))[0], /engine\/ never imports target\/systemd/);
    const sideways = "import { parseShow } from '../systemd/systemd';\nexport const p = parseShow;\n";
    assert.match(
      (await ruleHits('src/target/docker/probe.ts', sideways))[0],
      /target\/docker never imports another target kind's folder \(target\/systemd, target\/slurm\)/,
    );
    assert.match((await ruleHits('src/target/slurm/probe.ts', sideways))[0], /target\/slurm never imports another/);
    const intoSlurm = "import { parseJobReading } from '../slurm/slurmJob';\nexport const p = parseJobReading;\n";
    assert.match(
      (await ruleHits('src/target/systemd/probe.ts', intoSlurm))[0],
      /target\/systemd never imports another/,
    );
    // The Slurm kind is sealed like the others: the layers above ask the Target.
    const fromFleet =
      "import { parseJobReading } from '../target/slurm/slurmJob';\nexport const p = parseJobReading;\n";
    assert.match((await ruleHits('src/fleet/probe.ts', fromFleet))[0], /Sealed plug-in: fleet never imports/);
    const intoVllm = "import { stripVllmPrefix } from '../vllm/vllmLog';\nexport const s = stripVllmPrefix;\n";
    assert.match((await ruleHits('src/engine/sglang/probe.ts', intoVllm))[0], /engine\/sglang and engine\/vllm never/);
  });

  it("the monitor's pure rooms never import its I/O rooms", async () => {
    const intoWatch = "import { Watcher } from '../watch/watcher';\nexport const w = Watcher;\n";
    for (const file of ['src/monitor/state/probe.ts', 'src/monitor/eta/probe.ts', 'src/monitor/history/probe.ts']) {
      const hits = await ruleHits(file, intoWatch);
      assert.equal(hits.length, 1, `${file}: ${hits.join('\n')}`);
      assert.match(hits[0], /monitor\/state, monitor\/eta and monitor\/history are pure/);
    }
    const intoState = "import { reduce } from '../state/loadState';\nexport const r = reduce;\n";
    assert.deepEqual(await ruleHits('src/monitor/watch/probe.ts', intoState), []);
  });

  it('every layer may import present/words, and present/words imports only util/', async () => {
    const words = "import { etaReasonText } from '../present/words/etaWords';\nexport const w = etaReasonText;\n";
    for (const file of ['src/transport/probe.ts', 'src/config/probe.ts', 'src/monitor/probe.ts']) {
      assert.deepEqual(await ruleHits(file, words), [], file);
    }
    // the rest of present/ stays above the lower layers
    const report = "import { serverReport } from '../present/report';\nexport const r = serverReport;\n";
    const hits = await ruleHits('src/transport/probe.ts', report);
    assert.equal(hits.length, 1, hits.join('\n'));
    assert.match(hits[0], /Layering: transport may import only the layers below it/);

    assert.deepEqual(
      await ruleHits(
        'src/present/words/probe.ts',
        "import { redact } from '../../util/redact';\nexport const r = redact;\n",
      ),
      [],
    );
    for (const from of ['../../fleet/fleet', '../../transport/errors', '../report']) {
      const hits = await ruleHits('src/present/words/probe.ts', `import * as m from '${from}';\nexport const x = m;\n`);
      assert.ok(
        hits.some((h) => /present\/words is a leaf every layer imports: it imports only util\//.test(h)),
        `${from}: ${hits.join('\n')}`,
      );
    }
  });
});
