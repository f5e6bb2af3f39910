import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';

/**
 * The static import graph of a source tree: every `import … from './x.js'`, `import type`, `export … from`
 * and bare `import './x.js'` with a relative specifier, `.js` read as the `.ts` beside it. Type-only
 * imports count: a circle of types is still two modules that cannot be understood apart. Dynamic
 * `import()` does not (it is how a module defers a dependency on purpose).
 */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const STATIC_IMPORT = /^[ \t]*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/gm;

/** The specifiers `source` imports statically, in order. */
export function staticImports(source: string): string[] {
  return [...source.matchAll(STATIC_IMPORT)].map((match) => match[1] as string);
}

/** The graph of every `.ts` file under `root`, keyed by path relative to `root` with `/` separators. */
export function importGraph(root: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(root)) {
    const from = toKey(root, file);
    const targets = staticImports(readFileSync(file, 'utf8'))
      .filter((spec) => spec.startsWith('./') || spec.startsWith('../'))
      .map((spec) => posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts'));
    graph.set(from, [...new Set(targets)]);
  }
  return graph;
}

/**
 * One cycle per strongly connected component of more than one module (or a module importing itself),
 * each as the modules in import order with the first repeated at the end; components in path order.
 */
export function importCycles(graph: ImportGraph): string[][] {
  return stronglyConnected(graph)
    .filter(
      (component) =>
        component.length > 1 || (graph.get(component[0] ?? '') ?? []).includes(component[0] ?? ''),
    )
    .map((component) => shortestCycle(graph, new Set(component)))
    .sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/** Tarjan's algorithm, iterative so a deep tree cannot overflow the stack. */
function stronglyConnected(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const start of [...graph.keys()].sort()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; edge: number };
      const edges = (graph.get(frame.node) ?? []).filter((target) => graph.has(target));
      const target = edges[frame.edge++];
      if (target !== undefined) {
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(target) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component.sort());
      }
    }
  }
  return components;
}

/** The shortest cycle through the component's first module, found breadth-first inside the component. */
function shortestCycle(graph: ImportGraph, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0] as string;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const target of graph.get(node) ?? []) {
      if (!component.has(target)) continue;
      if (target === start) {
        const path = [node];
        for (let at = node; at !== start; ) {
          at = previous.get(at) as string;
          path.unshift(at);
        }
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function toKey(root: string, file: string): string {
  return relative(root, file).split(sep).join('/');
}

const RUNTIME_IMPORT = /^[ \t]*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/gm;

/** The specifiers `source` loads when it runs: static imports and re-exports that are not type-only. */
export function runtimeImports(source: string): string[] {
  return [...source.matchAll(RUNTIME_IMPORT)].map((match) => match[1] as string);
}

/**
 * Everything loading `entry` (a path under `root`) loads: the modules of `root` it reaches through
 * runtime imports, and the packages and `node:` modules they name.
 */
export function runtimeClosure(root: string, entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const key = pending.pop() as string;
    if (modules.has(key)) continue;
    modules.add(key);
    for (const spec of runtimeImports(readFileSync(join(root, key), 'utf8'))) {
      if (spec.startsWith('./') || spec.startsWith('../')) {
        pending.push(posix.normalize(posix.join(posix.dirname(key), spec)).replace(/\.js$/, '.ts'));
      } else {
        packages.add(spec);
      }
    }
  }
  return { modules: [...modules].sort(), packages: [...packages].sort() };
}

/**
 * The arrows running back up between the top-level folders of a graph (`cli/…`, `mcp/…`; a file at the
 * root is folder `.`): each pair of folders that import each other, as `a → b` with its file-level imports
 * (`a` before `b` in path order, so each pair is listed once, then `b → a`). Folders import one way only,
 * so each can be read with the ones below it and none above.
 */
export function folderArrowsBack(graph: ImportGraph): string[] {
  const folder = (file: string) => (file.includes('/') ? (file.split('/')[0] as string) : '.');
  const edges = new Map<string, string[]>();
  for (const [from, targets] of graph) {
    for (const target of targets) {
      const [a, b] = [folder(from), folder(target)];
      if (a === b || !graph.has(target)) continue;
      const key = `${a} → ${b}`;
      edges.set(key, [...(edges.get(key) ?? []), `${from} → ${target}`]);
    }
  }
  const back: string[] = [];
  for (const [key, imports] of [...edges].sort(([x], [y]) => x.localeCompare(y))) {
    const [a, b] = key.split(' → ') as [string, string];
    const reverse = edges.get(`${b} → ${a}`);
    if (reverse === undefined || a > b) continue;
    back.push(`${key} (${imports.join(', ')})`, `${b} → ${a} (${reverse.join(', ')})`);
  }
  return back;
}
