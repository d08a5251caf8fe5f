import { strict as assert } from 'node:assert';
import { addServerToText, serverNamesIn } from '../../src/fleet/servers/serversFile';

const entry = { name: 'b', host: 'gpu2', unit: 'sglang.service' };

describe('servers file: adding a discovered server', () => {
  it('no file yet: a new array of one', () => {
    const added = addServerToText(undefined, entry);
    assert.ok('text' in added);
    assert.deepEqual(JSON.parse(added.text), [entry]);
  });

  it('an array: appended, the comments kept', () => {
    const text = '// my servers\n[\n  { "name": "a", "host": "gpu1", "unit": "x.service" }\n]\n';
    const added = addServerToText(text, entry);
    assert.ok('text' in added);
    assert.match(added.text, /^\/\/ my servers/);
    assert.deepEqual(serverNamesIn(added.text), ['a', 'b']);
  });

  it('an object of settings: appended to servers (or kimiService.servers), other keys kept', () => {
    for (const key of ['servers', 'kimiService.servers']) {
      const text = JSON.stringify({ [key]: [{ name: 'a' }], hostKeyPolicy: 'strict' }, null, 2);
      const added = addServerToText(text, entry);
      assert.ok('text' in added, key);
      const value = JSON.parse(added.text) as Record<string, unknown>;
      assert.equal(value.hostKeyPolicy, 'strict');
      assert.deepEqual(serverNamesIn(added.text), ['a', 'b'], key);
    }
  });

  it('an object without servers: a servers array is made', () => {
    const added = addServerToText('{ "hostKeyPolicy": "ask" }', entry);
    assert.ok('text' in added);
    assert.deepEqual((JSON.parse(added.text) as { servers: unknown[] }).servers, [entry]);
  });

  it('invalid JSON, or servers not an array: an error, no text', () => {
    assert.match((addServerToText('[{', entry) as { error: string }).error, /not valid JSON/);
    assert.match((addServerToText('{"servers": 3}', entry) as { error: string }).error, /not an array/);
    assert.match((addServerToText('"text"', entry) as { error: string }).error, /neither an array/);
  });
});
