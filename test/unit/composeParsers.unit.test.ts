import { strict as assert } from 'node:assert';
import { parserPlanner } from '../../src/engine/engine';
import { byHandAdvice, planComposeChange } from '../../src/target/docker/composeParsers';

const choice = { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' };
const FILE = '/srv/kimi/compose.yaml';

const listForm = `# Kimi K2.6 on 8 GPUs
services:
  sglang:
    image: lmsysorg/sglang:latest   # pinned by digest in production
    network_mode: host
    command:
      - python3
      - -m
      - sglang.launch_server
      - --model-path
      - /models/Kimi-K2.6   # the volume below
      - --tp
      - "8"
    volumes:
      - /srv/models:/models:ro
  other:
    image: busybox
`;

describe('compose file: enable parsers', () => {
  it('adds the flags to the list command, comments and the rest of the file kept', () => {
    const plan = planComposeChange(listForm, FILE, 'sglang', parserPlanner(choice));
    assert.equal(plan.kind, 'change');
    if (plan.kind !== 'change') return;
    assert.equal(
      plan.newText,
      listForm.replace(
        '      - "8"\n',
        '      - "8"\n      - --tool-call-parser\n      - kimi_k2\n      - --reasoning-parser\n      - kimi_k2\n',
      ),
    );
    assert.match(plan.diff, /^\+\s+- --tool-call-parser$/m);
    assert.doesNotMatch(plan.diff, /^-\s/m, 'nothing removed');
    assert.deepEqual(plan.newArgv.slice(-4), ['--tool-call-parser', 'kimi_k2', '--reasoning-parser', 'kimi_k2']);
  });
  it('changes a parser already there in place; both set: nothing to do', () => {
    const withOld = listForm.replace('      - "8"\n', '      - "8"\n      - --reasoning-parser=deepseek-r1\n');
    const plan = planComposeChange(withOld, FILE, 'sglang', parserPlanner(choice));
    assert.ok(plan.kind === 'change');
    assert.match(plan.newText, /- --reasoning-parser=kimi_k2\n {6}- --tool-call-parser\n {6}- kimi_k2\n/);
    assert.equal(planComposeChange(plan.newText, FILE, 'sglang', parserPlanner(choice)).kind, 'already-set');
  });
  it('rewrites a plain string command', () => {
    const text =
      'services:\n  sglang:\n    image: x\n    command: python3 -m sglang.launch_server --model-path /m --tp 8\n';
    const plan = planComposeChange(text, FILE, 'sglang', parserPlanner(choice));
    assert.ok(plan.kind === 'change');
    assert.equal(
      plan.newText,
      'services:\n  sglang:\n    image: x\n    command: python3 -m sglang.launch_server --model-path /m --tp 8 --tool-call-parser kimi_k2 --reasoning-parser kimi_k2\n',
    );
  });
  const refusals: [string, string, string, RegExp][] = [
    ['no such service', listForm, 'nope', /has no service "nope"/],
    ['no command', 'services:\n  sglang:\n    image: x\n', 'sglang', /has no command: .*add the SGLang command line/],
    [
      'a quoted string command',
      'services:\n  sglang:\n    command: python3 -m sglang.launch_server --served-model-name "a b"\n',
      'sglang',
      /quotes or variables/,
    ],
    [
      'not SGLang',
      'services:\n  sglang:\n    command: [nginx, -g, daemon off;]\n',
      'sglang',
      /no "python -m sglang.launch_server"/,
    ],
    ['broken YAML', 'services:\n  sglang: [\n', 'sglang', /is not valid YAML/],
  ];
  for (const [what, text, service, reason] of refusals) {
    it(`refuses ${what}, saying why`, () => {
      const plan = planComposeChange(text, FILE, service, parserPlanner(choice));
      assert.equal(plan.kind, 'unsupported');
      if (plan.kind === 'unsupported') assert.match(plan.reason, reason);
    });
  }
});

describe('plain container: enable parsers', () => {
  it('says exactly what its docker run needs', () => {
    const advice = byHandAdvice(
      'sglang',
      ['python3', '-m', 'sglang.launch_server', '--model-path', '/models/K'],
      parserPlanner(choice),
    );
    assert.match(advice, /cannot be changed in place/);
    assert.match(
      advice,
      /python3 -m sglang\.launch_server --model-path \/models\/K --tool-call-parser kimi_k2 --reasoning-parser kimi_k2\n/,
    );
    assert.match(advice, /docker rm -f sglang/);
    assert.match(
      byHandAdvice(
        'sglang',
        [
          ...['python3', '-m', 'sglang.launch_server'],
          '--tool-call-parser',
          'kimi_k2',
          '--reasoning-parser',
          'kimi_k2',
        ],
        parserPlanner(choice),
      ),
      /already runs with/,
    );
  });
});
