// An appliance of one's own (issue 37), built by `appliance build` from a project in a fresh directory: programs
// baked into the image (the Python example plugin from a dir: with its manifest's fields; lighttpd, a program nobody
// here wrote, from an OCI layout umoci made of Debian's package), its first-boot config naming the plugin's own
// type, the run's API secrets from a file, its own kernel (a config fragment adding the tun module) and two kernel
// modules loaded at boot, one of the system's and the fragment's. Built as raw and qcow2 (the same disk), again with
// nothing changed (nothing done), the qcow2 booted under SeaBIOS with QEMU's default devices and no server anywhere:
// the plugin answers the config's Greeting, lighttpd serves its page on a forwarded port, the modules are loaded;
// `appliance push` swaps a changed plugin in without a reboot. Then a version 2 bundle (a changed plugin and page)
// upgrades OS and programs together, and version 3, whose critical program (lighttpd, critical: true) cannot start,
// rolls back by itself to version 2's OS and programs: the A/B upgrade under SeaBIOS's GRUB (qemu/upgrade.test.ts
// tries the refusals and failures under OVMF). lighttpd keeps its error log on a volume with a size (a project
// quota), which keeps every start's line across both (issue 38; qemu/extension.test.ts purges a volume).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applianceIn } from '../scripts/lib/appliance-in.ts';
import { READY_RE } from '../init/boot/ready-line.ts';
import { bootWithApi, TEST_CA_DOCUMENT, type ApiVm } from './api-vm.ts';
import YAML from 'yaml';
import { buildHelloImages, HELLO_MANIFEST } from './extension-image.ts';
import { freePort } from './free-port.ts';
import { LIGHTTPD_PORT, lighttpdOciLayout } from '../scripts/lib/lighttpd-oci.ts';
import { readyAgain, slotLine, upgrade } from './upgrade-steps.ts';

const scratch = mkdtempSync(join(tmpdir(), 'appliance-vm-'));
const project = join(scratch, 'kiosk');
mkdirSync(project);
// The Python example plugin's root, its manifest's fields in the definition (dir:): its version is the appliance's.
buildHelloImages(scratch, {}, { keepRoot: join(project, 'hello') });
const { version: _, ...helloFields } = YAML.parse(HELLO_MANIFEST()) as Record<string, unknown>;
writeFileSync(join(project, 'secrets.yaml'), TEST_CA_DOCUMENT());
writeFileSync(join(project, 'kernel.config'), '# the tunnel device a VPN program needs\nCONFIG_TUN=m\n');
// lighttpd, from Debian's package, as an OCI layout umoci made: one per version, each serving its own page.
// Python (the hello root's) filling a volume of 1 MiB: the kernel's project quota stops it, and it says where.
const FILL = `import os, time
n = 0
try:
    with open("/var/lib/hello/fill", "wb") as f:
        while n < 4 << 20:
            f.write(b"x" * 65536)
            f.flush()
            os.fsync(f.fileno())
            n += 65536
    print("wrote", n, "bytes: no limit", flush=True)
except OSError as e:
    print("wrote", n, "bytes, then", e.strerror, flush=True)
time.sleep(1e9)
`;
const filler = { name: 'filler', dir: 'hello', executable: '/usr/bin/python3', args: ['-c', FILL], ready: 'started',
  volumes: [{ name: 'data', path: '/var/lib/hello', size: '1MiB' }] };
// Its error log on a volume it serves: each start of it adds a line there, kept across an upgrade and a rollback.
const LOG_DIR = '/var/www/data';
const web = { '1.0.0': lighttpdOciLayout(scratch, '<h1>kiosk version 1</h1>\n', { logDir: LOG_DIR }),
  '2.0.0': lighttpdOciLayout(scratch, '<h1>kiosk version 2</h1>\n', { logDir: LOG_DIR }) };
// Version 3 is version 2 with lighttpd told to read a config that is not there: its critical program fails.
const definition = (version: '1.0.0' | '2.0.0' | '3.0.0', formats: string) => `apiVersion: appliance.dev/v1alpha1
kind: Appliance
name: kiosk
version: ${version}
extensions:
  - ${JSON.stringify({ ...helloFields, dir: 'hello' })}
  - ${JSON.stringify(filler)}
  - name: web
    oci: ${web[version === '3.0.0' ? '2.0.0' : version]}
    critical: true
    volumes: [{name: data, path: ${LOG_DIR}, size: 10MiB}]
${version === '3.0.0' ? '    args: [-D, -f, /etc/lighttpd/missing.conf]\n' : ''}kernel:
  modules: [dummy, tun]
  fragment: kernel.config
config:
  - inline: |
      metadata: {type: greetings, id: world}
      spec: {name: world}
secrets: secrets.yaml
formats: [${formats}]
`;
writeFileSync(join(project, 'appliance.yaml'), definition('1.0.0', 'raw, qcow2'));

