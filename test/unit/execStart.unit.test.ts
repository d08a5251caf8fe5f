import * as assert from 'node:assert/strict';
import {
  apiKeyFromArgv,
  engineLabels,
  findServerCommand,
  getFlag,
  modelPathOf,
  serverCommandForms,
  serverCommandNames,
  setFlag,
  validateParserName,
} from '../../src/engine/execStart';
import { nothingFoundMessage } from '../../src/fleet/servers/discovery';
import {
  parseExecValue,
  parseSystemctlCat,
  quoteSystemdArg,
  renderDropIn,
} from '../../src/target/systemd/execStartSyntax';
import { planParserChange } from '../../src/engine/parserPlan';

const VENDOR = `# /etc/systemd/system/sglang-k26-ddtree.service
[Unit]
Description=SGLang Kimi K2.6
After=network-online.target

[Service]
Type=simple
Environment=CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
ExecStart=/usr/bin/python3 -m sglang.launch_server \\
    --model-path /root/models/Kimi-K2.6 \\
    # a comment inside the continued line is ignored
    --tp 8 --trust-remote-code \\
    --host 127.0.0.1 --port 30001
Restart=on-failure

[Install]
WantedBy=multi-user.target
`;
/** The vendor unit's command up to its tensor parallelism. */
const VENDOR_START: readonly string[] = [
  '/usr/bin/python3',
  '-m',
  'sglang.launch_server',
  '--model-path',
  '/root/models/Kimi-K2.6',
  '--tp',
  '8',
];

const argvOf = (text: string): readonly string[] => {
  const unit = parseSystemctlCat(text);
  assert.equal(unit.commands.length, 1, JSON.stringify(unit));
  return unit.commands[0].argv;
};

describe('execStart: parsing systemctl cat', () => {
  it('joins continuation lines and skips comments inside them', () => {
    assert.deepEqual(argvOf(VENDOR), [
      ...VENDOR_START,
      '--trust-remote-code',
      '--host',
      '127.0.0.1',
      '--port',
      '30001',
    ]);
  });

  it('applies ExecStart= resets across drop-ins, last file wins', () => {
    const text = `${VENDOR}
# /etc/systemd/system/sglang-k26-ddtree.service.d/10-env.conf
[Service]
Environment=FOO=bar

# /etc/systemd/system/sglang-k26-ddtree.service.d/20-cmd.conf
[Service]
ExecStart=
ExecStart=/opt/venv/bin/python -m sglang.launch_server --model-path /m --tp 4
`;
    const unit = parseSystemctlCat(text);
    assert.equal(unit.files.length, 3);
    assert.equal(unit.commands.length, 1);
    assert.deepEqual(unit.commands[0].argv, [
      '/opt/venv/bin/python',
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/m',
      '--tp',
      '4',
    ]);
    assert.equal(unit.commands[0].file, '/etc/systemd/system/sglang-k26-ddtree.service.d/20-cmd.conf');
  });

  it('without a reset a drop-in ExecStart adds a second command', () => {
    const text = `${VENDOR}
# /etc/systemd/system/x.service.d/override.conf
[Service]
ExecStart=/bin/true
`;
    assert.equal(parseSystemctlCat(text).commands.length, 2);
  });

  it('ignores ExecStart outside [Service] and ExecStartPre', () => {
    const text = `# /x.service
[Unit]
ExecStart=/bin/false
[Service]
ExecStartPre=/bin/echo hi
ExecStart = /usr/bin/sglang serve --model-path /m
`;
    assert.deepEqual(argvOf(text), ['/usr/bin/sglang', 'serve', '--model-path', '/m']);
  });

  it('handles double/single quotes, escapes, quotes inside a word, prefixes', () => {
    const [c] = parseExecValue(
      `-/usr/bin/env "python3" -m sglang.launch_server --model-path "/data/My Models/Kimi K2" --served-model-name='kimi k2' --chat-template a\\x20b --x "say \\"hi\\"" --y 'it\\'s'`,
    );
    assert.equal(c.prefix, '-');
    assert.deepEqual(c.argv, [
      '/usr/bin/env',
      'python3',
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/data/My Models/Kimi K2',
      '--served-model-name=kimi k2',
      '--chat-template',
      'a b',
      '--x',
      'say "hi"',
      '--y',
      "it's",
    ]);
  });

  it('unescapes %% and $$ and reports specifiers and variables', () => {
    const [c] = parseExecValue(
      '/usr/bin/python -m sglang.launch_server --model-path /m/100%%/$$HOME --port ${PORT} --name %i',
    );
    assert.deepEqual(c.argv.slice(4), ['/m/100%/$HOME', '--port', '${PORT}', '--name', '%i']);
    assert.deepEqual(c.references, ['${PORT}', '%i']);
  });

  it('an unquoted lone ; separates commands, \\; is literal', () => {
    const cmds = parseExecValue('/bin/a x ; /bin/b \\; ";"');
    assert.equal(cmds.length, 2);
    assert.deepEqual(cmds[1].argv, ['/bin/b', ';', ';']);
  });
});

