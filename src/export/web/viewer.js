// The page of `ant export --format web`: runs the exported tree (window.ANT_MODEL,
// from model.js) on one sample and redraws it. The evaluator computes what
// `ant predict` computes, in float64; tests/web checks it against `ant predict`.
"use strict";

// ---- The evaluator: tensors are {shape, data} with data a Float64Array, row-major.

function conv(L, x) {
  const [, h, w] = x.shape;
  const { c_in: ci, c_out: co, k, pad } = L;
  const ho = h + 2 * pad - k + 1, wo = w + 2 * pad - k + 1;
  const out = new Float64Array(co * ho * wo);
  for (let o = 0; o < co; o++) {
    const base = o * ho * wo;
    out.fill(L.b.length ? L.b[o] : 0, base, base + ho * wo);
    for (let c = 0; c < ci; c++) {
      for (let ky = 0; ky < k; ky++) {
        for (let kx = 0; kx < k; kx++) {
          const wv = L.w[((o * ci + c) * k + ky) * k + kx];
          for (let oy = 0; oy < ho; oy++) {
            const iy = oy + ky - pad;
            if (iy < 0 || iy >= h) continue;
            const src = c * h * w + iy * w, dst = base + oy * wo;
            for (let ox = 0; ox < wo; ox++) {
              const ix = ox + kx - pad;
              if (ix >= 0 && ix < w) out[dst + ox] += wv * x.data[src + ix];
            }
          }
        }
      }
    }
  }
  return { shape: [co, ho, wo], data: out };
}

function linear(L, x) {
  const { d_in: di, d_out: dout } = L;
  const out = new Float64Array(dout);
  for (let j = 0; j < dout; j++) out[j] = L.b.length ? L.b[j] : 0;
  for (let i = 0; i < di; i++) {
    const xi = x.data[i];
    if (xi === 0) continue;
    const row = i * dout;
    for (let j = 0; j < dout; j++) out[j] += xi * L.w[row + j];
  }
  return { shape: [dout], data: out };
}

function maxPool2(x) {
  const [c, h, w] = x.shape;
  const ho = Math.floor(h / 2), wo = Math.floor(w / 2);
  const out = new Float64Array(c * ho * wo);
  for (let ch = 0; ch < c; ch++)
    for (let y = 0; y < ho; y++)
      for (let xx = 0; xx < wo; xx++) {
        const at = (dy, dx) => x.data[ch * h * w + (2 * y + dy) * w + 2 * xx + dx];
        out[(ch * ho + y) * wo + xx] = Math.max(at(0, 0), at(0, 1), at(1, 0), at(1, 1));
      }
  return { shape: [c, ho, wo], data: out };
}

function gap(x) {
  const [c, h, w] = x.shape;
  const out = new Float64Array(c);
  for (let ch = 0; ch < c; ch++) {
    let s = 0;
    for (let i = 0; i < h * w; i++) s += x.data[ch * h * w + i];
    out[ch] = s / (h * w);
  }
  return { shape: [c], data: out };
}

function layer(L, x) {
  switch (L.op) {
    case "conv": return conv(L, x);
    case "linear": return linear(L, x);
    case "relu": return { shape: x.shape, data: x.data.map((v) => Math.max(v, 0)) };
    case "tanh": return { shape: x.shape, data: x.data.map(Math.tanh) };
    case "max_pool2": return maxPool2(x);
    case "gap": return gap(x);
    case "flatten": return { shape: [x.data.length], data: x.data };
    default: throw new Error("unknown layer " + L.op);
  }
}

const block = (b, x) => b.layers.reduce((h, L) => layer(L, h), x);

