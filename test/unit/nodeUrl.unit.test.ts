import { strict as assert } from 'node:assert';
import { Readable } from 'node:stream';
import { parseSettings } from '../../src/config/parseSettings';
import { urlForNode } from '../../src/config/nodeUrl';
import { ServerHttpClient, type FetchLike } from '../../src/engine/serverHttp';

const JOB = { job: 'kimi-k26', script: '~/serve/kimi.sbatch' };

describe('a url that follows the job to its node ({node})', () => {
  it('puts the node in, refuses a name that is not a host name, and says when there is no node yet', () => {
    assert.deepEqual(urlForNode('http://{node}:30001', 'gpu-a17.cluster'), { url: 'http://gpu-a17.cluster:30001' });
    assert.deepEqual(urlForNode('http://127.0.0.1:30001', undefined), { url: 'http://127.0.0.1:30001' });
    const pending = urlForNode('http://{node}:30001', undefined);
    assert.ok('problem' in pending);
    assert.match(pending.problem, /runs on no node now \(it waits in the queue, or it has ended\)/);
    for (const bad of ['n1;rm -rf', 'n1:80', 'a b', 'n1/x', '-n1', 'n1@h', 'ünode', '']) {
      const r = urlForNode('http://{node}:30001', bad);
      assert.ok('problem' in r, bad);
    }
    const refused = urlForNode('http://{node}:30001', 'n1$(id)');
    assert.ok('problem' in refused);
    assert.match(refused.problem, /is not a host name \(letters, digits, dots and dashes only\)/);
  });

  it('settings: {node} is taken for a slurm entry as the whole host, and refused for others', () => {
    const ok = parseSettings({ servers: [{ name: 'c', host: 'login1', slurm: JOB, url: 'http://{node}:30001' }] });
    assert.ok(ok.ok, JSON.stringify(ok));
    assert.equal(ok.settings.servers[0]?.url, 'http://{node}:30001');
    const bad = parseSettings({
      servers: [
        { name: 'u', host: 'gpu1', unit: 'sglang', url: 'http://{node}:30001' },
        { name: 'd', host: 'gpu1', container: 'sglang', url: 'http://{node}:30001' },
        { name: 's', host: 'login1', slurm: JOB, url: 'http://x{node}:30001' },
      ],
    });
    assert.ok(!bad.ok);
    const errors = bad.errors.join('\n');
    assert.match(errors, /servers\[0\]\.url .*names \{node\}, the node of a Slurm job: only a "slurm" entry has one/);
    assert.match(errors, /servers\[1\]\.url .*only a "slurm" entry has one/);
    assert.match(errors, /servers\[2\]\.url .*\{node\} must be the url's whole host/);
  });

  it('the HTTP client asks nothing before the node is known, then asks the node', async () => {
    const asked: string[] = [];
    const fetch: FetchLike = async (url) => {
      asked.push(url);
      return {
        status: 200,
        headers: { get: () => 'application/json' },
        body: Readable.from([Buffer.from('{}')]),
      };
    };
    const http = new ServerHttpClient('http://{node}:30001', undefined, fetch);
    assert.equal(http.followsNode, true);
    const before = await http.health();
    assert.equal(before.kind, 'error');
    assert.match(http.nodeProblem ?? '', /runs on no node now/);
    assert.deepEqual(asked, [], 'no request to a literal {node}');
    http.setNode('bad name');
    assert.equal((await http.health()).kind, 'error');
    assert.deepEqual(asked, []);
    http.setNode('n7');
    assert.equal(http.nodeProblem, undefined);
    assert.equal((await http.health()).kind, 'http');
    assert.deepEqual(asked, ['http://n7:30001/health']);
    assert.equal(http.baseUrl, 'http://n7:30001');
  });
});
