// kernel-config: reading kernel config fragments and checking what `make olddefconfig` made of them. The system's
// kernel is tinyconfig plus kernel-config/appliance.config; an appliance's fragment (its definition's
// kernel.fragment) goes on top of the system's whole config and may add options, not change the system's own.

/** One setting of a fragment: `CONFIG_X=value`, or `# CONFIG_X is not set` (value undefined). */
export interface ConfigSetting { line: number; name: string; value: string | undefined }

const SET = /^(CONFIG_\w+)=(.*)$/;
const UNSET = /^# (CONFIG_\w+) is not set$/;

/** A fragment its settings could not all be taken from, or whose settings the kernel build did not keep. */
export class KernelConfigRefused extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`${file}: ${problems.join('; ')}`);
    this.name = 'KernelConfigRefused';
  }
}

/**
 * What of a fragment makes the kernel: its settings, `# CONFIG_X is not set` included, without comments or blank
 * lines, so that rewording a comment does not cost a rebuild.
 */
export const configLines = (fragment: string) => fragment.split('\n')
  .filter((l) => SET.test(l.trim()) || UNSET.test(l.trim())).map((l) => l.trim()).join('\n');

/** The settings of a fragment, and each line that is neither a setting, a comment nor blank. */
export function parseFragment(text: string): { settings: ConfigSetting[]; problems: string[] } {
  const settings: ConfigSetting[] = [];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    const set = SET.exec(l);
    const unset = UNSET.exec(l);
    const m = set ?? unset;
    if (!m) {
      if (l !== '' && !l.startsWith('#')) problems.push(`line ${i + 1}: not a kernel config line: ${l.slice(0, 80)}`);
      return;
    }
    const name = m[1]!;
    const first = seen.get(name);
    if (first !== undefined) problems.push(`line ${i + 1}: ${name} is set already on line ${first}`);
    seen.set(name, i + 1);
    settings.push({ line: i + 1, name, value: set ? set[2]! : undefined });
  });
  return { settings, problems };
}

const shown = (s: Pick<ConfigSetting, 'name' | 'value'>) =>
  s.value === undefined ? `${s.name} off` : `${s.name}=${s.value}`;

/** The values of a whole .config: every option set; an option absent or `is not set` has none. */
const valuesOf = (config: string) => new Map(parseFragment(config).settings
  .filter((s) => s.value !== undefined).map((s) => [s.name, s.value!]));

/**
 * Lines `CONFIG_X=y` or `=m` of the fragment that did not end up so (a dependency is missing, or a typo). A `=m` that
 * became `=y` counts as missing too: the tests rely on those being loadable modules.
 */
export function missingOptions(fragment: string, finalConfig: string): string[] {
  const have = valuesOf(finalConfig);
  return parseFragment(fragment).settings.filter((s) => s.value === 'y' || s.value === 'm')
    .filter((s) => have.get(s.name) !== s.value).map((s) => `${shown(s)} (got ${have.get(s.name) ?? 'not set'})`);
}

/**
 * Before any build: an appliance's fragment whose lines are not all settings, or that changes a setting the system's
 * own fragment makes (the system relies on each: kernel-config/README.md says why).
 */
export function fragmentProblems(fragment: string, systemFragment: string): string[] {
  const { settings, problems } = parseFragment(fragment);
  const system = new Map(parseFragment(systemFragment).settings.map((s) => [s.name, s]));
  for (const s of settings) {
    const own = system.get(s.name);
    if (own && own.value !== s.value) {
      problems.push(`line ${s.line}: ${shown(s)}: the system sets ${shown(own)} and relies on it`);
    }
  }
  return problems;
}

/**
 * After olddefconfig: each setting of the appliance's fragment that did not hold (a dependency missing, a typo, an
 * option another one selects), and each of the system's that the fragment undid through a dependency.
 */
export function configProblems(fragment: string, systemFragment: string, finalConfig: string): string[] {
  const have = valuesOf(finalConfig);
  const problems = parseFragment(fragment).settings.filter((s) => have.get(s.name) !== s.value).map((s) =>
    s.value === undefined
      ? `line ${s.line}: ${s.name} off: another option selects it (got ${have.get(s.name)})`
      : `line ${s.line}: ${shown(s)}: got ${have.get(s.name) ?? 'not set'} (a dependency is off, or no such option)`);
  for (const lost of missingOptions(systemFragment, finalConfig)) {
    problems.push(`the system's ${lost}: turned off through a dependency of this fragment`);
  }
  return problems;
}
