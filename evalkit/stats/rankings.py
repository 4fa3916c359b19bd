"""Rankings and choice models: win matrices, Bradley–Terry log-strengths and their evaluator bootstrap,
Plackett–Luce log-strengths and their bootstrap, best-of-n shares with an exact test against chance, and the
bootstrap resample indexes.

References: Bradley & Terry (1952), "Rank analysis of incomplete block designs: I. The method of paired
comparisons", Biometrika 39, 324–345; Ford (1957) and Hunter (2004), "MM algorithms for generalized
Bradley–Terry models", Annals of Statistics 32(1), 384–406 (the minorise–maximise fits, and Assumptions 1 and 2:
when a finite maximum exists); Luce (1959), Individual Choice Behavior, and Plackett (1975), "The analysis of
permutations", Applied Statistics 24(2), 193–202 (the Plackett–Luce model); Efron & Tibshirani (1993), An
Introduction to the Bootstrap (percentile intervals; evaluators resampled as clusters); Wilson (1927) for the
intervals of best-of-n shares.

Written here by hand, because scipy does not offer them: Bradley–Terry and Plackett–Luce (no maintained scipy
routine; vectorised minorise–maximise fits; ``choix`` loops over every ranking in Python on each step and raises
where no finite fit exists), the bootstraps' batched Newton fits (scipy's optimisers fit one problem at a time,
and minorise–maximise needs millions of steps on lopsided data: :func:`_fit_bt_batch`), and the exact chance
test of best-of-n shares (scipy's Poisson-binomial builds an outcomes x trials table:
:func:`_sum_of_binomials_p_value`). scipy finishes the Plackett–Luce fit (BFGS) and finds the strongly connected
groups. Each function says why where it matters.

May import: numpy, scipy, pandas and sibling ``evalkit.stats`` modules only (here :mod:`.common` and
:mod:`.intervals`); never other evalkit modules.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize as _optimize
from scipy import stats as _st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from .common import NAN, check_confidence
from .intervals import binomial_test, wilson_interval

# ----------------------------------------------------------------------------- Bradley–Terry


def _columns(records: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(item_a, item_b, outcome) as three arrays, from records or from columns (arrays, Series, a DataFrame)."""
    if hasattr(records, "columns") and hasattr(records, "iloc"):  # a DataFrame: its first three columns
        return tuple(records.iloc[:, k].to_numpy() for k in range(3))  # type: ignore[return-value]
    if isinstance(records, tuple) and len(records) == 3 and all(hasattr(c, "__array__") for c in records):
        a, b, o = (np.asarray(c) for c in records)
        if not len(a) == len(b) == len(o):
            raise ValueError("the three columns must have the same length")
        return a, b, o
    rows = list(records)
    for rec in rows:
        if len(rec) != 3:
            raise ValueError(f"a record is (item_a, item_b, outcome), got {rec!r}")
        break
    if not rows:
        empty = np.array([], dtype=object)
        return empty, empty, empty
    a, b, o = zip(*rows, strict=True)
    return np.array(a, dtype=object), np.array(b, dtype=object), np.array(o, dtype=object)


def win_matrix(records: Any, ties: str = "half") -> tuple[list[str], np.ndarray]:
    """Items and the matrix W with W[i, j] = wins of item i over item j (ties as configured).

    ``records`` is an iterable of ``(item_a, item_b, outcome)`` or, for speed on
    millions of comparisons, three columns (arrays or a DataFrame). Vectorised:
    the cost is a few passes over the columns in NumPy.
    """
    if ties not in ("half", "drop"):
        raise ValueError(f"ties must be 'half' or 'drop', got {ties!r}")
    a, b, out = _columns(records)
    outcome_codes, outcome_names = pd.factorize(out)  # hash-based: linear in the number of records
    bad = [o for o in outcome_names if o not in ("a", "b", "tie")]
    if bad:
        raise ValueError(f"outcome must be 'a', 'b' or 'tie', got {bad[0]!r}")
    if len(a) == 0:
        return [], np.zeros((0, 0))
    codes, uniques = pd.factorize(np.concatenate([a, b]))
    names = np.array([str(u) for u in uniques])
    order = np.argsort(names, kind="stable")  # items in sorted order, as before
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = rank[codes]
    items_arr = names[order]
    ia, ib = codes[: len(a)], codes[len(a):]
    same = ia == ib
    if same.any():
        raise ValueError(f"an item cannot be compared with itself: {a[same][0]!r}")
    k = len(items_arr)
    w = np.zeros(k * k)
    code_of = {str(name): c for c, name in enumerate(outcome_names)}
    win_a, win_b = outcome_codes == code_of.get("a", -2), outcome_codes == code_of.get("b", -2)
    w += np.bincount(ia[win_a] * k + ib[win_a], minlength=k * k)
    w += np.bincount(ib[win_b] * k + ia[win_b], minlength=k * k)
    if ties == "half":
        tie = outcome_codes == code_of.get("tie", -2)
        w += 0.5 * np.bincount(ia[tie] * k + ib[tie], minlength=k * k)
        w += 0.5 * np.bincount(ib[tie] * k + ia[tie], minlength=k * k)
    return [str(x) for x in items_arr], w.reshape(k, k)


