// histogram: a Prometheus-style histogram (cumulative buckets, sum, count), and a set of them by label
// value: the API's request latency, controllers' reconcile durations. Bucket bounds in seconds.
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[] = LATENCY_BUCKETS) { this.counts = bounds.map(() => 0); }

  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) if (seconds <= this.bounds[i]!) this.counts[i]!++;
  }
}

/** Histograms by a label value (an RPC), made when first observed. */
export class HistogramSet {
  readonly byLabel = new Map<string, Histogram>();
  observe(label: string, seconds: number): void {
    let h = this.byLabel.get(label);
    if (!h) {
      h = new Histogram();
      this.byLabel.set(label, h);
    }
    h.observe(seconds);
  }
}
