// machine-lookups: completion's questions answered by the machine the command line names (its
// --endpoint, --context, --config, -n) and by the config file. A Tab must never hang: each answer
// has a short deadline, and a question that fails answers nothing, its reason on stderr (which
// the completion scripts do not show).
import { META_NAMESPACE, NAMESPACE_TYPE } from '../../cosi/meta/definition.ts';
import { defaultConfigPath, loadContext, readConfigFile } from '../config.ts';
import { Session } from '../session.ts';
import type { Line, Lookups } from './contract.ts';

/** How long a Tab waits for the machine. */
export const COMPLETION_TIMEOUT_MS = 2000;

export function machineLookups(line: Line): Lookups & { close(): void } {
  const first = (name: string) => line.flags.get(name)?.[0];
  const configPath = first('config') ?? defaultConfigPath();
  const warn = (why: string) => {
    process.stderr.write(`cosictl: completion: ${why}\n`);
  };
  let session: Promise<Session> | undefined;
  const connect = () => session ??= (async () => {
    const fingerprint = first('fingerprint');
    const s = new Session(loadContext({
      endpoint: first('endpoint'), configPath: first('config'), context: first('context'),
      insecure: line.flags.has('insecure'), ...(fingerprint ? { fingerprint } : {}), warn,
    }), first('namespace'), COMPLETION_TIMEOUT_MS);
    await s.connect(COMPLETION_TIMEOUT_MS);
    return s;
  })();
  const ask = async <T>(what: string, question: (s: Session) => Promise<T>, none: T): Promise<T> => {
    try {
      return await question(await connect());
    } catch (e) {
      warn(`${what}: ${(e as Error).message}`);
      return none;
    }
  };
  return {
    definitions: () => ask('types', (s) => s.definitions(), []),
    ids: (typeName) => ask(`ids of ${typeName}`, async (s) => {
      const def = await s.resolve(typeName);
      return (await s.state.list({ namespace: s.namespaceFor(def), type: def.type })).map((r) => r.metadata.id);
    }, []),
    namespaces: () => ask('namespaces', async (s) =>
      (await s.state.list({ namespace: META_NAMESPACE, type: NAMESPACE_TYPE })).map((r) => r.metadata.id), []),
    contexts: () => {
      try {
        return Object.keys(readConfigFile(configPath, false).contexts ?? {});
      } catch (e) {
        warn(`contexts: ${(e as Error).message}`);
        return [];
      }
    },
    // A session that never connected was reported by the question that asked for it.
    close: () => { void session?.then((s) => s.close(), () => undefined); },
  };
}
