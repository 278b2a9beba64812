//! Values just outside each rule of the table: what the tests that follow a
//! setting from the table to each place that holds it give.

use rfm_frames::fmi::FmiType;
use rfm_frames::fmi::Value;

use super::table::{Rule, SettingSpec};

impl SettingSpec {
    /// Values just outside the rule, one for each of its bounds, its step
    /// and its words: what the tests that follow a setting from the table to
    /// each place that holds it (a file's line, `fmi2Set*`, initialization)
    /// give, so that a bound added here is tried everywhere.
    pub fn refused_near(&self, max_lag: u8) -> Vec<Value> {
        let number = |x: f64| match self.kind {
            FmiType::Integer => Value::Integer(x as i32),
            _ => Value::Real(x),
        };
        let text = |t: &str| Value::String(t.to_owned());
        match self.rule {
            Rule::Number {
                min,
                above,
                multiple,
                ..
            } => {
                let below = match (above, self.kind) {
                    (true, _) => min,
                    (false, FmiType::Integer) => min - 1.0,
                    (false, _) => min - min.abs().max(1.0) * 1e-6,
                };
                let mut out = vec![number(below)];
                out.extend(self.max(max_lag).map(|max| match self.kind {
                    FmiType::Integer => number(max + 1.0),
                    _ => number(max * (1.0 + 1e-9)),
                }));
                if multiple > 1 {
                    out.push(number(min + 1.0));
                }
                out
            }
            Rule::Words { .. } => vec![text("none-of-its-words")],
            Rule::Device => vec![text(""), text("tcp:host"), text("/dev/rfmg20")],
            Rule::Path => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::SETTINGS;

    /// Each value [`SettingSpec::refused_near`] gives is refused, by its
    /// row's check; the starts are taken.
    #[test]
    fn the_values_near_each_rule_are_refused() {
        for s in &SETTINGS {
            for bad in s.refused_near(3) {
                assert!(s.check(&bad, 3).is_err(), "{} = {bad:?}", s.key);
            }
        }
    }
}
