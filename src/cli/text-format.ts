/** How the commands write dates, tables and JSON answers, so that `keys`, `documents` and `webhooks` read alike. */

/** Minutes are enough to tell entries apart by eye; --json has the milliseconds. */
export const shortDate = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** For what happens seconds apart (delivery attempts, a rotation's end). */
export const secondDate = (date: Date) => `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** The one JSON document a --json answer is. */
export const jsonAnswer = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Rows in columns two spaces apart, the first row being the header; no trailing blanks. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, column) => cell.padEnd(widths[column] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}
