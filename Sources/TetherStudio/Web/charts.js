// Plain SVG charts: no library, nothing from a CDN. Values are numbers from the server; text
// reaches the SVG through textContent only.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgEl(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes || {})) element.setAttribute(key, value);
  return element;
}

// A chart in `container`: a fixed-size SVG whose content is replaced on each draw.
function makeChart(container, label, width, height) {
  const svg = svgEl("svg", { viewBox: "0 0 " + width + " " + height, class: "chart", role: "img", "aria-label": label });
  container.appendChild(svg);
  return { svg: svg, width: width, height: height };
}

// Draws series of [x, y] points: each series is { points, className, label }. Axes span the
// data (with `yMin`/`yMax` to widen them); the left labels show y, the bottom ones x.
function drawLines(chart, series, options) {
  const opts = options || {};
  const pad = { left: 56, right: 8, top: 8, bottom: 20 };
  const all = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));
  chart.svg.replaceChildren();
  if (all.length === 0) {
    const text = svgEl("text", { x: chart.width / 2, y: chart.height / 2, "text-anchor": "middle", class: "chart-empty" });
    text.textContent = opts.empty || "no data yet";
    chart.svg.appendChild(text);
    return;
  }
  let xMin = Math.min(...all.map((p) => p[0])), xMax = Math.max(...all.map((p) => p[0]));
  let yMin = Math.min(opts.yMin ?? Infinity, ...all.map((p) => p[1]));
  let yMax = Math.max(opts.yMax ?? -Infinity, ...all.map((p) => p[1]));
  if (xMax === xMin) { xMax += 1; xMin -= opts.xPadBelow ?? 0; }
  if (yMax === yMin) { yMax += 1; yMin -= 1; }
  const w = chart.width - pad.left - pad.right, h = chart.height - pad.top - pad.bottom;
  const sx = (x) => pad.left + ((x - xMin) / (xMax - xMin)) * w;
  const sy = (y) => pad.top + h - ((y - yMin) / (yMax - yMin)) * h;
  chart.svg.appendChild(svgEl("rect", { x: pad.left, y: pad.top, width: w, height: h, class: "chart-frame" }));
  const format = opts.format || ((v) => (Math.abs(v) >= 10000 ? v.toExponential(1) : String(Math.round(v * 100) / 100)));
  for (const [value, y] of [[yMax, pad.top + 10], [yMin, pad.top + h]]) {
    const text = svgEl("text", { x: pad.left - 4, y: y, "text-anchor": "end", class: "chart-label" });
    text.textContent = format(value);
    chart.svg.appendChild(text);
  }
  const xFormat = opts.xFormat || ((v) => String(Math.round(v * 10) / 10));
  for (const [value, anchor, x] of [[xMin, "start", pad.left], [xMax, "end", pad.left + w]]) {
    const text = svgEl("text", { x: x, y: chart.height - 4, "text-anchor": anchor, class: "chart-label" });
    text.textContent = xFormat(value);
    chart.svg.appendChild(text);
  }
  for (const s of series) {
    const points = s.points.filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));
    if (points.length === 0) continue;
    if (s.dots) {
      for (const p of points) chart.svg.appendChild(svgEl("circle", { cx: sx(p[0]).toFixed(1), cy: sy(p[1]).toFixed(1), r: 3, class: s.className }));
    } else {
      chart.svg.appendChild(svgEl("polyline", {
        points: points.map((p) => sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1)).join(" "),
        class: s.className,
      }));
    }
  }
}

// A legend under a chart: one swatch per series.
function legend(entries) {
  return el("div", { className: "legend" }, ...entries.map(([className, text]) =>
    el("span", {}, el("span", { className: "swatch " + className }), text)));
}
