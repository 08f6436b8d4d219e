// fan-out: one command on several machines at once (--nodes, or a context with several endpoints),
// as talosctl does. Each machine gets its own session and runs the command concurrently; tables
// of all machines become one table with a NODE column first (printed once all have answered);
// other lines go out as they come, each after its node; a machine that fails is named on stderr
// and does not hide the others' answers. The exit code is the first failing node's (in the
// order given), else 0.
import type { CommandIo } from './command.ts';
import { exitCodeOf } from './errors.ts';
import { renderTable } from './output/table.ts';

interface NodeTable { node: string; header: string[]; rows: string[][] }

/** Text written to `write` a whole line at a time, each line after `prefix`; `flush` ends a last partial line. */
function linesAfter(prefix: string, write: (text: string) => void): { write(text: string): void; flush(): void } {
  let partial = '';
  return {
    write(text: string) {
      const parts = (partial + text).split('\n');
      partial = parts.pop()!;
      if (parts.length) write(parts.map((l) => `${prefix}${l}\n`).join(''));
    },
    flush() {
      if (partial) write(`${prefix}${partial}\n`);
      partial = '';
    },
  };
}

/**
 * Runs `run` once per node with an io of its own (`ioFor` makes its session), then prints the merged tables.
 * Tables are merged by their order within each node's output: the k-th table of every node goes together,
 * those of the same columns in one (machines of other versions may print other columns: a table each).
 */
export async function fanOut(
  nodes: readonly string[], io: Omit<CommandIo, 'session'>,
  ioFor: (node: string) => Pick<CommandIo, 'session'> & { close(): void },
  run: (io: CommandIo) => Promise<number>,
): Promise<number> {
  const width = Math.max(...nodes.map((n) => n.length));
  const tables: NodeTable[][] = nodes.map(() => []);
  const codes = await Promise.all(nodes.map(async (node, i) => {
    const out = linesAfter(`${node.padEnd(width)}  `, io.out);
    const err = linesAfter(`cosictl: node ${node}: `, io.err);
    const own = ioFor(node);
    try {
      return await run({
        ...io, session: own.session, out: (t) => out.write(t), err: (t) => err.write(t),
        table: (header, rows) => { tables[i]!.push({ node, header, rows }); },
      });
    } catch (e) {
      err.write(`${(e as Error).message}\n`);
      return exitCodeOf(e);
    } finally {
      out.flush();
      err.flush();
      own.close();
    }
  }));
  const count = Math.max(0, ...tables.map((t) => t.length));
  for (let k = 0; k < count; k++) {
    const byHeader = new Map<string, NodeTable[]>();
    for (const part of tables.map((t) => t[k]).filter((t): t is NodeTable => t !== undefined)) {
      const key = JSON.stringify(part.header);
      byHeader.set(key, [...(byHeader.get(key) ?? []), part]);
    }
    for (const parts of byHeader.values()) {
      io.out(renderTable(['NODE', ...parts[0]!.header], parts.flatMap((p) => p.rows.map((r) => [p.node, ...r]))));
    }
  }
  return codes.find((c) => c !== 0) ?? 0;
}
