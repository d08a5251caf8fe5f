import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { decideAnnouncedUrl, type HostView } from '../../src/monitor/watch/announcedAddress';
import {
  canonicalAddress,
  isLoopback,
  parseHostAddressesLine,
  parseResolved,
  resolveCommand,
} from '../../src/host/hostAddresses';
import { samplerCommand, SamplerReader } from '../../src/monitor/watch/sampler';

const V6_PRIVATE = 'fd00:0000:0000:0000:0000:0000:0000:0002';
const host = (addresses: readonly string[] | undefined, resolved: Record<string, string[]> = {}): HostView => ({
  addresses,
  resolved: new Map(Object.entries(resolved)),
});
const OWN = host(['127.0.0.1', '192.0.2.2', '0000:0000:0000:0000:0000:0000:0000:0001', V6_PRIVATE]);

describe('announcedAddress: follow only an address the host has', () => {
  it('an address of another machine (a copied log): the configured url is kept, and the message says why', () => {
    const d = decideAnnouncedUrl('http://127.0.0.1:30000', 'http://10.99.91.49:30001', OWN);
    assert.equal(d.kind, 'keep');
    assert.match(
      d.kind === 'keep' ? d.message : '',
      /10\.99\.91\.49.*no interface.*configured url http:\/\/127\.0\.0\.1:30000/,
    );
  });

  it("an address of the host's own interfaces (the server bound one interface): followed", () => {
    assert.deepEqual(decided('http://127.0.0.1:30000', 'http://192.0.2.2:30000', OWN), 'switch http://192.0.2.2:30000');
    assert.deepEqual(decided('http://127.0.0.1:30000', 'http://[fd00::2]:30000', OWN), 'switch http://[fd00::2]:30000');
  });

  it('loopback and wildcard announcements are followed without the addresses (every host has them)', () => {
    const unknown = host(undefined);
    assert.equal(decided('http://127.0.0.1:30001', 'http://0.0.0.0:30000', unknown), 'switch http://127.0.0.1:30000');
    assert.equal(decided('http://10.0.0.5:30001', 'http://localhost:30001', unknown), 'switch http://localhost:30001');
    assert.equal(decided('http://127.0.0.1:30001', 'http://[::1]:30002', unknown), 'switch http://[::1]:30002');
  });

  it('the same server: nothing to do', () => {
    assert.equal(decideAnnouncedUrl('http://127.0.0.1:30000', 'http://0.0.0.0:30000', host(undefined)).kind, 'same');
  });

  it('addresses not read yet: wait for them; unreadable (empty): keep', () => {
    assert.equal(
      decideAnnouncedUrl('http://127.0.0.1:30000', 'http://192.0.2.2:30000', host(undefined)).kind,
      'needAddresses',
    );
    const d = decideAnnouncedUrl('http://127.0.0.1:30000', 'http://192.0.2.2:30000', host([]));
    assert.equal(d.kind, 'keep');
  });

  it('a name: resolved on the host first; followed when it resolves to the host itself, else kept', () => {
    assert.deepEqual(decideAnnouncedUrl('http://127.0.0.1:30000', 'http://gpu-7:30000', OWN), {
      kind: 'needResolve',
      name: 'gpu-7',
    });
    const self = host(OWN.addresses, { 'gpu-7': ['192.0.2.2'] });
    assert.equal(decided('http://127.0.0.1:30000', 'http://gpu-7:30000', self), 'switch http://gpu-7:30000');
    const other = host(OWN.addresses, { 'gpu-7': ['10.99.91.49'] });
    assert.equal(decideAnnouncedUrl('http://127.0.0.1:30000', 'http://gpu-7:30000', other).kind, 'keep');
    const none = host(OWN.addresses, { 'gpu-7': [] });
    assert.match(
      JSON.stringify(decideAnnouncedUrl('http://127.0.0.1:30000', 'http://gpu-7:30000', none)),
      /cannot resolve gpu-7/,
    );
  });

  it('reads the sampler line of the host addresses, in the spelling announcements are compared in', () => {
    assert.deepEqual(
      parseHostAddressesLine(
        'A 127.0.0.1 192.0.2.2 / 00000000000000000000000000000001 fd000000000000000000000000000002',
      ),
      ['127.0.0.1', '192.0.2.2', '0000:0000:0000:0000:0000:0000:0000:0001', V6_PRIVATE],
    );
    assert.deepEqual(parseHostAddressesLine('A /'), []);
    assert.equal(parseHostAddressesLine('S 1 2 3 4 5 -'), undefined);
    assert.equal(canonicalAddress('[FD00::2]'), V6_PRIVATE);
    assert.equal(canonicalAddress('::ffff:10.0.0.1'), '0000:0000:0000:0000:0000:ffff:0a00:0001');
    assert.equal(canonicalAddress('gpu-7'), undefined);
    assert.ok(isLoopback('127.3.4.5') && isLoopback('::1') && isLoopback('LOCALHOST') && !isLoopback('10.0.0.1'));
  });

  it("the sampler's first line, run by sh on this machine, carries its loopback", () => {
    const command = samplerCommand({ mainPid: process.pid, intervalMs: 100, hostAddresses: true });
    const out = execFileSync('/bin/sh', ['-c', `( ${command} ) | head -n 1`], { encoding: 'utf8', timeout: 15_000 });
    const round = new SamplerReader(() => undefined).read(out.trim(), 0);
    assert.ok(round.hostAddresses?.includes('127.0.0.1'), out);
  });

  it('resolves a name with getent, and nothing but a host name reaches the shell', () => {
    assert.equal(resolveCommand('gpu-7.example'), 'getent ahosts gpu-7.example');
    for (const bad of ['a b', 'x;rm -rf /', '-n', "a'b", 'a\nb', '']) assert.throws(() => resolveCommand(bad));
    assert.deepEqual(parseResolved('192.0.2.2       STREAM gpu-7\n192.0.2.2       DGRAM  \nfd00::2 RAW\n'), [
      '192.0.2.2',
      V6_PRIVATE,
    ]);
  });
});

function pick(d: ReturnType<typeof decideAnnouncedUrl>): string {
  return d.kind === 'switch' ? `switch ${d.url}` : d.kind;
}

/** The decision on `announced` while the url is `configured`, in short. */
function decided(configured: string, announced: string, view: HostView): string {
  return pick(decideAnnouncedUrl(configured, announced, view));
}
