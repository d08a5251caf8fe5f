import { strict as assert } from 'node:assert';
import { isSecretName, maskSecrets } from '../../src/util/secrets';

/** Masks and checks idempotence on the way. */
function mask(text: string, known: readonly string[] = []): string {
  const once = maskSecrets(text, known);
  assert.equal(maskSecrets(once, known), once, `not idempotent for ${JSON.stringify(text)}`);
  return once;
}

describe('secrets: maskSecrets', () => {
  const cases: Array<[string, string, string]> = [
    // --api-key
    [
      '--api-key K',
      'python -m sglang.launch_server --api-key sk-abc123 --port 30001',
      'python -m sglang.launch_server --api-key *** --port 30001',
    ],
    [
      '--api-key=K',
      'python -m sglang.launch_server --api-key=sk-abc123 --port 30001',
      'python -m sglang.launch_server --api-key=*** --port 30001',
    ],
    ["--api-key 'K'", "sglang serve --api-key 'sk abc' --tp 8", "sglang serve --api-key '***' --tp 8"],
    ['--api-key "K"', 'sglang serve --api-key "sk abc" --tp 8', 'sglang serve --api-key "***" --tp 8'],
    ["--api-key='K'", "--api-key='sk abc'", "--api-key='***'"],
    ['--api-key="K" at the end', '--api-key="sk-1"', '--api-key="***"'],
    [
      'a quoted whole word',
      'ExecStart=/usr/bin/python3 "--api-key=sk 1" --tp 8',
      'ExecStart=/usr/bin/python3 "--api-key=***" --tp 8',
    ],
    ['--admin-api-key', '--admin-api-key adm-9 --api-key k-1', '--admin-api-key *** --api-key ***'],
    ['--hf-token', '--hf-token hf_xyz', '--hf-token ***'],
    [
      '--ssl-keyfile-password',
      '--ssl-keyfile /k.pem --ssl-keyfile-password pw',
      '--ssl-keyfile /k.pem --ssl-keyfile-password ***',
    ],
    ['a tab before the value', '--api-key\tsk-1', '--api-key\t***'],
    [
      'a continued unit-file line',
      'ExecStart=/usr/bin/python3 -m sglang.launch_server --api-key \\\n    sk-abc \\\n    --tp 8',
      'ExecStart=/usr/bin/python3 -m sglang.launch_server --api-key \\\n    *** \\\n    --tp 8',
    ],
    [
      'inside a JSON string (escaped quotes)',
      '{"cmd": "python --api-key \\"sk 1\\" --tp 8"}',
      '{"cmd": "python --api-key \\"***\\" --tp 8"}',
    ],
    [
      'an argv as JSON',
      '["python3","-m","sglang.launch_server","--api-key","sk-1","--tp","8"]',
      '["python3","-m","sglang.launch_server","--api-key","***","--tp","8"]',
    ],
    ['an argv as a Python list', "['--api-key', 'sk-1', '--tp', '8']", "['--api-key', '***', '--tp', '8']"],
    [
      'a JSON list with a flag without value before',
      '["--enable-x", "--api-key", "sk-1"]',
      '["--enable-x", "--api-key", "***"]',
    ],
    [
      'systemctl show ExecStart',
      'ExecStart={ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -m sglang.launch_server --api-key sk-1 --port 30001 ; ignore_errors=no }',
      'ExecStart={ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -m sglang.launch_server --api-key *** --port 30001 ; ignore_errors=no }',
    ],
    // Authorization
    ['Authorization header', 'Authorization: Bearer sk-abc', 'Authorization: Bearer ***'],
    ['any case', 'authorization: bearer sk-abc', 'authorization: bearer ***'],
    ['upper case', 'AUTHORIZATION:Bearer sk-abc', 'AUTHORIZATION:Bearer ***'],
    [
      'curl -H',
      "curl -H 'Authorization: Bearer sk-abc' http://127.0.0.1:30001/v1/models",
      "curl -H 'Authorization: Bearer ***' http://127.0.0.1:30001/v1/models",
    ],
    [
      'JSON',
      '{"authorization": "Bearer sk-abc", "accept": "application/json"}',
      '{"authorization": "Bearer ***", "accept": "application/json"}',
    ],
    [
      'Node inspect',
      "{ Accept: 'application/json', Authorization: 'Bearer sk-abc' }",
      "{ Accept: 'application/json', Authorization: 'Bearer ***' }",
    ],
    ['curl config', 'header = "Authorization: Bearer sk-abc"', 'header = "Authorization: Bearer ***"'],
    ['Basic', 'Authorization: Basic dXNlcjpwYXNz', 'Authorization: Basic ***'],
    ['no scheme', 'Authorization: sk-abc', 'Authorization: ***'],
    ['X-Api-Key header', 'X-Api-Key: sk-abc', 'X-Api-Key: ***'],
    // environment
    ['HF_TOKEN=', 'HF_TOKEN=hf_abcdef', 'HF_TOKEN=***'],
    ['OPENAI_API_KEY=', 'export OPENAI_API_KEY=sk-proj-123', 'export OPENAI_API_KEY=***'],
    ['*_SECRET and *_PASSWORD', 'AWS_SECRET=a DB_PASSWORD=b PGPASSWD=c', 'AWS_SECRET=*** DB_PASSWORD=*** PGPASSWD=c'],
    ['quoted values', `HF_TOKEN='hf abc' OPENAI_API_KEY="sk 1"`, `HF_TOKEN='***' OPENAI_API_KEY="***"`],
    ['systemd Environment=', 'Environment=HF_TOKEN=hf_abc', 'Environment=HF_TOKEN=***'],
    [
      'systemd Environment="..."',
      'Environment="HF_TOKEN=hf abc" "CUDA_VISIBLE_DEVICES=0,1"',
      'Environment="HF_TOKEN=***" "CUDA_VISIBLE_DEVICES=0,1"',
    ],
    [
      'several on one line',
      'Environment=CUDA_VISIBLE_DEVICES=0 HF_TOKEN=x SGLANG_API_KEY=y NCCL_DEBUG=INFO',
      'Environment=CUDA_VISIBLE_DEVICES=0 HF_TOKEN=*** SGLANG_API_KEY=*** NCCL_DEBUG=INFO',
    ],
    ['base64 padding stays inside the value', 'HF_TOKEN=aGVsbG8=', 'HF_TOKEN=***'],
    [
      'SGLang ServerArgs repr',
      "server_args=ServerArgs(model_path='/root/models/Kimi-K2.6', api_key='sk-1', admin_api_key=None, port=30001)",
      "server_args=ServerArgs(model_path='/root/models/Kimi-K2.6', api_key='***', admin_api_key=None, port=30001)",
    ],
    [
      'JSON keys',
      '{"api_key": "sk-1", "HF_TOKEN": "hf_1", "tp_size": 8, "eos_token": "</s>"}',
      '{"api_key": "***", "HF_TOKEN": "***", "tp_size": 8, "eos_token": "</s>"}',
    ],
    [
      'prose punctuation stays',
      'set HF_TOKEN=hf_1. Then OPENAI_API_KEY=sk-2, and go',
      'set HF_TOKEN=***. Then OPENAI_API_KEY=***, and go',
    ],
    ['CRLF lines', 'HF_TOKEN=a\r\n--api-key b\r\n', 'HF_TOKEN=***\r\n--api-key ***\r\n'],
    ['JSON key with an escaped quote', '{"api_key": "a\\"b"}', '{"api_key": "***"}'],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(mask(input), expected));
  }

  const untouched = [
    'python3 -m sglang.launch_server --model-path /root/models/Kimi-K2.6 --tp 8 --port 30001 --max-total-tokens 4096',
    '--tokenizer-path /t --skip-tokenizer-init --token-budget 5',
    'TOKENIZERS_PARALLELISM=false MAX_TOKENS=5 HF_TOKEN_PATH=/root/.hf HF_HOME=/root/.cache',
    'Environment=CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7',
    '{"eos_token": "</s>", "max_tokens": 1, "choices": [{"text": " there"}]}',
    'HTTP 401: the server wants an API key (--api-key): set it with "Kimi Service: Set server API key"',
    'The bearer of the news said Authorization failed',
    'Invalid token: expected an identifier',
    'Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=12.34 GB',
    'INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)',
    "sort_key='name' eos_token='</s>' api_key=None",
    '--api-key --port 30001',
    '',
  ];
  for (const text of untouched) {
    it(`changes nothing else: ${JSON.stringify(text.slice(0, 50))}`, () => assert.equal(mask(text), text));
  }

  it('a unified diff of a unit file', () => {
    const diff = [
      '--- ExecStart (current)',
      '+++ ExecStart (new)',
      '  /usr/bin/python3 -m sglang.launch_server',
      '  --model-path /root/models/Kimi-K2.6',
      '  --api-key sk-secret-1',
      '- --tp 8',
      '+ --tp 8',
      '+ --tool-call-parser kimi_k2',
      '+ --api-key=sk-secret-2',
      '+ --hf-token "hf with space"',
      '',
    ].join('\n');
    const masked = mask(diff);
    assert.equal(
      masked,
      [
        '--- ExecStart (current)',
        '+++ ExecStart (new)',
        '  /usr/bin/python3 -m sglang.launch_server',
        '  --model-path /root/models/Kimi-K2.6',
        '  --api-key ***',
        '- --tp 8',
        '+ --tp 8',
        '+ --tool-call-parser kimi_k2',
        '+ --api-key=***',
        '+ --hf-token "***"',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(masked, /sk-secret|hf with/);
  });

  it('a systemctl cat output with Environment= lines', () => {
    const cat = [
      '# /etc/systemd/system/sglang-k26-ddtree.service',
      '[Unit]',
      'Description=SGLang Kimi K2.6',
      '',
      '[Service]',
      'Environment=CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7',
      'Environment="HF_TOKEN=hf_abcDEF123" "NCCL_DEBUG=WARN"',
      "Environment='OPENAI_API_KEY=sk-proj-xyz'",
      'Environment=SGLANG_ADMIN_KEY=adm HF_HOME=/root/.cache/huggingface',
      'ExecStart=/usr/bin/python3 -m sglang.launch_server \\',
      '    --model-path /root/models/Kimi-K2.6 \\',
      '    --api-key "sk-live-777" \\',
      '    --tp 8 --port 30001',
      'Restart=on-failure',
      '',
      '# /etc/systemd/system/sglang-k26-ddtree.service.d/kimi-parsers.conf',
      '[Service]',
      'ExecStart=',
      'ExecStart=/usr/bin/python3 -m sglang.launch_server --api-key=sk-live-888 --tp 8',
      '',
    ].join('\n');
    const masked = mask(cat);
    const expected = cat
      .replace('hf_abcDEF123', '***')
      .replace('sk-proj-xyz', '***')
      .replace('SGLANG_ADMIN_KEY=adm', 'SGLANG_ADMIN_KEY=***')
      .replace('sk-live-777', '***')
      .replace('sk-live-888', '***');
    assert.equal(masked, expected);
    assert.equal(masked.split('\n').length, cat.split('\n').length);
  });

  it('known values are masked wherever they appear', () => {
    assert.equal(mask('the key sk-abc123 was refused (sk-abc123)', ['sk-abc123']), 'the key *** was refused (***)');
    // A key that contains another known one is masked whole.
    assert.equal(mask('x sk-abc123-long y', ['sk-abc123', 'sk-abc123-long']), 'x *** y');
    // Too short to be a secret worth hiding everywhere: would mask ordinary words.
    assert.equal(mask('a b c', ['a']), 'a b c');
  });

  // A backtracking pattern would take minutes on this megabyte; the test's own time limit catches it
  // (a fixed bound here failed at 2.3 s on a loaded machine, where it takes 0.4 s when quiet).
  it('a megabyte of log lines is masked whole, the key at its very end', () => {
    const line =
      'INFO 2026-01-01 [TP0] Load weight end. type=DeepseekV3ForCausalLM, avail mem=12.34 GB "a": "b" --tp 8 HF_HOME=/x\n';
    const text = line.repeat(10_000) + '--api-key sk-1\n';
    const masked = maskSecrets(text);
    assert.ok(masked.endsWith('--api-key ***\n'));
    assert.equal(masked, text.replace('--api-key sk-1', '--api-key ***'));
  });

  it('is idempotent on everything above', () => {
    for (const [, input] of cases) {
      const once = maskSecrets(input);
      assert.equal(maskSecrets(once), once);
    }
  });
});

describe('secrets: isSecretName', () => {
  it('secret names', () => {
    for (const n of [
      'HF_TOKEN',
      'OPENAI_API_KEY',
      'AWS_SECRET',
      'DB_PASSWORD',
      'TOKEN',
      'api_key',
      'api-key',
      'admin-api-key',
      'apikey',
      'hf_token',
      'hf-token',
      'client_secret',
      'ssl-keyfile-password',
      'token',
    ]) {
      assert.equal(isSecretName(n), true, n);
    }
  });
  it('other names', () => {
    for (const n of [
      'TOKENIZERS_PARALLELISM',
      'MAX_TOKENS',
      'HF_TOKEN_PATH',
      'eos_token',
      'max_tokens',
      'tokenizer-path',
      'sort_key',
      'ssl-keyfile',
      'Environment',
      'port',
    ]) {
      assert.equal(isSecretName(n), false, n);
    }
  });
});
