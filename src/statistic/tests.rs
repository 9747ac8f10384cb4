use num_bigint::BigUint;

use super::*;
use crate::detail::Kept;

/// Stats of `values` keeping everything.
fn keeping(values: &[i64]) -> Stats {
    let mut s = Stats::keeping(Kept::Counts, values[0]);
    values[1..].iter().for_each(|&v| s.add(v));
    s
}

/// Whether `r` is `sqrt(num / den)` rounded half up: `(r − ½)² ≤ num/den
/// < (r + ½)²`, that is `(2r − 1)²·den ≤ 4·num < (2r + 1)²·den`.
fn is_root_half_up(r: u128, num: &BigUint, den: &BigUint) -> bool {
    let four = num * 4u32;
    let r = BigUint::from(r);
    let below = match r == BigUint::ZERO {
        true => true,
        false => {
            let odd = &r * 2u32 - 1u32;
            &odd * &odd * den <= four
        }
    };
    let odd = r * 2u32 + 1u32;
    below && four < &odd * &odd * den
}

proptest::proptest! {
    /// Every statistic of random values (narrow, wide, equal) as a model
    /// over the sorted values computes it, at several scales shown.
    #[test]
    fn statistics_agree_with_a_model_of_sorted_values(
        mut values in proptest::collection::vec(proptest::prop_oneof![
            -999i64..=999, 5i64..6, -(10i64.pow(18) - 1)..10i64.pow(18)], 1..200),
        (scale, shown) in (0u32..4, 0u32..4),
        q in 1u64..1000,
    ) {
        let s = keeping(&values);
        values.sort_unstable();
        let n = values.len() as u64;
        let at = |shown_v: Option<i64>| shown_v.map(|v| Shown::Units(v.into()));
        let quantile = Statistic::Quantile { numerator: q, denominator: 1000 };
        let rank = (q * n).div_ceil(1000) as usize;
        proptest::prop_assert_eq!(quantile.of(&s, scale, shown), at(rescale(values[rank - 1], scale, shown)));
        let median = Statistic::parse("median").unwrap();
        proptest::prop_assert_eq!(median.of(&s, scale, shown), at(rescale(values[(values.len() - 1) / 2], scale, shown)));
        proptest::prop_assert_eq!(Statistic::Count.of(&s, scale, shown), Some(Shown::Count(n)));
        proptest::prop_assert_eq!(Statistic::Min.of(&s, scale, shown), at(rescale(values[0], scale, shown)));
        let sum: i128 = values.iter().map(|&v| i128::from(v)).sum();
        if shown >= scale {
            let want = sum * 10i128.pow(shown - scale);
            proptest::prop_assert_eq!(Statistic::Sum.of(&s, scale, shown), Some(Shown::Units(want)));
        }
        // The standard deviations, by the defining inequality over the
        // exact variance of the values in shown units.
        for (stat, den) in [(Statistic::Stddev, n.saturating_sub(1)), (Statistic::StddevPop, n)] {
            let got = stat.of(&s, scale, shown);
            if den == 0 {
                proptest::prop_assert_eq!(got, None);
                continue;
            }
            let Some(Shown::Units(r)) = got else { panic!("no stddev: {got:?}") };
            let mean_sq: BigUint = values.iter().map(|&v| BigUint::from(v.unsigned_abs()).pow(2)).sum();
            let sum_abs = BigUint::from(sum.unsigned_abs());
            let spread = BigUint::from(n) * mean_sq - &sum_abs * &sum_abs;
            let ten = BigUint::from(10u32);
            let (num, den) = match shown.checked_sub(scale) {
                Some(up) => (spread * ten.pow(2 * up), BigUint::from(n) * den),
                None => (spread, BigUint::from(n) * den * ten.pow(2 * (scale - shown))),
            };
            proptest::prop_assert!(is_root_half_up(r as u128, &num, &den), "{r} for {num}/{den}");
        }
    }

    /// The 128-bit root and the big-integer root agree wherever the first
    /// does not overflow.
    #[test]
    fn narrow_and_big_roots_agree(num in proptest::num::u128::ANY, den in 1u128..u128::MAX) {
        let big = root_half_up(&BigUint::from(num), &BigUint::from(den)).unwrap();
        if let Some(narrow) = root_half_up(&num, &den) {
            proptest::prop_assert_eq!(BigUint::from(narrow), big);
        }
    }
}

