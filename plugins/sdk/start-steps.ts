// start-steps: how long each step of a plugin process's start took, from Node's start of its per-process setup
// (msSinceStart; the executable's loading before it is not counted): said once with the plugin's ready line, so a
// slow start names its step.
import { msSinceStart } from '../../cosi/monotonic.ts';

export class StartSteps {
  private readonly steps: [string, number][] = [];
  private last = 0;

  /** The step `name` ends now: it took the time since the step before (the first, since the process started). */
  mark(name: string): void {
    const now = msSinceStart();
    this.steps.push([name, now - this.last]);
    this.last = now;
  }

  /** "node 310 ms, code 42 ms, ..." */
  toString(): string {
    return this.steps.map(([n, ms]) => `${n} ${Math.round(ms)} ms`).join(', ');
  }
}
