import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in time independent of where, and of how much, they
 * differ: both sides are hashed first, so the buffers compared always have
 * one length and a length difference shows no earlier exit.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