#[test]
fn ties_of_the_root_round_up() {
    // sqrt(9/4) = 1.5 → 2; sqrt(2) = 1.41 → 1; sqrt(6.25) = 2.5 → 3.
    assert_eq!(root_half_up(&9u128, &4), Some(2));
    assert_eq!(root_half_up(&2u128, &1), Some(1));
    assert_eq!(root_half_up(&25u128, &4), Some(3));
    assert_eq!(root_half_up(&0u128, &7), Some(0));
}

#[test]
fn names_parse_and_print_back() {
    for name in [
        "count",
        "sum",
        "min",
        "max",
        "mean",
        "stddev",
        "stddev_pop",
        "median",
        "p1",
        "p99.9",
        "p0.001",
        "p50",
    ] {
        assert_eq!(Statistic::parse(name).unwrap().to_string(), name);
    }
    for bad in [
        "p0",
        "p100",
        "p",
        "p.5",
        "p5.",
        "p-1",
        "p1e2",
        "p100.5",
        "p1.0000001",
        "avg",
        "P50",
        "p 5",
    ] {
        assert_eq!(Statistic::parse(bad), None, "{bad}");
    }
    let list = Statistics::parse("min, median,p99 ,max").unwrap();
    assert_eq!(list.to_string(), "min,median,p99,max");
    assert_eq!(list.kept(), Kept::Counts);
    assert_eq!(
        Statistics::parse("stddev,count").unwrap().kept(),
        Kept::Squares
    );
    assert_eq!(Statistics::official().kept(), Kept::Basic);
    assert_eq!(Statistics::parse(" , "), Err(StatisticsError::Empty));
    assert!(
        matches!(Statistics::parse("min,avg"), Err(StatisticsError::Unknown { name }) if name == "avg")
    );
    // Named twice, a statistic's columns would share a name; the same
    // quantile under other names (`p50`, `median`) has columns of its own.
    for (list, twice) in [
        ("median,max,median", "median"),
        ("p99.9, p99.9", "p99.9"),
        ("min,min", "min"),
    ] {
        assert_eq!(
            Statistics::parse(list),
            Err(StatisticsError::Repeated { name: twice.into() }),
            "{list}"
        );
    }
    assert_eq!(
        Statistics::parse("p50,median").unwrap().to_string(),
        "p50,median"
    );
}

#[test]
fn a_key_without_values_has_a_count_and_nothing_else() {
    let s = Stats::missing_keeping(Kept::Counts);
    for stat in Statistics::parse("sum,min,max,mean,stddev,stddev_pop,median,p99")
        .unwrap()
        .iter()
    {
        assert_eq!(stat.of(&s, 1, 1), None, "{stat}");
    }
    assert_eq!(Statistic::Count.of(&s, 1, 1), Some(Shown::Count(0)));
    // One value: no sample deviation, a population one of 0.
    let one = keeping(&[7]);
    assert_eq!(Statistic::Stddev.of(&one, 1, 1), None);
    assert_eq!(Statistic::StddevPop.of(&one, 1, 1), Some(Shown::Units(0)));
}

#[test]
fn quantiles_of_a_key_that_kept_no_counts_are_none() {
    let s = Stats::keeping(Kept::Squares, 5);
    assert_eq!(Statistic::parse("median").unwrap().of(&s, 1, 1), None);
    assert_eq!(Statistic::Stddev.of(&Stats::new(5), 1, 1), None);
}
