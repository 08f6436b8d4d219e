// scaffold: `appliance init`'s new project. appliance.yaml declaring one extension (hello: a static web server and its
// page), the API secrets and the upgrade signing key (both made here, both ignored by git), a README with the next
// commands. Nothing is overwritten: a file already there refuses the whole, before anything is written.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { generateSecrets, secretsToYaml } from '../../machinery/pki/secrets.ts';
import { developmentSigningKey } from '../../image/signing-key.ts';

export class ScaffoldRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScaffoldRefused';
  }
}

export interface ScaffoldOptions {
  exampleProgram: string;
  schemaFile: string;
  invocation: string;
  cosictl: string;
}

export interface Scaffolded { name: string; files: string[]; next: string[] }

/** The files init writes (besides .gitignore, added to), relative to the project. */
const WRITES = ['appliance.yaml', 'README.md', 'secrets.yaml', 'signing-key.pem', 'hello'];
const IGNORED = ['out/', 'secrets.yaml', 'signing-key.pem'];

/** An appliance name from a directory's: lower case, letters, digits and dashes, starting with a letter. */
export function nameFromDir(dir: string): string {
  const n = basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^[^a-z]+/, '').slice(0, 63)
    .replace(/-+$/, '');
  return n || 'appliance';
}

const definition = (name: string, schema: string) => `# yaml-language-server: $schema=${schema}
# The appliance ${name}: what its images hold. Every field: the schema above, or \`appliance --help\`.
apiVersion: appliance.dev/v1alpha1
kind: Appliance
name: ${name}
version: 0.1.0
extensions:
  # Programs baked into every image, started at first boot with no network. Replace hello with yours:
  # a directory (dir:, with the manifest's fields), an OCI image layout or \`docker save\` archive (oci:),
  # or a prebuilt squashfs (squashfs:).
  - name: hello
    dir: hello                 # its root filesystem
    executable: /bin/hello-web
    args: ["8080", "/www"]
    ready: http:8080/          # running once a GET of / answers
config:
  # The machine config it boots with the first time: resource documents (cosictl explain TYPE), inline
  # or by path. Secrets only by path, in secrets:.
  - inline: |
      metadata: {type: hostnamespec, id: ${name}}
      spec: {hostname: ${name}}
secrets: secrets.yaml          # the API's CA and clients (cosictl gen secrets): not in version control
signing:
  key: signing-key.pem         # signs its upgrade bundles: machines built here trust only it
formats: [qcow2, upgrade]
run:
  forward: ["8080:8080"]       # appliance run: this computer's 127.0.0.1:8080 to the machine's 8080
`;

const readme = (name: string, o: ScaffoldOptions) => `# ${name}

An appliance: a machine image whose only way in is its API. \`appliance.yaml\` declares it: the program
it runs (\`hello\`, a small web server serving \`hello/www\`), the config it boots with, its formats.

Next:

\`\`\`sh
${o.invocation} build        # out/appliance.qcow2 and out/appliance-upgrade.tar
${o.invocation} run          # boots it in QEMU; Ctrl-C powers it down
curl http://127.0.0.1:8080/  # hello's page, from the machine
\`\`\`

While it runs, its API: \`COSICTL_CONFIG=out/run/cosictl.yaml ${o.cosictl} get extensionstatus\`, and
\`${o.cosictl} logs hello\` for the program's output. Change the page or the program and
\`${o.invocation} push\`: it is built and swapped into the running machine in seconds, until its next
boot. To ship it, build again and upgrade the machine with
\`${o.cosictl} upgrade --image out/appliance-upgrade.tar\` (the version in appliance.yaml goes up first).

\`secrets.yaml\` (who may use the machine's API) and \`signing-key.pem\` (whose upgrades it takes) were made
here and are kept out of version control by \`.gitignore\`: keep them somewhere safe.
`;

/** Makes the project in `dir`; refused, with nothing written, where one of its files is already. */
export async function scaffoldProject(dir: string, o: ScaffoldOptions): Promise<Scaffolded> {
  const there = WRITES.filter((f) => existsSync(join(dir, f)));
  if (there.length) {
    throw new ScaffoldRefused(`${dir}: ${there.join(', ')} already there; nothing written (init makes a new project: `
      + 'give another directory)');
  }
  const name = nameFromDir(dir);
  mkdirSync(join(dir, 'hello', 'bin'), { recursive: true });
  mkdirSync(join(dir, 'hello', 'www'));
  copyFileSync(o.exampleProgram, join(dir, 'hello', 'bin', 'hello-web'));
  writeFileSync(join(dir, 'hello', 'www', 'index.html'), `<!doctype html>\n<title>${name}</title>\n`
    + `<h1>Hello from ${name}</h1>\n<p>Served by hello-web, baked into the appliance's image.</p>\n`);
  writeFileSync(join(dir, 'secrets.yaml'), secretsToYaml(generateSecrets()), { mode: 0o600 });
  developmentSigningKey(join(dir, 'signing-key.pem'));
  const gitignore = join(dir, '.gitignore');
  const had = existsSync(gitignore) ? readFileSync(gitignore, 'utf8') : '';
  const missing = IGNORED.filter((l) => !had.split('\n').includes(l));
  const separator = had && !had.endsWith('\n') ? '\n' : '';
  if (missing.length) writeFileSync(gitignore, `${had}${separator}${missing.join('\n')}\n`);
  const schema = relative(resolve(dir), o.schemaFile);
  writeFileSync(join(dir, 'appliance.yaml'), definition(name, schema));
  writeFileSync(join(dir, 'README.md'), readme(name, o));
  return {
    name,
    files: ['appliance.yaml', 'hello/bin/hello-web', 'hello/www/index.html', 'secrets.yaml', 'signing-key.pem',
      '.gitignore', 'README.md'],
    next: [...(resolve(dir) === process.cwd() ? [] : [`cd ${dir}`]), `${o.invocation} build`, `${o.invocation} run`,
      'curl http://127.0.0.1:8080/'],
  };
}
