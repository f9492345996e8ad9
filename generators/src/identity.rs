//! Fresh splits: control rows that detect a leaked split, and the identity of an instance
//! by which a new split is kept disjoint from earlier ones.
//!
//! A control row asks an instance's question without its context: a model that answers it
//! answers from memory, so the split (or its generator's output) was seen in training. An
//! instance's identity keys ([`crate::Task::identity`]) say when two instances are the same
//! instance; a split made disjoint from others shares no key with them.

use serde_json::{json, Value};

use crate::{GenError, Instance, Run};

/// The kind of control row that asks the question without the context (`params.control`).
pub const NO_CONTEXT: &str = "no_context";

/// The suffix a control row's `variant` carries after its instance's variant
/// (`single` → `single+no_context`), so a harness tells the two rows apart.
pub const CONTROL_VARIANT_SUFFIX: &str = "+no_context";

/// The control row of `instance`: the same question, answer prefix and gold answers, but an
/// `input` that is the question alone (no context, so no needle, fact or item). It keeps its
/// instance's `target_length` and is measured exactly (`length`, `prompt_tokens`) but is
/// short by design: no length window applies to it. Its needle offsets and depths are empty
/// (nothing is placed), and `params` is the instance's with `"control": "no_context"`.
pub fn no_context_control(run: &Run, instance: &Instance) -> Result<Instance, GenError> {
    let input = instance.question.clone();
    let length = run.tokenizer.count(&input)? as u64;
    let prompt_tokens = if instance.answer_prefix.is_empty() && run.reader.chat.is_none() {
        length
    } else {
        let text = run.reader.model_prompt(&input, &instance.answer_prefix)?;
        if run.reader.chat.is_some() {
            run.tokenizer.count_special(&text)? as u64
        } else {
            run.tokenizer.count(&text)? as u64
        }
    };
    let mut params: Value = serde_json::from_str(&instance.params)
        .map_err(|e| GenError::Internal(format!("an instance's params are not JSON: {e}")))?;
    if !params.is_object() {
        return Err(GenError::Internal(
            "an instance's params are not an object".into(),
        ));
    }
    params["control"] = json!(NO_CONTEXT);
    Ok(Instance {
        variant: format!("{}{CONTROL_VARIANT_SUFFIX}", instance.variant),
        input,
        length,
        prompt_tokens,
        needle_offsets: Vec::new(),
        needle_depths: Vec::new(),
        params: crate::canonical_json(&params),
        ..instance.clone()
    })
}

/// Whether a row is a control row (its `params` name a control).
pub fn is_control(params: &str) -> bool {
    serde_json::from_str::<Value>(params)
        .ok()
        .and_then(|p| p.get("control").and_then(Value::as_str).map(str::to_string))
        .is_some()
}

/// The default identity of an instance: its recorded facts (`params`, canonical JSON) with
/// what describes the haystack rather than the instance (`screened_units`) left out. Two
/// instances are the same when every fact they record is the same. Tasks with a narrower
/// notion (a key–value pair, a seed tuple) override [`crate::Task::identity`].
pub fn default_identity(instance: &Instance) -> Vec<String> {
    match serde_json::from_str::<Value>(&instance.params) {
        Ok(Value::Object(mut map)) => {
            map.remove("screened_units");
            map.remove("control");
            vec![crate::canonical_json(&Value::Object(map))]
        }
        _ => vec![instance.params.clone()],
    }
}

/// One identity key from a recorded fact (`params[field]`, canonical JSON), tagged with its
/// kind; none when the row does not record it.
pub fn fact_key(instance: &Instance, kind: &str, field: &str) -> Vec<String> {
    serde_json::from_str::<Value>(&instance.params)
        .ok()
        .and_then(|p| p.get(field).cloned())
        .filter(|v| !v.is_null())
        .map(|v| vec![format!("{kind}:{}", crate::canonical_json(&v))])
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_identity_ignores_the_haystack_screen() {
        let mut a = Instance {
            params: r#"{"items":[1,2],"screened_units":3}"#.into(),
            ..blank()
        };
        let b = Instance {
            params: r#"{"items":[1,2],"screened_units":9}"#.into(),
            ..blank()
        };
        assert_eq!(default_identity(&a), default_identity(&b));
        a.params = r#"{"items":[2,1]}"#.into();
        assert_ne!(default_identity(&a), default_identity(&b));
        assert_eq!(fact_key(&b, "items", "items"), vec!["items:[1,2]"]);
        assert!(fact_key(&b, "x", "absent").is_empty());
        assert!(is_control(r#"{"control":"no_context"}"#));
        assert!(!is_control(r#"{"items":[1]}"#));
    }

    fn blank() -> Instance {
        Instance {
            task: "t".into(),
            variant: "v".into(),
            input: String::new(),
            question: String::new(),
            answer_prefix: String::new(),
            target: String::new(),
            answers: Vec::new(),
            labels: Vec::new(),
            metric: crate::Metric::Exact,
            max_new_tokens: 0,
            target_length: 0,
            length: 0,
            prompt_tokens: 0,
            tokenizer: String::new(),
            depth_percent: None,
            needle_offsets: Vec::new(),
            needle_depths: Vec::new(),
            sample_index: 0,
            params: String::new(),
        }
    }
}