describe('execStart: finding the server command', () => {
  it('recognizes the forms', () => {
    assert.equal(findServerCommand(['python', '-m', 'sglang.launch_server', '--x'])?.argsStart, 3);
    assert.equal(findServerCommand(['/usr/bin/python3.11', '-u', '-m', 'sglang.launch_server'])?.argsStart, 4);
    assert.equal(findServerCommand(['/usr/bin/env', 'python', '-m', 'sglang.launch_server', '--tp', '8'])?.start, 1);
    assert.deepEqual(findServerCommand(['/opt/bin/sglang', 'serve', '--model-path', '/m']), {
      start: 0,
      argsStart: 2,
      form: 'sglang serve',
      engine: 'sglang',
    });
    assert.equal(findServerCommand(['/bin/bash', '-c', 'python -m sglang.launch_server']), null);
    assert.equal(findServerCommand(['python', '-m', 'vllm.entrypoints.openai.api_server'])?.engine, 'vllm');
  });

  it('modelPathOf reads --model-path, --model and the = form', () => {
    assert.equal(modelPathOf(['sglang', 'serve', '--model-path', '/a b']), '/a b');
    assert.equal(modelPathOf(['sglang', 'serve', '--model=/m']), '/m');
    assert.equal(modelPathOf(['sglang', 'serve']), undefined);
  });
});

describe('execStart: setFlag', () => {
  const base = ['python', '-m', 'sglang.launch_server', '--model-path', '/m', '--tp', '8'];

  it('appends when absent', () => {
    assert.deepEqual(setFlag(base, '--tool-call-parser', 'kimi_k2'), [...base, '--tool-call-parser', 'kimi_k2']);
  });

  it('replaces a different value in place, never duplicates', () => {
    const argv = [...base.slice(0, 5), '--reasoning-parser', 'kimi', '--tp', '8'];
    assert.deepEqual(setFlag(argv, '--reasoning-parser', 'kimi_k2'), [
      ...base.slice(0, 5),
      '--reasoning-parser',
      'kimi_k2',
      '--tp',
      '8',
    ]);
  });

  it('keeps the --flag=value form and drops later duplicates', () => {
    const argv = [...base, '--reasoning-parser=kimi', '--x', '--reasoning-parser', 'qwen3'];
    assert.deepEqual(setFlag(argv, '--reasoning-parser', 'kimi_k2'), [...base, '--reasoning-parser=kimi_k2', '--x']);
    assert.equal(getFlag(argv, '--reasoning-parser'), 'qwen3');
  });

  it('fills in a flag left without value', () => {
    assert.deepEqual(setFlag([...base, '--tool-call-parser', '--tp', '8'], '--tool-call-parser', 'kimi_k2'), [
      ...base,
      '--tool-call-parser',
      'kimi_k2',
      '--tp',
      '8',
    ]);
  });

  it('does not touch wrapper arguments before the server command', () => {
    const argv = ['/usr/bin/numactl', '--tool-call-parser', 'x', 'python', '-m', 'sglang.launch_server'];
    assert.deepEqual(setFlag(argv, '--tool-call-parser', 'kimi_k2'), [...argv, '--tool-call-parser', 'kimi_k2']);
  });
});

