import { strict as assert } from 'node:assert';
import { legacyKeysOf, migrationPlan, ownSettingsOf, sectionKeysOf } from '../../src/config/namespace';

describe('settings namespace (kimiService.*, migrated from kimi.*)', () => {
  const kimiCode = { 'kimi.yoloMode': true, 'kimi.executablePath': '/usr/bin/kimi' };

  it('reads only kimiService.* keys, never a key of Kimi Code', () => {
    const raw = sectionKeysOf({ ...kimiCode, 'kimiService.servers': [1], 'kimiService.chatModel.enabled': false });
    assert.deepEqual(raw, { servers: [1], 'chatModel.enabled': false });
  });

  it('takes only its own old kimi.* keys (not kimi.yoloMode)', () => {
    assert.deepEqual(legacyKeysOf({ ...kimiCode, 'kimi.servers': [2], 'kimi.stallSeconds': 60 }), {
      servers: [2],
      stallSeconds: 60,
    });
  });

  it('a settings file not migrated yet is read from its old keys; a migrated one from the new keys only', () => {
    assert.deepEqual(ownSettingsOf({ ...kimiCode, 'kimi.servers': [2] }), { raw: { servers: [2] }, legacy: true });
    assert.deepEqual(ownSettingsOf({ 'kimi.servers': [2], 'kimiService.servers': [3] }), {
      raw: { servers: [3] },
      legacy: false,
    });
    assert.deepEqual(ownSettingsOf(kimiCode), { raw: {}, legacy: false });
  });

  it('the migration copies an old value only where the new key has none', () => {
    const plan = migrationPlan(
      { servers: [2], hostKeyPolicy: 'strict', confirmRestart: false },
      { hostKeyPolicy: 'ask' },
    );
    assert.deepEqual(plan, [
      { key: 'servers', value: [2] },
      { key: 'confirmRestart', value: false },
    ]);
    assert.deepEqual(migrationPlan({}, {}), []);
  });
});
