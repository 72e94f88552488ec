//! The statistics every reader shows, computed here and nowhere else.
//!
//! - [`Stat`]: the median of some samples (the mean of the middle two for an even count) and
//!   the observed min–max (a range, not an interval).
//! - [`RatioStat`]: paired ratios (one per round: a backend's time ÷ its reference's time in the
//!   same round), their median, min–max, and a percentile-bootstrap interval of the median.
//! - [`round_orders`]: the seeded shuffle that gives each round its running order.
//!
//! Randomness is ChaCha8 ([`rand::rngs::ChaCha8Rng`], value-stable across platforms and rand
//! releases of one minor version) seeded from a recorded `u64`; each interval draws from its
//! own stream, keyed by a hash of what it is about ([`stream_key`]), so an interval does not
//! depend on how many others were computed before it.

use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom as _;
use rand::{RngExt as _, SeedableRng as _};
use serde::{Deserialize, Serialize};

/// Median and observed range of some samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Middle sample (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Number of samples.
    pub n: usize,
}

/// Median of `samples`; `None` if empty. NaN samples are ordered last (`total_cmp`).
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut v = samples.to_vec();
    median_in_place(&mut v)
}

/// Median of `v`, reordering it (selection, O(n)); `None` if empty.
fn median_in_place(v: &mut [f64]) -> Option<f64> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let (_, &mut hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return Some(hi);
    }
    // After the selection everything left of n/2 is <= hi: the lower middle is their maximum.
    let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lo + hi) / 2.0)
}

/// Smallest and largest sample; `None` if empty.
pub fn min_max(samples: &[f64]) -> Option<(f64, f64)> {
    let first = *samples.first()?;
    Some(
        samples
            .iter()
            .fold((first, first), |(lo, hi), &x| (lo.min(x), hi.max(x))),
    )
}

impl Stat {
    /// Median and range of `samples`; `None` if empty.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let (min, max) = min_max(samples)?;
        Some(Self {
            median: median(samples)?,
            min,
            max,
            n: samples.len(),
        })
    }

    /// Over the `Some` values that `pick` finds in `items`; `None` if there are none.
    pub fn over<T>(items: &[T], pick: impl Fn(&T) -> Option<f64>) -> Option<Self> {
        let v: Vec<f64> = items.iter().filter_map(pick).collect();
        Self::of(&v)
    }
}

/// How intervals are computed: a percentile bootstrap of the median with `resamples`
/// resamples at `confidence`, from `seed`. Recorded in every result that has intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bootstrap {
    /// Seed of the ChaCha8 generator (each interval uses its own stream of it).
    pub seed: u64,
    /// Resamples per interval.
    pub resamples: u32,
    /// Coverage of the interval (0.95: the 2.5th and 97.5th percentiles of the resampled
    /// medians).
    pub confidence: f64,
    /// Fewest paired samples for an interval; with fewer, a ratio has a median and a range
    /// but no interval, and no goal is decided on it.
    pub min_pairs: usize,
    /// Fewest page loads for an interval when the rounds come from more than one page load
    /// ([`grouped_median_interval`]); with 2 to `min_loads − 1` loads a ratio has no interval.
    /// (Absent in documents written before page loads were combined: [`MIN_LOADS`].)
    #[serde(default = "min_loads_default")]
    pub min_loads: usize,
    /// What was done, in words (for readers of the file).
    pub method: String,
}

/// Default bootstrap seed (any fixed value; recorded with the result).
pub const BOOTSTRAP_SEED: u64 = 0x0B00_7574_2026_1130;
/// Default resamples.
pub const BOOTSTRAP_RESAMPLES: u32 = 10_000;
/// Default coverage.
pub const CONFIDENCE: f64 = 0.95;
/// Default fewest pairs for an interval: 6. With n samples, no distribution-free interval for
/// a median reaches 95 % below n = 6 (even [min, max] misses the median with probability
/// 2^(1−n): 12.5 % at n = 4, 6.25 % at n = 5), and a percentile bootstrap of so few samples
/// only pretends to (its resampled medians can only take the sample values). Fewer rounds
/// give a median and a range, and no goal is decided.
pub const MIN_PAIRS: usize = 6;
/// Default fewest page loads for an interval over several loads: 6, by the argument for
/// [`MIN_PAIRS`] one level up. Each load is one draw of what the load fixes (the wasm
/// instance, its heap's layout, the OPFS directory's state), and the interval is about the
/// median over such draws.
pub const MIN_LOADS: usize = 6;

