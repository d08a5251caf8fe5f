import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  GROUP_SERVER_PROPERTY,
  modelListAnswer,
  SERVERS_VIEW_FOCUS,
} from '../../src/fronts/vscode/chat/providerGroups';

const SERVERS = ['gpu1', 'gpu2'];

describe('chat model: what each model-list call answers (provider groups of VS Code 1.109+)', () => {
  it("the provider's own entry (no group, as every VS Code version asks) lists every offered model", () => {
    assert.deepEqual(modelListAnswer({ silent: true }, SERVERS), { list: 'all' });
    assert.deepEqual(modelListAnswer({ silent: false, configuration: undefined }, SERVERS), { list: 'all' });
    assert.deepEqual(modelListAnswer(undefined, SERVERS), { list: 'all' });
  });

  it('a group naming a configured server lists nothing more: VS Code would list that model twice', () => {
    assert.deepEqual(modelListAnswer({ silent: false, configuration: { server: 'gpu2' } }, SERVERS), {
      list: 'none',
    });
  });

  it('a group VS Code made itself (no server in its configuration) lists nothing and says nothing', () => {
    assert.deepEqual(modelListAnswer({ silent: true, configuration: {} }, SERVERS), { list: 'none' });
    assert.deepEqual(modelListAnswer({ silent: true, configuration: { server: '' } }, SERVERS), { list: 'none' });
  });

  it('a group naming no configured server says which exist and how to add one', () => {
    const answer = modelListAnswer({ silent: false, configuration: { server: 'gpu9' } }, SERVERS);
    assert.ok('problem' in answer);
    assert.match(answer.problem, /no server named "gpu9" in kimiService\.servers \(configured: gpu1, gpu2\)/);
    assert.match(answer.problem, /Add server in the Kimi Service servers view/);
    const none = modelListAnswer({ silent: false, configuration: { server: 7 } }, []);
    assert.ok('problem' in none);
    assert.match(none.problem, /no server named a server .*\(none configured yet\)/);
  });

  it("package.json's configuration schema has the property the provider reads, and no deprecated managementCommand", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    const [chat] = pkg.contributes.languageModelChatProviders;
    assert.equal(chat.managementCommand, undefined);
    assert.equal(chat.configuration.type, 'object');
    assert.equal(chat.configuration.properties[GROUP_SERVER_PROPERTY].type, 'string');
    assert.deepEqual(chat.configuration.required, [GROUP_SERVER_PROPERTY]);
    // VS Code makes `<view id>.focus` for every view: a group naming no server opens the servers view.
    assert.equal(SERVERS_VIEW_FOCUS, `${pkg.contributes.views.kimiService[0].id}.focus`);
  });
});
