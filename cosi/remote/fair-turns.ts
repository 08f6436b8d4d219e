// fair-turns: turns for work that arrives in floods, taken one at a time, round-robin over the connections that
// ask, each in an event-loop turn of its own. One reader opening 3000 watches at once had the engine write their
// bootstraps back to back for seconds while another client's List waited (1.2 s); with turns, I/O runs between
// any two, and a second connection's watch waits for one of the flood's, not for all of them.
export class FairTurns<K> {
  private readonly waiting = new Map<K, (() => void)[]>();
  private busy = false;

  /** Waits for a turn for `key`'s work; call the release it resolves with when the work is done. */
  take(key: K): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          // The next turn in a later event-loop turn: what waits on sockets is read first.
          setImmediate(() => this.next());
        });
      };
      const queue = this.waiting.get(key);
      if (queue) queue.push(grant);
      else this.waiting.set(key, [grant]);
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => this.next());
      }
    });
  }

  /** Grants the turn of the connection that has waited longest since its last (a Map keeps insertion order). */
  private next(): void {
    const first = this.waiting.entries().next();
    if (first.done) {
      this.busy = false;
      return;
    }
    const [key, queue] = first.value;
    const grant = queue.shift()!;
    this.waiting.delete(key);
    if (queue.length) this.waiting.set(key, queue); // to the back of the line
    grant();
  }
}
