import assert from 'node:assert/strict';
import { localizedManifest } from '../util/manifest';
import {
  USER_ONLY_KEYS,
  ignoredSettingsNotice,
  isUserOnly,
  notYetReported,
  reportId,
  settingWrite,
  userOnlyKeysInInspect,
  userOnlyKeysInSettingsText,
} from '../../src/config/userOnlySettings';
import { LEGACY_KEYS as SETTING_KEYS } from '../../src/config/namespace';
import { TRUST_REQUIRED_COMMANDS, needsTrust, restrictedModeMessage } from '../../src/fronts/vscode/trust/trustRules';

interface Contribution {
  scope?: string;
  description?: string;
  markdownDescription?: string;
}
const pkg = localizedManifest<{
  contributes: {
    configuration: { properties: Record<string, Contribution> };
    commands: { command: string }[];
    menus: Record<string, { command: string; when?: string }[]>;
  };
  capabilities?: { untrustedWorkspaces?: { supported: unknown; description?: string } };
}>();
const properties = pkg.contributes.configuration.properties;

describe('user-only settings', () => {
  it('the keys that choose a host, a login, host keys, sudo or the commands are user-only; activeServer is not', () => {
    for (const key of ['servers', 'knownHostsFile', 'hostKeyPolicy', 'confirmRestart', 'verifyParsersWhenReady'])
      assert.ok(isUserOnly(key), key);
    for (const key of ['activeServer', 'pollIntervalSeconds', 'chatModel.enabled', 'toString', 'constructor'])
      assert.equal(isUserOnly(key), false, key);
  });

  it('package.json gives every user-only key machine scope and says so; the others keep a workspace scope', () => {
    for (const key of SETTING_KEYS) {
      const contribution = properties[`kimiService.${key}`];
      assert.ok(contribution, `kimiService.${key} is contributed`);
      if (isUserOnly(key)) {
        assert.equal(contribution.scope, 'machine', key);
        assert.match(
          `${contribution.description ?? contribution.markdownDescription}`,
          /user \(or remote\) settings only/,
        );
      } else
        assert.ok(contribution.scope === undefined || contribution.scope === 'window', `${key}: ${contribution.scope}`);
    }
    for (const key of USER_ONLY_KEYS) assert.ok((SETTING_KEYS as readonly string[]).includes(key), key);
  });

  it('finds flat and nested keys in a settings.json with comments and trailing commas', () => {
    const text = `{
      // a repository's settings
      "kimiService.servers": [{ "name": "ct200", "host": "evil.example" }],
      "kimiService.hostKeyPolicy": "accept-new",
      "kimiService.activeServer": "ct200",
      "kimiService.pollIntervalSeconds": 1,
      "kimiService": { "knownHostsFile": "/tmp/k" },
      "kimi.servers": [],
    }`;
    assert.deepEqual(userOnlyKeysInSettingsText(text), ['servers', 'knownHostsFile', 'hostKeyPolicy']);
  });

  it('in a .code-workspace file only its "settings" count', () => {
    const text = `{ "folders": [{ "path": "." }], "kimiService.servers": [], "settings": { "kimiService.confirmRestart": false } }`;
    assert.deepEqual(userOnlyKeysInSettingsText(text, { workspaceFile: true }), ['confirmRestart']);
    assert.deepEqual(userOnlyKeysInSettingsText(text), ['servers']);
  });

  it('broken or empty files find nothing', () => {
    for (const text of ['', 'not json', '[1, 2]', 'null', '{ "kimiService.servers": '])
      assert.ok(Array.isArray(userOnlyKeysInSettingsText(text)), text);
    assert.deepEqual(userOnlyKeysInSettingsText('[{"kimiService.servers": 1}]'), []);
  });

  it('inspect() values outside the user settings are reported with their scope', () => {
    assert.deepEqual(userOnlyKeysInInspect('servers', { workspaceValue: [], workspaceFolderValue: [] }, 'repo'), [
      { setting: 'kimiService.servers', where: 'workspace settings' },
      { setting: 'kimiService.servers', where: 'folder settings of repo' },
    ]);
    assert.deepEqual(userOnlyKeysInInspect('servers', { workspaceValue: undefined }), []);
    assert.deepEqual(userOnlyKeysInInspect('servers', undefined), []);
  });

  it('each setting and place is said once', () => {
    const a = { setting: 'kimiService.servers', where: '/repo/.vscode/settings.json' };
    const b = { setting: 'kimiService.hostKeyPolicy', where: '/repo/.vscode/settings.json' };
    assert.deepEqual(notYetReported([a, b, a], new Set()), [a, b]);
    assert.deepEqual(notYetReported([a, b], new Set([reportId(a)])), [b]);
    assert.deepEqual(notYetReported([a, b], new Set([reportId(a), reportId(b)])), []);
  });

  it('the notice names the settings and the file; a log line per setting says why', () => {
    const where = '/repo/.vscode/settings.json';
    const { warning, logLines } = ignoredSettingsNotice([
      { setting: 'kimiService.servers', where },
      { setting: 'kimiService.hostKeyPolicy', where },
    ]);
    assert.match(
      warning,
      /ignored kimiService\.servers, kimiService\.hostKeyPolicy from \/repo\/\.vscode\/settings\.json/,
    );
    assert.match(warning, /user \(or remote\) settings only/);
    assert.equal(logLines.length, 2);
    assert.match(
      logLines[0]!,
      /ignored kimiService\.servers from \/repo\/\.vscode\/settings\.json .*chooses the hosts/,
    );
    assert.match(logLines[1]!, /kimiService\.hostKeyPolicy .*unknown host key/);
  });
});

