import { strict as assert } from 'node:assert';
import { compareServerUrl, parseEndpoint } from '../../src/engine/announcedUrl';

describe('sglangUrl: compareServerUrl', () => {
  const fine: Array<[string, string]> = [
    ['http://127.0.0.1:30001', 'http://127.0.0.1:30001'],
    ['http://127.0.0.1:30001/', 'http://127.0.0.1:30001'],
    ['http://127.0.0.1:30001', 'http://0.0.0.0:30001'],
    ['http://localhost:30001', 'http://0.0.0.0:30001'],
    ['http://10.1.2.3:30001', 'http://0.0.0.0:30001'],
    ['http://gpu01:30001', 'http://0.0.0.0:30001'],
    ['http://127.0.0.1:30001', 'http://[::]:30001'],
    ['http://[::1]:30001', 'http://[::]:30001'],
    ['http://localhost:30001', 'http://[::]:30001'],
    ['http://127.0.0.1:30001', 'http://:::30001'],
    ['http://localhost:30001', 'http://127.0.0.1:30001'],
    ['http://127.0.0.1:30001', 'http://localhost:30001'],
    ['http://localhost:30001', 'http://[::1]:30001'],
    ['http://GPU01:30001', 'http://gpu01:30001'],
    ['http://127.0.0.1', 'http://127.0.0.1:80'],
    ['https://127.0.0.1:30001', 'https://0.0.0.0:30001'],
  ];
  for (const [configured, announced] of fine) {
    it(`${configured} reaches ${announced}`, () =>
      assert.deepEqual(compareServerUrl(configured, announced), { ok: true }));
  }

  const mismatches: Array<[string, string, string]> = [
    // 0.0.0.0 on another port: the loopback on the announced port
    ['http://127.0.0.1:30001', 'http://0.0.0.0:30000', 'http://127.0.0.1:30000'],
    ['http://localhost:30001', 'http://0.0.0.0:30000', 'http://127.0.0.1:30000'],
    ['http://127.0.0.1:30001', 'http://[::]:30000', 'http://[::1]:30000'],
    ['http://127.0.0.1:30001', 'http://:::30000', 'http://[::1]:30000'],
    // a specific other address
    ['http://127.0.0.1:30001', 'http://10.1.2.3:30001', 'http://10.1.2.3:30001'],
    ['http://127.0.0.1:30001', 'http://gpu01:30001', 'http://gpu01:30001'],
    ['http://10.1.2.3:30001', 'http://127.0.0.1:30001', 'http://127.0.0.1:30001'],
    ['http://127.0.0.2:30001', 'http://127.0.0.1:30001', 'http://127.0.0.1:30001'],
    ['http://[::1]:30001', 'http://0.0.0.0:30001', 'http://127.0.0.1:30001'],
    ['http://[::1]:30001', 'http://127.0.0.1:30001', 'http://127.0.0.1:30001'],
    ['http://[::1]:30001', 'http://localhost:30001', 'http://localhost:30001'],
    ['http://127.0.0.1:30001', 'http://[::1]:30001', 'http://[::1]:30001'],
    // same address, another port
    ['http://127.0.0.1:30001', 'http://127.0.0.1:30000', 'http://127.0.0.1:30000'],
    // https announced
    ['http://127.0.0.1:30001', 'https://0.0.0.0:30001', 'https://127.0.0.1:30001'],
    // a configured path prefix is kept
    ['http://127.0.0.1:30001/sglang/', 'http://0.0.0.0:30000', 'http://127.0.0.1:30000/sglang'],
  ];
  for (const [configured, announced, useUrl] of mismatches) {
    it(`${configured} vs ${announced}: use ${useUrl}`, () => {
      const r = compareServerUrl(configured, announced);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.useUrl, useUrl);
      assert.ok(r.message.includes(configured), r.message);
      assert.ok(r.message.includes(announced), r.message);
      assert.ok(r.message.includes(useUrl), r.message);
    });
  }

  it('the message says why', () => {
    const port = compareServerUrl('http://127.0.0.1:30001', 'http://0.0.0.0:30000');
    assert.ok(!port.ok && /another port/.test(port.message));
    const addr = compareServerUrl('http://127.0.0.1:30001', 'http://10.1.2.3:30001');
    assert.ok(!addr.ok && /another address/.test(addr.message));
    assert.equal(
      !port.ok && port.message,
      'The server says it listens on http://0.0.0.0:30000 (another port), but the configured url is http://127.0.0.1:30001: using http://127.0.0.1:30000.',
    );
  });

  it('an announcement that cannot be read is not a mismatch', () => {
    assert.deepEqual(compareServerUrl('http://127.0.0.1:30001', ''), { ok: true });
    assert.deepEqual(compareServerUrl('http://127.0.0.1:30001', 'unix:/tmp/sock'), { ok: true });
    assert.deepEqual(compareServerUrl('http://127.0.0.1:30001', 'http://'), { ok: true });
  });

  it('parseEndpoint', () => {
    assert.deepEqual(parseEndpoint('http://0.0.0.0:30000'), {
      protocol: 'http',
      host: '0.0.0.0',
      port: 30000,
      path: '',
    });
    assert.deepEqual(parseEndpoint('http://[::]:30000'), { protocol: 'http', host: '::', port: 30000, path: '' });
    assert.deepEqual(parseEndpoint('http://:::30000'), { protocol: 'http', host: '::', port: 30000, path: '' });
    assert.deepEqual(parseEndpoint('HTTPS://Gpu01'), { protocol: 'https', host: 'gpu01', port: 443, path: '' });
    assert.equal(parseEndpoint('ftp://x:1'), undefined);
  });
});
