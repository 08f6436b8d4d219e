// one-at-a-time: jobs that must not overlap run one after another, per key: a plugin's status writes (two upserts
// in flight could land in either order), the machine config's changes (the controllers' reconciles are one at a
// time by the runtime). Each job starts once every earlier job of its key has settled, whether it failed or not;
// its result, or its error, is its caller's.
export class OneAtATime<K = string> {
  private readonly tails = new Map<K, Promise<void>>();

  run<T>(key: K, job: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(key) ?? Promise.resolve()).then(job, job);
    const tail = run.then(() => undefined, () => undefined);
    this.tails.set(key, tail);
    // A key whose last job is done is forgotten: keys come and go (extensions, plugins) and must not pile up.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  /** Keys with a job queued or running. */
  get busy(): number { return this.tails.size; }

  /** Settles once every job queued so far has. */
  async settled(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}
