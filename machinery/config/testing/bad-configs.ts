// bad-configs: the corpus of machine configs that must be refused whole, each with the
// words its refusal must carry. Shared by the engine's tests on the host and the QEMU
// test that sends them to the real machine, past cosictl's own offline check.

export interface BadConfig {
  name: string;
  text: string;
  /** What the refusal says (the document, field or limit). */
  expect: RegExp;
}

/** A YAML alias bomb: 9^9 strings once expanded, a few hundred bytes written. */
export function aliasBomb(): string {
  const letter = (i: number) => String.fromCharCode(97 + i);
  return ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    .concat(Array.from({ length: 8 }, (_, i) => `${letter(i + 1)}: &${letter(i + 1)} `
      + `[*${letter(i)},*${letter(i)},*${letter(i)},*${letter(i)},*${letter(i)},*${letter(i)}]`))
    .join('\n');
}

const motd = (id: string, text: string) => `metadata: {type: motd, id: ${id}}\nspec: {text: ${JSON.stringify(text)}}\n`;

export const BAD_CONFIGS: readonly BadConfig[] = [
  { name: 'malformed YAML', text: 'metadata: {type: motd, id: x\nspec: {text: "unclosed\n', expect: /YAML|line \d/ },
  {
    name: 'unknown kind', text: `${motd('fine', 'ok')}---\nmetadata: {type: Nonsense, id: x}\nspec: {}\n`,
    expect: /document 2 .*unknown resource type "Nonsense"/,
  },
  {
    name: 'wrong field type', text: 'metadata: {type: motd, id: typed}\nspec: {text: 42}\n',
    expect: /document 1 \(Motd typed\): spec\.text: .*string/,
  },
  {
    name: 'duplicate ids', text: `${motd('twice', 'a')}---\n${motd('twice', 'b')}`,
    expect: /document 2 \(Motd twice\): duplicate of document 1/,
  },
  {
    name: '10 MB document', text: motd('big', 'x'.repeat(10 << 20)),
    expect: /exceeds the limit|larger than the 1(\.0)? MiB/,
  },
  { name: 'alias bomb', text: `${motd('fine', 'ok')}---\n${aliasBomb()}\n`, expect: /alias/i },
  {
    name: '100k-deep nesting', text: `metadata: {type: motd, id: deep}\nspec: ${'['.repeat(100_000)}`,
    expect: /nested deeper/,
  },
  {
    // The id stands in for the key: the slash form must not climb out of /proc/sys.
    name: 'a kernel parameter id that leaves /proc/sys',
    text: 'metadata: {type: KernelParamSpec, id: "kernel/../../../etc/x"}\nspec: {value: "1"}\n',
    expect: /KernelParamSpec kernel\/\.\.\/\.\.\/\.\.\/etc\/x\): metadata\.id: .*no spaces or slashes/,
  },
  {
    name: 'a kernel parameter key with a . part',
    text: 'metadata: {type: KernelParamSpec, id: fine}\nspec: {value: "1", key: "net/./ipv4/ip_forward"}\n',
    expect: /spec\.key: .*without \. or \.\. parts/,
  },
];
