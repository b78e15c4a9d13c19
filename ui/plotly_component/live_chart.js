// A Plotly chart that stays mounted: each update calls Plotly.react on the same element.
//
// Served from this folder by ui/plotly_component/__init__.py and imported by its small inline loader
// (a Streamlit components-v2 module, rendered in the page, not in an iframe). plotly.js comes from the
// local plotly Python package, loaded once per page; nothing is fetched from another host.
//
// Theme: the same as st.plotly_chart's "streamlit" theme in Streamlit 1.67 (its frontend's
// PlotlyChart/CustomTheme): the placeholder colours of plotly's "streamlit" template (#000001 ...)
// replaced by the app theme's, and the theme's fonts, sizes and greys merged into the template's
// layout; a title is drawn bold. The app theme is read from the --st-* properties Streamlit sets
// around every v2 component; the greys, which it does not expose, are Streamlit's palette, light or
// dark after the background's luminance, as its frontend chooses them.

// Streamlit 1.67's palette entries its Plotly theme uses (frontend theme/primitives/colors).
const PALETTE = {
  gray10: "#fafafa",
  gray30: "#e6eaf1",
  gray70: "#808495",
  gray85: "#31333F",
  gray90: "#262730",
  blue40: "#83c9ff",
  blue80: "#0068c9",
  red40: "#ffabab",
  red80: "#ff2b2b",
  green40: "#7defa1",
  blueGreen80: "#29b09d",
};
// Streamlit's spacing (rem) used by the theme: twoXS, sm, xl, twoXL; font sizes twoSm, sm, md.
const REM = { twoXS: 0.25, sm: 0.5, xl: 1.25, twoXL: 1.5, fontTwoSm: 0.75, fontSm: 0.875, fontMd: 1 };
const DEFAULT_HEIGHT = 450; // st.plotly_chart's height when a figure sets none
const MIN_WIDTH = 150; // st.plotly_chart's smallest width

let plotlyLoading = null;

function loadPlotly(src) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (plotlyLoading === null) {
    plotlyLoading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.async = true;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        plotlyLoading = null; // the next update tries again
        script.remove();
        reject(new Error(`plotly.js did not load from ${src}`));
      };
      document.head.appendChild(script);
    });
  }
  return plotlyLoading;
}

function luminance(color) {
  const probe = document.createElement("canvas").getContext("2d");
  probe.fillStyle = color;
  const hex = probe.fillStyle; // normalised to #rrggbb (or rgba(...) with alpha)
  const rgb = hex.startsWith("#")
    ? [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16))
    : hex.match(/[\d.]+/g).slice(0, 3).map(Number);
  const linear = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
}

function readTheme(element) {
  const style = getComputedStyle(element);
  // a custom property's value reads back without spaces after commas ("Source Sans",sans-serif): respaced
  const css = (name) =>
    style
      .getPropertyValue(`--st-${name}`)
      .split(",")
      .map((s) => s.trim())
      .join(", ");
  const list = (name) => css(name).split(",").map((s) => s.trim()).filter(Boolean);
  const bg = css("background-color") || "#ffffff";
  const light = luminance(bg) > 0.5;
  const rootPx = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
  const weight = parseInt(css("base-font-weight"), 10);
  return {
    light,
    bg,
    px: (rem) => rem * rootPx,
    bodyFont: css("font") || '"Source Sans", sans-serif',
    headingFont: css("heading-font") || css("font") || '"Source Sans", sans-serif',
    headingColor: css("heading-color") || css("text-color"),
    bodyText: css("text-color"),
    borderColor: css("border-color"),
    weight: Number.isFinite(weight) ? weight : 400,
    categorical: list("chart-categorical-colors"),
    sequential: list("chart-sequential-colors"),
    diverging: list("chart-diverging-colors"),
    axisText: light ? PALETTE.gray70 : PALETTE.gray30,
    grid: light ? PALETTE.gray30 : PALETTE.gray85,
    legendText: light ? PALETTE.gray90 : PALETTE.gray10,
    increasing: light ? PALETTE.blueGreen80 : PALETTE.green40,
    decreasing: light ? PALETTE.red80 : PALETTE.red40,
    total: light ? PALETTE.blue80 : PALETTE.blue40,
  };
}

// The placeholder colours of plotly's "streamlit" template (streamlit/elements/lib/streamlit_plotly_theme.py).
function placeholders(theme) {
  const out = [];
  const series = (start, colors) =>
    colors.slice(0, 10).forEach((c, i) => out.push([`#0000${String(start + i).padStart(2, "0")}`, c]));
  series(1, theme.categorical);
  series(11, theme.sequential);
  series(21, theme.diverging);
  out.push(
    ["#000032", theme.increasing],
    ["#000033", theme.decreasing],
    ["#000034", theme.total],
    ["#000035", theme.grid],
    ["#000036", theme.axisText],
    ["#000037", theme.legendText],
    ["#000038", theme.bg],
  );
  return out;
}

function merge(into, from) {
  for (const [key, value] of Object.entries(from)) {
    const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
    const target = into[key];
    if (isObject && target !== null && typeof target === "object" && !Array.isArray(target)) merge(target, value);
    else into[key] = isObject ? merge({}, value) : value;
  }
  return into;
}

