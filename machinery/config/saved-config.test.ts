// The saved machine config's header holds the YAML's length and sha256: a file cut short or changed is refused with
// why, one saved before the header held them still loads, and a save the machine stopped in is said and cleaned.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_FILE, fileConfigStore, formatSavedConfig, parseSavedConfig } from './saved-config.ts';

const saved = {
  text: 'metadata: {type: motd, id: a}\nspec: {text: "one"}\n', source: 'api', savedAt: '2026-11-26T00:00:00Z',
};

t.test('whole, cut short at any byte, or changed', async (t) => {
  const file = formatSavedConfig(saved);
  t.match(parseSavedConfig(file, 'f'), saved, 'whole: loads');
  const header = file.indexOf('\n') + 1;
  for (let cut = header; cut < file.length; cut += 7) {
    t.throws(() => parseSavedConfig(file.slice(0, cut), 'f'),
      new RegExp(`^f: damaged: it holds ${cut - header} bytes of the ${saved.text.length} saved at `), `cut at ${cut}`);
  }
  t.throws(() => parseSavedConfig(file.replace('"one"', '"two"'), 'f'),
    /f: damaged: its content does not match the sha256/);
  const old = file.replace(/,"bytes":\d+,"sha256":"[0-9a-f]+"/, '');
  t.match(parseSavedConfig(old, 'f'), saved, 'a file saved before the header held them loads as it is');
});

t.test('a damaged file is refused and kept aside, never overwritten by the next save', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'saved-config-'));
  const whole = formatSavedConfig(saved);
  writeFileSync(join(dir, CONFIG_FILE), whole.slice(0, -5));
  const store = fileConfigStore(dir);
  t.throws(() => store.load(), /damaged: it holds .*; kept as machine-config\.yaml\.damaged$/);
  t.equal(readFileSync(join(dir, `${CONFIG_FILE}.damaged`), 'utf8'), whole.slice(0, -5), 'kept as it was');
  t.equal(store.load(), undefined, 'no config now: the machine waits for one');
  await store.save(saved);
  t.equal(readFileSync(join(dir, `${CONFIG_FILE}.damaged`), 'utf8'), whole.slice(0, -5), 'a save leaves it be');
});

t.test('a temporary file left by a save the machine stopped in: named, removed; the whole file loads', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'saved-config-'));
  writeFileSync(join(dir, CONFIG_FILE), formatSavedConfig(saved));
  writeFileSync(join(dir, `.${CONFIG_FILE}.1.tmp`), 'metadata: {type: mo');
  const store = fileConfigStore(dir);
  const loaded = store.load();
  const interrupted = /a save was under way when the machine stopped \(\.machine-config\.yaml\.1\.tmp/;
  t.match(loaded, { ...saved, interrupted });
  t.same(readdirSync(dir), [CONFIG_FILE], 'the temporary file is gone');
  t.notOk(store.load()?.interrupted, 'said once');
  await store.save({ ...saved, text: `${saved.text}---\n${saved.text.replace('id: a', 'id: b')}` });
  t.match(parseSavedConfig(readFileSync(join(dir, CONFIG_FILE), 'utf8'), 'f').text, /id: b/);
});