/** `appliance ARGS` run in the project's directory, its exit code and what it printed. */
const run = (...args: string[]) => applianceIn(project, ...args);

t.test('appliance build: raw and qcow2 of one disk; again with nothing changed, nothing done', async (t) => {
  const first = await run('build');
  t.equal(first.code, 0);
  t.match(first.out, /kiosk 1\.0\.0: built in/);
  const manifest = JSON.parse(readFileSync(join(project, 'out', 'manifest.json'), 'utf8')) as
    { images: { format: string; file: string; sha256: string }[] };
  t.same(manifest.images.map((i) => i.format), ['raw', 'qcow2']);
  const out = (f: string) => join(project, 'out', f);
  const compare = execFileSync('qemu-img', ['compare', '-f', 'raw', '-F', 'qcow2', out('appliance.raw'),
    out('appliance.qcow2')], { encoding: 'utf8' });
  t.match(compare, /Images are identical/, 'qemu-img compare: the qcow2 is the raw disk');
  const again = await run('build');
  t.equal(again.code, 0);
  t.match(again.out, /kiosk 1\.0\.0: nothing changed since the last build/);
  t.match(again.out, manifest.images[0]!.sha256, 'the same images listed');
  const image = execFileSync('unsquashfs', ['-l', join(project, 'out', '.build', 'kernel', 'system.squashfs')],
    { encoding: 'utf8' });
  t.match(image, /lib\/modules\/[^/]+\/kernel\/drivers\/net\/tun\.ko\n/, 'the system image has the fragment\'s module');
  t.match(image, /\/init\n/, 'and the system\'s PID 1');
});

let m: ApiVm;
const webPort = await freePort();

/** An ExtensionStatus of this phase, as `get -o json` prints it (the resource's own metadata has a phase too). */
const specPhase = (phase: string) => new RegExp(`"spec": \\{\\s*"phase": "${phase}"`);

/** How many times lighttpd's log says it started. */
const starts = (log: string) => log.match(/server started/g)?.length ?? 0;

