/**
 * Sentences the port forward, the rolling restart and the broker build from their facts follow the
 * display language: under the zh-cn bundle they read in Chinese, the English sentence gone; without
 * a bundle the English is exactly as before. Each is made by the room's own function.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { useBundle, type L10nBundle } from '../../src/util/l10n';
import { openedLine, portNote, prohibitedError } from '../../src/fleet/forward/forwardPlan';
import { rollSummary } from '../../src/fleet/restart/rolling';
import { unsafeDirReason } from '../../src/broker/socketDir';

const ROOT = path.join(__dirname, '..', '..');
const ZH = JSON.parse(fs.readFileSync(path.join(ROOT, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')) as L10nBundle;

const target = { host: '127.0.0.1', port: 30000, path: '' };

/** Each sample: how it is made, its exact English, and Chinese words it must hold under zh-cn. */
const SAMPLES: readonly (readonly [name: string, make: () => string, english: string, chinese: readonly string[]])[] = [
  [
    'an open forward on another port',
    () =>
      openedLine({
        server: 'gpu1',
        localPort: 18000,
        remote: '127.0.0.1:30000',
        baseUrl: 'http://127.0.0.1:18000/v1',
        portNote: portNote(target, 18000, false)!,
      }),
    "Forwarding 127.0.0.1:18000 on this machine to 127.0.0.1:30000 on gpu1's host (port 30000 is taken on this machine, so 18000 was chosen). Base URL: http://127.0.0.1:18000/v1",
    ['转发到 gpu1 所在主机上的 127.0.0.1:30000', '已被占用', 'http://127.0.0.1:18000/v1'],
  ],
  [
    'a host that forbids forwarding',
    () => prohibitedError({ name: 'gpu1', host: 'gpu1.lab' }).message,
    'cannot forward a port to gpu1: the SSH server of gpu1.lab forbids TCP forwarding (AllowTcpForwarding no: "administratively prohibited"), so no connection from this machine can reach the model server through SSH. Watching and restarting still work (they run curl on the host). To use the server from this machine, allow forwarding for your login in the host\'s sshd_config (e.g. "Match User <you>" + "AllowTcpForwarding local") and reload sshd.',
    ['端口转发', '禁止 TCP 转发', 'sshd_config'],
  ],
  [
    'a rolling restart stopped',
    () => rollSummary({ kind: 'failed', server: 'b', reason: 'it failed', restarted: ['a'], skipped: ['c'] }),
    'Rolling restart stopped at b: it failed. A restarted, ready and verified. Not restarted: c.',
    ['滚动重启在 b 处停止', '未重启：c'],
  ],
  [
    'a broker folder of another user',
    () => unsafeDirReason({ isSymbolicLink: () => false, isDirectory: () => true, uid: 1001, mode: 0o40700 }, 1000)!,
    'belongs to uid 1001, not 1000',
    ['属于 uid 1001'],
  ],
];

describe('the words of the forward, the roll and the broker in the display language', () => {
  afterEach(() => useBundle(undefined));

  it('without a bundle: the English, unchanged', () => {
    useBundle(undefined);
    for (const [name, make, english] of SAMPLES) assert.equal(make(), english, name);
  });

  it('under the zh-cn bundle: Chinese words, and not the English sentence', () => {
    useBundle(ZH);
    for (const [name, make, english, chinese] of SAMPLES) {
      const text = make();
      assert.notEqual(text, english, name);
      for (const words of chinese) assert.ok(text.includes(words), `${name}: ${JSON.stringify(words)} in ${text}`);
    }
  });
});
