import { terminalText } from '../domain/displayText';

/**
 * JSON for an operator's terminal: every string stripped of control sequences, so that neither
 * the output nor a string taken out of it (`jq -r`) can drive the terminal.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, item: unknown) => (typeof item === 'string' ? terminalText(item) : item),
    2,
  );
}

/** One table cell: printable, and on one line. */
export function terminalCell(text: string): string {
  return terminalText(text).replace(/[\n\t]/g, ' ');
}
