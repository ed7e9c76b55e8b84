// Reads a V8 .cpuprofile (node --cpu-prof) for the measured window of `npm run profile` and says where
// a request's time goes: self time per request, grouped by who owns the code (our files, each package,
// node's HTTP and streams, V8's GC), and the costliest functions.

import { readFileSync } from 'node:fs';
import type { ProfileWindow } from './profile-server.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileReport {
  requests: number;
  /** Main thread, from the profile's samples: on-CPU µs per request (idle excluded). */
  busyUsPerRequest: number;
  /** Every thread of the process (GC helpers, libuv's pool), from process.cpuUsage. */
  processCpuUsPerRequest: number;
  groups: { owner: string; usPerRequest: number }[];
  functions: { name: string; usPerRequest: number }[];
}

const CWD = `file://${process.cwd()}/`;

/** Who owns a frame: our file, a package, a part of Node, or V8 itself (GC, native calls). */
function ownerOf({ functionName, url }: CallFrame): string {
  if (url === '')
    return functionName === '(garbage collector)'
      ? 'V8: garbage collector'
      : `native: ${functionName || '(anonymous)'}`;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return `package: ${inPackage[1]}`;
  if (url.startsWith('node:')) return url.startsWith('node:internal/') ? 'node: internals' : url;
  return url.replace(CWD, '');
}

const nameOf = ({ functionName, url, lineNumber }: CallFrame) =>
  `${functionName || '(anonymous)'} ${url.replace(CWD, '').replace(/^.*node_modules\//, '')}:${lineNumber + 1}`;

function sortedPerRequest(totals: Map<string, number>, requests: number, top: number) {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => ({ key, usPerRequest: us / requests }));
}

export function reportProfile(profilePath: string, window: ProfileWindow, top = 25): ProfileReport {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    // A sample's time is the gap to the next one.
    const took = profile.timeDeltas[i + 1] ?? 0;
    if (at < window.fromUs || at > window.toUs) continue;
    const frame = frames.get(profile.samples[i] ?? -1);
    if (!frame || frame.functionName === '(idle)') continue;
    busy += took;
    const owner = ownerOf(frame);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + took);
    const name = nameOf(frame);
    byFunction.set(name, (byFunction.get(name) ?? 0) + took);
  }
  const requests = Math.max(window.requests, 1);
  return {
    requests: window.requests,
    busyUsPerRequest: busy / requests,
    processCpuUsPerRequest: window.cpuUs / requests,
    groups: sortedPerRequest(byOwner, requests, top).map(({ key, usPerRequest }) => ({ owner: key, usPerRequest })),
    functions: sortedPerRequest(byFunction, requests, top).map(({ key, usPerRequest }) => ({
      name: key,
      usPerRequest,
    })),
  };
}

export function formatReport(report: ProfileReport): string {
  const row = (us: number, label: string) => `${us.toFixed(2).padStart(8)}  ${label}`;
  return [
    `${report.requests} requests; per request: ${report.busyUsPerRequest.toFixed(1)} µs on the main thread, ` +
      `${report.processCpuUsPerRequest.toFixed(1)} µs of CPU across the process's threads`,
    '',
    'µs/request  self time by owner',
    ...report.groups.map(({ owner, usPerRequest }) => row(usPerRequest, owner)),
    '',
    'µs/request  self time by function',
    ...report.functions.map(({ name, usPerRequest }) => row(usPerRequest, name)),
  ].join('\n');
}
