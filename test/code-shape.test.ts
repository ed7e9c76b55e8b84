import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The project's size rules (STYLE.md): a file past 300 lines is usually two concerns, a function
// past 80 two steps; below that, a file reads better whole than cut to fit. Generated code is left out.
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function isFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The name a reader would search for: its own, or the variable or property it is assigned to. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText();
  return ts.isConstructorDeclaration(node) ? 'constructor' : '(anonymous)';
}

/** Every breach of the size rules in one file, each as `file:line what`. */
function shapeProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = lineCount(text);
  if (lines > MAX_FILE_LINES) problems.push(`${file}:1 the file has ${lines} lines (at most ${MAX_FILE_LINES})`);
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = lineOf(node.getStart(source));
      const length = lineOf(node.getEnd()) - first + 1;
      if (length > MAX_FUNCTION_LINES) {
        problems.push(`${file}:${first} ${nameOf(node)} has ${length} lines (at most ${MAX_FUNCTION_LINES})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return problems;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !path.split(/[\\/]/).includes('__generated__'))
    .map((path) => join(dir, path))
    .sort();
}

/** `count` lines of body, so that the function spans count + 2 lines with its braces. */
const body = (count: number) => Array.from({ length: count }, (_, i) => `  const v${i} = ${i};`).join('\n');

describe('the size rules', () => {
  it(`name each function over ${MAX_FUNCTION_LINES} lines, of every kind, and each file over ${MAX_FILE_LINES}, by file and line`, () => {
    const text = [
      `function declared() {\n${body(MAX_FUNCTION_LINES - 1)}\n}`,
      `const arrow = () => {\n${body(MAX_FUNCTION_LINES - 1)}\n};`,
      `const expression = function () {\n${body(MAX_FUNCTION_LINES - 1)}\n};`,
      `class Shape {\n  method() {\n${body(MAX_FUNCTION_LINES - 1)}\n  }\n}`,
      `const object = { property: () => {\n${body(MAX_FUNCTION_LINES - 1)}\n} };`,
      `export default function () {\n${body(MAX_FUNCTION_LINES - 1)}\n}`,
      `function fits() {\n${body(MAX_FUNCTION_LINES - 2)}\n}`,
    ].join('\n');
    const tooLong = MAX_FUNCTION_LINES + 1;
    // Each function spans tooLong lines; the class adds a line before the method and one after it.
    const starts = [1, 1 + tooLong, 1 + 2 * tooLong, 2 + 3 * tooLong, 3 + 4 * tooLong, 3 + 5 * tooLong];
    const names = ['declared', 'arrow', 'expression', 'method', 'property', '(anonymous)'];
    expect(shapeProblems('src/example.ts', text)).toEqual([
      `src/example.ts:1 the file has ${lineCount(text)} lines (at most ${MAX_FILE_LINES})`,
      ...names.map(
        (name, i) => `src/example.ts:${starts[i]} ${name} has ${tooLong} lines (at most ${MAX_FUNCTION_LINES})`,
      ),
    ]);
  });

  it(`let a file of ${MAX_FILE_LINES} lines and a function of ${MAX_FUNCTION_LINES} lines through`, () => {
    const text = `function fits() {\n${body(MAX_FUNCTION_LINES - 2)}\n}\n${'\n'.repeat(MAX_FILE_LINES - MAX_FUNCTION_LINES)}`;
    expect(lineCount(text)).toBe(MAX_FILE_LINES);
    expect(shapeProblems('src/fits.ts', text)).toEqual([]);
  });

  it('hold every file under src/ to them', () => {
    const files = sourceFiles('src');
    expect(files.length).toBeGreaterThan(50);
    const problems = files.flatMap((file) => shapeProblems(file, readFileSync(file, 'utf8')));
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
