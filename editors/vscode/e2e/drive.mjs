// Drives code-server in Chromium: opens train.py, waits for ddplint's DDP001 in the Problems
// panel, applies its quick fix, and waits for the finding to go away. Usage:
//   node drive.mjs URL WORKSPACE_FILE SCREENSHOT_DIR
// Exits 0 when all of that happened, 1 (naming the step) when not.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(process.env.E2E_NODE_MODULES + "/");
const { chromium } = require("playwright-core");

const [url, file, shots] = process.argv.slice(2);
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
// Nothing fetched from the network by the browser itself: only code-server on localhost.
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const STEP_TIMEOUT_MS = 60_000;

function log(message) {
  console.log(`[e2e ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

async function step(page, name, action) {
  log(name);
  try {
    return await action();
  } catch (error) {
    await page.screenshot({ path: `${shots}/failed.png` }).catch(() => undefined);
    throw new Error(`step "${name}" failed: ${error.message}`);
  }
}

async function problemRows(page) {
  return page.locator(".markers-panel .monaco-list-row").allInnerTexts();
}

async function main() {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  try {
    await step(page, "open the workbench", async () => {
      await page.goto(url);
      await page.locator(".monaco-workbench").waitFor();
      await page.locator(".explorer-folders-view").waitFor();
    });
    await step(page, "open train.py", async () => {
      await page.locator(".explorer-folders-view .monaco-list-row", { hasText: "train.py" }).click();
      await page.locator(".monaco-editor .view-lines", { hasText: "DDP001 buggy" }).first().waitFor();
    });
    const row = await step(page, "DDP001 shows in the Problems panel", async () => {
      await page.locator(".monaco-editor .view-lines").first().click();
      await page.keyboard.press("Control+Shift+M");
      const ddp001 = page.locator(".markers-panel .monaco-list-row", { hasText: "DDP001" }).first();
      await ddp001.waitFor();
      return ddp001;
    });
    log(`Problems panel: ${JSON.stringify(await problemRows(page))}`);
    await page.screenshot({ path: `${shots}/1-problem.png` });
    await step(page, "apply DDP001's quick fix", async () => {
      await row.dblclick(); // selects the finding in the editor and moves the focus there
      await page.locator(".monaco-editor.focused").first().waitFor();
      await page.keyboard.press("Control+."); // Quick Fix...
      const fix = page.locator(".action-widget .monaco-list-row", { hasText: "DDP001:" }).first();
      await fix.waitFor();
      log(`quick fix offered: ${await fix.innerText()}`);
      await page.screenshot({ path: `${shots}/2-quick-fix.png` });
      await fix.click();
      await page.keyboard.press("Control+S");
    });
    await step(page, "DDP001 goes away", async () => {
      await page.locator(".markers-panel .monaco-list-row", { hasText: "DDP001" }).waitFor({ state: "detached" });
    });
    log(`Problems panel: ${JSON.stringify(await problemRows(page))}`);
    await page.screenshot({ path: `${shots}/3-fixed.png` });
    await step(page, "the fix is saved to disk", async () => {
      const deadline = Date.now() + 30_000;
      while (!readFileSync(file, "utf8").includes("sampler=DistributedSampler(dataset")) {
        if (Date.now() > deadline) throw new Error(`${file} has no DistributedSampler`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const line = readFileSync(file, "utf8").split("\n").find((l) => l.includes("loader = DataLoader("));
      log(`train.py now: ${line.trim()}`);
    });
    log("PASS: DDP001 shown, fixed, gone");
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(`[e2e] FAIL: ${error.message}`);
  process.exit(1);
});
