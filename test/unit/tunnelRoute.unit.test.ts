import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { PassThrough } from 'node:stream';
import { TunnelAgent } from '../../src/transport/httpAgent';

describe('TunnelAgent.route: requests name loopback, streams go to the url’s own address', () => {
  it('rewrites a node’s url to loopback with its Host, and opens the stream to the node', async () => {
    const opened: string[] = [];
    const tunnel = new TunnelAgent(async (host, port) => {
      opened.push(`${host}:${port}`);
      const stream = new PassThrough();
      // An HTTP/1.1 server's answer, read by http.request through the agent's socket.
      stream.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
      return stream;
    });
    const route = tunnel.route('http://n1:30001/health?x=1');
    assert.equal(route.url, 'http://127.0.0.1:30001/health?x=1');
    assert.equal(route.host, 'n1:30001');
    assert.notEqual(route.agent, tunnel);
    assert.equal(tunnel.route('http://n1:30001/v1/models').agent, route.agent, 'one agent per address');
    assert.notEqual(tunnel.route('http://n2:30001/health').agent, route.agent);

    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request(route.url, { agent: route.agent, headers: { Host: route.host! } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, 'ok');
    assert.deepEqual(opened, ['n1:30001'], 'the stream went to the node named by the url, not to loopback');
  });

  it('IPv6 literals and the default port; https is left as it is', () => {
    const tunnel = new TunnelAgent(async () => new PassThrough());
    const v6 = tunnel.route('http://[fd00::5]/health');
    assert.equal(v6.url, 'http://127.0.0.1:80/health');
    assert.equal(v6.host, '[fd00::5]');
    const tls = tunnel.route('https://gpu.example.org:8443/health');
    assert.equal(tls.url, 'https://gpu.example.org:8443/health');
    assert.equal(tls.agent, tunnel);
  });
});
