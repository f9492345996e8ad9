//! How chain facts are worded, and rewording that fills a budget more finely than whole facts.

use super::{Built, Chain, Kind, Link, NeedleChain, Order, Relation};
use crate::fit::render::render_facts;
use crate::fit::{tolerance, Fitted};
use crate::{GenError, Run};

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
    /// wage of"), which lets [`NeedleChain::reword_to_fill`] fill a budget more finely than
    /// whole facts can. Salary facts all begin "NAME is paid", so the person a fact is about
    /// stays easy to see.
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

    /// Close a gap to the budget wider than the tolerance, left where one more fact would not
    /// fit (a fact and its name cost 10 to 30 tokens, more than the 16-token tolerance of short
    /// budgets): facts, visited in an order drawn with the chain, switch to a longer wording of
    /// the same statement while the estimate (each line counted alone) stays inside the budget;
    /// the prompt is then counted whole, and the estimate corrected by the error if it missed.
    /// Returns the fullest rendering that fits (`fitted` itself when nothing better does).
    pub(super) fn reword_to_fill(
        &self,
        built: &mut Built,
        fitted: Fitted,
        run: &Run,
        budget: usize,
    ) -> Result<Fitted, GenError> {
        let tok = &run.tokenizer;
        let tol = tolerance(budget);
        if fitted.prompt_tokens > budget || budget - fitted.prompt_tokens <= tol {
            return Ok(fitted);
        }
        // Aim a few tokens inside the window, as `fit` does, so small boundary effects still fit.
        let aim = (tol / 2).min(8) as i64;
        let done = tol as i64 - aim;
        let mut visit: Vec<usize> = (0..built.facts.len()).collect();
        visit.sort_by_key(|&p| (built.chain.links[built.order[p]].form >> 32, p));
        let base = built.facts.clone();
        let gap = (budget - fitted.prompt_tokens) as i64;
        let start = fitted.prompt_tokens as i64;
        let mut best: (Fitted, Vec<String>) = (fitted, base.clone());
        // Tokens the whole count gave beyond the lines' estimate, at the last attempt.
        let mut error = 0i64;
        for _ in 0..4 {
            let cap = gap - error;
            let mut facts = base.clone();
            let mut added = 0i64;
            for &p in &visit {
                let left = cap - added;
                if left <= done {
                    break;
                }
                let link = &built.chain.links[built.order[p]];
                let (count, drawn) = self.wordings(link);
                let now = tok.count(&facts[p])? as i64;
                // The longer wording that leaves closest to `aim` tokens of room, within `left`.
                let mut pick: Option<(i64, String)> = None;
                for which in (0..count).filter(|&w| w != drawn) {
                    let text = self.fact(&built.chain, link, which);
                    let gain = tok.count(&text)? as i64 - now;
                    let miss = |g: i64| (left - g - aim).abs();
                    if gain > 0
                        && gain <= left
                        && pick.as_ref().is_none_or(|(g, _)| miss(gain) < miss(*g))
                    {
                        pick = Some((gain, text));
                    }
                }
                if let Some((gain, text)) = pick {
                    facts[p] = text;
                    added += gain;
                }
            }
            if added == 0 {
                break;
            }
            let again = render_facts(tok, &built.frame, &facts)?;
            let length = again.prompt_tokens;
            error = length as i64 - (start + added);
            if length <= budget && length > best.0.prompt_tokens {
                best = (again, facts);
            }
            if budget - best.0.prompt_tokens <= tol {
                break;
            }
        }
        built.facts = best.1;
        Ok(best.0)
    }
}
