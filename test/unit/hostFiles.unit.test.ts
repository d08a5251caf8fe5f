/**
 * Where the simulated host's login user is stopped on the way to a file (test/gpu-host/hostFiles.ts):
 * the message the suite gives when a checkout, TMPDIR or node sits under a folder like /root.
 */
import { strict as assert } from 'node:assert';
import { accessBlocker, type Account, type PathNode } from '../gpu-host/hostFiles';

const kimi: Account = { name: 'kimi', uid: 1001, gids: [1001, 27] };
const dir = (mode: number, uid = 0, gid = 0): PathNode => ({ mode, uid, gid, isDirectory: true });
const file = (mode: number, uid = 0, gid = 0): PathNode => ({ mode, uid, gid, isDirectory: false });
const tree =
  (nodes: Record<string, PathNode>) =>
  (p: string): PathNode | undefined =>
    nodes[p];

describe('accessBlocker: why a login user cannot reach a file', () => {
  it('names the first folder the user may not enter, with its mode and owner', () => {
    const stat = tree({
      '/': dir(0o755),
      '/root': dir(0o700),
      '/root/.nvm': dir(0o755),
      '/root/.nvm/node': file(0o755),
    });
    assert.equal(
      accessBlocker('/root/.nvm/node', kimi, stat, { execute: true }),
      'kimi may not enter /root (drwx------, owner uid 0)',
    );
  });

  it('lets through a folder of 0711 (search without listing) and a world-readable file', () => {
    const stat = tree({ '/': dir(0o755), '/tmp': dir(0o1777), '/tmp/fix': dir(0o711), '/tmp/fix/a.js': file(0o644) });
    assert.equal(accessBlocker('/tmp/fix/a.js', kimi, stat), undefined);
  });

  it('a file the user may read but not run is in the way only when it must run', () => {
    const stat = tree({ '/': dir(0o755), '/opt': dir(0o755), '/opt/node': file(0o744) });
    assert.equal(accessBlocker('/opt/node', kimi, stat), undefined);
    assert.equal(
      accessBlocker('/opt/node', kimi, stat, { execute: true }),
      'kimi may not run /opt/node (-rwxr--r--, owner uid 0)',
    );
  });

  it('owner bits for the owner, group bits for a member, other bits for the rest (no fall-through)', () => {
    // owner without x: refused even though others have it, as the kernel decides
    assert.match(
      accessBlocker(
        '/home/kimi',
        kimi,
        tree({ '/': dir(0o755), '/home': dir(0o755), '/home/kimi': dir(0o075, 1001, 1001) }),
        { execute: false },
      ) ?? '',
      /kimi may not enter \/home\/kimi/,
    );
    assert.equal(
      accessBlocker('/srv/x', kimi, tree({ '/': dir(0o755), '/srv': dir(0o750, 0, 27), '/srv/x': file(0o640, 0, 27) })),
      undefined,
    );
    assert.match(
      accessBlocker('/srv/x', kimi, tree({ '/': dir(0o755), '/srv': dir(0o705, 0, 27), '/srv/x': file(0o644) })) ?? '',
      /may not enter \/srv/,
    );
  });

  it('root passes everywhere; a missing path is said missing', () => {
    const stat = tree({ '/': dir(0o755), '/root': dir(0o700), '/root/x': file(0o600) });
    assert.equal(accessBlocker('/root/x', { name: 'root', uid: 0, gids: [0] }, stat), undefined);
    assert.equal(accessBlocker('/root/y', { name: 'root', uid: 0, gids: [0] }, stat), '/root/y does not exist');
  });
});