/** lighttpd's page through the forwarded port, asked until it is `page` (its program may still be starting). */
async function pageIs(page: RegExp, path = '/'): Promise<string> {
  const deadline = Date.now() + 120_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      last = await (await fetch(`http://127.0.0.1:${webPort}${path}`, { signal: AbortSignal.timeout(5000) })).text();
      if (page.test(last)) return last;
    } catch (e) {
      last = String((e as Error).cause ?? e);
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
  return last;
}
// The machine outlives the test that boots it (the next upgrades it): stopped once the file's tests end.
t.teardown(() => m?.vm.kill());
t.test('the qcow2 under SeaBIOS on QEMU\'s default devices: the baked program runs, no server anywhere',
  async (t) => {
    const disk = join(scratch, 'boot.qcow2');
    execFileSync('cp', [join(project, 'out', 'appliance.qcow2'), disk]);
    // A disk of a size a VM gets: EPHEMERAL grows to it at first boot (two upgrades are staged on it).
    execFileSync('qemu-img', ['resize', '-q', disk, '1G']);
    m = await bootWithApi({
      bootFrom: 'disk', firmware: 'seabios', machine: 'pc', defaults: true, nics: ['e1000'], memoryMiB: 384,
      noReboot: false, disks: [{ file: disk, format: 'qcow2', interface: 'ide' }],
      hostfwd: [{ hostPort: webPort, guestPort: LIGHTTPD_PORT }],
    }, 'dhcp', { secrets: 'none' });
    t.teardown(() => writeFileSync(join(scratch, 'console.log'), m.vm.console()));
    t.match(m.vm.console(),
      /kiosk 1\.0\.0 from slot A: 3 extension\(s\) declared \(hello, filler, web\); kernel modules dummy, tun; a/);
    const status = await m.poll(['get', 'extensionstatus', 'hello', '-o', 'json'], specPhase('running'), 120_000);
    t.match(status.out, /"version": "1\.0\.0"/, `running: ${status.err}`);
    const g = await m.poll(['get', 'greetingstatus', 'world', '-o', 'json'], /hello, world/, 60_000);
    t.match(g.out, /hello, world/, 'the first-boot config\'s Greeting answered by the baked program');
    t.match(await pageIs(/version 1/), /<h1>kiosk version 1<\/h1>/, 'lighttpd, from its OCI image, serves its page');
    const webStatus = await m.run(['get', 'extensionstatus', 'web', '-o', 'json']);
    t.match(webStatus.out, specPhase('running'), 'the API reports it running');
    const volume = (JSON.parse(webStatus.out) as { spec: { volumes: Record<string, unknown>[] } }).spec.volumes;
    t.match(volume, [{ name: 'data', path: LOG_DIR, dir: '/var/lib/extensions/web/data', persistent: true,
      sizeBytes: 10 << 20, note: '' }], 'its volume on EPHEMERAL, its size a project quota the kernel reports back');
    t.match(await pageIs(/server started/, '/data/error.log'), /server started/,
      'lighttpd writes its log on its volume (as its own uid), and serves it');
    const filled = await m.poll(['logs', 'filler'], /wrote \d+ bytes/, 120_000);
    const wrote = /wrote (\d+) bytes, then Disk quota exceeded/.exec(filled.out);
    t.ok(wrote && Number(wrote[1]) >= 900 << 10 && Number(wrote[1]) < 1 << 20,
      `a volume of 1 MiB: the kernel stopped the writer short of it (${filled.out.trim().split('\n').at(-1)})`);
    const dummy = await m.poll(['get', 'kernelmodulespecstatus', 'dummy', '-o', 'json'], /"state": "applied"/, 60_000);
    t.match(dummy.out, /"layer": "default"[^]*"loaded": \[\s*"dummy"\s*\]/, 'kernel.modules: loaded at boot');
    const tun = await m.poll(['get', 'kernelmodulespecstatus', 'tun', '-o', 'json'], /"state": "applied"/, 60_000);
    t.match(tun.out, /"loaded": \[\s*"tun"\s*\]/, 'the fragment\'s module, built with the appliance\'s kernel, loaded');
    const config = await m.run(['get', 'configstatus', 'machine', '-o', 'json']);
    t.match(config.out, /"source": "image"/, 'the config the image carries');
  });

