// A peak value in shared memory (Atomics has no max).

/** Compare-and-swap until the stored peak at index 0 is at least `value`. */
export function raisePeak(array, value) {
  for (let current = Atomics.load(array, 0); current < value; current = Atomics.load(array, 0)) {
    if (Atomics.compareExchange(array, 0, current, value) === current) return;
  }
}