fn min_loads_default() -> usize {
    MIN_LOADS
}

impl Default for Bootstrap {
    fn default() -> Self {
        Self {
            seed: BOOTSTRAP_SEED,
            resamples: BOOTSTRAP_RESAMPLES,
            confidence: CONFIDENCE,
            min_pairs: MIN_PAIRS,
            min_loads: MIN_LOADS,
            method: "percentile bootstrap of the median of the per-round paired ratios: \
                     resample the rounds with replacement, take each resample's median, \
                     report the (1-confidence)/2 and (1+confidence)/2 quantiles (linear \
                     interpolation) of those medians; with rounds from several page loads, \
                     resample the loads with replacement, then within each drawn load its \
                     rounds, and take the median of the pooled draw; ChaCha8 from `seed`, \
                     one stream per interval keyed by FNV-1a of its label"
                .to_owned(),
        }
    }
}

/// 64-bit FNV-1a of `label`: the stream an interval draws from.
pub fn stream_key(label: &str) -> u64 {
    label.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Quantile `q` in [0, 1] of sorted `v` (non-empty), linearly interpolated between closest
/// ranks (R's type 7).
fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor();
    // pos is in [0, len-1]: both indexes are valid.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (i, j) = (lo as usize, pos.ceil() as usize);
    v[i] + (v[j] - v[i]) * (pos - lo)
}

/// The (1 − confidence)/2 and (1 + confidence)/2 quantiles of the resampled `medians`
/// (non-empty).
fn percentile_interval(mut medians: Vec<f64>, b: &Bootstrap) -> (f64, f64) {
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - b.confidence) / 2.0;
    (
        quantile_sorted(&medians, tail),
        quantile_sorted(&medians, 1.0 - tail),
    )
}

/// Percentile-bootstrap interval of the median of `samples`, drawn from the stream
/// `stream_key(label)`. `None` below `b.min_pairs` samples or with no resamples.
pub fn median_interval(samples: &[f64], b: &Bootstrap, label: &str) -> Option<(f64, f64)> {
    let n = samples.len();
    if n < b.min_pairs.max(1) || b.resamples == 0 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(b.seed);
    rng.set_stream(stream_key(label));
    let mut medians = Vec::with_capacity(b.resamples as usize);
    let mut draw = vec![0.0; n];
    for _ in 0..b.resamples {
        for d in &mut draw {
            *d = samples[rng.random_range(0..n)];
        }
        medians.push(median_in_place(&mut draw)?);
    }
    Some(percentile_interval(medians, b))
}

/// Two-level (hierarchical) percentile-bootstrap interval of the median of the pooled
/// `groups`, one group per page load: each resample draws `groups.len()` loads with
/// replacement and, within each drawn load, as many of its samples as it has, with
/// replacement; the resample's statistic is the median of everything drawn. Resampling the
/// loads carries the variation between page loads into the interval, which a bootstrap of
/// rounds alone cannot see (every round of a load shares its wasm instance, heap and files).
/// Drawn from the stream `stream_key(label)`. `None` below `b.min_loads` non-empty groups,
/// below `b.min_pairs` samples in all, or with no resamples.
pub fn grouped_median_interval(
    groups: &[Vec<f64>],
    b: &Bootstrap,
    label: &str,
) -> Option<(f64, f64)> {
    let groups: Vec<&Vec<f64>> = groups.iter().filter(|g| !g.is_empty()).collect();
    let (g, n) = (groups.len(), groups.iter().map(|g| g.len()).sum::<usize>());
    if g < b.min_loads.max(1) || n < b.min_pairs.max(1) || b.resamples == 0 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(b.seed);
    rng.set_stream(stream_key(label));
    let mut medians = Vec::with_capacity(b.resamples as usize);
    let mut draw = Vec::with_capacity(n * 2);
    for _ in 0..b.resamples {
        draw.clear();
        for _ in 0..g {
            let load = groups[rng.random_range(0..g)];
            for _ in 0..load.len() {
                draw.push(load[rng.random_range(0..load.len())]);
            }
        }
        medians.push(median_in_place(&mut draw)?);
    }
    Some(percentile_interval(medians, b))
}