function softmax(v) {
  const m = Math.max(...v);
  const e = v.map((z) => Math.exp(z - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((z) => z / s);
}

function normalise(model, raw) {
  const { x_mean: mean, x_std: std } = model.normalisation;
  const shape = model.input_shape;
  const per = shape.length === 3 ? shape[1] * shape[2] : 1;
  const data = Float64Array.from(raw, (v, i) => {
    const c = shape.length === 3 ? Math.floor(i / per) : i;
    return (v - mean[c]) / std[c];
  });
  return { shape: shape.slice(), data };
}

// One sample: the multi-path prediction (every leaf weighted by its reach), the greedy
// path's leaf and prediction, every node's reach and every router's P(left).
function evaluate(model, raw) {
  const n = model.nodes.length;
  const reach = new Float64Array(n), greedy = new Uint8Array(n);
  const pLeft = {}, leafPrediction = {};
  const regression = model.task.kind === "regression";
  const visit = (i, x, r, g) => {
    const node = model.nodes[i];
    const h = node.edge.reduce((h, b) => block(b, h), x);
    reach[i] = r;
    greedy[i] = g;
    if (node.router) {
      const z = block(node.router, h).data[0];
      const p = 1 / (1 + Math.exp(-z));
      pLeft[i] = p;
      const [l, rt] = node.children;
      visit(l, h, r * p, g && z >= 0 ? 1 : 0);
      visit(rt, h, r * (1 - p), g && !(z >= 0) ? 1 : 0);
    } else {
      const out = Array.from(block(node.solver, h).data);
      leafPrediction[i] = regression ? out : softmax(out);
    }
  };
  visit(0, normalise(model, raw), 1, 1);
  const leaves = Object.keys(leafPrediction).map(Number);
  const k = leafPrediction[leaves[0]].length;
  let multi = new Array(k).fill(0);
  for (const l of leaves) multi = multi.map((v, j) => v + reach[l] * leafPrediction[l][j]);
  const singleLeaf = leaves.find((l) => greedy[l] === 1);
  let single = leafPrediction[singleLeaf].slice();
  if (regression) {
    const { y_mean: m, y_std: s } = model.normalisation;
    const restore = (v) => v.map((y, j) => y * s[j] + m[j]);
    multi = restore(multi);
    single = restore(single);
    for (const l of leaves) leafPrediction[l] = restore(leafPrediction[l]);
  }
  return { multi, single, singleLeaf, reach, greedy, pLeft, leafPrediction };
}

// ---- Inputs: a drawn digit, as MNIST's are made (the ink's box scaled to fit 20x20,
// its centre of mass put at the centre of 28x28), or a form of feature values.

function mnistLike(pad) {
  const W = pad.width, H = pad.height;
  const src = pad.getContext("2d").getImageData(0, 0, W, H).data;
  let x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++)
      if (src[(y * W + x) * 4] > 0) {
        x0 = Math.min(x0, x); x1 = Math.max(x1, x);
        y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      }
  const out = new Float64Array(28 * 28);
  if (x1 < 0) return out;
  const bw = x1 - x0 + 1, bh = y1 - y0 + 1, s = 20 / Math.max(bw, bh);
  const sw = Math.max(1, Math.round(bw * s)), sh = Math.max(1, Math.round(bh * s));
  const tmp = document.createElement("canvas");
  tmp.width = sw; tmp.height = sh;
  const tc = tmp.getContext("2d");
  tc.imageSmoothingEnabled = true;
  tc.imageSmoothingQuality = "high";
  tc.drawImage(pad, x0, y0, bw, bh, 0, 0, sw, sh);
  const small = tc.getImageData(0, 0, sw, sh).data;
  let m = 0, cx = 0, cy = 0;
  for (let y = 0; y < sh; y++)
    for (let x = 0; x < sw; x++) {
      const v = small[(y * sw + x) * 4] / 255;
      m += v; cx += v * x; cy += v * y;
    }
  const ox = Math.round(13.5 - cx / m), oy = Math.round(13.5 - cy / m);
  for (let y = 0; y < sh; y++)
    for (let x = 0; x < sw; x++) {
      const tx = x + ox, ty = y + oy;
      if (tx >= 0 && tx < 28 && ty >= 0 && ty < 28)
        out[ty * 28 + tx] = small[(y * sw + x) * 4] / 255;
    }
  return out;
}

// An image of `c` planes (1: grey, 3: red, green, blue) of `h` x `w` values in 0..1,
// drawn at its own size on `canvas`.
function showImage(canvas, x, [c, h, w]) {
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(w, h);
  const byte = (v) => Math.round(255 * Math.min(1, Math.max(0, v)));
  for (let i = 0; i < h * w; i++) {
    const [r, g, b] = c === 3 ? [x[i], x[h * w + i], x[2 * h * w + i]] : [x[i], x[i], x[i]];
    img.data.set([byte(r), byte(g), byte(b), 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
}

function showGray(canvas, x, side) {
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(side, side);
  for (let i = 0; i < side * side; i++) {
    const v = Math.round(255 * Math.min(1, Math.max(0, x[i])));
    img.data.set([v, v, v, 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
}

// ---- The tree: `ant plot`'s layout, redrawn for each sample.

const SVG = "http://www.w3.org/2000/svg";

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function describe(model, v) {
  if (model.task.kind === "regression") return v.map((y) => y.toFixed(3)).join(", ");
  const c = v.indexOf(Math.max(...v));
  return `${model.class_names[c]} (${v[c].toFixed(3)})`;
}

function drawTree(model, res) {
  const svg = document.getElementById("tree");
  const L = model.layout, f = L.font;
  svg.setAttribute("width", L.width);
  svg.setAttribute("height", L.height);
  svg.setAttribute("viewBox", `0 0 ${L.width} ${L.height}`);
  svg.replaceChildren();
  const box = (i) => L.boxes[i];
  const parents = {};
  model.nodes.forEach((n, i) => n.children && n.children.forEach((c) => (parents[c] = i)));
  model.nodes.forEach((n, i) => {
    const [x, y] = [box(i)[0], box(i)[1]];
    const from = i === 0 ? L.input : [box(parents[i])[0], box(parents[i])[1] + box(parents[i])[3]];
    el("line", {
      class: "edge" + (res.greedy[i] ? " greedy" : ""), x1: from[0], y1: from[1], x2: x, y2: y,
      "stroke-width": (1 + 16 * res.reach[i]).toFixed(2), "data-node": i,
    }, svg);
  });
  model.nodes.forEach((n, i) => {
    const [x, y, w, h] = box(i);
    const g = el("g", {
      class: "node " + (n.router ? "router" : "leaf") + (res.greedy[i] ? " greedy" : ""),
      "data-node": i, "data-reach": res.reach[i],
    }, svg);
    el("rect", { x: x - w / 2, y, width: w, height: h, rx: 6 }, g);
    const lines = [`${n.router ? "router" : "leaf"} ${i}`];
    if (n.router) {
      g.setAttribute("data-p-left", res.pLeft[i]);
      lines.push(`P(left) ${res.pLeft[i].toFixed(3)}`);
    } else {
      g.setAttribute("data-prediction", JSON.stringify(res.leafPrediction[i]));
      lines.push("→ " + describe(model, res.leafPrediction[i]));
    }
    lines.push(`reach ${res.reach[i].toFixed(3)}`);
    lines.forEach((t, j) => {
      const text = el("text", {
        x, y: y + f * (1.2 + 1.2 * j), "text-anchor": "middle", "font-size": f,
      }, g);
      text.textContent = t;
    });
  });
}

function showAnswers(model, res) {
  const set = (id, text, attrs) => {
    const e = document.getElementById(id);
    e.textContent = text;
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  };
  set("multi", describe(model, res.multi), { "data-value": JSON.stringify(res.multi) });
  set("single", describe(model, res.single), { "data-value": JSON.stringify(res.single) });
  set("single-leaf", `(leaf ${res.singleLeaf})`, { "data-leaf": res.singleLeaf });
}

// ---- The page.

function run(model, input) {
  const res = evaluate(model, input);
  window.antState = { input: Array.from(input), result: res };
  drawTree(model, res);
  showAnswers(model, res);
  document.body.setAttribute("data-updates", 1 + Number(document.body.dataset.updates || 0));
}

function drawingInput(model) {
  const pad = document.getElementById("pad"), seen = document.getElementById("seen");
  const ctx = pad.getContext("2d");
  const clear = () => {
    ctx.fillStyle = "#000";
    ctx.fillRect(0, 0, pad.width, pad.height);
  };
  const update = () => {
    const x = mnistLike(pad);
    showGray(seen, x, 28);
    run(model, x);
  };
  let last = null;
  const at = (e) => {
    const r = pad.getBoundingClientRect();
    return [(e.clientX - r.left) * pad.width / r.width, (e.clientY - r.top) * pad.height / r.height];
  };
  pad.addEventListener("pointerdown", (e) => {
    pad.setPointerCapture(e.pointerId);
    last = at(e);
  });
  pad.addEventListener("pointermove", (e) => {
    if (!last) return;
    const p = at(e);
    Object.assign(ctx, { strokeStyle: "#fff", lineWidth: 20, lineCap: "round", lineJoin: "round" });
    ctx.beginPath();
    ctx.moveTo(...last);
    ctx.lineTo(...p);
    ctx.stroke();
    last = p;
  });
  const end = () => {
    if (last) update();
    last = null;
  };
  pad.addEventListener("pointerup", end);
  pad.addEventListener("pointercancel", end);
  document.getElementById("clear").addEventListener("click", () => {
    clear();
    update();
  });
  clear();
  document.getElementById("draw").hidden = false;
  return (x) => {
    // An example: shown on the pad, fed to the tree as it is.
    const tmp = document.createElement("canvas");
    tmp.width = tmp.height = 28;
    showGray(tmp, x, 28);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(tmp, 0, 0, pad.width, pad.height);
    showGray(seen, x, 28);
    run(model, Float64Array.from(x));
  };
}

function formInput(model) {
  const form = document.getElementById("form");
  const inputs = model.normalisation.x_mean.map((m, j) => {
    const label = document.createElement("label");
    label.textContent = `feature ${j}`;
    const input = document.createElement("input");
    Object.assign(input, { type: "number", step: "any", value: m, name: `x${j}` });
    label.appendChild(input);
    form.appendChild(label);
    return input;
  });
  const read = () => Float64Array.from(inputs, (i) => Number(i.value));
  form.addEventListener("input", () => run(model, read()));
  form.hidden = false;
  run(model, read());
  return (x) => {
    inputs.forEach((input, j) => (input.value = x[j]));
    run(model, read());
  };
}

function examples(model, show) {
  if (!model.examples.length) return;
  const holder = document.getElementById("examples");
  const image = model.input_shape.length === 3;
  model.examples.forEach((ex, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.title = `test sample ${i}: ${ex.target}`;
    b.dataset.example = i;
    if (image) {
      const c = document.createElement("canvas");
      showImage(c, ex.x, model.input_shape);
      b.appendChild(c);
    } else {
      b.textContent = `#${i} (${ex.target})`;
    }
    b.addEventListener("click", () => show(ex.x));
    holder.appendChild(b);
  });
  document.getElementById("examples-panel").hidden = false;
}

function main() {
  const model = window.ANT_MODEL;
  const shape = model.input_shape;
  const routers = model.nodes.filter((n) => n.router).length;
  document.getElementById("summary").textContent =
    `${model.task.kind}, input ${shape.join("x")}, ${model.nodes.length} nodes ` +
    `(${routers} routers, ${model.nodes.length - routers} leaves)`;
  const drawable = shape.length === 3 && shape[0] === 1 && shape[1] === 28 && shape[2] === 28;
  const show = drawable ? drawingInput(model) : shape.length === 1 ? formInput(model) : null;
  // Images the pad cannot draw (colour, or another size) are shown as picked.
  const fallback = (x) => {
    if (shape.length === 3) {
      showImage(document.getElementById("picked"), x, shape);
      document.getElementById("picked-panel").hidden = false;
    }
    run(model, Float64Array.from(x));
  };
  examples(model, show || fallback);
  if (drawable) run(model, new Float64Array(28 * 28));
  else if (!show && model.examples.length) fallback(model.examples[0].x);
}

window.antEvaluate = evaluate;
main();
