import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  appendKnownHostsLine,
  certAuthorityLines,
  checkHostKey,
  checkHostKeyInFiles,
  fingerprintSha256,
  formatKnownHostsLine,
  hashHostName,
  hostFieldMatches,
  keyTypeOfBlob,
  knownKeyTypes,
  parseKnownHosts,
  readKnownHostsFile,
} from '../../src/transport/ssh/knownHosts';

interface Key {
  type: string;
  blob: Buffer;
  b64: string;
  pubFile: string;
}

let tmp: string;
function makeKey(name: string, type: 'ed25519' | 'ecdsa' | 'rsa'): Key {
  const file = path.join(tmp, name);
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '1024'] : []), '-N', '', '-f', file]);
  const [t, b64] = fs.readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/);
  return { type: t, b64, blob: Buffer.from(b64, 'base64'), pubFile: `${file}.pub` };
}

/** `|1|salt|hmac` exactly as ssh-keygen -H computes it (HMAC-SHA1 keyed by a 20-byte salt). */
function sshKeygenStyleHash(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

describe('known_hosts', () => {
  let a: Key; // gpu7's ed25519 key
  let b: Key; // gpu7's ecdsa key
  let c: Key; // another host's key / an attacker's key
  let r: Key; // revoked key
  let fixture: string;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kh-'));
    a = makeKey('a', 'ed25519');
    b = makeKey('b', 'ecdsa');
    c = makeKey('c', 'ed25519');
    r = makeKey('r', 'ed25519');
    fixture = [
      '# known hosts fixture',
      '',
      '   # indented comment',
      `gpu7.example,10.0.0.7 ${a.type} ${a.b64} root@gpu7`,
      `gpu7.example ${b.type} ${b.b64}`,
      `${sshKeygenStyleHash('[127.0.0.1]:2222')} ${a.type} ${a.b64}`,
      `[bastion.example]:2200 ${c.type} ${c.b64}`,
      `*.lab.example,!secret.lab.example ${c.type} ${c.b64}`,
      `node?.grid ${c.type} ${c.b64}`,
      `@revoked * ${r.type} ${r.b64}`,
      `@cert-authority *.example ${c.type} ${c.b64}`,
      'this is garbage',
      `broken ${a.type} !!!notbase64!!!`,
      `mismatch ssh-rsa ${a.b64}`,
      '@unknown-marker gpu7.example ssh-ed25519 AAAA',
      `bad-only-two-fields ${a.type}`,
    ].join('\n');
  });

  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('fingerprints exactly as ssh-keygen -lf prints them', () => {
    for (const k of [a, b, c]) {
      const printed = execFileSync('ssh-keygen', ['-lf', k.pubFile]).toString().split(/\s+/)[1];
      assert.equal(fingerprintSha256(k.blob), printed);
    }
  });

  it('reads the key type from the blob', () => {
    assert.equal(keyTypeOfBlob(a.blob), 'ssh-ed25519');
    assert.equal(keyTypeOfBlob(b.blob), 'ecdsa-sha2-nistp256');
    assert.equal(keyTypeOfBlob(Buffer.from([0, 0])), undefined);
  });

  it('parses valid lines and skips comments, blanks, garbage and unknown markers', () => {
    const entries = parseKnownHosts(fixture);
    assert.equal(entries.length, 8);
    assert.deepEqual(
      entries.map((e) => e.line),
      [4, 5, 6, 7, 8, 9, 10, 11],
    );
  });

  it('knows a plain entry (comma list, several keys per host)', () => {
    assert.deepEqual(checkHostKey(fixture, 'gpu7.example', 22, a.type, a.blob), { status: 'known', line: 4 });
    assert.deepEqual(checkHostKey(fixture, '10.0.0.7', 22, a.type, a.blob), { status: 'known', line: 4 });
    assert.deepEqual(checkHostKey(fixture, 'GPU7.Example', 22, b.type, b.blob), { status: 'known', line: 5 });
  });

  it('port 22 is written without brackets; other ports need [host]:port', () => {
    assert.equal(checkHostKey(fixture, 'gpu7.example', 2222, a.type, a.blob).status, 'unknown');
    assert.equal(checkHostKey(fixture, 'bastion.example', 2200, c.type, c.blob).status, 'known');
    assert.equal(checkHostKey(fixture, 'bastion.example', 22, c.type, c.blob).status, 'unknown');
  });

  it('matches hashed entries (|1|salt|hmac) for [host]:port', () => {
    assert.equal(checkHostKey(fixture, '127.0.0.1', 2222, a.type, a.blob).status, 'known');
    assert.equal(checkHostKey(fixture, '127.0.0.1', 2223, a.type, a.blob).status, 'unknown');
    assert.ok(hostFieldMatches(hashHostName('gpu7'), 'gpu7'));
    assert.ok(!hostFieldMatches(hashHostName('gpu7'), 'gpu8'));
  });

  it('matches lines hashed by the real ssh-keygen -H', () => {
    const file = path.join(tmp, 'hashme');
    fs.writeFileSync(
      file,
      `${formatKnownHostsLine('127.0.0.1', 2299, a.type, a.blob)}\n${formatKnownHostsLine('gpu9', 22, b.type, b.blob)}\n`,
    );
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file], { stdio: 'ignore' });
    const hashed = fs.readFileSync(file, 'utf8');
    assert.match(hashed, /^\|1\|/m);
    assert.doesNotMatch(hashed, /127\.0\.0\.1|gpu9/);
    assert.equal(checkHostKey(hashed, '127.0.0.1', 2299, a.type, a.blob).status, 'known');
    assert.equal(checkHostKey(hashed, 'gpu9', 22, b.type, b.blob).status, 'known');
    assert.equal(checkHostKey(hashed, 'gpu9', 22, a.type, c.blob).status, 'unknown');
  });

  it('reports a changed key with the known fingerprints and lines', () => {
    const res = checkHostKey(fixture, 'gpu7.example', 22, c.type, c.blob);
    assert.equal(res.status, 'changed');
    if (res.status !== 'changed') return;
    assert.deepEqual(res.knownFingerprints, [fingerprintSha256(a.blob)]);
    assert.deepEqual(res.lines, [4]);
  });

  it('a key of a type not on file is unknown, naming the types that are', () => {
    const d = makeKey('d', 'rsa');
    const res = checkHostKey(fixture, 'gpu7.example', 22, d.type, d.blob);
    assert.deepEqual(res, { status: 'unknown', otherKeyTypes: ['ssh-ed25519', 'ecdsa-sha2-nistp256'] });
    assert.deepEqual(knownKeyTypes(fixture, 'gpu7.example', 22), ['ssh-ed25519', 'ecdsa-sha2-nistp256']);
  });

  it('wildcards and negation', () => {
    assert.equal(checkHostKey(fixture, 'gpu1.lab.example', 22, c.type, c.blob).status, 'known');
    assert.equal(checkHostKey(fixture, 'secret.lab.example', 22, c.type, c.blob).status, 'unknown');
    assert.equal(checkHostKey(fixture, 'node3.grid', 22, c.type, c.blob).status, 'known');
    assert.equal(checkHostKey(fixture, 'node33.grid', 22, c.type, c.blob).status, 'unknown');
    assert.ok(hostFieldMatches('[10.0.0.*]:2222', '[10.0.0.9]:2222'));
  });

  it('a revoked key is refused even when another line trusts it', () => {
    const text = `${fixture}\ngpu7.example ${r.type} ${r.b64}\n`;
    assert.equal(checkHostKey(text, 'gpu7.example', 22, r.type, r.blob).status, 'revoked');
    assert.equal(checkHostKey(text, 'anything', 22, r.type, r.blob).status, 'revoked');
  });

  it('@cert-authority lines do not vouch for plain host keys', () => {
    // c is a CA for *.example, but that does not make c a known plain key of foo.example.
    assert.equal(checkHostKey(fixture, 'foo.example', 22, c.type, c.blob).status, 'unknown');
  });

  it('formats lines to append', () => {
    assert.equal(formatKnownHostsLine('GPU7', 22, a.type, a.blob), `gpu7 ${a.type} ${a.b64}`);
    assert.equal(formatKnownHostsLine('127.0.0.1', 2222, a.type, a.blob), `[127.0.0.1]:2222 ${a.type} ${a.b64}`);
  });

  it('HashKnownHosts: writes |1|salt|hash lines that we and the real ssh-keygen -F find', () => {
    const salt = Buffer.alloc(20, 7);
    const line = formatKnownHostsLine('127.0.0.1', 2222, a.type, a.blob, { hash: true, salt });
    assert.equal(line, `${hashHostName('[127.0.0.1]:2222', salt)} ${a.type} ${a.b64}`);
    assert.doesNotMatch(line, /127\.0\.0\.1/);
    const random = formatKnownHostsLine('GPU7', 22, b.type, b.blob, { hash: true });
    assert.notEqual(
      random.split(' ')[0],
      formatKnownHostsLine('GPU7', 22, b.type, b.blob, { hash: true }).split(' ')[0],
      'a new salt each time',
    );
    const text = `${line}\n${random}\n`;
    assert.equal(checkHostKey(text, '127.0.0.1', 2222, a.type, a.blob).status, 'known');
    assert.equal(checkHostKey(text, 'gpu7', 22, b.type, b.blob).status, 'known');
    const file = path.join(tmp, 'hashed-by-us');
    fs.writeFileSync(file, text);
    // ssh-keygen -F finds hashed entries by name and prints the matching line
    assert.match(
      execFileSync('ssh-keygen', ['-F', '[127.0.0.1]:2222', '-f', file]).toString(),
      new RegExp(`${a.type} ${a.b64.replace(/[+/]/g, '\\$&')}`),
    );
    assert.match(execFileSync('ssh-keygen', ['-F', 'gpu7', '-f', file]).toString(), /ecdsa-sha2-nistp256/);
  });

  it('several files (UserKnownHostsFile a b): revoked anywhere > known anywhere > changed > unknown', () => {
    const f1 = { file: '/kh1', text: `gpu7 ${c.type} ${c.b64}\n` };
    const f2 = { file: '/kh2', text: `# two\ngpu7 ${a.type} ${a.b64}\n` };
    const f3 = { file: '/kh3', text: `@revoked gpu7 ${a.type} ${a.b64}\n` };
    assert.deepEqual(checkHostKeyInFiles([f1, f2], 'gpu7', 22, a.type, a.blob), {
      status: 'known',
      file: '/kh2',
      line: 2,
    });
    assert.deepEqual(checkHostKeyInFiles([f2, f3], 'gpu7', 22, a.type, a.blob), {
      status: 'revoked',
      file: '/kh3',
      line: 1,
    });
    const changed = checkHostKeyInFiles([{ file: '/kh0', text: '' }, f1], 'gpu7', 22, a.type, a.blob);
    assert.equal(changed.status, 'changed');
    assert.equal(changed.status === 'changed' && changed.file, '/kh1');
    assert.deepEqual(checkHostKeyInFiles([{ file: '/e', text: '' }], 'gpu7', 22, a.type, a.blob), {
      status: 'unknown',
      otherKeyTypes: [],
      certAuthorities: [],
    });
  });

  it('@cert-authority lines that cover a host are reported (ssh2 cannot check host certificates)', () => {
    assert.deepEqual(certAuthorityLines(fixture, 'foo.example', 22), [11]);
    assert.deepEqual(certAuthorityLines(fixture, 'foo.other', 22), []);
    const res = checkHostKeyInFiles([{ file: '/kh', text: fixture }], 'foo.example', 22, a.type, a.blob);
    assert.deepEqual(res, { status: 'unknown', otherKeyTypes: [], certAuthorities: [{ file: '/kh', line: 11 }] });
  });

  it('fs wrapper: missing = empty; append creates 0700 dir / 0600 file and adds a missing newline', async () => {
    const dir = path.join(tmp, 'home', '.ssh');
    const file = path.join(dir, 'known_hosts');
    assert.equal(await readKnownHostsFile(file), '');
    await appendKnownHostsLine(file, 'one ssh-ed25519 AAAA');
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    fs.appendFileSync(file, '# no newline at end');
    await appendKnownHostsLine(file, 'two ssh-ed25519 BBBB');
    assert.equal(await readKnownHostsFile(file), 'one ssh-ed25519 AAAA\n# no newline at end\ntwo ssh-ed25519 BBBB\n');
  });
});