/// Interval of the median of `groups`, one per page load (none empty): the rounds'
/// ([`median_interval`]) for one load, [`grouped_median_interval`] for several.
pub fn load_median_interval(groups: &[Vec<f64>], b: &Bootstrap, label: &str) -> Option<(f64, f64)> {
    match groups {
        [one] => median_interval(one, b, label),
        groups => grouped_median_interval(groups, b, label),
    }
}

/// Paired ratios (one per round) summarized: median, observed range, and the bootstrap
/// interval of the median where there are enough pairs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioStat {
    /// Median of the per-round ratios.
    pub median: f64,
    /// Lower end of the interval of the median (`None`: too few pairs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    /// Upper end of the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    /// Smallest ratio.
    pub min: f64,
    /// Largest ratio.
    pub max: f64,
    /// Pairs (rounds in which both ran).
    pub n: usize,
    /// Page loads the pairs came from, when more than one ([`RatioStat::of_loads`]): the
    /// interval then resamples loads, then rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loads: Option<usize>,
}

impl RatioStat {
    /// From the per-round `ratios` (finite ones only); `None` if there are none.
    pub fn of(ratios: &[f64], b: &Bootstrap, label: &str) -> Option<Self> {
        let v: Vec<f64> = ratios.iter().copied().filter(|r| r.is_finite()).collect();
        let s = Stat::of(&v)?;
        let interval = median_interval(&v, b, label);
        Some(Self {
            median: s.median,
            lo: interval.map(|i| i.0),
            hi: interval.map(|i| i.1),
            min: s.min,
            max: s.max,
            n: s.n,
            loads: None,
        })
    }

    /// From per-round ratios grouped by page load (finite ones only): the median of them all,
    /// their range, and the interval of [`load_median_interval`]. One non-empty group is
    /// [`RatioStat::of`]. `None` if there are no ratios.
    pub fn of_loads(groups: &[Vec<f64>], b: &Bootstrap, label: &str) -> Option<Self> {
        let groups: Vec<Vec<f64>> = groups
            .iter()
            .map(|g| g.iter().copied().filter(|r| r.is_finite()).collect())
            .filter(|g: &Vec<f64>| !g.is_empty())
            .collect();
        let s = Stat::of(&groups.concat())?;
        let interval = load_median_interval(&groups, b, label);
        Some(Self {
            median: s.median,
            lo: interval.map(|i| i.0),
            hi: interval.map(|i| i.1),
            min: s.min,
            max: s.max,
            n: s.n,
            loads: (groups.len() > 1).then_some(groups.len()),
        })
    }

    /// Half the interval's width relative to the median (`0.03`: ±3 %), where there is an
    /// interval.
    pub fn relative_half_width(&self) -> Option<f64> {
        let (lo, hi) = (self.lo?, self.hi?);
        (self.median > 0.0).then(|| (hi - lo) / 2.0 / self.median)
    }
}

