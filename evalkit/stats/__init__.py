"""Statistics for human evaluation: agreement, tests, intervals, Bradley–Terry, Plackett–Luce, MOS, z-scores,
signal detection, calibration, correlation, sample size.

One module per family; this package re-exports their public functions and result classes, so that
``from evalkit import stats; stats.fleiss_kappa(...)`` and ``from evalkit.stats import fleiss_kappa`` work:

- :mod:`.agreement`: Fleiss' and Cohen's kappa, Krippendorff's alpha, alpha from long-format data.
- :mod:`.intervals`: Wilson interval, binomial test, win rate, Cohen's h, sample sizes, mean and median
  intervals, Wilcoxon / Mann–Whitney, the paired Wilcoxon test with Hodges–Lehmann, z-scores by evaluator.
- :mod:`.rankings`: win matrix, Bradley–Terry and Plackett–Luce with their bootstraps, best-of-n shares,
  bootstrap indexes.
- :mod:`.detection`: d' and the expected calibration error.
- :mod:`.correlations`: Pearson, Spearman and Kendall correlation, Spearman's exact p-value.
- :mod:`.spans`: error-span annotation: Holm's adjustment, kappa from a 2x2 table, a ratio's and annotator
  pairs' agreement bootstrap intervals.
- :mod:`.common`: helpers shared by several of them (NaN, argument checks, label coding).

scipy and ``krippendorff`` do the work wherever they can (binomial tests,
Wilson intervals, t and median intervals, Wilcoxon / Mann–Whitney, Krippendorff's
alpha, correlations and their tests, the BFGS finish of Plackett–Luce).
Written here by hand, because neither offers them: Fleiss' and Cohen's kappa
(a few lines of arithmetic on count tables; statsmodels has them but is a heavy
dependency for two formulas), Bradley–Terry and Plackett–Luce (no maintained
scipy routine; vectorised minorise–maximise fits; ``choix`` loops in Python),
Cohen's h / the two-proportion sample size, d' and the calibration error (closed
forms), the Hodges–Lehmann estimate (a selection, to avoid listing n² averages),
alpha from long-format data (the package's memory grows with units x values²),
the exact chance test of best-of-n shares (scipy's Poisson-binomial builds an
outcomes x trials table) and Spearman's exact permutation p-value for n <= 10
(scipy's permutation test lists the n! pairings: seconds per correlation). Each
module's docstring gives the references of its statistics; each function says why where it matters.

May import: its own submodules only (which import numpy, scipy, pandas and ``krippendorff``; never other
evalkit modules).
"""

from __future__ import annotations

from .agreement import alpha_from_long, cohen_kappa, fleiss_kappa, krippendorff_alpha
from .common import NAN as NAN
from .correlations import SPEARMAN_EXACT_MAX_N as SPEARMAN_EXACT_MAX_N
from .correlations import Correlation, correlation
from .detection import Calibration, DPrime, d_prime, expected_calibration_error
from .intervals import (
    MeanCI,
    MedianCI,
    PairedWilcoxon,
    WinRate,
    binomial_test,
    cohens_h,
    mann_whitney_u,
    mean_ci,
    median_ci,
    paired_wilcoxon,
    sample_size_one_proportion,
    sample_size_paired,
    sample_size_two_proportions,
    wilcoxon_signed_rank,
    wilson_interval,
    win_rate,
    zscores_by_evaluator,
)
from .rankings import (
    best_of_n_shares,
    bootstrap_indexes,
    bradley_terry,
    bradley_terry_bootstrap,
    bradley_terry_matrix,
    plackett_luce,
    plackett_luce_bootstrap,
    win_matrix,
)
from .spans import PairAgreement, RatioCI, holm, kappa_from_counts, pair_agreement, ratio_ci

__all__ = [
    "Calibration",
    "Correlation",
    "DPrime",
    "MeanCI",
    "MedianCI",
    "PairAgreement",
    "PairedWilcoxon",
    "RatioCI",
    "WinRate",
    "alpha_from_long",
    "best_of_n_shares",
    "binomial_test",
    "bootstrap_indexes",
    "bradley_terry",
    "bradley_terry_bootstrap",
    "bradley_terry_matrix",
    "cohen_kappa",
    "cohens_h",
    "correlation",
    "d_prime",
    "expected_calibration_error",
    "fleiss_kappa",
    "holm",
    "kappa_from_counts",
    "krippendorff_alpha",
    "mann_whitney_u",
    "mean_ci",
    "median_ci",
    "pair_agreement",
    "paired_wilcoxon",
    "plackett_luce",
    "plackett_luce_bootstrap",
    "ratio_ci",
    "sample_size_one_proportion",
    "sample_size_paired",
    "sample_size_two_proportions",
    "wilcoxon_signed_rank",
    "wilson_interval",
    "win_matrix",
    "win_rate",
    "zscores_by_evaluator",
]