def _fit_bt(w: np.ndarray, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """Minorise–maximise (Hunter 2004) on a win matrix whose items all win and lose something."""
    n_ij = w + w.T
    wins = w.sum(axis=1)
    p = np.ones(len(w))
    for _ in range(max_iter):
        denom = (n_ij / (p[:, None] + p[None, :])).sum(axis=1)
        new = wins / denom
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            return new
        p = new
    return p


def bradley_terry(records: Any, ties: str = "half") -> dict[str, float]:
    """Maximum-likelihood Bradley–Terry log-strengths, centred to mean 0 over the finite ones.

    ``records`` are ``(item_a, item_b, outcome)`` with outcome ``"a"``, ``"b"``
    or ``"tie"``. ``ties="half"`` counts a tie as half a win for each side,
    ``"drop"`` ignores ties. An item that never wins (nor ties) has strength 0:
    log-strength ``-inf``; an item that never loses has ``+inf``; either is set
    aside and the rest are fitted among themselves (repeatedly, as setting one
    aside can leave another without a win). When every item wins and loses but the
    wins still split the items into groups that one direction of comparison never
    crosses (no finite maximum-likelihood fit exists), a group that never beats
    the others gets ``-inf`` and one never beaten ``+inf`` (see
    :func:`_dominated_groups`). The fit works on the aggregated win
    matrix, so its cost does not depend on the number of records. ``records``
    may also be three columns (arrays or a DataFrame), see :func:`win_matrix`.
    """
    return bradley_terry_matrix(*win_matrix(records, ties))


def _dominated_groups(sub: np.ndarray, compared: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Items of groups that never win / never lose against the rest, when every item wins and loses something.

    The maximum-likelihood fit exists only when the "beat" graph is strongly
    connected (Ford 1957; Hunter 2004, Assumption 1). When it is not, e.g.
    A and B beat each other and both always beat C and D, who beat each other,
    the likelihood grows without bound as {A, B} and {C, D} drift apart and
    the minorise–maximise fit would never converge. The strongly connected
    components of the graph with no win over any other component (bottom)
    get ``-inf``, those with no loss (top) ``+inf``, like single items that
    never win or lose; components with neither are left to the fit.
    """
    n_comp, label = connected_components(csr_matrix(sub > 0), directed=True, connection="strong")
    if n_comp < 2:
        return np.zeros(len(sub), dtype=bool), np.zeros(len(sub), dtype=bool)
    member = np.eye(n_comp)[label]  # items x components
    between = member.T @ sub @ member  # wins of component a over component b
    np.fill_diagonal(between, 0)
    out_wins, out_losses = between.sum(axis=1), between.sum(axis=0)
    bottom, top = (out_wins == 0) & (out_losses > 0), (out_losses == 0) & (out_wins > 0)
    return compared & bottom[label], compared & top[label]


def bradley_terry_matrix(items: Sequence[str], w: Any) -> dict[str, float]:
    """:func:`bradley_terry` from an aggregated win matrix (``w[i, j]`` = wins of ``items[i]`` over ``items[j]``).

    For callers that count wins themselves (the analysis does, on integer codes);
    :func:`win_matrix` builds the same matrix from records.
    """
    w = np.asarray(w, dtype=float)
    if w.shape != (len(items), len(items)):
        raise ValueError(f"the win matrix must be {len(items)} x {len(items)}, got {w.shape}")
    fixed, fit = _set_aside(w)
    logs = fixed.copy()
    if fit.any():
        fitted = np.log(_fit_bt(w[np.ix_(fit, fit)]))
        logs[fit] = fitted - fitted.mean()
    return {item: float(v) for item, v in zip(items, logs, strict=True)}


def _set_aside(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The items of a win matrix that get no finite fit, and those left to fit: ``(fixed, fit)``.

    ``fixed[k]`` is ``-inf`` for an item that never wins (nor ties), ``+inf`` for one that never loses, the same
    for whole groups that never beat / are never beaten by the rest (:func:`_dominated_groups`), NaN for an item
    in no comparison with the items that remain, and 0 for the items of ``fit``. Setting items aside is repeated,
    as setting one aside can leave another without a win. Shared by :func:`bradley_terry_matrix` and
    :func:`plackett_luce` (whose ``w[i, j]`` counts the rankings that put i above j).
    """
    fixed = np.zeros(len(w))
    active = np.ones(len(w), dtype=bool)
    while True:
        sub = w[np.ix_(active, active)]
        idx = np.flatnonzero(active)
        compared = (sub + sub.T).sum(axis=1) > 0
        wins, losses = sub.sum(axis=1), sub.sum(axis=0)
        never_win = compared & (wins == 0)
        never_lose = compared & (losses == 0) & ~never_win
        if not never_win.any() and not never_lose.any():
            never_win, never_lose = _dominated_groups(sub, compared)
            if not never_win.any() and not never_lose.any():
                break
        fixed[idx[never_win]] = -math.inf
        fixed[idx[never_lose]] = math.inf
        active[idx[never_win | never_lose]] = False
    idx = np.flatnonzero(active)
    sub = w[np.ix_(idx, idx)]
    compared = (sub + sub.T).sum(axis=1) > 0
    fixed[idx[~compared]] = NAN  # an item in no comparison at all has no estimate
    fit = np.zeros(len(w), dtype=bool)
    fit[idx[compared]] = True
    return fixed, fit


# ----------------------------------------------------------------------------- Bradley–Terry bootstrap


def bootstrap_indexes(n: int, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """The resamples of :func:`bradley_terry_bootstrap`: ``resamples`` x ``n`` indexes drawn with replacement
    from ``range(n)`` by NumPy's PCG64 seeded with ``seed`` (the same seed gives the same resamples)."""
    if n < 0 or resamples < 1:
        raise ValueError(f"need n >= 0 and resamples >= 1, got n={n}, resamples={resamples}")
    dtype = np.int32 if n < 2**31 else np.int64  # half the memory and about twice as fast to draw
    return np.random.default_rng(seed).integers(0, max(n, 1), size=(resamples, n), dtype=dtype)


def _bt_loglik(theta: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Bradley–Terry log-likelihood of each resample: sum over i, j of w_ij * log sigmoid(theta_i - theta_j)."""
    diff = theta[:, :, None] - theta[:, None, :]
    return (w * -np.logaddexp(0.0, -diff)).sum(axis=(1, 2))


def _newton_batch(theta: np.ndarray, derivatives: Any, loglik: Any, tol: float = 1e-10,
                  max_iter: int = 200) -> np.ndarray:
    """Maximise many concave log-likelihoods of centred log-strengths at once (``theta``: problems x k, the start).

    ``derivatives(theta, rows)`` gives the gradient (problems x k) and the Hessian (problems x k x k, negative
    semi-definite, singular along (1, ..., 1)) of the problems ``rows`` at ``theta``; ``loglik(theta, rows)``
    their log-likelihoods. Damped Newton steps, one batched k x k solve per step, halving a problem's step while
    it would lower its likelihood; a problem stops when no log-strength moves by ``tol``. Shared by the
    Bradley–Terry and Plackett–Luce bootstraps. Returns the centred log-strengths.
    """
    theta = np.array(theta, dtype=float)
    n_res, k = theta.shape
    ones = np.ones((k, k)) / k  # H is singular along (1, ..., 1): adding this fixes the centring
    active = np.arange(n_res)
    for _ in range(max_iter):
        if not len(active):
            break
        th = theta[active]
        grad, hess = derivatives(th, active)
        step = np.linalg.solve(hess - ones[None], -grad[:, :, None])[:, :, 0]
        base = loglik(th, active)
        scale = np.ones(len(active))
        for _ in range(40):  # step halving where the likelihood would go down
            trial = th + scale[:, None] * step
            worse = loglik(trial, active) < base - 1e-12 * np.abs(base)
            if not worse.any():
                break
            scale[worse] /= 2
        trial -= trial.mean(axis=1, keepdims=True)
        done = np.max(np.abs(trial - th), axis=1) < tol
        theta[active] = trial
        active = active[~done]
    return theta - theta.mean(axis=1, keepdims=True)


def _fit_bt_batch(w: np.ndarray, tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """The Bradley–Terry maximum-likelihood fit of a stack of win matrices at once (``w``: resamples x k x k,
    every item winning and losing something in every matrix). Returns centred log-strengths, resamples x k.

    Damped Newton steps on the log-strengths, vectorised over the resamples (:func:`_newton_batch`). Written by
    hand because scipy's optimisers fit one problem at a time, and the minorise–maximise steps of
    :func:`_fit_bt` need millions of iterations on lopsided data (a source winning 2,000 to 1: 15 s for 1,000
    resamples); Newton takes a few dozen. The log-likelihood is concave and the fit exists (every item wins
    and loses), so it converges to the same optimum as :func:`_fit_bt` (a test compares them).
    """
    n_res, k, _ = w.shape
    n_ij = w + np.transpose(w, (0, 2, 1))
    wins = w.sum(axis=2)

    def derivatives(th: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nn = n_ij[rows]
        prob = 1.0 / (1.0 + np.exp(th[:, None, :] - th[:, :, None]))  # P(i beats j)
        grad = wins[rows] - (nn * prob).sum(axis=2)
        curv = nn * prob * (1.0 - prob)
        return grad, curv - np.eye(k)[None] * curv.sum(axis=2)[:, :, None]

    return _newton_batch(np.zeros((n_res, k)), derivatives, lambda th, rows: _bt_loglik(th, w[rows]), tol, max_iter)


def _resampled_totals(per_eval: np.ndarray, resamples: int, seed: int) -> Iterable[tuple[int, np.ndarray]]:
    """The evaluator bootstrap's totals: per resample (:func:`bootstrap_indexes`), the sum of the rows of
    ``per_eval`` (evaluators x cells: each evaluator's counts) over the evaluators it drew, as
    (first resample, resamples x cells) in chunks. One matrix product per chunk: the resample's count of each
    evaluator times ``per_eval``. Shared by the Bradley–Terry and Plackett–Luce bootstraps."""
    n_eval = len(per_eval)
    idx = bootstrap_indexes(n_eval, resamples, seed)
    # float32 products and sums are exact while every partial sum is a multiple of 1/2 below 2**23 (wins are
    # whole, ties halves): then the faster single-precision product gives exactly the double-precision result
    halves = np.all(per_eval * 2 == np.round(per_eval * 2))
    exact = np.float32 if halves and n_eval * float(per_eval.max(initial=0)) < 2**22 else np.float64
    per_eval_exact = per_eval.astype(exact)
    # resample counts in chunks of ~2M cells (16 MB): faster than one large array here, and memory stays small
    chunk = max(1, min(resamples, 2_000_000 // max(n_eval, 1)))
    for start in range(0, resamples, chunk):
        rows = idx[start:start + chunk]
        flat = (np.arange(len(rows), dtype=np.int64)[:, None] * n_eval + rows).ravel()  # evaluator draws per row
        counts = np.bincount(flat, minlength=len(rows) * n_eval).reshape(len(rows), n_eval).astype(exact)
        yield start, (counts @ per_eval_exact).astype(float)


def _percentile_bounds(strengths: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``strengths`` (resamples x items), the percentile interval over its non-NaN values: the
    ``lower`` / ``higher`` order statistics at (1 ∓ confidence) / 2 (no interpolation between an infinity and a
    number); NaN for a column with no value."""
    low_q, high_q = (1 - confidence) / 2, (1 + confidence) / 2
    low, high = np.full(strengths.shape[1], NAN), np.full(strengths.shape[1], NAN)
    for j in range(strengths.shape[1]):
        values = strengths[:, j][~np.isnan(strengths[:, j])]
        if len(values):
            low[j] = float(np.quantile(values, low_q, method="lower"))
            high[j] = float(np.quantile(values, high_q, method="higher"))
    return low, high


def bradley_terry_bootstrap(items: Sequence[str], evaluator: Any, winner: Any, loser: Any, weight: Any = None, *,
                            resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Percentile bootstrap intervals of the Bradley–Terry log-strengths, resampling *evaluators*.

    The comparisons are given as columns of codes: ``evaluator`` (0..E-1),
    ``winner`` and ``loser`` (indexes into ``items``) and ``weight`` (1 per win;
    a tie is two rows of 0.5, one each way, as :func:`win_matrix` counts it).
    Judgments of one evaluator are not independent, so a resample draws E
    evaluators with replacement (:func:`bootstrap_indexes`) and takes all their
    judgments; each resample's win matrix is the resample counts times the
    per-evaluator win matrices (one matrix product over all resamples), and
    the resamples are fitted together (:func:`_fit_bt_batch`).

    Each resample is fitted by the same rule as :func:`bradley_terry_matrix`: a
    source that never wins in it gets ``-inf``, one that never loses ``+inf``
    (those resamples are fitted one by one). The infinities are kept as the
    most extreme values, so when more than (1 - confidence) / 2 of the
    resamples give ``-inf``, the lower bound is ``-inf``: the data cannot rule
    out that the source (almost) never wins. A resample in which a source was
    not compared at all (none of its evaluators drawn) is left out of that
    source's interval. The bounds are order statistics (``lower`` /
    ``higher`` quantiles, no interpolation between an infinity and a number).
    With fewer than two evaluators (counting those with a judgment of
    positive weight) there is nothing to resample: every resample would be
    the data themselves, a zero-width interval claiming a certainty the data
    do not have, so every interval is NaN (as in :func:`plackett_luce_bootstrap`).

    Returns a frame ``source, low, high`` in the order of ``items``.
    """
    check_confidence(confidence)
    k = len(items)
    evaluator, winner, loser = (np.asarray(c, dtype=np.int64) for c in (evaluator, winner, loser))
    weight = np.ones(len(evaluator)) if weight is None else np.asarray(weight, dtype=float)
    if not len(evaluator) == len(winner) == len(loser) == len(weight):
        raise ValueError("evaluator, winner, loser and weight must have the same length")
    if len(winner) and (min(winner.min(), loser.min()) < 0 or max(winner.max(), loser.max()) >= k):
        raise ValueError(f"winner and loser must be item indexes in 0..{k - 1}")
    if len(evaluator) and evaluator.min() < 0:
        raise ValueError("evaluator codes must be >= 0")
    out = pd.DataFrame({"source": list(items), "low": NAN, "high": NAN})
    if len(np.unique(evaluator[weight > 0])) < 2 or k == 0:  # no judgment, or one evaluator: no interval
        return out
    n_eval = int(evaluator.max()) + 1
    # per-evaluator win matrices, only over the (winner, loser) cells that occur: E x U
    cell = winner * k + loser
    used, cell_code = np.unique(cell, return_inverse=True)
    per_eval = np.bincount(evaluator * len(used) + cell_code, weights=weight,
                           minlength=n_eval * len(used)).reshape(n_eval, len(used))
    strengths = np.empty((resamples, k))
    for start, totals in _resampled_totals(per_eval, resamples, seed):
        w = np.zeros((len(totals), k * k))
        w[:, used] = totals
        strengths[start:start + len(totals)] = _bootstrap_fits(list(items), w.reshape(len(totals), k, k))
    out["low"], out["high"] = _percentile_bounds(strengths, confidence)
    return out


def _strongly_connected(beat: np.ndarray) -> np.ndarray:
    """Per matrix of a stack (resamples x k x k, ``beat[b, i, j]``: i beat j): can every item reach every
    other through wins? Transitive closure by repeated squaring, all resamples at once."""
    k = beat.shape[1]
    reach = (beat | np.eye(k, dtype=bool)).astype(np.float32)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2))))):
        reach = (reach @ reach > 0).astype(np.float32)
    return reach.reshape(len(beat), -1).all(axis=1)


def _bootstrap_fits(items: list[str], w: np.ndarray) -> np.ndarray:
    """Log-strengths of a stack of win matrices: resamples whose wins connect every item with every other
    (the fit exists and is finite) are fitted together; the others one by one with
    :func:`bradley_terry_matrix` (infinities for sources that never win or lose, NaN when not compared)."""
    regular = _strongly_connected(w > 0)
    out = np.empty(w.shape[:2])
    if regular.any():
        out[regular] = _fit_bt_batch(w[regular])
    for b in np.flatnonzero(~regular):
        fitted = bradley_terry_matrix(items, w[b])
        out[b] = [fitted[item] for item in items]
    return out


# ----------------------------------------------------------------------------- rankings: Plackett–Luce, best of n


def _item_codes(names: list[Any], items: Sequence[str] | None) -> tuple[list[str], np.ndarray]:
    """The item list (``items``, or the sorted names) and the code of every name; a name not in ``items`` is an
    error."""
    for name in names:
        if not isinstance(name, str):
            if isinstance(name, Iterable):
                raise ValueError(f"ties are not supported: got the group {name!r} where an item name belongs")
            raise ValueError(f"item names must be strings, got {name!r}")
    if items is None:
        uniques, codes = np.unique(np.asarray(names, dtype=str), return_inverse=True)
        return [str(u) for u in uniques], codes.astype(np.int64)
    items = list(items)
    index = pd.Index(items)
    if not index.is_unique:
        raise ValueError("items must not repeat a name")
    codes = index.get_indexer(pd.Index(names, dtype=object)) if names else np.zeros(0, dtype=np.int64)
    if (codes < 0).any():
        raise ValueError(f"unknown item {names[int(np.flatnonzero(codes < 0)[0])]!r}: not in items")
    return items, codes.astype(np.int64)


def _ragged(groups: Iterable[Sequence[str]], what: str) -> tuple[list[Any], np.ndarray]:
    """All names of a sequence of name sequences, flattened, and each sequence's length."""
    names: list[Any] = []
    lengths = []
    for group in groups:
        if isinstance(group, str):
            raise ValueError(f"each {what} is a sequence of item names, got the string {group!r}")
        group = list(group)
        names.extend(group)
        lengths.append(len(group))
    return names, np.asarray(lengths, dtype=np.int64)


def _first_repeat(lengths: np.ndarray, codes: np.ndarray, k: int) -> tuple[int, int] | None:
    """(group, item code) of the first item listed twice within one group of a ragged list, or None."""
    cells = np.sort(np.repeat(np.arange(len(lengths)), lengths) * max(k, 1) + codes)
    twice = cells[1:][cells[1:] == cells[:-1]]
    if not len(twice):
        return None
    group, code = divmod(int(twice[0]), max(k, 1))
    return group, code


def _padded(codes: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Ragged rows of codes as a rows x longest matrix, -1 after each row's end."""
    out = np.full((len(lengths), int(lengths.max(initial=0))), -1, dtype=np.int64)
    row = np.repeat(np.arange(len(lengths)), lengths)
    out[row, np.arange(len(codes)) - np.repeat(np.cumsum(lengths) - lengths, lengths)] = codes
    return out


def plackett_luce(rankings: Iterable[Sequence[str]], items: Sequence[str] | None = None, *,
                  weights: Sequence[float] | None = None) -> dict[str, float]:
    """Maximum-likelihood Plackett–Luce log-strengths from rankings (Luce 1959; Plackett 1975), centred to mean 0
    over the finite ones, as :func:`bradley_terry`.

    Each ranking is a sequence of item names, best first, of any subset of the items; rankings of fewer than
    two items carry no information and are skipped. Ties are not allowed: a group of names in place of a
    name, or a name listed twice in one ranking, is an error. In the model the first of a ranking is chosen
    from all its items with probability proportional to strength, the second from the rest, and so on; on
    rankings of two items it is Bradley–Terry. ``items`` gives the items and their order (a ranked name not in
    it is an error, an item never ranked with another gets NaN); without it, the names ranked, sorted.

    A finite maximum exists only when no group of items is ranked above every other item wherever they meet
    (Hunter 2004, Assumption 2). As in :func:`bradley_terry_matrix`, with ``w[i, j]`` = the rankings that put i
    above j: an item never ranked above another gets ``-inf``, one never ranked below another ``+inf``, groups
    likewise, and the rest are fitted on the rankings with those left out (the limit of the likelihood).

    Fitted by Hunter's (2004) minorise–maximise algorithm, vectorised over the rankings, finished by scipy's
    BFGS where it is slow (:func:`_fit_pl`). Written by hand: ``choix`` has the same algorithm but loops over
    every ranking and position in Python on each step, and raises where no finite fit exists.

    ``weights`` (one per ranking, >= 0) count each ranking that many times: the analysis passes each
    distinct ranking once with the number of times it was given, so the fit does not grow with the answers.
    """
    names, lengths = _ragged(rankings, "ranking")
    item_list, codes = _item_codes(names, items)
    k = len(item_list)
    repeat = _first_repeat(lengths, codes, k)
    if repeat is not None:
        raise ValueError(f"ranking {repeat[0]} lists {item_list[repeat[1]]!r} twice: ties are not supported")
    counts = _counts(weights, len(lengths), "ranking")
    keep = lengths >= 2 if counts is None else (lengths >= 2) & (counts > 0)
    logs = _pl_logs(_padded(codes, lengths)[keep], None if counts is None else counts[keep], k)
    return {item: float(v) for item, v in zip(item_list, logs, strict=True)}


def _above(ranked: np.ndarray, counts: np.ndarray | None, k: int) -> np.ndarray:
    """``w[i, j]``: the rankings (rows of codes, -1 after the end; weighted by ``counts``) placing i above j."""
    above = np.zeros(k * k)
    for step in range(1, ranked.shape[1]):  # rankings with i placed `step` positions above j
        a, b = ranked[:, :-step], ranked[:, step:]
        both = (a >= 0) & (b >= 0)
        per = None if counts is None else np.broadcast_to(counts[:, None], a.shape)[both]
        above += np.bincount(a[both] * k + b[both], weights=per, minlength=k * k)
    return above.reshape(k, k)


def _compact_rankings(ranked: np.ndarray, fit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rankings with only the items of ``fit``, recoded 0..fit.sum()-1: (rows of codes, their lengths, which
    rankings kept two or more items and so stay)."""
    new_code = np.where(fit, np.cumsum(fit) - 1, -1)
    kept = np.where(ranked >= 0, new_code[np.maximum(ranked, 0)], -1)
    kept_lengths = (kept >= 0).sum(axis=1)
    enough = kept_lengths >= 2
    kept, kept_lengths = kept[enough], kept_lengths[enough]
    return _padded(kept[kept >= 0], kept_lengths), kept_lengths, enough  # row-major order keeps each order


def _pl_logs(ranked: np.ndarray, counts: np.ndarray | None, k: int) -> np.ndarray:
    """:func:`plackett_luce`'s log-strengths of the rankings ``ranked`` (rows of codes 0..k-1, -1 after the end,
    each ranking two or more items) weighted by ``counts``: infinities and NaN by :func:`_set_aside`, the rest
    fitted (:func:`_fit_pl`) on the rankings with those left out and centred."""
    fixed, fit = _set_aside(_above(ranked, counts, k))
    logs = fixed.copy()
    if fit.any():
        compact, lengths, enough = _compact_rankings(ranked, fit)
        fitted = np.log(_fit_pl(compact, lengths, int(fit.sum()), weights=None if counts is None else counts[enough]))
        logs[fit] = fitted - fitted.mean()
    return logs


def _counts(weights: Sequence[float] | None, n: int, what: str) -> np.ndarray | None:
    """``weights`` as a float array of ``n`` finite values >= 0 (None stays None: every row counts once)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must give one number per {what} ({n}), got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("weights must be finite and >= 0")
    return w


def _pl_terms(theta: np.ndarray, ranked: np.ndarray, present: np.ndarray, stage: np.ndarray,
              inverse: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, np.ndarray, np.ndarray]:
    """Plackett–Luce log-likelihood of log-strengths ``theta``, with γ = exp(θ − max θ) and, per item, the sum over
    the stages it takes part in of 1 / (γ summed over the stage's items): the MM denominator. The gradient is
    wins − γ · that sum. All rankings at once: tail sums by a reversed cumulative sum along the positions, their
    reciprocals summed over the stages up to each position by another, gathered per item by ``np.bincount``.
    ``weights`` (per ranking) multiply each ranking's terms.
    """
    shift = theta.max()
    gamma = np.exp(theta - shift)
    g = np.where(present, gamma[ranked], 0.0)
    tail = np.cumsum(g[:, ::-1], axis=1)[:, ::-1]
    np.divide(1.0, tail, out=inverse, where=stage)  # ``inverse`` stays 0 where there is no stage
    if weights is None:
        denom = np.bincount(ranked[present], weights=np.cumsum(inverse, axis=1)[present], minlength=len(theta))
        loglik = float(theta[ranked[stage]].sum() - (np.log(tail[stage]) + shift).sum())
        return loglik, gamma, denom
    per = np.broadcast_to(weights[:, None], ranked.shape)
    denom = np.bincount(ranked[present], weights=(np.cumsum(inverse, axis=1) * per)[present], minlength=len(theta))
    loglik = float((per[stage] * (theta[ranked[stage]] - np.log(tail[stage]) - shift)).sum())
    return loglik, gamma, denom


def _fit_pl(ranked: np.ndarray, lengths: np.ndarray, k: int, tol: float = 1e-12, mm_steps: int = 1000,
            weights: np.ndarray | None = None) -> np.ndarray:
    """Plackett–Luce strengths (geometric mean 1) of a rankings x positions matrix of codes (-1 = no item).

    Minorise–maximise (Hunter 2004, §5): γ_i ← w_i / Σ_{stages with i} 1 / Σ_{items of the stage} γ, where
    w_i counts the stages at which i was chosen (its rankings, less those that put it last). The steps
    converge linearly, and slowly when one item nearly always beats another (5,001 rankings of five items,
    all but one in the same order, were not done after 100,000 steps, 41 s). After ``mm_steps`` steps the
    fit is finished by scipy's BFGS on the log-likelihood and its gradient (the log-likelihood is concave,
    so both reach the same maximum; a test compares them).
    """
    present = ranked >= 0
    stage = np.arange(ranked.shape[1])[None, :] < (lengths - 1)[:, None]
    per = None if weights is None else np.broadcast_to(weights[:, None], ranked.shape)[stage]
    wins = np.bincount(ranked[stage], weights=per, minlength=k).astype(float)
    inverse = np.zeros(ranked.shape)
    theta = np.zeros(k)
    for _ in range(mm_steps):
        _, _, denom = _pl_terms(theta, ranked, present, stage, inverse, weights)
        new = np.log(wins / denom)
        new -= new.mean()
        if np.max(np.abs(new - theta)) < tol:
            return np.exp(new)
        theta = new

    def minus_loglik(th: np.ndarray) -> tuple[float, np.ndarray]:
        loglik, gamma, denom = _pl_terms(th, ranked, present, stage, inverse, weights)
        return -loglik, -(wins - gamma * denom)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "precision loss": the line search cannot improve at float precision
        result = _optimize.minimize(minus_loglik, theta, jac=True, method="BFGS", options={"gtol": 1e-10})
    theta = result.x - result.x.mean()
    return np.exp(theta)


def plackett_luce_bootstrap(rankings: Sequence[Sequence[str]], evaluator: Any, ranking: Any, weight: Any = None, *,
                            items: Sequence[str] | None = None, resamples: int = 1000, confidence: float = 0.95,
                            seed: int = 0) -> pd.DataFrame:
    """Percentile bootstrap intervals of the Plackett–Luce log-strengths (:func:`plackett_luce`), resampling
    *evaluators* (Efron & Tibshirani 1993), as :func:`bradley_terry_bootstrap` does for Bradley–Terry.

    ``rankings`` are the distinct rankings (item names, best first; ``items`` as in :func:`plackett_luce`), and
    ``evaluator`` (codes >= 0), ``ranking`` (indexes into ``rankings``) and ``weight`` (how many times; 1 by
    default) are parallel columns: one row per (evaluator, ranking given). A resample draws the evaluators with
    replacement (:func:`bootstrap_indexes`, ``seed``) and counts each ranking as often as its drawn evaluators gave
    it (one matrix product for all resamples, shared with Bradley–Terry); the resamples are refitted together by
    damped Newton steps on their choice-set counts (:func:`_choice_sets`, :func:`_fit_pl_batch`), starting from
    the full data's estimate.

    A resample whose rankings do not connect every item (no finite fit) is fitted by :func:`plackett_luce`'s
    rule, one by one: ``-inf`` / ``inf`` for items never ranked above / below another, NaN where an item was
    not ranked (left out of its interval). The bounds are order statistics (:func:`_percentile_bounds`). An item
    infinite in the full data is infinite in every resample (its interval is that infinity), one never ranked
    with another has none (NaN). With fewer than two evaluators there is nothing to resample: every interval is
    NaN. Rankings of fewer than two items carry no information and are ignored.

    Returns a frame ``item, low, high`` in the order of the items.
    """
    check_confidence(confidence)
    names, lengths = _ragged(rankings, "ranking")
    item_list, codes = _item_codes(names, items)
    k = len(item_list)
    repeat = _first_repeat(lengths, codes, k)
    if repeat is not None:
        raise ValueError(f"ranking {repeat[0]} lists {item_list[repeat[1]]!r} twice: ties are not supported")
    evaluator, ranking = (np.asarray(c, dtype=np.int64).ravel() for c in (evaluator, ranking))
    weight = np.ones(len(evaluator)) if weight is None else np.asarray(weight, dtype=float).ravel()
    if not len(evaluator) == len(ranking) == len(weight):
        raise ValueError("evaluator, ranking and weight must have the same length")
    if len(ranking) and (ranking.min() < 0 or ranking.max() >= len(lengths)):
        raise ValueError(f"ranking must index the rankings, 0..{len(lengths) - 1}")
    if len(evaluator) and evaluator.min() < 0:
        raise ValueError("evaluator codes must be >= 0")
    if not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError("weights must be finite and >= 0")
    out = pd.DataFrame({"item": item_list, "low": NAN, "high": NAN})
    informative = (lengths[ranking] >= 2) & (weight > 0) if len(ranking) else np.zeros(0, dtype=bool)
    _, ev = np.unique(evaluator[informative], return_inverse=True)
    n_eval, n_rank = int(ev.max(initial=-1)) + 1, len(lengths)
    if n_eval < 2 or k < 2:
        return out
    per_eval = np.bincount(ev * n_rank + ranking[informative], weights=weight[informative],
                           minlength=n_eval * n_rank).reshape(n_eval, n_rank)
    ranked = _padded(codes, lengths)
    usable = lengths >= 2
    ranked, per_eval = ranked[usable], per_eval[:, usable]
    fixed, fit = _set_aside(_above(ranked, per_eval.sum(axis=0), k))
    infinite = np.isinf(fixed)
    out.loc[infinite, "low"] = out.loc[infinite, "high"] = fixed[infinite]
    if not fit.any():
        return out
    compact, _, enough = _compact_rankings(ranked, fit)
    # rankings that differ only in items set aside are now the same: merge them
    distinct, inverse = np.unique(compact, axis=0, return_inverse=True)
    merged = np.zeros((n_eval, len(distinct)))
    np.add.at(merged.T, inverse.ravel(), per_eval[:, enough].T)
    kf, lengths_fit = int(fit.sum()), (distinct >= 0).sum(axis=1)
    theta0 = np.log(_fit_pl(distinct, lengths_fit, kf, weights=merged.sum(axis=0)))
    theta0 -= theta0.mean()
    sets, to_sets, chosen, pairs = _choice_sets(distinct, lengths_fit, kf)
    strengths = np.empty((resamples, kf))
    for start, totals in _resampled_totals(merged, resamples, seed):
        regular = _strongly_connected(np.asarray(pairs.T @ totals.T).T.reshape(len(totals), kf, kf) > 0)
        part = np.empty((len(totals), kf))
        if regular.any():
            given = totals[regular]
            part[regular] = _fit_pl_batch(sets, np.asarray(to_sets.T @ given.T).T, np.asarray(chosen.T @ given.T).T,
                                          theta0)
        for b in np.flatnonzero(~regular):
            given = totals[b] > 0
            part[b] = _pl_logs(distinct[given], totals[b][given], kf)
        strengths[start:start + len(totals)] = part
    low, high = _percentile_bounds(strengths, confidence)
    out.loc[fit, "low"], out.loc[fit, "high"] = low, high
    return out


def _choice_sets(ranked: np.ndarray, lengths: np.ndarray, k: int) -> tuple[np.ndarray, Any, Any, Any]:
    """The rankings (rows of codes 0..k-1, -1 after the end) as the choices the Plackett–Luce model sees: at each
    stage the first of the items left is chosen from them. Returns the distinct choice sets (C x k, 0/1), and as
    sparse matrices per ranking its choice sets (rankings x C, how often), the items it chose at a stage
    (rankings x k) and the pairs it orders (rankings x k², cell i * k + j: i above j)."""
    n_pat, width = ranked.shape
    stage_of = np.arange(width)[None, :] < (lengths - 1)[:, None]
    pattern, stage = np.nonzero(stage_of)
    member = np.zeros((len(pattern), k), dtype=bool)  # one row per (ranking, stage): the items from there on
    later = np.arange(width)[None, :] >= stage[:, None]
    rows, cols = np.nonzero(later & (ranked[pattern] >= 0))
    member[rows, ranked[pattern][rows, cols]] = True
    sets, which = np.unique(member, axis=0, return_inverse=True)
    ones = np.ones(len(pattern))
    to_sets = csr_matrix((ones, (pattern, which.ravel())), shape=(n_pat, len(sets)))
    chosen = csr_matrix((ones, (pattern, ranked[pattern, stage])), shape=(n_pat, k))
    # pairs: the item chosen at a stage is above every other item of its set
    p_rows, items = np.nonzero(member)
    first = ranked[pattern, stage][p_rows]
    keep = items != first
    pairs = csr_matrix((np.ones(int(keep.sum())), (pattern[p_rows][keep], first[keep] * k + items[keep])),
                       shape=(n_pat, k * k))
    return sets.astype(float), to_sets, chosen, pairs


def _fit_pl_batch(sets: np.ndarray, n: np.ndarray, wins: np.ndarray, theta0: np.ndarray, tol: float = 1e-10,
                  max_iter: int = 200) -> np.ndarray:
    """Plackett–Luce log-strengths (centred) of many problems at once, each given by its choices: ``sets``
    (C x k, 0/1) the distinct sets chosen from, ``n`` (problems x C) how often each set was chosen from, ``wins``
    (problems x k) how often each item was chosen; every problem's choices connecting all k items. Damped Newton
    steps (:func:`_newton_batch`) from ``theta0`` (the full data's estimate: a resample's fit lies near it).

    The log-likelihood is Σ wins · θ − Σ_S n_S log Σ_{j∈S} γ_j (γ = exp θ), so with π_S = γ / Σ_S γ on S the
    gradient is wins − Σ_S n_S π_S and the Hessian −Σ_S n_S (diag π_S − π_S π_Sᵀ): matrix products over the
    choice sets, whose number is at most 2^k (64 for six systems) however many distinct rankings there are.
    """
    k = sets.shape[1]
    pair_sets = (sets[:, :, None] * sets[:, None, :]).reshape(len(sets), k * k)

    def parts(th: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shift = th.max(axis=1, keepdims=True)
        gamma = np.exp(th - shift)
        return shift, gamma, gamma @ sets.T  # the sums of γ over each set

    def loglik(th: np.ndarray, rows: np.ndarray) -> np.ndarray:
        shift, _, total = parts(th)
        return (wins[rows] * th).sum(axis=1) - (n[rows] * (np.log(total) + shift)).sum(axis=1)

    def derivatives(th: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, gamma, total = parts(th)
        expected = ((n[rows] / total) @ sets) * gamma
        outer = ((n[rows] / total**2) @ pair_sets).reshape(len(rows), k, k) * gamma[:, :, None] * gamma[:, None, :]
        return wins[rows] - expected, outer - expected[:, :, None] * np.eye(k)[None]

    return _newton_batch(np.broadcast_to(theta0, (len(n), k)), derivatives, loglik, tol, max_iter)


def best_of_n_shares(winners: Sequence[str], shown: Sequence[Sequence[str]], items: Sequence[str] | None = None,
                     confidence: float = 0.95, *, weights: Sequence[int] | None = None) -> pd.DataFrame:
    """Per item: how often it was chosen as the best of the n shown, with a Wilson interval and an exact test
    against chance.

    Question q showed the items ``shown[q]`` (two or more, distinct; n_q may differ between questions) and the
    evaluator chose ``winners[q]`` among them. ``share`` = wins / times shown, with the Wilson (1927) interval.
    Under the null of a choice at random, an item wins a question of n items with probability 1/n, so its
    wins follow a sum of binomials, one per question size: ``chance`` is its expected share (the mean of
    1/n_q over its questions) and ``p_value`` the exact two-sided test of its wins against that distribution,
    by the rule of :func:`binomial_test` (the outcomes no more likely than the observed one); when all its
    questions have the same n this is :func:`binomial_test` against 1/n. Each item is tested on its own.

    Returns a frame item, wins, shown, share, low, high, chance, p_value; items in the order of ``items``
    (an item in no question: shown 0, share NaN, p-value 1), or the names shown, sorted.

    ``weights`` (whole numbers >= 0, one per question) count each question that many times: the analysis
    passes each distinct (shown, winner) once with the number of answers that gave it.
    """
    check_confidence(confidence)
    names, lengths = _ragged(shown, "question's shown items")
    winners = list(winners)
    if len(winners) != len(lengths):
        raise ValueError(f"winners and shown must have one entry per question ({len(winners)} and {len(lengths)})")
    counts = _counts(weights, len(lengths), "question")
    if counts is not None and (counts != np.round(counts)).any():
        raise ValueError("weights of best_of_n_shares count questions: whole numbers")
    if (lengths < 2).any():
        raise ValueError(f"question {int(np.flatnonzero(lengths < 2)[0])} shows fewer than two items")
    item_list, codes = _item_codes(names + winners, items)
    codes, winner_codes = codes[: len(names)], codes[len(names):]
    k = len(item_list)
    question = np.repeat(np.arange(len(lengths)), lengths)
    repeat = _first_repeat(lengths, codes, k)
    if repeat is not None:
        raise ValueError(f"question {repeat[0]} shows {item_list[repeat[1]]!r} twice")
    in_question = np.zeros(len(lengths), dtype=bool)
    in_question[question[codes == winner_codes[question]]] = True
    if not in_question.all():
        q = int(np.flatnonzero(~in_question)[0])
        raise ValueError(f"question {q}: the winner {winners[q]!r} is not among the items shown")
    size = lengths[question]  # n of the question, per item shown
    if counts is None:
        wins = np.bincount(winner_codes, minlength=k)
        times = np.bincount(codes, minlength=k)
        chance_sum = np.bincount(codes, weights=1.0 / size, minlength=k)
    else:
        per = counts[question]  # each shown item counts as often as its question
        wins = np.bincount(winner_codes, weights=counts, minlength=k).round().astype(np.int64)
        times = np.bincount(codes, weights=per, minlength=k).round().astype(np.int64)
        chance_sum = np.bincount(codes, weights=per / size, minlength=k)
    rows = []
    for j, item in enumerate(item_list):
        low, high = wilson_interval(int(wins[j]), int(times[j]), confidence)
        if counts is None:
            sizes, per_size = np.unique(size[codes == j], return_counts=True)
        else:
            mine = (codes == j) & (per > 0)
            sizes, at = np.unique(size[mine], return_inverse=True)
            per_size = np.bincount(at, weights=per[mine], minlength=len(sizes)).round().astype(np.int64)
        if len(sizes) <= 1:
            p = binomial_test(int(wins[j]), int(times[j]), 1 / sizes[0] if len(sizes) else 0.5)
        else:
            p = _sum_of_binomials_p_value(int(wins[j]), per_size, 1.0 / sizes)
        rows.append((item, int(wins[j]), int(times[j]), wins[j] / times[j] if times[j] else NAN, low, high,
                     chance_sum[j] / times[j] if times[j] else NAN, p))
    return pd.DataFrame(rows, columns=["item", "wins", "shown", "share", "low", "high", "chance", "p_value"])


def _sum_of_binomials_p_value(observed: int, trials: np.ndarray, probs: np.ndarray) -> float:
    """Exact two-sided p-value of ``observed`` successes in independent Binomial(trials[g], probs[g]) summed.

    The distribution of the sum is the convolution of the binomial pmfs (each cut to where it does not
    underflow to 0); the p-value sums the outcomes no more likely than the observed one, with scipy's
    ``binomtest`` tolerance. Written by hand: scipy's ``poisson_binom`` (one probability per trial) builds
    an outcomes x trials table, past memory at 60,000 trials; here there is one binomial per question size.
    """
    pmf, offset = np.ones(1), 0
    for m, p in zip(trials, probs, strict=True):
        f = _st.binom.pmf(np.arange(m + 1), m, p)
        nonzero = np.flatnonzero(f)
        pmf = np.convolve(pmf, f[nonzero[0]: nonzero[-1] + 1])
        offset += int(nonzero[0])
    at = observed - offset
    observed_pmf = pmf[at] if 0 <= at < len(pmf) else 0.0
    return float(min(1.0, pmf[pmf <= observed_pmf * (1 + 1e-7)].sum()))
