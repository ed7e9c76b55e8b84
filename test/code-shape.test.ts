import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The project's size rules (STYLE.md): a file past 200 lines is usually two concerns, a function
// past 60 two steps. Generated code is not written by hand, so it is left out.
const MAX_FILE_LINES = 200;
const MAX_FUNCTION_LINES = 60;

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
  it('name each function over 60 lines, of every kind, and each file over 200, by file and line', () => {
    const text = [
      `function declared() {\n${body(59)}\n}`,
      `const arrow = () => {\n${body(59)}\n};`,
      `const expression = function () {\n${body(59)}\n};`,
      `class Shape {\n  method() {\n${body(59)}\n  }\n}`,
      `const object = { property: () => {\n${body(59)}\n} };`,
      `export default function () {\n${body(59)}\n}`,
      `function fits() {\n${body(58)}\n}`,
    ].join('\n');
    expect(shapeProblems('src/example.ts', text)).toEqual([
      `src/example.ts:1 the file has ${lineCount(text)} lines (at most 200)`,
      'src/example.ts:1 declared has 61 lines (at most 60)',
      'src/example.ts:62 arrow has 61 lines (at most 60)',
      'src/example.ts:123 expression has 61 lines (at most 60)',
      'src/example.ts:185 method has 61 lines (at most 60)',
      'src/example.ts:247 property has 61 lines (at most 60)',
      'src/example.ts:308 (anonymous) has 61 lines (at most 60)',
    ]);
  });

  it('let a file of 200 lines and a function of 60 lines through', () => {
    const text = `function fits() {\n${body(58)}\n}\n${'\n'.repeat(140)}`;
    expect(lineCount(text)).toBe(200);
    expect(shapeProblems('src/fits.ts', text)).toEqual([]);
  });

  it('hold every file under src/ to them', () => {
    const files = sourceFiles('src');
    expect(files.length).toBeGreaterThan(100);
    const problems = files.flatMap((file) => shapeProblems(file, readFileSync(file, 'utf8')));
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
