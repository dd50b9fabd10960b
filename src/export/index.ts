// Configurations for nginx, Apache, Caddy and systemd that serve a depot as depotkit serve does.
export { EXPORT_TARGETS, type ExportTarget } from '../constants.js';
export { exportConfig } from './export.js';
export { reloadCommand } from './reload.js';
export type { ExportOptions, ExportReport, ExportedFile, ExportedRole } from './types.js';
export { currentDepotkitCommand } from './systemd.js';
export { renderTemplate, loadTemplate, TEMPLATE_NAMES, type TemplateScope, type TemplateValue } from './template.js';
export { basicAuthDirective, parseCaddyVersion, caddyVersionOption, installedCaddyVersion } from './caddy.js';
