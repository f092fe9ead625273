//! Summaries of recorded samples: exact nearest-rank percentiles.

/// Summary of a set of samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub median: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// The `q`-quantile (0..=1) of sorted samples by the nearest-rank method.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Summarise samples (order irrelevant). Empty input gives `count == 0` and NaNs.
pub fn summarize(samples: &[f64]) -> Summary {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = s.iter().sum::<f64>() / s.len().max(1) as f64;
    Summary {
        count: s.len(),
        min: s.first().copied().unwrap_or(f64::NAN),
        median: quantile_sorted(&s, 0.5),
        p99: quantile_sorted(&s, 0.99),
        p999: quantile_sorted(&s, 0.999),
        max: s.last().copied().unwrap_or(f64::NAN),
        mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = summarize(&v);
        assert_eq!((s.median, s.p99, s.max, s.min), (50.0, 99.0, 100.0, 1.0));
        assert_eq!(s.mean, 50.5);
    }

    #[test]
    fn empty_is_nan() {
        assert!(summarize(&[]).median.is_nan());
    }
}
