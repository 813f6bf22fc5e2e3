"""Flat <-> d32 conversion throughput, as a ratio of numpy's plain copy of the same bytes.

Run: .venv/bin/python bench/d32_convert.py
"""

from __future__ import annotations

import time

import numpy as np

from hexscope.engine import Tensor


def best_of(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'shape':>22} {'MB':>6} {'copy ms':>8} {'to_d32 ms':>10} {'ratio':>6} "
          f"{'to_flat ms':>11} {'ratio':>6}")
    for shape in [(1, 149, 149, 32), (1, 35, 35, 288), (1, 299, 299, 3), (1, 8, 8, 2048)]:
        flat = Tensor.from_array(rng.integers(0, 256, shape, dtype=np.uint8))
        d32 = flat.to_d32()
        # the peer: numpy copying the same number of bytes as the padded d32 buffer
        src = np.empty(d32.nbytes, np.uint8)
        copy_s = best_of(lambda src=src: src.copy())
        to_s = best_of(lambda flat=flat: flat.to_d32())
        back_s = best_of(lambda d32=d32: d32.to_flat())
        assert np.array_equal(d32.to_flat().array, flat.array)
        print(f"{str(shape):>22} {d32.nbytes / 1e6:6.2f} {copy_s * 1e3:8.3f} "
              f"{to_s * 1e3:10.3f} {to_s / copy_s:6.1f} {back_s * 1e3:11.3f} "
              f"{back_s / copy_s:6.1f}")


if __name__ == "__main__":
    main()
