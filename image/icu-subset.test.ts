import t from 'tap';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findIcuPackages, readIcuPackage } from './icu-data.ts';
import { keepEnglish, shrinkIcuInFile } from './icu-subset.ts';

t.test('the rule: English and data of no locale stay; other locales, converters, dictionaries, '
  + 'transliteration, character names and stringprep go', async (t) => {
  for (const n of ['en.res', 'en_US.res', 'en_US_POSIX.res', 'root.res', 'pool.res', 'res_index.res', 'uprops.icu',
    'nfkc.nrm', 'cnvalias.icu', 'coll/ucadata.icu', 'coll/root.res', 'brkitr/word.brk', 'zone/en_GB.res',
    'zoneinfo64.res', 'metaZones.res', 'supplementalData.res', 'zone/tzdbNames.res']) {
    t.ok(keepEnglish(`icudt78l/${n}`), `keeps ${n}`);
  }
  for (const n of ['de.res', 'zh_Hant_TW.res', 'yue.res', 'zone/fr.res', 'coll/ja.res', 'coll/de__PHONEBOOK.res',
    'brkitr/cjdict.dict', 'translit/root.res', 'translit/Latin_ASCII.res', 'unames.icu', 'rfc3491.spp',
    'ibm-943_P15A-2003.cnv', 'euc-jp-2007.cnv']) {
    t.notOk(keepEnglish(`icudt78l/${n}`), `drops ${n}`);
  }
});

// The real thing: this host's node (the one the build makes executables from) with English ICU only.
const SCRIPT = `
const d = new Date(Date.UTC(2026, 10, 24, 13, 5));
console.log(JSON.stringify({
  date: d.toLocaleString('en-US', { timeZone: 'Europe/Berlin', dateStyle: 'full', timeStyle: 'long' }),
  german: new Intl.DateTimeFormat('de-DE', { dateStyle: 'full', timeZone: 'UTC' }).format(d),
  number: (1234567.891).toLocaleString('en-US'),
  unit: new Intl.NumberFormat('en', { style: 'unit', unit: 'megabyte' }).format(5),
  sort: ['b', 'A', 'a', 'é'].sort(new Intl.Collator('en').compare),
  relative: new Intl.RelativeTimeFormat('en').format(-3, 'day'),
  words: [...new Intl.Segmenter('en', { granularity: 'word' }).segment('hello, world')].map((s) => s.segment),
  url: new URL('http://b\\u00fccher.example/\\u00e4').href, upper: 'stra\\u00dfe'.toUpperCase(),
  nfc: 'e\\u0301'.normalize('NFC'),
  zones: Intl.supportedValuesOf('timeZone').length, utf16: new TextDecoder('utf-16le').decode(new Uint8Array([65, 0])),
  locales: Intl.DateTimeFormat.supportedLocalesOf(['de', 'en-GB', 'en-US']),
  french: new Intl.DateTimeFormat('fr').resolvedOptions().locale,
  shiftJis: (() => { try { new TextDecoder('shift_jis'); return 'supported'; } catch { return 'not supported'; } })(),
}));`;
const run = (node: string) => JSON.parse(execFileSync(node, ['-e', SCRIPT], { encoding: 'utf8' })) as Record<
  string, unknown>;

t.test('a copy of this node with English ICU only: English is the same, others fall back to it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'icu-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const node = join(dir, 'node');
  copyFileSync(process.execPath, node);
  const r = shrinkIcuInFile(node);
  if (!r) {
    t.fail(`${process.execPath} embeds no ICU data: the build would not make its executables smaller`);
    return;
  }
  t.ok(r.bytesBefore > 20e6 && r.bytesAfter < 8e6, `ICU data ${(r.bytesBefore / 1e6).toFixed(1)} MB -> `
    + `${(r.bytesAfter / 1e6).toFixed(1)} MB (${r.kept} of ${r.items} items)`);
  const bin = readFileSync(node);
  const names = readIcuPackage(bin, findIcuPackages(bin)[0]!).items.map((i) => i.name.replace(/^icudt\w+\//, ''));
  t.ok(names.includes('en.res') && !names.includes('de.res'), 'the package read back: en.res, no de.res');
  const full = run(process.execPath);
  const small = run(node);
  const { german, shiftJis, locales, french, ...english } = small;
  const { german: fullGerman, shiftJis: fullShiftJis, locales: fullLocales, french: fullFrench, ...fullEnglish }
    = full;
  t.same([fullLocales, fullFrench], [['de', 'en-GB', 'en-US'], 'fr']);
  t.same([locales, french], [['en-GB', 'en-US'], 'en-US'], 'English locales only; French resolves to English');
  t.same(english, fullEnglish, 'every English result is what the full node gives');
  t.notSame(fullGerman, german, 'German was German');
  t.equal(german, new Intl.DateTimeFormat('en', { dateStyle: 'full', timeZone: 'UTC' })
    .format(new Date(Date.UTC(2026, 10, 24, 13, 5))), 'German falls back to English');
  t.equal(fullShiftJis, 'supported');
  t.equal(shiftJis, 'not supported', 'a legacy encoding is refused, as in Node\'s small-icu build');
});
