// speedscope-check.js — the browser half of scripts/speedscope-check (which
// installs the npm packages and calls this): serves speedscope's release build
// and one profile file over HTTP on 127.0.0.1, opens speedscope in headless
// Chromium through playwright-core with #profileURL= pointing at the file, and
// checks what the page shows:
//   - a profile view, not the landing page nor "Something went wrong", and no
//     alert (speedscope's importer says "Unrecognized format!" or "empty" in
//     an alert);
//   - no uncaught exception, console error, or console warning from
//     speedscope's code (the importer warns about events it skips or frames
//     it has to close itself);
//   - the page title names the file;
//   - every expected name is a row of the sandwich view's table (searched with
//     speedscope's own search box) in one of the file's profiles (speedscope
//     makes one per thread of a Chrome trace).
// Writes OUT_DIR/FILE.png (the first view), FILE.sandwich.png, FILE.dom.html
// (the sandwich view of the first profile) and FILE.log (console, requests,
// results).
//   node speedscope-check.js MODULES_DIR CHROMIUM OUT_DIR FILE NAME...
// Exit status: 0 passed, 1 a check failed.
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const [mods, chromiumPath, outDir, file, ...expected] = process.argv.slice(2);
const { chromium } = require(path.join(mods, 'node_modules', 'playwright-core'));
const dist = path.join(mods, 'node_modules', 'speedscope', 'dist', 'release');
const base = path.basename(file);
const outBase = path.join(outDir, base);
const TAG = 'speedscope-check';

const log = [];
const problems = [];
const note = (s) => log.push(s);
const problem = (s) => {
  problems.push(s);
  note('FAIL ' + s);
};

const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.ico': 'image/x-icon', '.woff2': 'font/woff2',
};
let profileRequests = 0;

// speedscope's files from its dist folder, and the profile under /profile/.
function serve(req, res) {
  const url = new URL(req.url, 'http://127.0.0.1');
  let name;
  try {
    name = decodeURIComponent(url.pathname);
  } catch {
    name = '';
  }
  let p = null;
  if (name === '/profile/' + base) {
    p = file;
    profileRequests++;
  } else {
    const q = path.join(dist, path.normalize(name === '/' ? '/index.html' : name));
    if (q.startsWith(dist + path.sep)) p = q;
  }
  note(`GET ${url.pathname}`);
  if (!p) {
    res.writeHead(404);
    res.end();
    return;
  }
  fs.readFile(p, (err, data) => {
    if (err) {
      note(`404 ${url.pathname}`);
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(p)] || 'application/octet-stream' });
    res.end(data);
  });
}

