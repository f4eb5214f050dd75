// What the run page's JavaScript (run_page.js, run_charts.js) meets beside the records: uPlot, the chart
// library vendored in vendor/ (its own types are a module; the page loads it as a script, a global).
// Written by hand; the records are in contract.d.ts.

/** A drawn uPlot chart: the page removes it, maps between values and CSS pixels of its plotting area, and
 * lays its crosshair and readout over `over` (the element above the plotting area). */
interface UPlot {
  destroy(): void;
  over: HTMLElement;
  posToVal(px: number, scale: string): number;
  valToPos(value: number, scale: string): number;
}

/** uPlot 1.6 (vendor/uPlot.iife.min.js): the page uses its constructor, the chart above and paths.bars. */
declare const uPlot: {
  new (opts: object, data: (number | null)[][], target: HTMLElement): UPlot;
  paths: {bars(opts: {size: [number, number]; align: number}): unknown};
};
