// The page's charts: ECharts (loaded before the modules as a classic script, the global `echarts`),
// behind a view's ChartSet. A chart is created once with its whole option (axes, legend, zoom,
// tooltip) and then only given new data: update() merges it into the chart's option, so a zoom, a
// legend selection or a brushed axis survives each poll.

// No animation: charts of many thousand trials draw at once, and a snapshot is never half-drawn.
const BASE = { animation: false };

// Zooming on the x axis: the mouse wheel and drag inside the plot, and a slider under it.
export const X_ZOOM = [
  { type: 'inside', xAxisIndex: 0 },
  { type: 'slider', xAxisIndex: 0, height: 18, bottom: 6 },
];

export class ChartSet {
  constructor() {
    this.charts = new Map(); // name -> ECharts instance
  }

  // A chart on `el` with its constant option; `el` must be on the page (it takes its size).
  create(name, el, option) {
    const chart = echarts.init(el, null, { renderer: 'canvas' });
    chart.setOption({ ...BASE, ...option });
    this.charts.set(name, chart);
    return chart;
  }

  // New data for a chart: merged into its option. The components named in `replace` (by default the
  // series) are replaced as given -- series matched by id keep their state, gone ones are dropped --
  // and every other component (dataZoom, legend, visualMap's range) keeps its state.
  update(name, option, replace = ['series']) {
    this.charts.get(name).setOption(option, { replaceMerge: replace });
  }

  resize() {
    for (const chart of this.charts.values()) chart.resize();
  }

  dispose() {
    for (const chart of this.charts.values()) chart.dispose();
    this.charts.clear();
  }
}
