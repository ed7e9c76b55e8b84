/**
 * Reads docs/petstore-interface.md, the interface this project implements, into data a test can
 * compare with schema/openapi.yaml: its headings, its pipe tables (with the line that introduces
 * each) and its `- Key: value` bullets. Backticks are dropped from table cells and bullet values.
 */
import { readFileSync } from 'node:fs';

export const INTERFACE_SPEC_FILE = new URL('../../docs/petstore-interface.md', import.meta.url);

export interface SpecTable {
  /** The last text line before the table ("Query parameters:"), or '' when a heading precedes it. */
  caption: string;
  rows: Array<Record<string, string>>;
}

export interface SpecSection {
  title: string;
  text: string;
  tables: SpecTable[];
  /** `- Key: value` bullets, by key. */
  bullets: Map<string, string>;
}

const unquote = (cell: string) => cell.replaceAll('`', '').trim();
const cellsOf = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map(unquote);

function tablesOf(lines: string[]): SpecTable[] {
  const tables: SpecTable[] = [];
  let caption = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]?.trim() ?? '';
    if (!line.startsWith('|')) {
      if (line !== '') caption = line;
      continue;
    }
    const columns = cellsOf(line);
    if (!/^\|?\s*:?-+/.test(lines[i + 1]?.trim() ?? '')) throw new Error(`table without a separator row: ${line}`);
    const rows: SpecTable['rows'] = [];
    for (i += 2; lines[i]?.trim().startsWith('|'); i++) {
      const cells = cellsOf(lines[i] ?? '');
      if (cells.length !== columns.length) throw new Error(`row of ${cells.length} cells under ${columns.length}`);
      rows.push(Object.fromEntries(columns.map((column, at) => [column, cells[at] ?? ''])));
    }
    tables.push({ caption, rows });
    caption = '';
  }
  return tables;
}

function bulletsOf(lines: string[]): Map<string, string> {
  const bullets = new Map<string, string>();
  for (const line of lines) {
    const match = /^- ([^:]+): (.+)$/.exec(line.trim());
    if (match?.[1] && match[2]) bullets.set(unquote(match[1]), unquote(match[2]));
  }
  return bullets;
}

/** The document's sections, by heading title (any level), each holding the lines up to the next heading. */
export function readInterfaceSpec(markdown = readFileSync(INTERFACE_SPEC_FILE, 'utf8')): Map<string, SpecSection> {
  const sections = new Map<string, SpecSection>();
  let inCode = false;
  /** `prose` leaves code blocks out, so a `|` or `- ` in one is never read as a table or a bullet. */
  let current: { title: string; lines: string[]; prose: string[] } | undefined;
  const close = () => {
    if (!current) return;
    const { title, lines, prose } = current;
    sections.set(title, { title, text: lines.join('\n'), tables: tablesOf(prose), bullets: bulletsOf(prose) });
  };
  for (const line of markdown.split(/\r?\n/)) {
    const fence = line.trim().startsWith('```');
    if (fence) inCode = !inCode;
    const heading = inCode || fence ? null : /^#{1,6}\s+(.+?)\s*#*$/.exec(line);
    if (heading?.[1]) {
      close();
      current = { title: heading[1], lines: [], prose: [] };
      continue;
    }
    current?.lines.push(line);
    if (!inCode && !fence) current?.prose.push(line);
  }
  close();
  return sections;
}

/** The section with this title; throws, naming the titles there are, when it is missing. */
export function sectionOf(spec: Map<string, SpecSection>, title: string | RegExp): SpecSection {
  const found = [...spec.values()].find((s) => (typeof title === 'string' ? s.title === title : title.test(s.title)));
  if (!found) throw new Error(`docs/petstore-interface.md has no section ${title}: ${[...spec.keys()].join(' | ')}`);
  return found;
}

/** The one table of a section whose caption matches (any caption when omitted). */
export function tableOf(section: SpecSection, caption: RegExp = /.*/): SpecTable['rows'] {
  const tables = section.tables.filter((table) => caption.test(table.caption));
  if (tables.length !== 1) throw new Error(`${section.title}: ${tables.length} tables captioned ${caption}`);
  return tables[0]?.rows ?? [];
}
