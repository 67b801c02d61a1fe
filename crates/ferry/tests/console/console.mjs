// The web console in a real browser: Debian's chromium driven by playwright-core (no
// browser download), against a running queue manager the Rust test (tests/console.rs)
// started. What it is given, in the environment:
//   FERRY_CONSOLE_URL       the web server, e.g. http://127.0.0.1:9443
//   FERRY_CONSOLE_USER      a user of the queue manager, and FERRY_CONSOLE_PASSWORD
//   FERRY_CONSOLE_QUEUE     a queue holding FERRY_CONSOLE_DEPTH messages, the first with
//                           the text FERRY_CONSOLE_BODY
//   FERRY_CONSOLE_SCRIPT_BODY  the text of a message on it that is an HTML script element
//   FERRY_CONSOLE_SHOTS     the folder the screenshots go to
//   FERRY_CHROMIUM          the browser (default /usr/bin/chromium)
// Each check prints "ok - what" or "not ok - what: why"; the last line is
// "N passed, N failed" and the exit status is 1 when any failed.

import { chromium } from "playwright-core";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};
const base = env("FERRY_CONSOLE_URL");
const user = env("FERRY_CONSOLE_USER");
const password = env("FERRY_CONSOLE_PASSWORD");
const queue = env("FERRY_CONSOLE_QUEUE");
const depth = Number(env("FERRY_CONSOLE_DEPTH"));
const body = env("FERRY_CONSOLE_BODY");
const scriptBody = env("FERRY_CONSOLE_SCRIPT_BODY");
const shots = env("FERRY_CONSOLE_SHOTS");
const executablePath = env("FERRY_CHROMIUM", "/usr/bin/chromium");

let passed = 0;
let failed = 0;
async function check(what, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`ok - ${what}`);
  } catch (e) {
    failed += 1;
    console.log(`not ok - ${what}: ${String(e && e.message ? e.message : e).split("\n")[0]}`);
  }
}
function expect(condition, why) {
  if (!condition) throw new Error(why);
}

const profile = mkdtempSync(join(tmpdir(), "ferry-chromium-"));
// A fresh profile of its own (playwright gives it as --user-data-dir).
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  viewport: { width: 1360, height: 860 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
// A page of another origin that posts to the console: a cross-site request.
const attacker = createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/html" });
  res.end(`<!doctype html><form id="f" method="post" action="${base}/ibmmq/console/mqsc">
<input name="command" value="DEFINE QLOCAL(CSRF.ATTACK)"></form>
<script>document.getElementById("f").submit()</script>`);
});
await new Promise((resolve) => attacker.listen(0, "127.0.0.1", resolve));
const attackerUrl = `http://localhost:${attacker.address().port}/`;

