//! Runs of value references in one call: set and got in any order, exactly, and
//! a run holding a value that is not finite refused naming it.

use super::*;

/// Two nodes with runs of signals side by side: node `a` has 12 Reals
/// `r0`..`r11`, then 9 Integers `i0`..`i8`, then a bounded Real `b` that is
/// checked alone; node `b` has 9 Reals `s0`..`s8`.
fn runs_interface() -> String {
    let signals = |prefix: &str, n: usize, kind: &str| {
        (0..n)
            .map(|i| format!("{{ name = \"{prefix}{i}\", type = \"{kind}\" }}, "))
            .collect::<String>()
    };
    format!(
        "name = \"runs\"\n\
         [[node]]\nname = \"a\"\nslot = 0\nsignals = [ {}{}{{ name = \"b\", type = \"Real\", min = -1, max = 1 }} ]\n\
         [[node]]\nname = \"b\"\nslot = 1\nsignals = [ {}]\n",
        signals("r", 12, "Real"),
        signals("i", 9, "Integer"),
        signals("s", 9, "Real"),
    )
}

fn runs_node(node: &str, device: &str) -> Fmu {
    let (dir, uri) = resources(&runs_interface(), node);
    let fmu = Fmu::of(node, Model::load(dir.path()).unwrap(), &uri);
    fmu.set_all(&[("device", device), ("lag", "1"), ("timeout", "5")]);
    fmu
}

/// `prefix` followed by each of `is`: `names("a.r", &[0, 1])` is `a.r0`, `a.r1`.
fn names(prefix: &str, is: &[i32]) -> Vec<String> {
    is.iter().map(|i| format!("{prefix}{i}")).collect()
}

fn vrs(fmu: &Fmu, names: &[String]) -> Vec<u32> {
    names.iter().map(|n| fmu.vr(n).0).collect()
}

fn set_reals(fmu: &Fmu, names: &[String], values: &[f64]) -> fmi2Status {
    let vrs = vrs(fmu, names);
    assert_eq!(vrs.len(), values.len());
    // SAFETY: matching lengths.
    unsafe { fmi2_set_real(fmu.c, vrs.as_ptr(), vrs.len(), values.as_ptr()) }
}

fn reals(fmu: &Fmu, names: &[String]) -> Vec<f64> {
    fmu.reals(&names.iter().map(String::as_str).collect::<Vec<_>>())
}

fn integers(fmu: &Fmu, names: &[String]) -> Vec<i32> {
    let vrs = vrs(fmu, names);
    let mut out = vec![-7; vrs.len()];
    // SAFETY: matching lengths.
    let status = unsafe { fmi2_get_integer(fmu.c, vrs.as_ptr(), vrs.len(), out.as_mut_ptr()) };
    assert_eq!(status, fmi2OK, "{:?}", fmu.log());
    out
}

/// `v` with `more` appended.
fn and<T: Clone>(v: &[T], more: &[T]) -> Vec<T> {
    [v, more].concat()
}

/// A master that sets or gets signals side by side in order is served a run
/// at once (from 8 references on): the values must be the same whatever the
/// order, the repeats, the split across calls and the breaks (another kind, a
/// bound, another peer, a link output).
#[test]
fn runs_of_signals_in_one_call_are_exact_in_any_order() {
    let device = format!("loopback:{}", unique("runs"));
    let [a, b] = [runs_node("a", &device), runs_node("b", &device)];
    for n in [&a, &b] {
        assert_eq!(n.init(), fmi2OK, "{:?}", n.log());
    }
    let h = 0.5;
    let all: Vec<i32> = (0..12).collect();
    for k in 0..4i32 {
        let x = |i: i32| f64::from(100 * k + i) + 0.25;
        // The whole run with placeholders, then r11 r10 reversed, then r3 set
        // twice and the rest of the middle.
        let mut first = vec![-1.0; 12];
        (first[..3]).copy_from_slice(&[x(0), x(1), x(2)]);
        first.push(0.5);
        assert_eq!(
            set_reals(&a, &and(&names("r", &all), &["b".into()]), &first),
            fmi2OK
        );
        assert_eq!(
            set_reals(&a, &names("r", &[11, 10]), &[x(11), x(10)]),
            fmi2OK
        );
        let middle: Vec<f64> = [-2.0].into_iter().chain((3..10).map(x)).collect();
        assert_eq!(
            set_reals(&a, &names("r", &[3, 3, 4, 5, 6, 7, 8, 9]), &middle),
            fmi2OK
        );
        for i in 0..9 {
            a.set_all(&[(&format!("i{i}"), &(10 * k + i).to_string())]);
        }
        let s: Vec<f64> = (20..29).map(x).collect();
        assert_eq!(
            set_reals(&b, &names("s", &(0..9).collect::<Vec<_>>()), &s),
            fmi2OK
        );
        for n in [&a, &b] {
            assert_eq!(n.step(f64::from(k) * h, h), fmi2OK, "{:?}", n.log());
        }
        // This node's own inputs, now: a run, then the bounded one.
        let own = [4, 5, 6, 7, 8, 9, 10, 11];
        let want: Vec<f64> = own.iter().map(|&i| x(i)).collect();
        assert_eq!(
            reals(&a, &and(&names("r", &own), &["b".into()])),
            and(&want, &[0.5])
        );
        // Lag 1: the peers' values of step k - 1.
        let j = k - 1;
        if j < 0 {
            continue;
        }
        let x = |i: i32| f64::from(100 * j + i) + 0.25;
        let xs = |is: &[i32]| is.iter().map(|&i| x(i)).collect::<Vec<_>>();
        for order in [
            all.clone(),
            all.iter().rev().copied().collect(),
            vec![1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0],
        ] {
            assert_eq!(reals(&b, &names("a.r", &order)), xs(&order), "{order:?}");
        }
        let tail: Vec<i32> = (2..12).collect();
        assert_eq!(
            reals(
                &b,
                &and(&names("a.r", &tail), &["a.b".into(), "a.r0".into()])
            ),
            and(&xs(&tail), &[0.5, x(0)])
        );
        let ints: Vec<i32> = (0..9).collect();
        let want: Vec<i32> = ints.iter().map(|i| 10 * j + i).collect();
        assert_eq!(integers(&b, &names("a.i", &ints)), want);
        assert_eq!(
            integers(&b, &and(&names("a.i", &ints[1..]), &["a.step".into()])),
            and(&want[1..], &[j])
        );
        // A peer's run followed by a link output.
        let s: Vec<i32> = (0..9).collect();
        assert_eq!(
            reals(&a, &and(&names("b.s", &s), &["b.time".into()])),
            and(&(20..29).map(x).collect::<Vec<_>>(), &[f64::from(j) * h])
        );
    }
}

/// A run is stored whole or not at all, and the refusal names the signal.
#[test]
fn a_run_with_a_value_that_is_not_finite_is_refused_naming_it() {
    let a = runs_node("a", &format!("loopback:{}", unique("runs")));
    let run = names("r", &(0..10).collect::<Vec<_>>());
    let before: Vec<f64> = (0..10).map(f64::from).collect();
    assert_eq!(set_reals(&a, &run, &before), fmi2OK);
    let mut refused: Vec<f64> = (10..20).map(f64::from).collect();
    refused[7] = f64::INFINITY;
    assert_eq!(set_reals(&a, &run, &refused), fmi2Error);
    assert!(
        a.last_error().contains("`r7` = inf is not a finite number"),
        "{}",
        a.last_error()
    );
    assert_eq!(reals(&a, &run), before);
}
