//! Step accounting for the page's progress events. The result document itself and the
//! progress event are `bench_results` types ([`bench_results::Document`],
//! [`bench_results::progress::ProgressEvent`]).

/// Step accounting across suites that count their own units: the overall count is the sum of
/// each part's count, an estimate until the part reports its own total.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Steps {
    parts: Vec<(u32, u32)>,
}

impl Steps {
    /// Parts with these estimated totals, in running order.
    pub fn new(estimates: &[u32]) -> Self {
        Self {
            parts: estimates.iter().map(|&t| (0, t)).collect(),
        }
    }

    /// Part `i` reports `done` of `total` units.
    pub fn report(&mut self, i: usize, done: u32, total: u32) {
        if let Some(p) = self.parts.get_mut(i) {
            *p = (done.min(total), total);
        }
    }

    /// Part `i` is over (finished or failed): all its units count as done.
    pub fn finish(&mut self, i: usize) {
        if let Some(p) = self.parts.get_mut(i) {
            p.0 = p.1;
        }
    }

    /// Units done over all parts.
    pub fn done(&self) -> u32 {
        self.parts.iter().map(|p| p.0).sum()
    }

    /// Units over all parts.
    pub fn total(&self) -> u32 {
        self.parts.iter().map(|p| p.1).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_sum_parts() {
        let mut s = Steps::new(&[10, 5]);
        assert_eq!((s.done(), s.total()), (0, 15));
        s.report(0, 3, 12);
        assert_eq!((s.done(), s.total()), (3, 17));
        s.finish(0);
        s.report(1, 9, 4);
        assert_eq!((s.done(), s.total()), (16, 16), "done never exceeds total");
        s.report(7, 1, 1);
        assert_eq!(s.total(), 16, "unknown part ignored");
    }
}
