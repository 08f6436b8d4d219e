// appliance: `npm run appliance -- <command>` in this repository: the appliance command (appliance/command.ts) on the
// system this repository builds (npm run build writes its kit into out/build). The package's own bin runs the same
// command on the kit it carries (appliance/package-main.ts).
import { join } from 'node:path';
import { APPLIANCE_SCHEMA_FILE } from '../image/appliance/editor-schemas.ts';
import { compileStaticC } from '../image/stage0/build-stage0.ts';
import { applianceMain, type ApplianceHost } from './appliance/command.ts';
import { build } from './build.ts';
import { BUILD, OUT, ROOT } from './lib/paths.ts';

/** The example program `appliance init` copies into a project. */
export const HELLO_WEB_SOURCE = join(ROOT, 'image', 'appliance', 'example', 'hello-web.c');

export const repoHost: ApplianceHost = {
  systemKit: async () => {
    await build();
    return BUILD;
  },
  exampleProgram: async () => {
    const exe = join(BUILD, 'hello-web');
    compileStaticC(HELLO_WEB_SOURCE, exe);
    return exe;
  },
  schemaFile: APPLIANCE_SCHEMA_FILE,
  invocation: 'npm run appliance --',
  cosictl: join(OUT, 'cosictl'),
};

export const main = (argv: string[]) => applianceMain(argv, repoHost);

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await main(process.argv.slice(2)));