// What the page shows now: the view tabs (Time Order, Left Heavy, Sandwich)
// exist only once a profile is shown.
function pageState() {
  const text = document.body ? document.body.innerText : '';
  const own = (e) => [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join('').trim();
  return {
    loaded: [...document.querySelectorAll('div')].some((d) => own(d) === 'Sandwich'),
    error: text.includes('Something went wrong'),
    landing: text.includes('Drag and drop a profile'),
  };
}

// The names in the sandwich view's table: rows of three cells (total, self,
// name); the profile selector's rows carry a title and are left out.
function sandwichRows() {
  return [...document.querySelectorAll('tr:not([title])')]
    .filter((r) => r.cells.length === 3 && !r.closest('thead'))
    .map((r) => r.cells[2].textContent.trim());
}

// The toolbar's title, between the view tabs and the buttons on the right:
// "PROFILE NAME (i/N)", or the profile's name alone.
function toolbarTitle() {
  const own = (e) => [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join('').trim();
  const tab = [...document.querySelectorAll('div')].find((d) => own(d) === 'Sandwich');
  const center = tab && tab.parentElement.nextSibling; // a text node when there is one profile
  if (!center) return '';
  return (center.nodeType === 3 ? center.nodeValue : center.innerText.split('\n')[0]).trim();
}

// Evaluate fn(arg) in the page until accept(value) holds; returns the value.
async function until(page, what, fn, arg, accept, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await page.evaluate(fn, arg);
    if (accept(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(100);
  }
}

// Search the active profile's sandwich table for `name` with speedscope's
// search box (which filters the table, so the row is drawn even in a long
// table): true once a row reads exactly `name`. Any row shown is a row of the
// profile, so a stale filter can only delay the answer, not fake it.
async function findRow(page, name) {
  const box = page.locator('input[data-check-search]');
  if ((await box.count()) === 0) {
    await page.keyboard.press('Control+f'); // opens the search box and focuses it
    await until(page, 'the search box', () => {
      const e = document.activeElement;
      if (!e || e.tagName !== 'INPUT') return false;
      e.setAttribute('data-check-search', '');
      return true;
    }, null, (v) => v, 15000);
  }
  await box.fill(name);
  try {
    await until(page, `a row '${name}'`, sandwichRows, null, (rows) => rows.includes(name), 15000);
    return true;
  } catch {
    return false;
  }
}

// Close the search box (the table shows every row again).
async function closeSearch(page) {
  const box = page.locator('input[data-check-search]');
  if ((await box.count()) === 0) return;
  await box.press('Escape');
  await until(page, 'the search box to close', () => !document.querySelector('input[data-check-search]'), null, (v) => v, 15000);
}

async function check(page, origin) {
  const profileURL = `${origin}/profile/${encodeURIComponent(base)}`;
  await page.goto(`${origin}/index.html#profileURL=${encodeURIComponent(profileURL)}`);
  let state;
  try {
    state = await until(page, 'the profile view', pageState, null, (v) => v.loaded || v.error || problems.length > 0, 60000);
  } catch (e) {
    state = await page.evaluate(pageState);
    problem(`${e.message} (landing page shown: ${state.landing})`);
  }
  await page.screenshot({ path: outBase + '.png' });
  if (profileRequests === 0) problem('speedscope never requested the profile');
  if (state.error) problem('speedscope shows "Something went wrong"');
  if (!state.loaded) return;

  const title = await page.title();
  if (title !== `${base} - speedscope`) problem(`page title is '${title}', not '${base} - speedscope'`);
  const profiles = await page.evaluate(() => [...document.querySelectorAll('tr[title]')].map((r) => r.title));
  const first = await page.evaluate(toolbarTitle);
  const m = /\((\d+)\/(\d+)\)$/.exec(first);
  const count = m ? +m[2] : 1;
  note(`toolbar: ${first}`);
  note(`profiles (${count}): ${profiles.join(' | ') || first}`);
  if (profiles.length && profiles.length !== count) problem(`toolbar says ${count} profiles, its list has ${profiles.length}`);

  await page.evaluate(() => {
    const own = (e) => [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join('').trim();
    [...document.querySelectorAll('div')].find((d) => own(d) === 'Sandwich').click();
  });
  const text = () => document.body.innerText;
  await until(page, 'the sandwich table', text, null, (t) => t.includes('Symbol Name'), 30000);
  fs.writeFileSync(outBase + '.dom.html', await page.content());

  const found = new Map();
  for (let i = 0; i < count; i++) {
    if (i > 0) {
      await closeSearch(page);
      await page.keyboard.press('n'); // next profile
      await until(page, `profile ${i + 1}`, toolbarTitle, null, (t) => t.endsWith(`(${i + 1}/${count})`), 30000);
    }
    const shown = (await page.evaluate(toolbarTitle)).replace(/\s*\(\d+\/\d+\)$/, '');
    const rows = await page.evaluate(sandwichRows);
    note(`profile ${i + 1}: ${shown}: ${rows.length} rows shown, first: ${rows.slice(0, 8).join(' | ')}`);
    for (const name of expected) {
      if (!found.has(name) && (await findRow(page, name))) found.set(name, shown);
    }
    if (found.size === new Set(expected).size) break;
  }
  await closeSearch(page);
  await page.screenshot({ path: outBase + '.sandwich.png' });
  for (const name of expected) {
    if (found.has(name)) note(`found '${name}' in ${found.get(name)}`);
    else problem(`'${name}' is not a row of the sandwich table in any of the ${count} profiles`);
  }
  return { count, first, found };
}

async function main() {
  const server = http.createServer(serve);
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${server.address().port}`;
  // speedscope draws with WebGL: SwiftShader gives headless Chromium a
  // software GL, without which speedscope never starts its import.
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let result;
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Every console error fails, and every warning of speedscope's own code
    // (the browser's own, such as GL driver notes, are only logged).
    page.on('console', (msg) => {
      const from = msg.location().url || '';
      note(`console.${msg.type()}: ${msg.text()}${from ? ` (${from})` : ''}`);
      if (msg.type() === 'error' || (msg.type() === 'warning' && from.startsWith(origin + '/'))) {
        problem(`console ${msg.type()}: ${msg.text()}`);
      }
    });
    page.on('pageerror', (e) => problem(`uncaught exception: ${e.message}`));
    page.on('dialog', (d) => {
      problem(`alert: ${d.message()}`);
      d.dismiss().catch(() => {});
    });
    result = await check(page, origin);
  } catch (e) {
    problem(e.message);
  } finally {
    await browser.close();
    server.close();
  }
  fs.writeFileSync(outBase + '.log', log.join('\n') + '\n');
  if (problems.length) {
    for (const p of problems) console.error(`${TAG}: ${p}`);
    console.error(`${TAG}: failed for ${file} (see ${outBase}.log, ${outBase}.png)`);
    return 1;
  }
  console.log(`${TAG}: ok: ${base} loaded as ${result.count} profile(s), toolbar '${result.first}'; ` +
    `${result.found.size} names found in the sandwich view: ` +
    [...result.found].map(([n, p]) => `'${n}' (${p})`).join(', ') + `; screenshot ${outBase}.png`);
  return 0;
}

main().then((rc) => process.exit(rc), (e) => {
  console.error(`${TAG}: ${e.stack || e}`);
  process.exit(1);
});
