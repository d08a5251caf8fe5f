/**
 * Which translation a plain Node front (the CLI, the MCP server) shows: the POSIX locale
 * (LC_ALL over LC_MESSAGES over LANG) in VS Code's spelling, and the bundle beside dist/ or in the
 * checkout; English without one.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { bundleNames, l10nDirs, localeFromEnv, useBundle, useEnvLocale } from '../../src/util/l10n';
import { verdictWord } from '../../src/present/stateWords';
import { INITIAL_PRINTER, nextWaitLine } from '../../src/fronts/cli/format';
import type { ServerReport } from '../../src/present/report';

const CLI_DIR = path.join(__dirname, '..', '..', 'src', 'fronts', 'cli');

describe('l10n locale of the CLI and the MCP server', () => {
  afterEach(() => useBundle(undefined));

  it('reads LC_ALL, then LC_MESSAGES, then LANG, in VS Code spelling', () => {
    assert.equal(localeFromEnv({ LANG: 'zh_CN.UTF-8' }), 'zh-cn');
    assert.equal(localeFromEnv({ LANG: 'de_DE@euro' }), 'de-de');
    assert.equal(localeFromEnv({ LANG: 'zh_CN.UTF-8', LC_MESSAGES: 'fr_FR.UTF-8' }), 'fr-fr');
    assert.equal(localeFromEnv({ LANG: 'zh_CN.UTF-8', LC_MESSAGES: 'fr_FR', LC_ALL: 'C' }), undefined);
    assert.equal(localeFromEnv({ LANG: 'zh_CN.UTF-8', LC_ALL: '' }), 'zh-cn');
    assert.equal(localeFromEnv({ LANG: 'POSIX' }), undefined);
    assert.equal(localeFromEnv({ LANG: 'C.UTF-8' }), undefined);
    assert.equal(localeFromEnv({}), undefined);
    assert.equal(localeFromEnv({ LANG: '../../etc/passwd' }), undefined);
    assert.deepEqual(bundleNames('zh-cn'), ['bundle.l10n.zh-cn.json', 'bundle.l10n.zh.json']);
  });

  it("LANG=zh_CN.UTF-8 loads the checkout's zh-cn bundle: the state words are Chinese", () => {
    const file = useEnvLocale({ LANG: 'zh_CN.UTF-8' }, l10nDirs(CLI_DIR));
    assert.ok(file?.endsWith(path.join('l10n', 'bundle.l10n.zh-cn.json')), String(file));
    assert.equal(verdictWord('ready'), '就绪');
    assert.equal(verdictWord('loading'), '加载中');
  });

  it('English, an unknown locale or no bundle folder: the English words', () => {
    for (const env of [{ LANG: 'en_US.UTF-8' }, { LANG: 'xx_YY.UTF-8' }, {}]) {
      assert.equal(useEnvLocale(env, l10nDirs(CLI_DIR)), undefined, JSON.stringify(env));
      assert.equal(verdictWord('ready'), 'ready');
    }
    assert.equal(useEnvLocale({ LANG: 'zh_CN.UTF-8' }, ['/nonexistent']), undefined);
    assert.equal(verdictWord('ready'), 'ready');
  });

  it('a translated wait line is not repeated only because its clock moved', () => {
    const report = (summary: string) => ({ state: 'loading', phase: 'loading weights', summary }) as ServerReport;
    for (const [lang, first, later] of [
      ['C.UTF-8', 'sim: loading 42% · for 3s', 'sim: loading 42% · for 13s'],
      ['zh_CN.UTF-8', 'sim: 加载中 42% · 已持续 3s', 'sim: 加载中 42% · 已持续 13s'],
    ] as const) {
      useEnvLocale({ LANG: lang }, l10nDirs(CLI_DIR));
      const start = nextWaitLine(INITIAL_PRINTER, report(first), 0);
      assert.equal(start.line, 'state');
      assert.equal(nextWaitLine(start.printer, report(later), 10_000).line, undefined, lang);
      assert.equal(nextWaitLine(start.printer, report(later.replace('42%', '50%')), 10_000).line, 'progress', lang);
    }
  });
});