function themeLayout(t) {
  const axisTitle = { font: { color: t.axisText, size: t.px(REM.fontSm) } };
  const tickfont = { color: t.axisText, size: t.px(REM.fontTwoSm) };
  return {
    font: { color: t.axisText, family: t.bodyFont, size: t.px(REM.fontTwoSm), weight: t.weight },
    title: {
      color: t.headingColor,
      subtitleColor: t.bodyText,
      font: { family: t.headingFont, size: t.px(REM.fontMd), color: t.headingColor },
      pad: { l: t.px(REM.twoXS) },
      xanchor: "left",
      x: 0,
    },
    legend: {
      title: { font: { size: t.px(REM.fontTwoSm), color: t.axisText }, side: "top" },
      valign: "top",
      bordercolor: "transparent",
      borderwidth: 0,
      font: { size: t.px(REM.fontTwoSm), color: t.legendText },
    },
    paper_bgcolor: t.bg,
    plot_bgcolor: t.bg,
    yaxis: {
      ticklabelposition: "outside",
      zerolinecolor: t.grid,
      title: { ...axisTitle, standoff: t.px(REM.twoXL) },
      tickcolor: t.grid,
      tickfont,
      gridcolor: t.grid,
      minor: { gridcolor: t.grid },
      automargin: true,
    },
    xaxis: {
      zerolinecolor: t.grid,
      gridcolor: t.grid,
      showgrid: false,
      tickfont,
      tickcolor: t.grid,
      title: { ...axisTitle, standoff: t.px(REM.xl) },
      minor: { gridcolor: t.grid },
      zeroline: false,
      automargin: true,
      rangeselector: { bgcolor: t.bg, bordercolor: t.grid, borderwidth: 1, x: 0 },
    },
    margin: { pad: t.px(REM.sm), r: 0, l: 0 },
    hoverlabel: {
      bgcolor: t.bg,
      bordercolor: t.borderColor,
      font: { color: t.axisText, family: t.bodyFont, size: t.px(REM.fontTwoSm) },
    },
  };
}

export function themed(spec, theme) {
  let text = JSON.stringify(spec);
  for (const [placeholder, color] of placeholders(theme)) text = text.replaceAll(placeholder, color);
  const figure = JSON.parse(text);
  const layout = (figure.layout ??= {});
  const template = (layout.template ??= {});
  merge((template.layout ??= {}), themeLayout(theme));
  if (layout.title !== undefined && layout.title !== null) {
    const title = typeof layout.title === "string" ? { text: layout.title } : layout.title;
    layout.title = { ...title, text: `<b>${typeof title.text === "string" ? title.text : ""}</b>` };
  }
  const height = layout.height;
  layout.height = Number.isFinite(height) && height >= 10 ? height : DEFAULT_HEIGHT;
  delete layout.width; // stretch: draw() gives the container's width, as st.plotly_chart does
  figure.data ??= [];
  return figure;
}

// Streamlit's chart toolbar without its Fullscreen button (the charts keep only "download as PNG",
// ui/chart_style.py, so that on a phone the bar stays clear of the title): no Plotly logo, no cloud
// export, no lasso or box select without a selection callback.
const CONFIG = {
  displaylogo: false,
  showSendToCloud: false,
  modeBarButtonsToRemove: ["lasso2d", "select2d", "sendChartToCloud"],
};

const charts = new WeakMap(); // parentElement -> the chart's state

function chartFor(parent) {
  let chart = charts.get(parent);
  if (chart === undefined) {
    const node = document.createElement("div");
    node.className = "stLivePlotlyChart";
    node.dataset.testid = "stLivePlotlyChart";
    node.style.width = "100%";
    node.style.minWidth = `${MIN_WIDTH}px`;
    parent.appendChild(node);
    chart = { node, parent, latest: null, shown: null, width: 0, drawing: false, error: null };
    charts.set(parent, chart);
    const resized = new ResizeObserver(() => {
      if (!parent.isConnected) resized.disconnect(); // the element left the page (a closed tab)
      else if (parent.clientWidth > 0 && parent.clientWidth !== chart.width && chart.shown !== null) {
        chart.latest ??= chart.shown; // redrawn at the container's new width (not while hidden)
        draw(chart);
      }
    });
    resized.observe(parent);
  }
  return chart;
}

async function draw(chart) {
  if (chart.drawing || chart.latest === null) return; // a running draw picks up chart.latest when it ends
  chart.drawing = true;
  try {
    const Plotly = await loadPlotly(chart.plotly);
    while (chart.latest !== null) {
      const figure = chart.latest;
      chart.latest = null;
      chart.shown = figure;
      chart.width = Math.max(chart.parent.clientWidth, MIN_WIDTH);
      await Plotly.react(chart.node, figure.data, { ...figure.layout, width: chart.width }, CONFIG);
    }
    chart.error?.remove();
    chart.error = null;
  } catch (error) {
    console.error(error);
    if (chart.error === null) {
      chart.error = document.createElement("div");
      chart.error.setAttribute("role", "alert");
      chart.node.before(chart.error);
    }
    chart.error.textContent = chart.failed;
  } finally {
    chart.drawing = false;
  }
}

export default function ({ data, parentElement }) {
  const chart = chartFor(parentElement);
  Object.assign(chart, { plotly: data.plotly, failed: data.failed });
  chart.latest = themed(JSON.parse(data.spec), readTheme(parentElement));
  draw(chart);
}