describe('execStart: planParserChange', () => {
  const choice = { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' };
  const base = VENDOR_START;

  it('already set -> already-set, whatever the form and order', () => {
    assert.deepEqual(
      planParserChange([...base, '--reasoning-parser=kimi_k2', '--tool-call-parser', 'kimi_k2'], choice),
      { kind: 'already-set' },
    );
  });

  it('adds both flags with a readable diff', () => {
    const plan = planParserChange(base, choice);
    assert.equal(plan.kind, 'change');
    if (plan.kind !== 'change') return;
    assert.deepEqual(plan.newArgv, [...base, '--tool-call-parser', 'kimi_k2', '--reasoning-parser', 'kimi_k2']);
    assert.match(plan.diff, /^ {2}--model-path \/root\/models\/Kimi-K2.6$/m);
    assert.match(plan.diff, /^\+ --tool-call-parser kimi_k2$/m);
    assert.match(plan.diff, /^\+ --reasoning-parser kimi_k2$/m);
    assert.doesNotMatch(plan.diff, /^- /m);
  });

  it('replaces the wrong parser: one - and one + line', () => {
    const plan = planParserChange([...base, '--reasoning-parser', 'kimi', '--tool-call-parser', 'kimi_k2'], choice);
    assert.equal(plan.kind, 'change');
    if (plan.kind !== 'change') return;
    assert.match(plan.diff, /^- --reasoning-parser kimi$/m);
    assert.match(plan.diff, /^\+ --reasoning-parser kimi_k2$/m);
    assert.equal(plan.diff.split('\n').filter((l) => /^[-+] /.test(l)).length, 2);
  });

  it('refuses a command line without the server, naming the server commands it looks for', () => {
    assert.deepEqual(planParserChange(['/bin/bash', '-c', 'python -m sglang.launch_server'], choice), {
      kind: 'unsupported',
      reason:
        'no "python -m sglang.launch_server", "sglang serve" or "vllm serve" in ExecStart: /bin/bash -c python -m sglang.launch_server',
    });
  });
});

describe('execStart: renderDropIn round trip', () => {
  const roundTrip = (argv: string[], options = {}): readonly string[] =>
    argvOf(
      `# /etc/systemd/system/u.service.d/50-kimi-parsers.conf\n${renderDropIn(argv, 'written by Kimi Service', options)}`,
    );

  it('has the drop-in shape: comment, [Service], reset, command', () => {
    const text = renderDropIn(['/usr/bin/python3', '-m', 'sglang.launch_server', '--tp', '8'], 'Kimi Service: parsers');
    assert.equal(
      text,
      '# Kimi Service: parsers\n[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server \\\n    --tp 8\n',
    );
  });

  it('a model path with spaces, quotes, backslashes, % and $ survives', () => {
    const argv = [
      '/usr/bin/python3',
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/data/My Models/Kimi K2.6',
      '--served-model-name',
      'kimi "k2" 100%',
      '--chat-template',
      'C:\\tmp\\x',
      '--api-key',
      '$ecret$$%i%%',
      '--empty',
      '',
      '--semi',
      ';',
      '--hash',
      '#not-a-comment',
      '--tab',
      'a\tb\nc',
      '--reasoning-parser=kimi_k2',
    ];
    assert.deepEqual(roundTrip(argv), argv);
  });

  it('keeps systemd references when asked', () => {
    const argv = ['/usr/bin/python3', '-m', 'sglang.launch_server', '--port', '${PORT}', '--name', '%i'];
    const text = renderDropIn(argv, 'c', { keepReferences: ['${PORT}', '%i'] });
    assert.match(text, /--port "?\$\{PORT\}"?/);
    assert.match(text, /--name %i/);
    const unit = parseSystemctlCat(text);
    assert.deepEqual(unit.commands[0].argv, argv);
    assert.deepEqual(unit.commands[0].references, ['${PORT}', '%i']);
  });

  it('keeps the prefix', () => {
    const text = renderDropIn(['/usr/bin/sglang', 'serve', '--tp', '8'], 'c', { prefix: '-' });
    assert.equal(parseSystemctlCat(text).commands[0].prefix, '-');
  });

  it('a rendered drop-in after the vendor unit becomes the effective command', () => {
    const plan = planParserChange(argvOf(VENDOR), { toolCallParser: 'kimi_k2', reasoningParser: 'kimi_k2' });
    assert.equal(plan.kind, 'change');
    if (plan.kind !== 'change') return;
    const cat = `${VENDOR}\n# /etc/systemd/system/sglang-k26-ddtree.service.d/50-kimi-parsers.conf\n${renderDropIn(plan.newArgv, 'x')}`;
    assert.deepEqual(argvOf(cat), plan.newArgv);
  });

  it('quoteSystemdArg leaves plain words bare', () => {
    assert.equal(quoteSystemdArg('--tp'), '--tp');
    assert.equal(quoteSystemdArg('/a b'), '"/a b"');
    assert.equal(quoteSystemdArg('50%'), '50%%');
  });
});

describe('parser names', () => {
  it('validates shape and membership', () => {
    assert.equal(validateParserName('reasoning', 'kimi_k2'), null);
    assert.equal(validateParserName('tool-call', 'qwen3_coder'), null);
    assert.equal(validateParserName('reasoning', 'deepseek-r1'), null);
    assert.match(validateParserName('tool-call', 'kimi') ?? '', /not a known/);
    assert.match(validateParserName('reasoning', 'kimi_k2; rm -rf /') ?? '', /not a parser name/);
  });
});

describe('apiKeyFromArgv', () => {
  const server = ['/usr/bin/python3', '-m', 'sglang.launch_server', '--model-path', '/m', '--tp', '8'];
  it('--api-key K and --api-key=K', () => {
    assert.equal(apiKeyFromArgv([...server, '--api-key', 'sk-1']), 'sk-1');
    assert.equal(apiKeyFromArgv([...server, '--api-key=sk-2', '--port', '30001']), 'sk-2');
    assert.equal(apiKeyFromArgv(['sglang', 'serve', '--api-key', 'k with space']), 'k with space');
  });
  it('the last one wins (argparse)', () => {
    assert.equal(apiKeyFromArgv([...server, '--api-key', 'first', '--api-key=second']), 'second');
  });
  it('absent, empty or missing its value', () => {
    assert.equal(apiKeyFromArgv(server), undefined);
    assert.equal(apiKeyFromArgv([...server, '--api-key=']), undefined);
    assert.equal(apiKeyFromArgv([...server, '--api-key']), undefined);
    assert.equal(apiKeyFromArgv([...server, '--api-key', '--port', '30001']), undefined);
    assert.equal(apiKeyFromArgv([...server, '--admin-api-key', 'adm']), undefined);
  });
  it('from a parsed unit', () => {
    const unit = parseSystemctlCat(`# /etc/systemd/system/x.service
[Service]
ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m \\
    --api-key "sk live" --port 30001
`);
    assert.equal(apiKeyFromArgv(unit.commands[0].argv), 'sk live');
  });
});

describe('execStart: how messages name the engines and their server commands', () => {
  it('in the words the messages had before they were read from ENGINES', () => {
    assert.equal(engineLabels(), 'SGLang or vLLM');
    assert.deepEqual(serverCommandForms(), ['python -m sglang.launch_server', 'sglang serve', 'vllm serve']);
    assert.equal(serverCommandNames(), '"python -m sglang.launch_server", "sglang serve" or "vllm serve"');
    assert.equal(
      nothingFoundMessage('gpu1'),
      'no systemd unit or Slurm job of the login user on gpu1 launches SGLang or vLLM (python -m sglang.launch_server, sglang serve, vllm serve in its ExecStart or its batch script)',
    );
  });
});
