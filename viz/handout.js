// The handout's own switching (viz/handout.py): runs in the browser on the page's DATA and LABELS.
let drawnKind = null;  // the kind whose axes the map has now
const state = {kind: DATA.start.kind || DATA.order[DATA.order.length - 1], layer: DATA.start.layer,
  head: DATA.start.head};
const layerName = (l) => LABELS.layer_n.replace("{n}", l + 1);  // "layer 2", "第 2 层"
const headName = (h) => (h === "mean" ? LABELS.mean : LABELS.head_n.replace("{n}", h + 1));
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
function matrix(kind, layer, head) {
  const heads = DATA.kinds[kind].weights[layer];
  if (head !== "mean") return heads[head];
  return heads[0].map((row, i) => row.map((_, j) => heads.reduce((s, h) => s + h[i][j], 0) / heads.length));
}
// The colour scale as 256 fill styles, looked up per cell (a switch paints several hundred cells).
const COLOURS = [...Array(256).keys()].map((n) => {
  const scale = DATA.colorscale, v = n / 255;
  for (let k = 1; k < scale.length; k++) {
    if (v <= scale[k][0]) {
      const [p0, c0] = scale[k - 1], [p1, c1] = scale[k], t = (v - p0) / (p1 - p0);
      const a = c0.match(/\d+/g).map(Number), b = c1.match(/\d+/g).map(Number);
      return `rgb(${a.map((x, i) => Math.round(x + t * (b[i] - x))).join(",")})`;
    }
  }
  return scale[scale.length - 1][1];
});
const rgb = (value) => COLOURS[Math.round(255 * Math.min(1, Math.max(0, value)))];
// A cell's text in black or white, whichever reads on its colour (Plotly's rule for heatmap text).
const inkOn = (fill) => {
  if (fill === DATA.masked_color) return "#262730";  // a light grey
  const [r, g, b] = fill.match(/\d+/g).map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? "#262730" : "white";
};
const showsValues = (n, m) => Math.max(n, m) <= 14;  // cell values and the masked cells' x, as the app (above 14: too small)
// What is painted now: the map's weights, which cells are masked and its kind, for the cells and the hover.
let painted = null;
function figure(k, shown, masked, title) {
  // The whole figure of a kind's map, drawn by Plotly when the kind changes: title, axes, labels, colour bar. The
  // cells themselves are painted on the canvas over its plot area (paint): a head switch repaints that canvas,
  // a few milliseconds, where Plotly.restyle lays out both axes' labels again (60-70 ms on a 20-word sentence on
  // a two-core machine). The trace still holds the shown map, so Plotly's own PNG download and any redraw agree.
  const n = shown.length, m = shown[0].length;
  const x = [...Array(m).keys()], y = [...Array(n).keys()];
  const queries = k.queries.map(esc);
  // Plotly's own cells (under the canvas) are kept for its PNG download and any redraw: the cell values, the grey
  // masked cells with their x, the white borders. Its hover is off: the page's own (hover) reads the painted map.
  const values = showsValues(n, m);
  const traces = [{type: "heatmap", z: shown, x, y, colorscale: DATA.colorscale, zmin: 0, zmax: 1,
    texttemplate: values ? "%{z:.2f}" : "", textfont: {size: DATA.font_size - 2},
    colorbar: {title: {text: LABELS.weight}, thickness: 12}, hoverinfo: "none"}];
  if (k.masked && values) {
    const grey = shown.map((row, i) => row.map((_, j) => (masked(i, j) ? 1 : null)));
    traces.push({type: "heatmap", z: grey, x, y, showscale: false, hoverinfo: "none",
      colorscale: [[0, DATA.masked_color], [1, DATA.masked_color]], text: grey.map((r) => r.map((v) => (v ? "×" : ""))),
      texttemplate: "%{text}"});
  }
  const borders = [...Array(m + 1).keys()].map((j) => `M${j - 0.5},-0.5V${n - 0.5}`).join("") +
    [...Array(n + 1).keys()].map((i) => `M-0.5,${i - 0.5}H${m - 0.5}`).join("");
  const size = k.layout;  // angle, room above, height: viz.handout.map_layout, which the app sizes this frame by
  const layout = {
    // The title at the top, the key axis's name and labels below it (together they ran into each other).
    title: {text: esc(title), x: 0,
      xanchor: "left", y: 1, yref: "container", yanchor: "top", pad: {t: 6}},
    // The labels written (every k-th where 33 columns would lie on one another; hover names each), their angle
    // and size: map_layout's, as the app's own maps.
    xaxis: {title: {text: esc(k.key_axis)}, side: "top", tickmode: "array", tickvals: x,
      ticktext: size.ticks.map(esc), tickangle: size.angle, tickfont: {size: size.tick_px}, automargin: true,
      showgrid: false, zeroline: false},
    // The query axis's name under the map, upright (turned on its side it ran off a short map, and Chinese
    // turned on its side is read with a tilted head), as in the app.
    annotations: [{text: `↓ ${esc(k.query_axis)}`, xref: "paper", yref: "paper", x: 0, y: 0, xanchor: "left",
      yanchor: "top", yshift: -4, showarrow: false}],
    yaxis: {tickmode: "array", tickvals: y, ticktext: queries,
      autorange: "reversed", automargin: true, showgrid: false, zeroline: false},
    margin: {l: 10, r: 10, b: 34, t: size.top},
    height: size.height,
    shapes: [{type: "path", path: borders, layer: "above", line: {color: "white", width: 1}}],
    plot_bgcolor: k.masked && !values ? DATA.masked_color : "white",
    font: {family: getComputedStyle(document.body).fontFamily, size: DATA.font_size},
  };
  return {traces, layout};
}
function paint() {
  // The painted map's cells on the canvas over Plotly's plot area, where the axes put them (also after a zoom):
  // each cell its colour, white borders between cells, masked cells grey (with an x where values are shown).
  const gd = document.getElementById("map"), canvas = document.getElementById("cells");
  const full = gd._fullLayout;
  if (!painted || !full || !full.xaxis) return;
  const {l, t, w, h} = full._size, ratio = window.devicePixelRatio || 1;
  Object.assign(canvas.style, {left: `${l}px`, top: `${t}px`, width: `${w}px`, height: `${h}px`});
  if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
    canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio);
  }
  const g = canvas.getContext("2d");
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  const {z, masked} = painted, n = z.length, m = z[0].length, values = showsValues(n, m);
  const xa = full.xaxis, ya = full.yaxis;
  const xs = [...Array(m + 1).keys()].map((j) => xa.l2p(j - 0.5));
  const ys = [...Array(n + 1).keys()].map((i) => ya.l2p(i - 0.5));
  g.font = `${DATA.font_size - 2}px ${getComputedStyle(document.body).fontFamily}`;
  g.textAlign = "center"; g.textBaseline = "middle";
  for (let i = 0; i < n; i++) {
    const top = Math.min(ys[i], ys[i + 1]), height = Math.abs(ys[i + 1] - ys[i]);
    for (let j = 0; j < m; j++) {
      const left = Math.min(xs[j], xs[j + 1]), width = Math.abs(xs[j + 1] - xs[j]);
      const fill = masked(i, j) ? DATA.masked_color : rgb(z[i][j]);
      g.fillStyle = fill;
      g.fillRect(left, top, width, height);
      if (values) {
        g.fillStyle = inkOn(fill);
        g.fillText(masked(i, j) ? "×" : z[i][j].toFixed(2), left + width / 2, top + height / 2);
      }
    }
  }
  g.strokeStyle = "white"; g.lineWidth = 1;
  g.beginPath();
  xs.forEach((x) => { g.moveTo(x, 0); g.lineTo(x, h); });
  ys.forEach((y) => { g.moveTo(0, y); g.lineTo(w, y); });
  g.stroke();
}
function hover(event) {
  // Plotly's hover event names the cell; the label is the page's own, from the painted map (Plotly's would show
  // the map it drew last). Text, never HTML: a piece is the user's text.
  const label = document.getElementById("hover"), point = event.points[0];
  if (!painted || !point) return;
  const [i, j] = point.pointNumber, k = painted.kind;
  label.textContent = painted.masked(i, j)
    ? `${k.queries[i]} → ${k.keys[j]}\n${LABELS.masked}`
    : `${k.query_axis}: ${i} ${k.queries[i]}\n${k.key_axis}: ${j} ${k.keys[j]}\n` +
      `${LABELS.weight}: ${painted.z[i][j].toFixed(4)}`;
  const box = document.getElementById("mapbox").getBoundingClientRect();
  label.style.left = `${event.event.clientX - box.left + 12}px`;
  label.style.top = `${event.event.clientY - box.top + 12}px`;
  label.hidden = false;
}
function draw() {
  const started = performance.now();
  const k = DATA.kinds[state.kind], z = matrix(state.kind, state.layer, state.head);
  const title = `${k.name} · ${layerName(state.layer)} · ${headName(state.head)}`;
  const masked = (i, j) => k.masked && j > i;
  const shown = z.map((row, i) => row.map((v, j) => (masked(i, j) ? null : v)));
  painted = {z, masked, kind: k};
  const gd = document.getElementById("map");
  if (drawnKind === state.kind) {
    // The same kind: the same axes, so only the cells and the title change. The map and the title are written
    // into the figure (a later redraw or Plotly's PNG keeps them) and the title into its text, not relaid out.
    gd.data[0].z = shown;
    gd.layout.title.text = esc(title);
    document.querySelector("#map .gtitle").textContent = title;
    paint();
  } else {
    const {traces, layout} = figure(k, shown, masked, title);
    // Four buttons, not Plotly's eight: on hover the full bar lay over the end of a long title ("… · mea").
    const config = {displaylogo: false, responsive: true,
      modeBarButtons: [["toImage", "zoom2d", "pan2d", "resetScale2d"]]};
    Plotly.react("map", traces, layout, config);  // then paint (plotly_afterplot)
    if (drawnKind === null) {
      gd.on("plotly_afterplot", paint);
      gd.on("plotly_hover", hover);
      gd.on("plotly_unhover", () => { document.getElementById("hover").hidden = true; });
    }
    drawnKind = state.kind;
    paint();
  }
  document.querySelectorAll("button.kind").forEach((b) => b.classList.toggle("on", b.dataset.kind === state.kind));
  document.getElementById("layer").value = String(state.layer);
  document.getElementById("head").value = String(state.head);
  document.querySelectorAll("#grid canvas").forEach((c) =>
    c.classList.toggle("on", c.dataset.layer == state.layer && c.dataset.head == String(state.head)));
  window.lastDrawMs = performance.now() - started;  // what a switch cost, read by the tests
  const head = state.head === "mean" ? "mean" : String(state.head + 1);
  if (DATA.embedded) {
    // Inside the app: the chosen layer and head go into the app's link, which the server reads at its next run
    // (another view, another sentence) instead of being told at every switch.
    writeLink(head);
  } else {
    history.replaceState(null, "", `#${state.kind}.${state.layer + 1}.${head}`);
  }
}
function writeLink(head) {
  // The app's link with this layer and head, in the app's address bar (the app cleared its own copy of the query
  // string, so its next run sends this one).
  const params = new URLSearchParams({...DATA.link, layer: String(state.layer + 1), head});
  try {
    const parent = window.parent;
    if (parent.location.search !== `?${params}`) {
      parent.history.replaceState(parent.history.state, "", `${parent.location.pathname}?${params}`);
    }
  } catch (error) {}  // a page that cannot reach its parent still switches
}
if (DATA.embedded) {
  // The app clears its copy of the link as its run ends, which may come after this page's first write: again,
  // for as long as a run on a busy server may take to end (on two cores beside a training run, the last write at
  // 2.5 s came before the run's end and left the page without a link). writeLink writes only what differs.
  for (const wait of [300, 1000, 2500, 5000, 10000, 20000]) {
    setTimeout(() => writeLink(state.head === "mean" ? "mean" : String(state.head + 1)), wait);
  }
}
if (DATA.embedded) {
  // The app gives this frame a height estimated from the sentence's length; in presentation mode's larger text
  // the grid's last row of thumbnails fell 33-69 px below it (to be scrolled to inside the frame). The frame
  // takes the page's own height whenever the page's layout changes (the app's page is this page's origin), and
  // so does the box Streamlit holds it in: a taller frame in the estimate's box ran 69 px over the caption below.
  const fitFrame = () => {
    try {
      const frame = window.frameElement, height = Math.ceil(document.body.getBoundingClientRect().height) + 4;
      if (frame && height > 0 && Math.abs(frame.getBoundingClientRect().height - height) > 1) {
        frame.style.height = `${height}px`;
        const box = frame.closest("[data-testid='stElementContainer']");
        if (box) box.style.height = `${height}px`;
      }
    } catch (error) {}  // a page that cannot reach its frame keeps the app's estimate
  };
  new ResizeObserver(fitFrame).observe(document.body);
}
function sizeThumbnails() {
  // Thumbnails as large as fit the page's width (the app's main column is 564 px at 1024 with the sidebar open),
  // again whenever the width changes: opened beside presentation mode's map, the sidebar narrowed the frame and
  // the grid's mean column ran off behind a scroll bar.
  const heads = DATA.kinds[state.kind].weights[0].length, grid = document.getElementById("grid");
  const size = Math.max(24, Math.min(56, Math.floor((document.body.clientWidth - 64) / (heads + 1)) - 8));
  grid.style.gridTemplateColumns = `max-content repeat(${heads + 1}, ${size + 4}px)`;
  grid.style.setProperty("--thumb", `${size}px`);
}
let thumbnailWidth = null;
window.addEventListener("resize", () => {
  if (document.body.clientWidth !== thumbnailWidth) { thumbnailWidth = document.body.clientWidth; sizeThumbnails(); }
});
function thumbnails() {
  const k = DATA.kinds[state.kind], layers = k.weights.length, heads = k.weights[0].length;
  const grid = document.getElementById("grid");
  grid.innerHTML = "";
  sizeThumbnails();
  thumbnailWidth = document.body.clientWidth;
  // The corner names the columns (head), each column its number, the last the mean: a header such as
  // "第 1 个头" broke over two lines in a thumbnail's width.
  const corner = document.createElement("span");
  corner.textContent = LABELS.head;
  grid.appendChild(corner);
  for (let h = 0; h <= heads; h++) {
    const s = document.createElement("span");
    s.textContent = h < heads ? String(h + 1) : LABELS.mean_short;
    s.title = headName(h < heads ? h : "mean");
    grid.appendChild(s);
  }
  for (let l = 0; l < layers; l++) {
    const s = document.createElement("span");
    s.textContent = layerName(l);
    grid.appendChild(s);
    for (let h = 0; h <= heads; h++) {
      const head = h < heads ? h : "mean", z = matrix(state.kind, l, head);
      const c = document.createElement("canvas");
      c.width = z[0].length; c.height = z.length; c.dataset.layer = l; c.dataset.head = String(head);
      c.title = `${layerName(l)} · ${headName(head)}`;
      const g = c.getContext("2d");
      z.forEach((row, i) => row.forEach((v, j) => {
        g.fillStyle = k.masked && j > i ? DATA.masked_color : rgb(v);
        g.fillRect(j, i, 1, 1);
      }));
      c.addEventListener("click", () => { state.layer = l; state.head = head; draw(); revealMap(); });
      grid.appendChild(c);
    }
  }
}
function revealMap() {
  // At 1024x768 a long sentence's map and grid do not fit one screen: a click on a thumbnail of the last layers,
  // scrolled down to, opened a map above the screen. The controls and the map's top are brought back into view
  // (in the app, the app's page scrolls: the frame is as tall as this page), unless they are on screen already.
  const controls = document.getElementById("controls");
  let top = controls.getBoundingClientRect().top;
  try { if (window.frameElement) top += window.frameElement.getBoundingClientRect().top; } catch (error) {}
  if (top < 0) controls.scrollIntoView({block: "start", behavior: "smooth"});
}
function choose(kind) {
  state.kind = kind;
  const k = DATA.kinds[kind];
  state.layer = Math.min(state.layer, k.weights.length - 1);
  const layer = document.getElementById("layer"), head = document.getElementById("head");
  layer.innerHTML = k.weights.map((_, l) => `<option value="${l}">${l + 1}</option>`).join("");
  head.innerHTML = `<option value="mean">${esc(LABELS.mean)}</option>` +
    k.weights[0].map((_, h) => `<option value="${h}">${h + 1}</option>`).join("");
  thumbnails();
  draw();
}
document.querySelectorAll("button.kind").forEach((b) => b.addEventListener("click", () => choose(b.dataset.kind)));
document.getElementById("layer").addEventListener("change", (ev) => { state.layer = Number(ev.target.value); draw(); });
document.getElementById("head").addEventListener("change", (ev) => {
  state.head = ev.target.value === "mean" ? "mean" : Number(ev.target.value); draw(); });
function openFirstMap() {
  const linked = DATA.embedded ? [] : location.hash.slice(1).split(".");
  if (DATA.kinds[linked[0]]) {
    state.layer = Math.max(0, Number(linked[1] || 1) - 1);
    state.head = linked[2] && linked[2] !== "mean" ? Number(linked[2]) - 1 : "mean";
    choose(linked[0]);
  } else choose(state.kind);
}
// Plotly measures the labels when it lays the axes out: laid out in a fallback font before the page's Chinese
// font had loaded, the longest row labels lost their first character (and a later Plotly.react with the same
// layout keeps the old margins). document.fonts.ready does not wait for a face no text has asked for yet, so every
// declared face is loaded first (a data: URL in the handout, the app's served subset inside the app), then drawn.
Promise.allSettled([...document.fonts].map((face) => face.load())).then(openFirstMap);
