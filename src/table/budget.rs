//! The probe budget: how many steps past home slots a table may still
//! take before it reseeds or floods (docs/PERFORMANCE.md, *The tables*).

use crate::tuning::PROBE_ALLOWANCE;

/// The probe steps past home slots a table may still take, and how many
/// it has been given: [`PROBE_ALLOWANCE`] to start, and one per
/// [`SHORT_PROBE_BYTES`] (the long table: [`LONG_PROBE_BYTES`]) of input
/// announced since. (The short table's hot path also looks at the slot
/// after home, unpaid: at most one step a row more.) Random names take
/// far fewer (docs/PERFORMANCE.md, *The tables*); names built to share a
/// hash take more with every name, and the table that runs out reseeds
/// (the short table, once, with a new allowance and two steps a name for
/// moving its names) or floods: its names move to a keyed table, whatever
/// their hash. A table's probe steps are thus at most its allowances and a
/// share of its input, however its names were chosen.
#[derive(Clone, Copy)]
pub(crate) struct Budget {
    pub(super) left: u64,
    pub(super) given: u64,
    /// Steps a growth took past the budget's end.
    pub(super) over: u64,
    /// Whether the table has flooded: it is credited no more steps, which
    /// it would not take.
    pub(super) flooded: bool,
}

impl Budget {
    pub(super) fn new() -> Budget {
        Budget {
            left: PROBE_ALLOWANCE,
            given: PROBE_ALLOWANCE,
            over: 0,
            flooded: false,
        }
    }

    /// Credits the steps that `bytes` more bytes of input earn, one per
    /// `per_step`, unless the table has flooded.
    pub(super) fn credit(&mut self, bytes: u64, per_step: u64) {
        self.grant(bytes / per_step);
    }

    /// Gives `steps` more, unless the table has flooded.
    pub(super) fn grant(&mut self, steps: u64) {
        if !self.flooded {
            self.left += steps;
            self.given += steps;
        }
    }

    /// Spends `steps` taken already, as a growth's, leaving none if they
    /// were more than were left.
    pub(super) fn spend(&mut self, steps: u64) {
        let paid = steps.min(self.left);
        self.left -= paid;
        self.over += steps - paid;
    }

    /// Steps taken so far.
    pub(super) fn spent(&self) -> u64 {
        self.given - self.left + self.over
    }

    /// Gives up the steps left, and any to come: the table floods.
    pub(super) fn forfeit(&mut self) {
        self.given -= self.left;
        self.left = 0;
        self.flooded = true;
    }

    /// Adds `other`'s steps, given, left and taken, to these: a table that
    /// absorbs another may spend what the other's input earned, unless it
    /// has flooded.
    pub(super) fn join(&mut self, other: Budget) {
        self.left += other.left;
        self.given += other.given;
        self.over += other.over;
        if self.flooded {
            self.forfeit();
        }
    }
}