t.test('appliance push: a changed program swapped in without a reboot, said to be a development build',
  async (t) => {
    writeFileSync(join(project, 'hello', 'pushed.txt'), 'a change made after the image was built\n');
    t.teardown(() => rmSync(join(project, 'hello', 'pushed.txt'), { force: true }));
    const before = await m.run(['get', 'extensionstatus', 'hello', '-o', 'json']);
    const firstSha = (JSON.parse(before.out) as { spec: { sha256: string } }).spec.sha256;
    const pushed = await run('push', 'hello', '--config', m.cosictlConfig);
    t.equal(pushed.code, 0);
    t.match(pushed.out,
      /^hello: 1\.0\.0 \(sha256 [0-9a-f]{12}, [\d.]+ MB\) running [\d.]+ s after the push began \(upload/m,
      'the new build runs, and how long it took is said');
    const status = JSON.parse((await m.run(['get', 'extensionstatus', 'hello', '-o', 'json'])).out) as
      { spec: { sha256: string; phase: string; override: string } };
    t.not(status.spec.sha256, firstSha, 'another image');
    t.match(status.spec, { phase: 'running',
      override: new RegExp(`^pushed \\S+, until the next boot; declared ${firstSha.slice(0, 12)}$`) });
    t.equal(m.vm.console().match(new RegExp(READY_RE.source, 'g'))?.length, 1, 'no reboot');
    const g = await m.poll(['get', 'greetingstatus', 'world', '-o', 'json'], /hello, world/, 60_000);
    t.match(g.out, /hello, world/, 'the pushed program answers the Greeting');
    const again = await run('push', '--config', m.cosictlConfig);
    t.equal(again.code, 0);
    t.match(again.out, /^filler: 1\.0\.0 \(sha256 [0-9a-f]{12}, [\d.]+ MB\) running/m,
      'every extension: filler, built from the same directory, changed too and is sent');
    t.notMatch(again.out, /^hello:/m, 'hello runs its build already: not sent again');
    t.equal((await run('push', 'nosuch', '--config', m.cosictlConfig)).code, 1, 'an extension the project lacks');
  });

t.test('an upgrade bundle of version 2 replaces OS and program, its volume kept', async (t) => {
  writeFileSync(join(project, 'appliance.yaml'), definition('2.0.0', 'upgrade'));
  const built = await run('build');
  t.equal(built.code, 0);
  const bundle = join(project, 'out', 'appliance-upgrade.tar');
  const up = await upgrade(m, '--image', bundle, '--health-timeout', '2m', '--id', 'to-2');
  t.equal(up.code, 0, up.err);
  await readyAgain(m, 2);
  t.match(m.vm.console(), /appliance: booting slot B/, 'SeaBIOS\'s GRUB booted the new slot');
  t.match(m.vm.console(), /kiosk 2\.0\.0 from slot B: 3 extension\(s\) declared \(hello, filler, web\)/);
  // Its system is version 1's (the appliance changed, the OS did not): both SYSTEM partitions hold the same image.
  t.match(m.vm.console(), /stage0: the system image is on \/dev\/sda6\r?\n/, 'slot B reads its own SYSTEM-B');
  const v2 = await m.poll(['get', 'extensionstatus', 'hello', '-o', 'json'],
    new RegExp(`${specPhase('running').source}[^]*"version": "2\\.0\\.0"`), 120_000);
  t.match(v2.out, specPhase('running'), 'version 2\'s program runs');
  t.match(v2.out, /"override": ""/, 'the build pushed to version 1 went with its boot');
  const done = await m.poll(['get', 'upgradestatus', 'to-2'], /done/, 120_000);
  t.match(done.out, /done\s+1\.0\.0\s+2\.0\.0\s+B/, 'version 2 marked itself good');
  t.match(await slotLine(m), /^A:1\.0\.0 good \| B:2\.0\.0 running default good$/);
  t.match(await pageIs(/version 2/), /<h1>kiosk version 2<\/h1>/, 'version 2\'s page');
  t.equal(starts(await pageIs(/server started[^]*server started/, '/data/error.log')), 2,
    'its volume kept across the upgrade: version 1\'s start and version 2\'s in one log');
  const used = await m.run(['get', 'extensionstatus', 'web', '-o', 'json']);
  t.match(used.out, /"usedBytes": [1-9]/, 'what its files take, as the quota counts them');
});

t.test('version 3, whose critical program fails, rolls back by itself: version 2\'s OS and programs', async (t) => {
  writeFileSync(join(project, 'appliance.yaml'), definition('3.0.0', 'upgrade'));
  const built = await run('build');
  t.equal(built.code, 0);
  const up = await upgrade(m, '--image', join(project, 'out', 'appliance-upgrade.tar'), '--health-timeout', '2m',
    '--id', 'to-3');
  t.equal(up.code, 0, up.err);
  await readyAgain(m, 4); // version 3's ready line, then version 2's
  t.match(m.vm.console(), /kiosk 3\.0\.0 from slot A/, 'version 3 was tried');
  t.match(m.vm.console(), /upgrade "to-3": not healthy: its critical extension\(s\) restarted 3 times or more: web/,
    'its critical program restarted 3 times: the try failed at once, not at the end of its health timeout');
  const failed = await m.poll(['get', 'upgradestatus', 'to-3', '-o', 'json'], specPhase('failed'), 60_000);
  t.match(failed.out, /did not come up healthy: its health checks did not pass: its critical extension\(s\) restarted/,
    'version 2 says why version 3 was not kept');
  t.match(await slotLine(m), /^A:3\.0\.0 \| B:2\.0\.0 running default good$/, 'back on version 2');
  const v2 = await m.poll(['get', 'extensionstatus', 'web', '-o', 'json'], specPhase('running'), 120_000);
  t.match(v2.out, /"version": "2\.0\.0"/, 'version 2\'s program with its OS');
  t.match(await pageIs(/version 2/), /<h1>kiosk version 2<\/h1>/, 'version 2\'s page again');
  t.equal(starts(await pageIs(/(server started[^]*){3}/, '/data/error.log')), 3,
    'its volume kept through the failed try: three starts in one log');
  const health = await m.poll(['health'], /ok\s+extensions: hello running, web running \(critical\)/, 60_000);
  t.equal(health.code, 0, 'healthy, the critical extension named');
});
