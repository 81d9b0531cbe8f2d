import type { BenchReport } from './report';
import { curves } from './report';

/**
 * The report's curves as one SVG, drawn by Vega-Lite and rendered headless by Vega: latency
 * distributions of ours and the baseline side by side (log scale), and completed jobs per
 * second over time.
 */
export async function renderChart(report: BenchReport): Promise<string> {
  // Both are ES modules; this package is CommonJS.
  const vegaLite = await import('vega-lite');
  const vega = await import('vega');
  const { latency, rate } = curves(report);
  const latencyValues = latency.flatMap((curve) =>
    curve.points.map((point) => ({ ...point, chart: curve.chart, series: curve.series })),
  );
  const rateValues = rate.flatMap((curve) =>
    curve.perSecond.map((jobs, second) => ({
      second,
      jobs,
      chart: curve.chart,
      series: curve.series,
    })),
  );
  const color = {
    field: 'series',
    type: 'nominal',
    title: null,
    scale: {
      domain: ['ours', 'baseline', 'hedged', 'exclusive'],
      range: ['#d9480f', '#495057', '#1c7ed6', '#868e96'],
    },
  };
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `onejob vs the bare engine — ${report.startedAt}`,
    vconcat: [
      {
        data: { values: latencyValues },
        facet: { field: 'chart', type: 'nominal', title: 'latency by percentile', columns: 3 },
        spec: {
          width: 240,
          height: 160,
          mark: { type: 'line', point: true },
          encoding: {
            // Ordinal, so the tail (99, 99.9, 99.99) gets as much room as the middle.
            x: { field: 'percentile', type: 'ordinal', sort: 'ascending', title: 'percentile' },
            y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'ms' },
            color,
          },
        },
        resolve: { scale: { y: 'independent' } },
      },
      {
        data: { values: rateValues },
        width: 760,
        height: 160,
        title: 'whole jobs completed per second (32 clients; each side its turns back to back)',
        mark: 'line',
        encoding: {
          x: { field: 'second', type: 'quantitative', title: 'second of the side’s run' },
          y: { field: 'jobs', type: 'quantitative', title: 'jobs/s' },
          color,
        },
      },
    ],
  };
  const compiled = vegaLite.compile(spec as unknown as Parameters<typeof vegaLite.compile>[0]);
  const view = new vega.View(vega.parse(compiled.spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
