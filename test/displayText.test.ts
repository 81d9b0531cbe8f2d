import { markdownText, terminalText } from '../src/domain/displayText';
import { jobWorkflowStartOptions } from '../src/workflows/startOptions';

/** Text from outside (providers, models, owners' keys) is shown as text, never as commands. */
describe('terminalText: what reaches an operator’s terminal', () => {
  test.each([
    ['a colour (CSI)', 'a\u001b[31mred\u001b[0m b', 'ared b'],
    ['a screen clear in 8-bit CSI', 'x\u009b2Jy', 'xy'],
    ['a window title (OSC, BEL-terminated)', 'x\u001b]0;pwned\u0007y', 'xy'],
    ['a hyperlink (OSC 8, ST-terminated)', 'x\u001b]8;;http://evil\u001b\\y', 'xy'],
    ['a charset switch and a lone ESC', 'x\u001b(By\u001b', 'xy'],
    ['C0 and C1 controls', 'a\u0000b\u0007c\rd\u0008e\u007ff\u0085g', 'abcdefg'],
  ])('strips %s', (_t, text, shown) => {
    expect(terminalText(text)).toBe(shown);
  });

  test('keeps newlines, tabs and any other text', () => {
    expect(terminalText('line 1\n\tline 2 · é ✓ 漢')).toBe('line 1\n\tline 2 · é ✓ 漢');
  });
});

describe('markdownText: what reaches the Temporal Web UI (rendered as Markdown)', () => {
  test('a link shows as its text, not as a link', () => {
    expect(markdownText('[click](http://evil)')).toBe('\\[click\\]\\(http://evil\\)');
  });

  test('every character Markdown (or HTML in it) gives a meaning is escaped, and newlines are spaces', () => {
    expect(markdownText('\\`*_[]()#+-!|<>~')).toBe(
      '\\\\\\`\\*\\_\\[\\]\\(\\)\\#\\+\\-\\!\\|\\<\\>\\~',
    );
    expect(markdownText('a\n# heading\r\nb')).toBe('a \\# heading b');
    expect(markdownText('plain text 42: ok.')).toBe('plain text 42: ok.');
  });

  test('a job workflow’s summary and details show an owner’s key literally', () => {
    const options = jobWorkflowStartOptions(
      { ownerId: 'owner<img>', idempotencyKey: '[click](http://evil)', type: 'summarize' },
      'onejob',
    );
    for (const text of [options.staticSummary, options.staticDetails]) {
      expect(text).toContain('\\[click\\]\\(http://evil\\)');
      expect(text).toContain('owner\\<img\\>');
      expect(text).not.toContain('[click](');
    }
  });
});
