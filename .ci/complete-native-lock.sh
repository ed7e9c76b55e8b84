#!/usr/bin/env bash
# Adds the lock entries of native packages for OTHER platforms to package-lock.json: rollup's (via
# vite/vitest) and Biome's.
#
# Why: each lists one optional native package per platform. The npm registry reachable from our
# machines only serves the Linux ones, so `npm install` here writes a lock without the others, and
# npm 11's `npm ci` then refuses the lock ("Missing: @rollup/rollup-android-arm-eabi@ from lock
# file"). npm ci only needs each entry's version and os/cpu/libc to skip it on this
# platform, so this script writes exactly that, and nothing else. `npm install` keeps these entries.
#
# Usage: bash .ci/complete-native-lock.sh          # edit package-lock.json in place
#        bash .ci/complete-native-lock.sh --check  # exit 1 when entries are missing, change nothing
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

node --input-type=module - "${1:-}" <<'EOF'
import { readFileSync, writeFileSync } from 'node:fs';

const checkOnly = process.argv[2] === '--check';
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const packages = lock.packages;
// Each family: the package that lists the native ones, and how their names spell os, cpu and libc.
const FAMILIES = [
  { parent: 'rollup', native: /^@rollup\/rollup-([a-z0-9]+)-([a-z0-9]+)(?:-([a-z]+))?$/ },
  { parent: '@biomejs/biome', native: /^@biomejs\/cli-([a-z0-9]+)-([a-z0-9]+)(?:-([a-z]+))?$/ },
];
const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  const family = FAMILIES.find(({ parent }) => path === `node_modules/${parent}` || path.endsWith(`/node_modules/${parent}`));
  if (!family) continue;
  const prefix = path.slice(0, -family.parent.length);
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const match = family.native.exec(name);
    if (!match || packages[`${prefix}${name}`]) continue;
    const [, os, cpu, abi] = match;
    const added = { version, cpu: [cpu], dev: entry.dev === true ? true : undefined };
    if (os === 'linux') added.libc = [abi?.startsWith('musl') ? 'musl' : 'glibc'];
    Object.assign(added, { license: entry.license ?? 'MIT', optional: true, os: [os] });
    if (added.dev === undefined) delete added.dev;
    missing.push([`${prefix}${name}`, added]);
  }
}
if (missing.length === 0) {
  console.log('package-lock.json lists every native package of rollup and Biome');
  process.exit(0);
}
if (checkOnly) {
  console.log(`package-lock.json lacks ${missing.length} native packages, e.g. ${missing[0][0]}`);
  process.exit(1);
}
for (const [path, added] of missing) packages[path] = added;
// npm keeps the packages map sorted by path (the root "" first).
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))),
);
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${missing.length} native packages to package-lock.json`);
EOF
