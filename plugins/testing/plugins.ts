// testing: plugins that exist only for the engine's tests (enabled by
// `serve --test-plugins` or the kernel switch appliance.test.plugins).
//   test-writer   writes its own output, then tries a type it does not own and
//                 records the error code it got in its output
//   test-reader   reads a file named by a TestFileRead into a TestFileContent, and says so in its log
//   test-crasher  exits with status 3 as soon as it starts (a crash loop)
import type { Controller } from '../../cosi/controller/contract.ts';
import { StateError } from '../../cosi/state/errors.ts';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RemoteState } from '../../cosi/remote/client.ts';
import { addFinalizer, removeFinalizer } from '../../cosi/state/finalizers.ts';
import type { Plugin } from '../../machinery/model/plugin.ts';
import { definitionsServedBy } from '../../machinery/model/definitions.ts';
import { PLUGIN_SOCKET_ENV } from '../sdk/run-plugin.ts';
import {
  RUNTIME_NS, TEST_FILE_CONTENT_TYPE, TEST_FILE_READ_TYPE, TEST_REPORT_TYPE, VERSION_TYPE,
} from '../../proto/gen/resource-types.ts';

const writer: Controller = {
  name: 'test-writer',
  inputs: () => [],
  outputs: () => [{ type: TEST_REPORT_TYPE, kind: 'exclusive' }],
  async run(ctx) {
    while (await ctx.next()) {
      let code = 'none';
      // A plain client on the same socket (same pid, so the same identity) skips the
      // controller's own guard: the engine must refuse the write on its side.
      const raw = new RemoteState(`unix://${process.env[PLUGIN_SOCKET_ENV]}`);
      try {
        await raw.create({
          metadata: {
            namespace: RUNTIME_NS, type: VERSION_TYPE, id: 'forged', version: 0, owner: '', phase: 'running',
            created: 0, updated: 0, finalizers: [], labels: {}, annotations: {},
          },
          spec: { version: 'forged' },
        }, { owner: 'test-writer' });
        code = 'accepted';
      } catch (e) { code = e instanceof StateError ? e.code : `error: ${(e as Error).message}`; }
      // A finalizer on a type it does not write is allowed (that is how strong inputs are held);
      // changing that resource's spec is not.
      const version = { namespace: RUNTIME_NS, type: VERSION_TYPE, id: 'appliance' };
      let finalizer = 'none';
      let specChange = 'none';
      try {
        await addFinalizer(raw, version, 'test-writer');
        await removeFinalizer(raw, version, 'test-writer');
        finalizer = 'accepted';
      } catch (e) { finalizer = e instanceof StateError ? e.code : (e as Error).message; }
      try {
        const cur = await raw.get(version);
        await raw.update({ ...cur, spec: { version: 'forged' } }, { owner: cur.metadata.owner });
        specChange = 'accepted';
      } catch (e) { specChange = e instanceof StateError ? e.code : (e as Error).message; }
      raw.close();
      const report = { code, finalizer, specChange };
      await ctx.state.put({ namespace: RUNTIME_NS, type: TEST_REPORT_TYPE, id: 'forbidden-write' }, report);
    }
  },
};

export const testWriterPlugin: Plugin = {
  name: 'test-writer', description: 'test: tries to write a type it does not own', testOnly: true, capabilities: [],
  types: () => definitionsServedBy('test-writer'),
  controllers: () => [writer],
};

// test-reader: TestFileReads (runtime) name a path; TestFileContents carry its first
// 4 KiB. The system has no shell, and a test still has to read a mounted file back.

const reader: Controller = {
  name: 'test-reader',
  inputs: () => [{ namespace: RUNTIME_NS, type: TEST_FILE_READ_TYPE, kind: 'weak' }],
  outputs: () => [{ type: TEST_FILE_CONTENT_TYPE, kind: 'exclusive' }],
  async run(ctx) {
    let read = new Set<string>();
    while (await ctx.next()) {
      const keep = new Set<string>();
      for (const r of await ctx.state.list({ namespace: RUNTIME_NS, type: TEST_FILE_READ_TYPE })) {
        keep.add(r.metadata.id);
        const first = !read.has(r.metadata.id);
        const { path, walk } = r.spec as { path: string; walk?: boolean };
        let spec: { path: string; content?: string; error?: string };
        try {
          const content = walk ? listTree(path).slice(0, 256 << 10) : readFileSync(path, 'utf8').slice(0, 4096);
          spec = { path, content };
        } catch (e) {
          spec = { path, error: (e as Error).message };
        }
        // A plugin that prints when asked (once per read): the log tests read these lines back.
        if (first && spec.error) ctx.log.warn(`${r.metadata.id}: cannot read ${path}: ${spec.error}`);
        else if (first) ctx.log.info(`${r.metadata.id}: read ${path} (${spec.content!.length} characters)`);
        await ctx.state.put({ namespace: RUNTIME_NS, type: TEST_FILE_CONTENT_TYPE, id: r.metadata.id }, spec);
      }
      await ctx.state.cleanup({ namespace: RUNTIME_NS, type: TEST_FILE_CONTENT_TYPE }, keep);
      read = keep;
    }
  },
};

/** "<octal mode> <path>" for every entry under `root`, the kernel's own trees (/proc, /sys, /dev) left out. */
function listTree(root: string): string {
  const lines: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (['/proc', '/sys', '/dev'].includes(p)) continue;
      const st = lstatSync(p);
      lines.push(`${st.mode.toString(8)} ${p}`);
      if (st.isDirectory()) visit(p);
    }
  };
  visit(root);
  return lines.join('\n');
}

export const testReaderPlugin: Plugin = {
  name: 'test-reader', description: 'test: reads a file named by a TestFileRead', testOnly: true, capabilities: [],
  types: () => definitionsServedBy('test-reader'),
  controllers: () => [reader],
};

export const testCrasherPlugin: Plugin = {
  name: 'test-crasher', description: 'test: exits at once, every time', testOnly: true, capabilities: [],
  types: () => [],
  controllers: () => [{
    name: 'test-crasher', inputs: () => [], outputs: () => [],
    async run() {
      process.stderr.write('test-crasher: exiting with status 3\n');
      process.exit(3);
    },
  }],
};
