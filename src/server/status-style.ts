// The status page's style sheet. System fonts only and no external resource: the depot network is air-gapped.
// Colours keep a contrast of at least 4.5:1 (WCAG AA) on their background in both schemes, and no state is
// told by colour alone. The colours are data, one palette per scheme, so that a rule can only use a colour
// both palettes define.

const LIGHT = {
  fg: '#1b1f24',
  bg: '#ffffff',
  muted: '#4a5360',
  line: '#c9d1d9',
  head: '#eef1f4',
  ok: '#0b6b2e',
  bad: '#a4161a',
  warn: '#7a4a00',
  code: '#f3f5f7',
};
type Colour = keyof typeof LIGHT;
const DARK: Record<Colour, string> = {
  fg: '#e6e9ed',
  bg: '#14171b',
  muted: '#b3bcc6',
  line: '#3a424c',
  head: '#1f252c',
  ok: '#6fdc8c',
  bad: '#ff9a9a',
  warn: '#f3c969',
  code: '#1f252c',
};

/** The palette as CSS custom properties, in the palette's order. */
const properties = (palette: Record<Colour, string>): string =>
  Object.entries(palette)
    .map(([name, value]) => `--${name}: ${value};`)
    .join(' ');

const colour = (name: Colour): string => `var(--${name})`;

export const STATUS_PAGE_STYLE = `
:root { color-scheme: light dark; ${properties(LIGHT)} }
@media (prefers-color-scheme: dark) { :root { ${properties(DARK)} } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: ${colour('fg')}; background: ${colour('bg')}; }
main, header, footer { max-width: 72rem; margin: 0 auto; padding: 0 1rem; }
header { padding-top: 1rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0; }
h2 { font-size: 1.25rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid ${colour('line')}; padding-bottom: 0.25rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 0.5rem; }
.verdict { font-weight: 600; padding: 0.5rem 0.75rem; border-left: 0.3rem solid currentColor; background: ${colour('head')}; }
.ok { color: ${colour('ok')}; } .bad { color: ${colour('bad')}; } .warn { color: ${colour('warn')}; }
.muted { color: ${colour('muted')}; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0.5rem 0; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 40rem) { dl { grid-template-columns: 1fr; } dd { margin-bottom: 0.5rem; } }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.9rem; }
pre { background: ${colour('code')}; border: 1px solid ${colour('line')}; padding: 0.75rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
pre .word { white-space: nowrap; }
.scroll { overflow-x: auto; margin: 0.5rem 0 1rem; }
.scroll:focus { outline: 2px solid ${colour('fg')}; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding: 0.25rem 0; }
th, td { border: 1px solid ${colour('line')}; padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }
thead th { background: ${colour('head')}; }
th[scope="rowgroup"] { background: ${colour('head')}; }
.version { font-weight: normal; }
th[scope="row"] { font-weight: normal; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.85rem; overflow-wrap: anywhere; width: 100%; }
td.num { text-align: right; white-space: nowrap; }
a { color: inherit; }
footer { margin: 2rem auto; font-size: 0.9rem; }
`;