try {
  context.setDefaultTimeout(10000);
  const page = context.pages()[0] ?? (await context.newPage());
  const scriptErrors = [];
  page.on("pageerror", (e) => scriptErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") scriptErrors.push(m.text());
  });
  page.on("dialog", (d) => d.accept());

  await check("a visit without a session is sent to the login page", async () => {
    await page.goto(`${base}/ibmmq/console/queues`);
    expect(page.url().endsWith("/ibmmq/console/login"), `at ${page.url()}`);
  });

  await check("a wrong password is refused in the form", async () => {
    await page.fill("input[name=username]", user);
    await page.fill("input[name=password]", "not the password");
    await page.click("form.login button");
    await page.waitForSelector("#login-result .error", { timeout: 15000 });
    expect(page.url().endsWith("/login"), "still on the login page");
  });

  await check("logging in through the form opens the console", async () => {
    await page.fill("input[name=password]", password);
    await Promise.all([
      page.waitForURL(`${base}/ibmmq/console/`, { timeout: 15000 }),
      page.click("form.login button"),
    ]);
    const state = await page.textContent("#state");
    expect(state === "running", `state '${state}'`);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === "LtpaToken2");
    expect(session && session.httpOnly && session.sameSite === "Strict", JSON.stringify(session));
  });

  await check("the queue list shows the queue's depth", async () => {
    await page.goto(`${base}/ibmmq/console/queues`);
    const row = page.locator("#queues tr", { hasText: queue });
    const shown = await row.locator("td.depth").textContent();
    expect(Number(shown) === depth, `depth '${shown}', expected ${depth}`);
  });

  await check("the live chart draws on its canvas", async () => {
    await page.waitForFunction(
      () => Number(document.querySelector(".chart")?.dataset.polls || 0) >= 3,
      null,
      { timeout: 20000 },
    );
    const drawn = await page.evaluate(() => {
      const canvas = document.querySelector(".chart canvas");
      if (!canvas || canvas.width === 0) return 0;
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) painted += 1;
      return painted;
    });
    expect(drawn > 500, `${drawn} pixels drawn`);
    // The list's rows have been refreshed (every 5 s) with rates by now.
    await page.waitForFunction(() => Number(document.querySelector(".chart")?.dataset.polls || 0) >= 4);
  });
  await page.screenshot({ path: join(shots, "console-queues.png") });

  await check("a queue's page browses its messages with a body preview", async () => {
    await page.click(`#queues a:text-is("${queue}")`);
    await page.waitForSelector("table.messages");
    const text = await page.textContent("table.messages");
    expect(text.includes(body), `'${body}' not in the browse table`);
    const ids = await page.locator("table.messages td.id").first().textContent();
    expect(/^[0-9A-F]{48}$/.test(ids.trim()), `message id '${ids}'`);
  });

  await check("a message body holding a script is shown as text, not run", async () => {
    const text = await page.textContent("table.messages");
    expect(text.includes(scriptBody), "the script's text is shown");
    const ran = await page.evaluate(() => window.ferryPwned === true);
    expect(!ran, "the message's script ran");
    const elements = await page.locator("table.messages script").count();
    expect(elements === 0, `${elements} script elements in the table`);
  });

  await check("putting a test message through the form changes the depth", async () => {
    const before = Number(await page.textContent("#depth"));
    await page.fill("form.put textarea", "a test message from the console");
    await page.click("form.put button");
    await page.waitForSelector("#put-result .ok");
    await page.waitForFunction(
      (n) => Number(document.querySelector("#depth")?.textContent) === n,
      before + 1,
      { timeout: 10000 },
    );
    const text = await page.textContent("table.messages");
    expect(text.includes("a test message from the console"), "the new message is browsed");
  });
  await page.waitForFunction(() => Number(document.querySelector(".chart")?.dataset.polls || 0) >= 4);
  await page.screenshot({ path: join(shots, "console-queue.png"), fullPage: true });

  await check("a request without the CSRF header is refused (403)", async () => {
    const status = await page.evaluate(async (q) => {
      const r = await fetch(`/ibmmq/console/queue/${q}/clear`, { method: "POST" });
      return r.status;
    }, queue);
    expect(status === 403, `status ${status}`);
    const still = Number(await page.textContent("#depth"));
    expect(still === depth + 1, `depth ${still} after the refused clear`);
  });

  await check("a cross-site form post is refused and changes nothing", async () => {
    const other = await context.newPage();
    const answer = other.waitForResponse((r) => r.url().endsWith("/ibmmq/console/mqsc"));
    await other.goto(attackerUrl);
    const response = await answer;
    expect(response.status() === 403 || response.status() === 401, `status ${response.status()}`);
    await other.close();
  });

  await check("the MQSC console runs a command and shows its response", async () => {
    await page.goto(`${base}/ibmmq/console/mqsc`);
    await page.fill("input[name=command]", `DISPLAY QLOCAL(${queue}) CURDEPTH MAXDEPTH`);
    await page.click("form.mqsc button");
    await page.waitForSelector("#mqsc-output pre");
    const out = await page.textContent("#mqsc-output pre");
    expect(out.includes(`QUEUE(${queue})`) && out.includes(`CURDEPTH(${depth + 1})`), out);
    await page.fill("input[name=command]", "DISPLAY QLOCAL(CSRF.ATTACK)");
    await page.click("form.mqsc button");
    await page.waitForFunction(() =>
      document.querySelector("#mqsc-output pre")?.textContent.includes("CSRF.ATTACK"),
    );
    const after = await page.textContent("#mqsc-output pre");
    expect(!after.includes("QUEUE(CSRF.ATTACK)"), `the cross-site post defined it: ${after}`);
    await page.fill("input[name=command]", `DISPLAY QLOCAL(${queue}) CURDEPTH MAXDEPTH`);
    await page.click("form.mqsc button");
    await page.waitForFunction(
      (q) => document.querySelector("#mqsc-output pre")?.textContent.includes(`QUEUE(${q})`),
      queue,
    );
  });
  await page.screenshot({ path: join(shots, "console-mqsc.png") });

  await check("clearing the queue after the confirmation empties it", async () => {
    await page.goto(`${base}/ibmmq/console/queue/${queue}`);
    await page.click("form.clear button");
    await page.waitForFunction(() => document.querySelector("#depth")?.textContent === "0", null, {
      timeout: 10000,
    });
  });

  await check("the other pages render", async () => {
    for (const [path, heading] of [
      ["channels", "Channels"],
      ["connections", "Connections"],
      ["topics", "Topics and subscriptions"],
      ["security", "CHLAUTH and AUTHREC records"],
    ]) {
      await page.goto(`${base}/ibmmq/console/${path}`);
      const h1 = await page.textContent("h1");
      expect(h1 === heading, `${path}: '${h1}'`);
      expect((await page.locator("div.error").count()) === 0, `${path} shows an error`);
    }
  });

  await check("logging out ends the session", async () => {
    await Promise.all([
      page.waitForURL(`${base}/ibmmq/console/login`),
      page.click("nav form button"),
    ]);
    await page.goto(`${base}/ibmmq/console/queues`);
    expect(page.url().endsWith("/ibmmq/console/login"), `at ${page.url()}`);
  });

  await check("no script error and no CSP violation on any page", async () => {
    const real = scriptErrors.filter((e) => !/status of 40[13]/.test(e));
    expect(real.length === 0, real.join(" | "));
  });
} finally {
  await context.close();
  attacker.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
