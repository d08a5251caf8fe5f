/**
 * Sentences checked in the display language: each reads exactly as its English without a bundle,
 * and under the zh-cn bundle is no longer that English and holds the Chinese words given.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { useBundle, type L10nBundle } from '../../src/util/l10n';

export const ZH = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'),
) as L10nBundle;

/** A sample: how it is made, its exact English, and Chinese words it must hold under zh-cn. */
export type ZhSample = readonly [
  name: string,
  make: () => string | undefined,
  english: string,
  chinese: readonly string[],
];

/** The two checks of the samples, as `it`s of the calling `describe`. */
export function itReadsInBothLanguages(samples: readonly ZhSample[]): void {
  afterEach(() => useBundle(undefined));

  it('without a bundle: the English, unchanged', () => {
    useBundle(undefined);
    for (const [name, make, english] of samples) assert.equal(make(), english, name);
  });

  it('under the zh-cn bundle: Chinese words, and not the English sentence', () => {
    useBundle(ZH);
    for (const [name, make, english, chinese] of samples) {
      const text = make() ?? '';
      assert.notEqual(text, english, name);
      for (const words of chinese) assert.ok(text.includes(words), `${name}: ${JSON.stringify(words)} in ${text}`);
    }
  });
}