/// Per-round ratios `value ÷ reference` over rounds where both have a positive, finite
/// reference time and a finite value. `values` and `references` are `(round, ms)` pairs.
pub fn paired_ratios(values: &[(u32, f64)], references: &[(u32, f64)]) -> Vec<f64> {
    paired_ratios_keyed(values, references)
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// [`paired_ratios`] with the round each ratio is from: `(round, ratio)`.
pub fn paired_ratios_keyed(values: &[(u32, f64)], references: &[(u32, f64)]) -> Vec<(u32, f64)> {
    values
        .iter()
        .filter_map(|&(round, v)| {
            let &(_, r) = references.iter().find(|(rr, _)| *rr == round)?;
            (r > 0.0 && r.is_finite() && v.is_finite()).then(|| (round, v / r))
        })
        .collect()
}

/// The running order of every round: `rounds` permutations of `0..backends`, each a fresh
/// Fisher–Yates shuffle (rand's `SliceRandom::shuffle`) from one ChaCha8 generator seeded with
/// `seed`. The orders actually run are recorded with the result, so a reader never needs to
/// regenerate them.
pub fn round_orders(seed: u64, backends: usize, rounds: u32) -> Vec<Vec<usize>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..rounds)
        .map(|_| {
            let mut order: Vec<usize> = (0..backends).collect();
            order.shuffle(&mut rng);
            order
        })
        .collect()
}

/// Default seed of the round orders (recorded with the result).
pub const ORDER_SEED: u64 = 20_261_130;

/// A run that repeats a short workload back to back within a round (the SQL batch, the fs
/// lifecycle) and takes this long or longer, its set-up and cleanup included, runs once per
/// round: the machine's slow spells (milliseconds to a second) then average out inside the
/// run, and repetitions would multiply the run's time by what is not measured (PGlite's
/// batches and set-up take seconds; the one-file-per-file lifecycle takes 3–15 ms per file).
pub const REPEAT_BELOW_MS: f64 = 250.0;

