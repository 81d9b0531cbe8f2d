import { terminalCell } from './terminal';

/** A plain text table, columns padded to their widest cell; cells made printable first. */
export function renderTable(headers: string[], cells: string[][]): string {
  const rows = cells.map((row) => row.map(terminalCell));
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
