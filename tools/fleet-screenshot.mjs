// SPDX-License-Identifier: Apache-2.0
// fleet-screenshot.mjs PROMETHEUS_URL OUT.png - Prometheus's graph page of the exporter's GPU
// memory and its OOM counter, in Debian's chromium (CHROMIUM), saved as OUT.png
// (tools/fleet-screenshot.sh runs it).
import { createRequire } from "node:module";
const require = createRequire(new URL("../tests/browser/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const [prom, out] = process.argv.slice(2);
const q = new URLSearchParams({
  "g0.expr": "vramfit_gpu_memory_used_bytes",
  "g0.tab": "0",
  "g0.range_input": "2m",
  "g1.expr": "vramfit_oom_events_total",
  "g1.tab": "0",
  "g1.range_input": "2m",
});
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1000, height: 1480 } });
await page.goto(`${prom}/graph?${q}`);
await page.waitForTimeout(4000);
await page.screenshot({ path: out, fullPage: false });
await browser.close();
