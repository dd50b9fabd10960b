import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const KEY = randomBytes(32);

/** Compares two strings in time independent of where, and of how much, they differ (HMACs have one length). */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHmac('sha256', KEY).update(a).digest(), createHmac('sha256', KEY).update(b).digest());
}
