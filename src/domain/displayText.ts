/**
 * Text from outside (providers, models, owners' keys, operators' reasons) made safe for where it
 * is shown: an operator's terminal, or the Temporal Web UI's Markdown. Pure, so workflow code
 * may call it.
 */

/**
 * Escape sequences a terminal acts on: CSI (7- or 8-bit) with its parameters; OSC, DCS, SOS, PM
 * and APC strings up to their terminator (or the end, if none); any other ESC and what follows.
 */
const TERMINAL_SEQUENCES =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]?|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -/]*[0-~]?/g;
/** C0 controls but tab and newline, DEL, and C1 controls. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Text fit to print on a terminal: escape sequences and control characters removed. */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_SEQUENCES, '').replace(CONTROLS, '');
}

/** Characters Markdown (and the HTML it lets through) gives a meaning to. */
const MARKDOWN_SPECIALS = /[\\`*_[\]()#+\-!|<>~]/g;

/**
 * Text that a Markdown renderer shows literally: every special character backslash-escaped, and
 * line breaks made spaces (a new line could start a heading, a list or a quote).
 */
export function markdownText(text: string): string {
  return text.replace(MARKDOWN_SPECIALS, '\\$&').replace(/\r\n|[\r\n]/g, ' ');
}
