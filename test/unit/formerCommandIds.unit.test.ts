/**
 * Renamed commands: a keybinding or task that names an earlier id still runs the command, so the
 * old id is registered as an alias of a contributed command, and never shown in the palette.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FORMER_IDS } from '../../src/fronts/vscode/commands/formerIds';

const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[] };
};
const contributed = new Set(pkg.contributes.commands.map((c) => c.command));

describe('former command ids', () => {
  it('each former id leads to a contributed command and is not contributed itself', () => {
    assert.ok(Object.keys(FORMER_IDS).length > 0);
    for (const [former, id] of Object.entries(FORMER_IDS)) {
      assert.ok(contributed.has(id), `${former} -> ${id}: not a contributed command`);
      assert.ok(!contributed.has(former), `${former} is still contributed`);
    }
  });
});
