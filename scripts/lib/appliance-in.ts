// appliance-in: `appliance ARGS` run in this process from a project's directory, as tests and benchmarks drive it:
// its exit code and what it printed on stdout (its progress goes to stderr as usual).
import { main as appliance } from '../appliance.ts';

export async function applianceIn(project: string, ...argv: string[]): Promise<{ code: number; out: string }> {
  const cwd = process.cwd();
  const write = process.stdout.write.bind(process.stdout);
  let out = '';
  process.chdir(project);
  process.stdout.write = ((s: string) => {
    out += s;
    return true;
  }) as typeof process.stdout.write;
  try {
    return { code: await appliance(argv), out };
  } finally {
    process.stdout.write = write;
    process.chdir(cwd);
  }
}
