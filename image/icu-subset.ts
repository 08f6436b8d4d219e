// icu-subset: the ICU data the appliance's executables keep. A full-ICU Node carries 33 MB of it
// (every locale's names, calendars, units, collation, legacy converters, word dictionaries); the
// appliance keeps what Node's own small-icu build keeps, English, and every piece of data that is
// not a locale's (properties, normalization, collation root, break rules, time zones). Intl in
// another locale falls back to English; TextDecoder knows UTF-8/16 and Latin-1, not legacy
// encodings; CJK/Thai word breaking has no dictionary. Also gone, as nothing in V8 or Node reads
// them: transliteration rules (ICU's Transliterator), character names (u_charName) and stringprep
// profiles (IDNA2003; Node's URL has its own IDNA). The rest is zeroed in place: about 8.5 MB less
// in the compressed initramfs.
import { readFileSync, writeFileSync } from 'node:fs';
import { findIcuPackages, readIcuPackage, shrinkIcuPackage, type ShrinkResult } from './icu-data.ts';

/** A locale's resource bundle: "de.res", "zh_Hant_TW.res", "de__PHONEBOOK.res" (not root.res, pool.res). */
const LOCALE_BUNDLE = /^[a-z]{2,3}(_[A-Za-z0-9]*)*\.res$/;
/**
 * Each tree's list of its locales stays: ICU offers only the listed locales it finds, so V8 resolves
 * "de" or "fr" to English (without the list it offers none, and supportedLocalesOf(['en-US']) is []).
 */
const LOCALE_LIST = 'res_index.res';

/** Data no V8 or Node code path opens (see the header). */
const UNREAD = (name: string, leaf: string) =>
  name.includes('/translit/') || leaf === 'unames.icu' || leaf.endsWith('.spp');

/**
 * English and everything that is not a locale's, minus legacy converters, word dictionaries and what is
 * never read.
 */
export function keepEnglish(name: string): boolean {
  const leaf = name.slice(name.lastIndexOf('/') + 1);
  if (leaf.endsWith('.cnv') || leaf.endsWith('.dict') || UNREAD(name, leaf)) return false;
  if (leaf === LOCALE_LIST) return true;
  if (LOCALE_BUNDLE.test(leaf)) return leaf === 'en.res' || leaf.startsWith('en_');
  return true;
}

/**
 * Keeps only English ICU data in the executable `file`, in place. Undefined when it embeds no ICU
 * data (a Node built with system ICU or none), which is left as it is.
 */
export function shrinkIcuInFile(file: string, keep = keepEnglish): ShrinkResult | undefined {
  const bin = readFileSync(file);
  const starts = findIcuPackages(bin);
  if (starts.length === 0) return undefined;
  if (starts.length > 1) {
    throw new Error(`${file}: ${starts.length} ICU data packages (at ${starts.join(', ')}), not one`);
  }
  let result: ShrinkResult;
  try {
    result = shrinkIcuPackage(bin, readIcuPackage(bin, starts[0]!), keep);
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`, { cause: e });
  }
  writeFileSync(file, bin);
  return result;
}