/// The fastest of a round's repetitions by `time`, handed every repetition's time (in running
/// order) through `keep_times` when there was more than one; `None` if there are none. The
/// fastest, not the median: a slow spell of the machine only ever adds time, and in noisy
/// sittings it fell on half the repetitions or more, so their median moved with the share
/// (methodology.md, "The batch"); every time stays in the result for other estimators.
pub fn fastest_repetition<T>(
    mut runs: Vec<T>,
    time: impl Fn(&T) -> f64,
    keep_times: impl FnOnce(&mut T, Vec<f64>),
) -> Option<T> {
    let times: Vec<f64> = runs.iter().map(time).collect();
    let fastest = (0..runs.len()).min_by(|&a, &b| times[a].total_cmp(&times[b]))?;
    let mut chosen = runs.swap_remove(fastest);
    if times.len() > 1 {
        keep_times(&mut chosen, times);
    }
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[5.0]), Some(5.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[1.0, 1.0, 9.0]), Some(1.0));
        assert_eq!(median(&[9.0, 1.0, 1.0, 9.0, 5.0, 6.0]), Some(5.5));
    }

    #[test]
    fn min_max_and_stat() {
        assert_eq!(min_max(&[]), None);
        assert_eq!(min_max(&[2.0, -1.0, 7.5, 3.0]), Some((-1.0, 7.5)));
        let s = Stat::of(&[10.0, 30.0, 20.0]).unwrap();
        assert_eq!(
            s,
            Stat {
                median: 20.0,
                min: 10.0,
                max: 30.0,
                n: 3
            }
        );
        assert_eq!(
            Stat::over(&[Some(1.0), None, Some(3.0)], |x| *x).unwrap().n,
            2
        );
        assert_eq!(Stat::over(&[None::<f64>], |x| *x), None);
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 1.0), 5.0);
        assert_eq!(quantile_sorted(&v, 0.5), 3.0);
        assert_eq!(quantile_sorted(&v, 0.125), 1.5);
        assert_eq!(quantile_sorted(&[7.0], 0.3), 7.0);
    }

    #[test]
    fn bootstrap_is_seeded_and_sensible() {
        let b = Bootstrap::default();
        // Constant samples: a point interval.
        assert_eq!(
            median_interval(&[2.0; 10], &b, "x"),
            Some((2.0, 2.0)),
            "no spread, no width"
        );
        // Too few pairs: no interval.
        assert_eq!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], &b, "x"), None);
        let samples: Vec<f64> = (0..40).map(|i| 1.0 + f64::from(i % 7) * 0.01).collect();
        let a = median_interval(&samples, &b, "a").unwrap();
        assert_eq!(a, median_interval(&samples, &b, "a").unwrap(), "same seed");
        let m = median(&samples).unwrap();
        assert!(a.0 <= m && m <= a.1, "{a:?} around {m}");
        assert!(a.0 >= 1.0 && a.1 <= 1.06, "{a:?} inside the data");
        // Another stream gives another (but similar) interval.
        let other = median_interval(&samples, &b, "b").unwrap();
        assert!((other.0 - a.0).abs() < 0.02 && (other.1 - a.1).abs() < 0.02);
        // More spread, wider interval.
        let wide: Vec<f64> = samples.iter().map(|x| 1.0 + (x - 1.0) * 10.0).collect();
        let w = median_interval(&wide, &b, "a").unwrap();
        assert!(w.1 - w.0 > a.1 - a.0);
    }

    #[test]
    fn bootstrap_covers_the_true_median_about_95_percent() {
        // Samples from a known distribution (uniform on [0.9, 1.1] through a fixed generator):
        // the 95 % interval should contain the true median 1.0 in roughly 95 % of trials.
        let b = Bootstrap {
            resamples: 1_000,
            ..Bootstrap::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let trials = 100;
        let mut covered = 0;
        for t in 0..trials {
            let s: Vec<f64> = (0..31).map(|_| rng.random_range(0.9..1.1)).collect();
            let (lo, hi) = median_interval(&s, &b, &format!("t{t}")).unwrap();
            if lo <= 1.0 && 1.0 <= hi {
                covered += 1;
            }
        }
        assert!(
            (85..=100).contains(&covered),
            "covered {covered} of {trials}"
        );
    }

    /// `loads` page loads of `rounds` rounds each: load `l` sits at `1 + bias(l)`, its rounds
    /// add noise of ±`noise` (uniform) around that.
    fn loads_of(
        rng: &mut ChaCha8Rng,
        loads: usize,
        rounds: usize,
        bias: f64,
        noise: f64,
    ) -> Vec<Vec<f64>> {
        (0..loads)
            .map(|_| {
                let level = 1.0 + rng.random_range(-bias..bias);
                (0..rounds)
                    .map(|_| level + rng.random_range(-noise..noise))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn grouped_interval_needs_loads_and_is_seeded() {
        let b = Bootstrap::default();
        let five = vec![vec![1.0; 10]; 5];
        assert_eq!(grouped_median_interval(&five, &b, "x"), None, "5 < 6 loads");
        let six = vec![vec![2.0; 3]; 6];
        assert_eq!(grouped_median_interval(&six, &b, "x"), Some((2.0, 2.0)));
        // Empty loads do not count.
        let mut sparse = six.clone();
        sparse[0].clear();
        assert_eq!(grouped_median_interval(&sparse, &b, "x"), None);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let g = loads_of(&mut rng, 8, 10, 0.03, 0.01);
        let a = grouped_median_interval(&g, &b, "a").unwrap();
        assert_eq!(a, grouped_median_interval(&g, &b, "a").unwrap());
        let m = median(&g.concat()).unwrap();
        assert!(a.0 <= m && m <= a.1, "{a:?} around {m}");
    }

    #[test]
    fn grouped_interval_sees_the_spread_between_loads() {
        // Each load has its own level (±3 %), its rounds vary ±0.5 % around it: the pooled
        // rounds look precise, but the level of the next load is not known to ±0.5 %.
        let b = Bootstrap {
            resamples: 500,
            ..Bootstrap::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let trials = 100;
        let (mut grouped, mut flat) = (0, 0);
        for t in 0..trials {
            let g = loads_of(&mut rng, 8, 12, 0.03, 0.005);
            let label = format!("t{t}");
            let (lo, hi) = grouped_median_interval(&g, &b, &label).unwrap();
            if lo <= 1.0 && 1.0 <= hi {
                grouped += 1;
            }
            let (lo, hi) = median_interval(&g.concat(), &b, &label).unwrap();
            if lo <= 1.0 && 1.0 <= hi {
                flat += 1;
            }
        }
        assert!(grouped >= 85, "grouped covered {grouped} of {trials}");
        assert!(flat <= 60, "rounds alone covered {flat} of {trials}");
    }

    #[test]
    fn ratio_over_loads() {
        let b = Bootstrap::default();
        let one = RatioStat::of_loads(&[vec![1.0, 1.1, 0.9, 1.0, 1.05, 0.95]], &b, "k").unwrap();
        assert_eq!(
            one,
            RatioStat::of(&[1.0, 1.1, 0.9, 1.0, 1.05, 0.95], &b, "k").unwrap(),
            "one load: the rounds' interval"
        );
        assert_eq!(one.loads, None);
        let groups: Vec<Vec<f64>> = (0..6)
            .map(|l| {
                vec![
                    1.0 + f64::from(l) * 0.01,
                    f64::NAN,
                    1.0 - f64::from(l) * 0.01,
                ]
            })
            .collect();
        let s = RatioStat::of_loads(&groups, &b, "k").unwrap();
        assert_eq!((s.n, s.loads, s.median), (12, Some(6), 1.0));
        assert_eq!((s.min, s.max), (0.95, 1.05));
        assert!(s.lo.unwrap() <= 1.0 && s.hi.unwrap() >= 1.0, "{s:?}");
        let few = RatioStat::of_loads(&groups[..3], &b, "k").unwrap();
        assert_eq!((few.loads, few.lo, few.hi), (Some(3), None, None));
        assert_eq!(RatioStat::of_loads(&[vec![], vec![]], &b, "k"), None);
    }

    #[test]
    fn ratios_pair_by_round() {
        let v = [(0, 2.0), (1, 3.0), (3, 4.0)];
        let r = [(0, 1.0), (1, 0.0), (2, 5.0), (3, 2.0)];
        assert_eq!(paired_ratios(&v, &r), vec![2.0, 2.0]);
        let s = RatioStat::of(
            &[1.0, 1.1, 0.9, 1.0, 1.05, 0.95],
            &Bootstrap::default(),
            "k",
        )
        .unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (1.0, 0.9, 1.1, 6));
        let (lo, hi) = (s.lo.unwrap(), s.hi.unwrap());
        assert!(
            (0.9..=1.0).contains(&lo) && (1.0..=1.1).contains(&hi),
            "{s:?}"
        );
        assert!(s.relative_half_width().unwrap() > 0.0);
        let few = RatioStat::of(&[1.0, 2.0, 1.5, 1.2, 1.1], &Bootstrap::default(), "k").unwrap();
        assert_eq!(
            (few.lo, few.hi, few.relative_half_width()),
            (None, None, None)
        );
        assert!(RatioStat::of(&[f64::NAN], &Bootstrap::default(), "k").is_none());
    }

    #[test]
    fn orders_are_seeded_permutations() {
        let o = round_orders(ORDER_SEED, 5, 20);
        assert_eq!(o.len(), 20);
        for p in &o {
            let mut s = p.clone();
            s.sort_unstable();
            assert_eq!(s, vec![0, 1, 2, 3, 4]);
        }
        assert_eq!(o, round_orders(ORDER_SEED, 5, 20), "same seed, same orders");
        assert_ne!(o, round_orders(ORDER_SEED + 1, 5, 20));
        // Over 20 rounds every backend runs first at least once (not a fixed order).
        for b in 0..5 {
            assert!(o.iter().any(|p| p[0] == b), "backend {b} never first");
        }
        assert!(round_orders(1, 0, 3).iter().all(Vec::is_empty));
    }
}
