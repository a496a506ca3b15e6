/** Room password hashes: the stronger setting for new hashes, and hashes of the earlier setting keep verifying. */
import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../../src/auth/secrets.js';

/** Written by the code before this change (scrypt N = 2^14), for the password below. */
const EARLIER = 'scrypt$16384$8$1$Utv8ktimLxeT3CTouQb2pw$Rrd7z96zhy-oxdSS2ESRGxvASczOQ7Cnhi1ws9hdty8';
const PASSWORD = 'hunter2 but longer';

describe('room password hashes', () => {
  it('verifies a hash stored with the earlier parameters', async () => {
    expect(await verifyPassword(PASSWORD, EARLIER)).toBe(true);
    expect(await verifyPassword('hunter3 but longer', EARLIER)).toBe(false);
  });

  it('hashes new passwords with N = 2^15 and verifies them', async () => {
    const stored = await hashPassword(PASSWORD);
    expect(stored.startsWith('scrypt$32768$8$1$')).toBe(true);
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, stored)).toBe(false);
  });

  it('refuses stored parameters it never wrote instead of running them', async () => {
    const huge = EARLIER.replace('$16384$', '$1073741824$');
    expect(await verifyPassword(PASSWORD, huge)).toBe(false);
    expect(await verifyPassword(PASSWORD, EARLIER.replace('$16384$', '$16383$'))).toBe(false);
  });
});
