/**
 * A promise's answer, or `fallback()`'s if it has none within `ms` (a throwing fallback rejects).
 * The promise itself runs on; only the wait for it is bounded.
 */
export function within<T>(promise: Promise<T>, ms: number, fallback: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(fallback());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
