// Fail when a file of the panel (src/) is over 400 lines or a function in it over 80 (issue
// 32; native/scripts/check_sizes.py holds the C to the same kind of limits). Functions are
// found by the TypeScript parser: declarations, methods, accessors, constructors and arrow or
// function expressions, each counted from its first line to its last. Prints every offender
// and exits 1, else one line saying all are within limits.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const FILE_MAX = 400;
const FUNCTION_MAX = 80;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ts = createRequire(join(root, 'package.json'))('typescript');

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

function nameOf(node, file) {
  if (node.name) return node.name.getText(file);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))) {
    return parent.name.getText(file);
  }
  return '(anonymous)';
}

/** [name, first line, line count] of every function in `file`. */
function functions(file) {
  const found = [];
  const visit = node => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push([nameOf(node, file), first + 1, last - first + 1]);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const bad = [];
const files = sources(join(root, 'src')).sort();
let count = 0;
for (const path of files) {
  const text = readFileSync(path, 'utf8');
  const rel = relative(root, path);
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > FILE_MAX) bad.push(`${rel}: ${lines} lines (at most ${FILE_MAX})`);
  const kind = path.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  for (const [name, first, length] of functions(file)) {
    count++;
    if (length > FUNCTION_MAX) {
      bad.push(`${rel}:${first}: ${name}() is ${length} lines (at most ${FUNCTION_MAX})`);
    }
  }
}
for (const line of bad) console.log(`sizes: ${line}`);
if (bad.length) process.exit(1);
console.log(`sizes: ${files.length} files, ${count} functions, all within limits`);
