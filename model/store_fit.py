"""Store the built-in fit's summary for the pages: `python -m model.store_fit`.

Fits the efficiency model to the built-in measurements, cross-validates it five-fold, and writes the fitted
terms, the number of points and the held-out band and median error to model/fit_summary.json with the
digest of the files they depend on (`model.calibrate.SUMMARY_INPUTS`).  The pages read that file instead of
fitting on a server's first visit; run this after changing any of those files (a test says so).
"""

from __future__ import annotations

from . import calibrate


def main() -> int:
    s = calibrate.write_summary()
    e = s.efficiency
    print(f"{calibrate.SUMMARY_PATH.relative_to(calibrate.SUMMARY_PATH.parents[1])}: {s.n} measurements; "
          f"η_bw {e.bandwidth:.3f}, η_c {e.compute:.3f}, s½ {e.expert_size_half / 1e6:.2f} M, "
          f"t_ℓp {1e3 * e.prompt_layer_s:.3f} ms; "
          f"five-fold band {s.band[0]:.2f}–{s.band[1]:.2f}, median error {100 * s.median_error:.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
