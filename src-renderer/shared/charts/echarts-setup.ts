import { BarChart, LineChart, PieChart } from 'echarts/charts';
import { AriaComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { use } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

/**
 * Only the parts of ECharts the console draws with, on canvas: no eval, no
 * SVG strings, so the charts run under the console's CSP. Imported by every
 * chart wrapper; registering twice is harmless.
 */
use([CanvasRenderer, BarChart, LineChart, PieChart, GridComponent, TooltipComponent, LegendComponent, AriaComponent]);

/** The console's chart colours, the primary blue first. */
export const CHART_COLORS = ['#2f6feb', '#16a34a', '#f59e0b', '#db2777', '#7c3aed', '#0891b2', '#ea580c', '#64748b'];

const TEXT = { color: '#4b5563', fontSize: 12 };

/** What every chart shares: palette, font, accessible description, no animation on reload churn. */
export const baseOption = {
  color: CHART_COLORS,
  textStyle: { fontFamily: 'inherit', ...TEXT },
  aria: { enabled: true },
  animationDuration: 400,
};

/** 2026-11-21 → "Nov 21", read as a UTC day (the server counts per UTC day). */
export function shortDay(isoDate: string): string {
  return new Date(`${isoDate}T00:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

export interface ChartItem {
  label: string;
  value: number;
  /** A colour that means this item wherever it appears (a status), instead of the next in the palette. */
  color?: string;
}

export interface ChartSeries {
  name: string;
  values: number[];
}
