// The page of `ant export --format web` in a real browser (headless Chromium through
// puppeteer-core): draw a digit with the mouse, pick a test sample, and compare what the
// page shows (prediction, single-path leaf, every router's P(left), every node's reach)
// with `ant predict --reach` on the same 28x28 image. Then a folder of colour images
// (BMP files this script writes): the page shows its test images as they are and the
// tree's answer on one picked, as `ant predict` gives it on that file. Saves a screenshot.
//
// Run: `npm ci --prefix tests/web && node tests/web/test_page.mjs` after
// `cargo build --release`. ANT_BIN, CHROMIUM (default /usr/bin/chromium) and
// ANT_SCREENSHOT (default: the temporary directory) override paths; ANT_WEB_MODEL runs
// the checks on that mnist model instead of training a small one.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ANT = process.env.ANT_BIN || path.join(REPO, "target/release/ant");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const TOL = 1e-4;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ant-web-"));

function ant(...args) {
  return execFileSync(ANT, args.map(String), { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function check(ok, what) {
  if (!ok) throw new Error("FAILED: " + what);
  console.log("ok:", what);
}

const maxDiff = (a, b) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));

// A small mnist-c tree whose routers start by splitting their samples.
function trainModel() {
  if (process.env.ANT_WEB_MODEL) return path.resolve(process.env.ANT_WEB_MODEL);
  const model = path.join(tmp, "model");
  ant("train", "--preset", "mnist-c", "--data", path.join(REPO, "data/mnist"), "--out", model,
    "--train-limit", 1000, "--epochs-node", 2, "--refine-epochs", 1, "--seed", 0,
    "--router-init", "centred");
  return model;
}

// A static file server for `dir` on a free port.
function serve(dir) {
  const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css" };
  const server = http.createServer((req, res) => {
    const name = req.url === "/" ? "index.html" : decodeURIComponent(req.url.slice(1));
    const file = path.join(dir, path.basename(name));
    if (!fs.existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": types[path.extname(file)] || "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

// `ant predict --reach` on one 28x28 image, multi-path and single-path.
function predict(model, input, name) {
  const idx = path.join(tmp, name + ".idx");
  const header = Buffer.from([0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 28, 0, 0, 0, 28]);
  const pixels = Buffer.from(input.map((v) => Math.round(v * 255)));
  check(input.every((v, i) => Math.abs(v - pixels[i] / 255) < 1e-6), `${name}: the page's input is 8-bit`);
  fs.writeFileSync(idx, Buffer.concat([header, pixels]));
  const run = (single) => {
    const out = path.join(tmp, `${name}-${single ? "single" : "multi"}.jsonl`);
    ant("predict", "--model", model, "--input", idx, "--output", out, "--reach",
      ...(single ? ["--single-path"] : []));
    return JSON.parse(fs.readFileSync(out, "utf8").trim());
  };
  return { multi: run(false), single: run(true) };
}

async function shown(page) {
  return page.evaluate(() => {
    const data = (sel, key) => JSON.parse(document.querySelector(sel).dataset[key]);
    const nodes = [...document.querySelectorAll("g.node")];
    return {
      input: window.antState.input,
      multi: data("#multi", "value"),
      multiText: document.querySelector("#multi").textContent,
      single: data("#single", "value"),
      leaf: data("#single-leaf", "leaf"),
      reach: Object.fromEntries(nodes.map((g) => [g.dataset.node, Number(g.dataset.reach)])),
      pLeft: Object.fromEntries(nodes.filter((g) => g.dataset.pLeft)
        .map((g) => [g.dataset.node, Number(g.dataset.pLeft)])),
    };
  });
}

function compare(model, s, name) {
  const tree = JSON.parse(fs.readFileSync(path.join(model, "tree.json"), "utf8"));
  const nodes = tree.topology.nodes;
  const p = predict(model, s.input, name);
  check(maxDiff(s.multi, p.multi.probabilities) <= TOL, `${name}: multi-path probabilities (max diff ${maxDiff(s.multi, p.multi.probabilities).toExponential(1)})`);
  check(maxDiff(s.single, p.single.probabilities) <= TOL, `${name}: single-path probabilities`);
  check(s.leaf === p.single.leaf, `${name}: single-path leaf ${s.leaf}`);
  check(s.multiText.startsWith(p.multi.prediction + " "), `${name}: shown class ${s.multiText}`);
  const reach = nodes.map((_, i) => s.reach[i]);
  check(maxDiff(reach, p.multi.reach) <= TOL, `${name}: every node's reach`);
  const routers = Object.keys(s.pLeft).map(Number);
  check(routers.length === nodes.filter((n) => n.router).length, `${name}: every router shows P(left)`);
  for (const r of routers.filter((r) => p.multi.reach[r] > 1e-3)) {
    const want = p.multi.reach[nodes[r].children[0]] / p.multi.reach[r];
    check(Math.abs(s.pLeft[r] - want) <= 1e-3, `${name}: router ${r} P(left) ${s.pLeft[r].toFixed(4)}`);
  }
}

// A 24-bit BMP of `w` x `h` pixels, `rgb(x, y)` each (rows stored bottom-up, padded).
function bmp(w, h, rgb) {
  const row = Math.ceil((3 * w) / 4) * 4;
  const buf = Buffer.alloc(54 + row * h);
  buf.write("BM", 0);
  buf.writeUInt32LE(buf.length, 2);
  buf.writeUInt32LE(54, 10);
  buf.writeUInt32LE(40, 14);
  buf.writeInt32LE(w, 18);
  buf.writeInt32LE(h, 22);
  buf.writeUInt16LE(1, 26);
  buf.writeUInt16LE(24, 28);
  buf.writeUInt32LE(row * h, 34);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const [r, g, b] = rgb(x, y);
      buf.set([b, g, r], 54 + (h - 1 - y) * row + 3 * x);
    }
  }
  return buf;
}

// `train/` and `test/` folders of three classes of 10x12 colour images: a bar of the
// class's colour at the class's place.
function colourFolder() {
  const root = path.join(tmp, "colours");
  for (const [split, n] of [["train", 16], ["test", 4]]) {
    ["red", "green", "blue"].forEach((name, c) => {
      const dir = path.join(root, split, name);
      fs.mkdirSync(dir, { recursive: true });
      for (let k = 0; k < n; k++) {
        const image = bmp(10, 12, (x, y) => {
          const noise = (x * 7 + y * 13 + k * 31) % 40;
          const on = Math.floor((x * 3) / 10) === c;
          return [0, 1, 2].map((ch) => (on && ch === c ? 200 : 30) + noise);
        });
        fs.writeFileSync(path.join(dir, `${String(k).padStart(3, "0")}.bmp`), image);
      }
    });
  }
  return root;
}

// The page of a colour model: its test images shown as they are, and the answer on one.
async function colourPage(browser) {
  const root = colourFolder();
  const model = path.join(tmp, "colour-model");
  ant("train", "--preset", "cifar10-c", "--data", root, "--out", model, "--epochs-node", 1,
    "--refine-epochs", 1, "--max-depth", 1, "--seed", 0);
  const site = path.join(tmp, "colour-site");
  ant("export", "--model", model, "--format", "web", "--out", site, "--data", root);
  const server = await serve(site);
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1);
    const thumbs = await page.evaluate(() => [...document.querySelectorAll("#examples canvas")]
      .map((c) => ({ w: c.width, h: c.height, rgba: [...c.getContext("2d").getImageData(0, 0, c.width, c.height).data] })));
    check(thumbs.length === 10 && thumbs.every((t) => t.w === 10 && t.h === 12), "colour: its first 10 test images shown at 10x12");
    // The first test image (test/blue/000.bmp: classes in sorted order) as drawn, against the file's pixels.
    const file = fs.readFileSync(path.join(root, "test/blue/000.bmp"));
    const same = [...Array(120).keys()].every((i) => {
      const [x, y] = [i % 10, Math.floor(i / 10)];
      const at = 54 + (11 - y) * 32 + 3 * x;
      return [file[at + 2], file[at + 1], file[at]].every((v, ch) => thumbs[0].rgba[4 * i + ch] === v);
    });
    check(same, "colour: a test image is shown in its own colours");
    const before = await updates(page);
    await page.click('#examples button[data-example="0"]');
    await updated(page, before);
    check(await page.evaluate(() => !document.getElementById("picked-panel").hidden), "colour: the picked image is shown");
    const multi = await page.evaluate(() => JSON.parse(document.querySelector("#multi").dataset.value));
    const out = path.join(tmp, "colour.jsonl");
    ant("predict", "--model", model, "--input", path.join(root, "test/blue/000.bmp"), "--output", out);
    const want = JSON.parse(fs.readFileSync(out, "utf8").trim()).probabilities;
    check(maxDiff(multi, want) <= TOL, `colour: the page's answer is predict's (max diff ${maxDiff(multi, want).toExponential(1)})`);
  } finally {
    server.close();
  }
}

async function updated(page, before) {
  await page.waitForFunction((n) => Number(document.body.dataset.updates || 0) > n, {}, before);
}

const updates = (page) => page.evaluate(() => Number(document.body.dataset.updates || 0));

async function main() {
  const model = trainModel();
  const site = path.join(tmp, "site");
  ant("export", "--model", model, "--format", "web", "--out", site, "--data", path.join(REPO, "data/mnist"));
  const server = await serve(site);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    userDataDir: path.join(tmp, "chromium"),
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.setViewport({ width: 1400, height: 900 });
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1);
    // A "7": a bar, then a diagonal down to the left.
    const pad = await (await page.$("#pad")).boundingBox();
    const strokes = [[[70, 60], [210, 60], [120, 235]]];
    let before = await updates(page);
    for (const stroke of strokes) {
      await page.mouse.move(pad.x + stroke[0][0], pad.y + stroke[0][1]);
      await page.mouse.down();
      for (const [x, y] of stroke.slice(1)) await page.mouse.move(pad.x + x, pad.y + y, { steps: 25 });
      await page.mouse.up();
    }
    await updated(page, before);
    const drawn = await shown(page);
    check(drawn.input.filter((v) => v > 0).length > 40, "the drawn digit reaches the tree");
    compare(model, drawn, "drawn");
    // A test sample picked from the examples.
    before = await updates(page);
    await page.click('#examples button[data-example="0"]');
    await updated(page, before);
    compare(model, await shown(page), "example");
    const shot = process.env.ANT_SCREENSHOT || path.join(tmp, "page.png");
    await page.screenshot({ path: shot, fullPage: true });
    console.log("screenshot:", shot);
    check(errors.length === 0, "no errors on the page " + errors.join("; "));
    await colourPage(browser);
  } finally {
    await browser.close();
    server.close();
  }
}

main().then(() => console.log("web page: all checks passed"), (e) => {
  console.error(e);
  process.exit(1);
});
