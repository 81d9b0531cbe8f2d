import { readFileSync } from 'node:fs';

/** The parts of a V8 CPU profile (`node --cpu-prof`) read here. */
interface V8CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
}

/** Where a process's busy CPU went, by kind of work, in milliseconds. */
export interface CpuProfileSummary {
  busyMs: number;
  idleMs: number;
  /** By kind of work (the first kind whose code is on the sample's stack), largest first. */
  byKind: Array<{ kind: string; ms: number; share: number }>;
  /** By function (self time), largest first. */
  topFunctions: Array<{ function: string; ms: number; share: number }>;
}

/**
 * Kinds of work, tried in this order against every frame of a sample's stack: a query built in
 * an activity counts as PostgreSQL, not as the Temporal SDK that runs the activity.
 */
const KINDS: Array<[kind: string, code: RegExp]> = [
  [
    'PostgreSQL client: build, send and parse queries',
    /^(pg|pg-protocol|pg-pool|postgres-date|src\/db)\//,
  ],
  [
    'provider calls: HTTP, SDKs, bounded bodies',
    /^(openai|@anthropic-ai\/sdk|src\/providers|undici)\//,
  ],
  ['logging', /^(pino|sonic-boom|thread-stream|src\/logger)/],
  ['validation (zod)', /^zod\//],
  [
    'Temporal SDK: core bridge, activations, payloads',
    /^(@temporalio\/[^/]+|rxjs|protobufjs|native postMessage|node:internal\/worker)/,
  ],
];

/** A frame's code, short: `pg/…`, `src/db/…`, `node:…`, or `native <name>`. */
function codeOf(frame: { functionName: string; url: string }): string {
  const { url } = frame;
  if (!url) return `native ${frame.functionName}`;
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dependency) return `${dependency[1]}/`;
  if (url.includes('deps/undici')) return 'undici/';
  const ours = /\/dist\/(src\/.*)$/.exec(url);
  return ours ? ours[1]! : url;
}

/** Reads a profile written by `node --cpu-prof` and says where its busy time went. */
export function summarizeCpuProfile(file: string, topFunctionCount = 10): CpuProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as V8CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, index) =>
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)),
  );

  let idleUs = 0;
  const kinds = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const name = `${frame.functionName || '(anonymous)'} ${codeOf(frame)}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    const stack: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at))
      stack.push(codeOf(byId.get(at)!.callFrame));
    const kind =
      frame.functionName === '(garbage collector)'
        ? 'garbage collection'
        : frame.functionName === 'runInContext' && !frame.url
          ? // Its own time, not the workflow code it runs: Node starts a watchdog thread for
            // every call with a timeout, and the SDK passes its isolate execution timeout.
            'entering the workflow sandbox (vm.runInContext with a timeout)'
          : (KINDS.find(([, code]) => stack.some((entry) => code.test(entry)))?.[0] ??
            'other: our code, Node internals, (program)');
    kinds.set(kind, (kinds.get(kind) ?? 0) + us);
  }
  const busyUs = [...kinds.values()].reduce((sum, us) => sum + us, 0);
  const largest = <K extends string>(counts: Map<string, number>, key: K, count = Infinity) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(
        ([name, us]) =>
          ({ [key]: name, ms: Math.round(us / 1000), share: us / busyUs }) as Record<K, string> & {
            ms: number;
            share: number;
          },
      );
  return {
    busyMs: Math.round(busyUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    byKind: largest(kinds, 'kind'),
    topFunctions: largest(functions, 'function', topFunctionCount),
  };
}
