#!/usr/bin/env node
// Runs the Boris binary of this platform, shipped next to this file as
// boris-<os>-<arch>, with the same arguments, standard streams and exit status.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const arch = { x64: "amd64", arm64: "arm64" }[process.arch];
const bin = path.join(__dirname, `boris-${process.platform}-${arch}`);
if (!arch || !fs.existsSync(bin)) {
  const have = fs.readdirSync(__dirname).filter((f) => f.startsWith("boris-")).join(", ");
  console.error(`boris: no binary for ${process.platform}/${process.arch} in this package (it has: ${have || "none"}); ` +
    "download one from https://github.com/mjkoo/boris/releases or use the image ghcr.io/mjkoo/boris");
  process.exit(1);
}
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
// Boris handles its own signals; pass on the ones a client sends to stop it.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (err) => {
  console.error(`boris: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
