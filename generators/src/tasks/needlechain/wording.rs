//! How chain facts are worded.

use super::{Chain, Kind, Link, NeedleChain, Order, Relation};

impl NeedleChain {
    /// How many wordings `link`'s fact has, and which of them the chain drew: kinship facts
    /// draw their form; salary facts always start in their first, plainest wording.
    pub(super) fn wordings(&self, link: &Link) -> (usize, usize) {
        let count = match link.relation {
            Relation::Parent => 5,
            Relation::Grandparent => 4,
            _ => 3,
        };
        let drawn = match self.params.kind {
            Kind::Salary => 0,
            Kind::Kinship => (link.form % count as u64) as usize,
        };
        (count, drawn)
    }

    /// Wording `which` of `link`'s fact (see [`NeedleChain::wordings`]). Every wording states
    /// the same fact in a few more or fewer tokens (salary: "each week" added, or "a weekly
    /// wage of"). Salary facts all begin "NAME is paid", so the person a fact is about stays
    /// easy to see.
    pub(super) fn fact(&self, chain: &Chain, link: &Link, which: usize) -> String {
        let n = &chain.people[link.person];
        let of = link.of.map_or("", |i| chain.people[i].as_str());
        let v = link.value;
        let pick = |forms: [String; 3]| -> String {
            let [a, b, c] = forms;
            match which {
                0 => a,
                1 => b,
                _ => c,
            }
        };
        match (self.params.order, link.relation) {
            (Order::Parallel, _) | (_, Relation::Anchor) => pick([
                format!("{n} is paid {v} credits per week."),
                format!("{n} is paid a weekly wage of {v} credits."),
                format!("{n} is paid a weekly wage of exactly {v} credits."),
            ]),
            (_, Relation::Double) => pick([
                format!("{n} is paid twice as much as {of}."),
                format!("{n} is paid twice as much as {of} each week."),
                format!("{n} is paid twice as much as {of} is paid each week."),
            ]),
            (_, Relation::Half) => pick([
                format!("{n} is paid half as much as {of}."),
                format!("{n} is paid half as much as {of} each week."),
                format!("{n} is paid half as much as {of} is paid each week."),
            ]),
            (_, Relation::Same) => pick([
                format!("{n} is paid exactly as much as {of}."),
                format!("{n} is paid exactly as much as {of} each week."),
                format!("{n} is paid exactly as much as {of} is paid each week."),
            ]),
            (_, Relation::Parent) => match which {
                0 => format!("{n} is a parent of {of}."),
                1 => format!("{of} is a child of {n}."),
                2 => format!("One of {of}'s parents is {n}."),
                3 => format!("{n} brought up {of}, who is {n}'s own child."),
                _ => format!("{of} was born to {n}."),
            },
            (_, Relation::Grandparent) => match which {
                0 => format!("{n} is a grandparent of {of}."),
                1 => format!("{of} is a grandchild of {n}."),
                2 => format!("One of {of}'s grandparents is {n}."),
                _ => format!("{n} has a grandchild named {of}."),
            },
            (_, Relation::Independent) => unreachable!("independent is a rendering, not a link"),
        }
    }
}
