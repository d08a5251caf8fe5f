import { strict as assert } from 'node:assert';
import { parseSettings } from '../../src/config/parseSettings';
import { readFileSync } from 'node:fs';
import { activeProfile, localHostRefusal, type ServerProfile } from '../../src/config/config';
import { EXTENSION_ID } from '../../src/config/namespace';

const good = { name: 'ct200', host: 'ct200', unit: 'sglang-k26-ddtree' };

describe('settings validation', () => {
  it('accepts a minimal server and fills the defaults', () => {
    const result = parseSettings({ servers: [good] });
    assert.ok(result.ok);
    const server = activeProfile(result.settings)!;
    assert.equal(server.unit, 'sglang-k26-ddtree.service');
    assert.equal(server.url, 'http://127.0.0.1:30001');
    assert.equal(server.urlPort, 30001);
    assert.equal(server.sudo, false);
    assert.equal(result.settings.hostKeyPolicy, 'ask');
    assert.equal(result.settings.loadTimeoutMs, 30 * 60_000);
  });

  it('host "local" means no SSH', () => {
    const result = parseSettings({ servers: [{ ...good, host: 'local' }] });
    assert.ok(result.ok);
    assert.equal(result.settings.servers[0].host, undefined);
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    [
      'unit with shell metacharacters',
      { servers: [{ ...good, unit: 'x; touch /tmp/canary' }] },
      /kimiService\.servers\[0\]\.unit/,
    ],
    ['unit with a newline', { servers: [{ ...good, unit: 'x\nrm -rf /' }] }, /kimiService\.servers\[0\]\.unit/],
    ['host with $()', { servers: [{ ...good, host: '$(reboot)' }] }, /kimiService\.servers\[0\]\.host/],
    ['host with a space', { servers: [{ ...good, host: 'a b' }] }, /kimiService\.servers\[0\]\.host/],
    ['username with a quote', { servers: [{ ...good, username: "root'" }] }, /kimiService\.servers\[0\]\.username/],
    ['url not http', { servers: [{ ...good, url: 'file:///etc/passwd' }] }, /kimiService\.servers\[0\]\.url/],
    ['url garbage', { servers: [{ ...good, url: 'not a url' }] }, /kimiService\.servers\[0\]\.url/],
    ['port out of range', { servers: [{ ...good, port: 70000 }] }, /kimiService\.servers\[0\]\.port/],
    ['missing unit', { servers: [{ name: 'x', host: 'y' }] }, /kimiService\.servers\[0\]\.unit is missing/],
    [
      'unknown field',
      { servers: [{ ...good, password: 'hunter2' }] },
      /kimiService\.servers\[0\]\.password is not a known field/,
    ],
    ['bad policy', { servers: [good], hostKeyPolicy: 'no' }, /kimiService\.hostKeyPolicy must be one of/],
    ['duplicate names', { servers: [good, good] }, /used twice/],
    ['unknown active server', { servers: [good], activeServer: 'nope' }, /kimiService\.activeServer/],
    ['tiny poll interval', { servers: [good], pollIntervalSeconds: 0 }, /kimiService\.pollIntervalSeconds/],
    ['very long unit', { servers: [{ ...good, unit: 'a'.repeat(5000) }] }, /kimiService\.servers\[0\]\.unit/],
  ];
  for (const [what, raw, message] of bad) {
    it(`rejects ${what} with a message naming the setting`, () => {
      const result = parseSettings(raw);
      assert.equal(result.ok, false);
      if (!result.ok) assert.match(result.errors.join('\n'), message);
    });
  }

  it('keeps a non-ASCII server name', () => {
    const result = parseSettings({ servers: [{ ...good, name: 'GPU-東京' }] });
    assert.ok(result.ok);
  });
});

describe('host "local" on the UI side of a remote window', () => {
  const profile = (host: string | undefined) =>
    ({
      name: 'gpu',
      host,
      port: 22,
      unit: 'sglang',
      url: 'http://127.0.0.1:30001',
      sudo: false,
    }) as unknown as ServerProfile;
  it('is refused with what to do, only there', () => {
    assert.match(
      localHostRefusal(profile(undefined), 'ssh-remote')!,
      /runs on your own machine.*Install Kimi Service in the remote/,
    );
    assert.ok(
      localHostRefusal(profile(undefined), 'ssh-remote')!.includes(
        'add "remote.extensionKind": { "kimi-tools.kimi-service": ["workspace"] } to your user settings',
      ),
      'names the setting and the exact value that makes the editor run it on the remote side',
    );
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { publisher: string; name: string };
    assert.equal(EXTENSION_ID, `${pkg.publisher}.${pkg.name}`, "the id in that value is this extension's");
    assert.equal(localHostRefusal(profile(undefined), undefined), undefined, 'no remote window: local is this machine');
    assert.equal(localHostRefusal(profile('gpu1'), 'ssh-remote'), undefined, 'an SSH host is fine from anywhere');
  });
});
