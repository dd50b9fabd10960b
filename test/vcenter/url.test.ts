import { describe, expect, it } from 'vitest';
import { parseServerUrl } from '../../src/vcenter/index.js';
import { DepotkitError } from '../../src/util/errors.js';
import { hostOf, parseHttpsOrigin } from '../../src/util/url.js';

describe('parseHttpsOrigin and hostOf', () => {
  it('keeps the origin of an https URL, https by default, without its path', () => {
    expect(parseHttpsOrigin('https://vc.lab.local:8443/ui/?x=1', 'the server').href).toBe('https://vc.lab.local:8443/');
    expect(parseHttpsOrigin('vc.lab.local', 'the server').origin).toBe('https://vc.lab.local');
    expect(parseHttpsOrigin('https://VC.Lab.Local:443', 'the server').origin).toBe('https://vc.lab.local');
  });

  it('gives IPv6 hosts without brackets, as certificates name them', () => {
    const url = parseHttpsOrigin('https://[fd00::10]:8443', 'the server');
    expect(url.host).toBe('[fd00::10]:8443');
    expect(hostOf(url)).toBe('fd00::10');
    expect(hostOf(parseHttpsOrigin('10.0.0.5', 'the server'))).toBe('10.0.0.5');
  });

  it('refuses other schemes and non-URLs with one sentence naming the server (exit 2)', () => {
    expect(() => parseHttpsOrigin('http://vc.lab.local', 'the management server')).toThrow(
      'The management server is reached over HTTPS, not http: use https://vc.lab.local.',
    );
    expect(() => parseHttpsOrigin('https://exa mple', 'the installer')).toThrow(
      '"https://exa mple" is not a URL of the installer; give it as https://host[:port].',
    );
    try {
      parseHttpsOrigin('ftp://x', 'the installer');
    } catch (err) {
      expect(err).toBeInstanceOf(DepotkitError);
      expect(err).toMatchObject({ exitCode: 2 });
    }
    expect.assertions(4);
  });

  it('is what the management client parses its server with', () => {
    expect(parseServerUrl('[::1]:9443/x').href).toBe('https://[::1]:9443/');
    expect(() => parseServerUrl('http://127.0.0.1:1')).toThrow(/^The management server is reached over HTTPS/);
  });
});