describe('where a command writes a setting: where it is read from', () => {
  it('a user-only key goes to the user settings (the Remote settings in a remote extension host), never the workspace', () => {
    assert.deepEqual(settingWrite('servers', {}, false), { target: 'global', where: 'user settings' });
    assert.deepEqual(settingWrite('servers', {}, true), { target: 'global', where: 'Remote settings' });
    // A workspace's value of a user-only key is ignored by the reader: writing there would change nothing.
    assert.deepEqual(settingWrite('servers', { workspaceValue: [] }, true), {
      target: 'global',
      where: 'Remote settings',
    });
    // The editor routes its user target to the Remote settings for a machine-scoped key, as the reader takes it from there.
    assert.equal(properties['kimiService.servers']?.scope, 'machine');
  });

  it('activeServer, read merged, goes to the workspace when the workspace sets it, else to the user settings', () => {
    assert.deepEqual(settingWrite('activeServer', { workspaceValue: 'sim' }, true), {
      target: 'workspace',
      where: 'workspace settings',
    });
    assert.deepEqual(settingWrite('activeServer', { workspaceValue: 'sim' }, false), {
      target: 'workspace',
      where: 'workspace settings',
    });
    assert.deepEqual(settingWrite('activeServer', {}, true), { target: 'global', where: 'user settings' });
    assert.deepEqual(settingWrite('activeServer', undefined, false), { target: 'global', where: 'user settings' });
    assert.equal(properties['kimiService.activeServer']?.scope, 'window');
  });
});

describe('Restricted Mode', () => {
  it('restart, rolling restart, parsers, advice and port forward need trust; watching does not', () => {
    for (const id of [
      'kimiService.restartService',
      'kimiService.rollingRestart',
      'kimiService.enableParsers',
      'kimiService.suggestFasterLoad',
      'kimiService.forwardPort',
    ])
      assert.ok(needsTrust(id), id);
    for (const id of ['kimiService.watchService', 'kimiService.showLog', 'kimiService.stopWatching', 'toString'])
      assert.equal(needsTrust(id), false, id);
  });

  it('every gated command exists; its menu entries are hidden in Restricted Mode', () => {
    const commands = new Set(pkg.contributes.commands.map((c) => c.command));
    for (const id of Object.keys(TRUST_REQUIRED_COMMANDS)) assert.ok(commands.has(id), id);
    for (const [menu, entries] of Object.entries(pkg.contributes.menus))
      for (const entry of entries)
        if (menu !== 'commandPalette' && needsTrust(entry.command))
          assert.match(entry.when ?? '', /isWorkspaceTrusted/, `${menu} ${entry.command}`);
  });

  it('package.json declares limited support with a description', () => {
    assert.equal(pkg.capabilities?.untrustedWorkspaces?.supported, 'limited');
    assert.match(pkg.capabilities?.untrustedWorkspaces?.description ?? '', /Restricted Mode/);
  });

  it('the refusal names the action and the way out', () => {
    assert.match(
      restrictedModeMessage('Restarting a server'),
      /Restarting a server needs a trusted workspace.*Restricted Mode/,
    );
  });
});
