import * as hdr from 'hdr-histogram-js';

/** Latencies in an HDR histogram, recorded in microseconds (1 µs to an hour, 3 digits). */
export class Latencies {
  private readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });

  recordMs(ms: number): void {
    this.histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  get count(): number {
    return this.histogram.totalCount;
  }

  /** The latency at percentile p (0–100), in milliseconds. */
  ms(p: number): number {
    return this.count === 0 ? Number.NaN : this.histogram.getValueAtPercentile(p) / 1000;
  }

  /** Points of the cumulative distribution, for the chart: [percentile, ms]. */
  cdf(): Array<{ percentile: number; ms: number }> {
    const points = [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 98, 99, 99.5, 99.9, 99.99];
    return this.count === 0
      ? []
      : points.map((percentile) => ({ percentile, ms: this.ms(percentile) }));
  }
}

/** Wall-clock completions bucketed per second since a start: jobs/s over time. */
export class CompletionsPerSecond {
  private readonly buckets: number[] = [];
  constructor(private readonly startedAt = Date.now()) {}

  record(at = Date.now()): void {
    const second = Math.floor((at - this.startedAt) / 1000);
    while (this.buckets.length <= second) this.buckets.push(0);
    this.buckets[second]! += 1;
  }

  series(): number[] {
    return [...this.buckets];
  }
}
