//! The plan every process of the lab knows: the nodes, their periods, lags and
//! free readers, the faults to inject, and the model of what each node's step
//! takes of each peer; the values each node sets.

/// An exact period in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Q {
    pub(crate) n: u128,
    pub(crate) d: u128,
}

impl Q {
    pub(crate) fn parse(text: &str) -> Result<Q, String> {
        let bad = || format!("period `{text}`: expected a decimal or n/d");
        let (n, d) = match text.split_once('/') {
            Some((n, d)) => (
                n.parse::<u128>().map_err(|_| bad())?,
                d.parse::<u128>().map_err(|_| bad())?,
            ),
            None => {
                let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
                let n = format!("{whole}{frac}")
                    .parse::<u128>()
                    .map_err(|_| bad())?;
                (n, 10u128.pow(frac.len() as u32))
            }
        };
        if n == 0 || d == 0 {
            return Err(bad());
        }
        Ok(Q { n, d })
    }

    pub(crate) fn seconds(self) -> f64 {
        self.n as f64 / self.d as f64
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Real,
    Integer,
    Boolean,
    String,
}

/// What node `n` sets its input `i` to at step `k` (−1: before the first),
/// within the bounds interface files commonly give (≥ 0; Integers 0..4).
pub(crate) fn real(n: usize, i: usize, k: i64) -> f64 {
    (k + 1) as f64 * 0.25 + i as f64 + n as f64 * 1000.0
}

pub(crate) fn integer(n: usize, i: usize, k: i64) -> i32 {
    (k * 3 + i as i64 + 100 * n as i64).rem_euclid(5) as i32
}

pub(crate) fn boolean(n: usize, i: usize, k: i64) -> bool {
    (k + i as i64 + n as i64).rem_euclid(2) == 1
}

pub(crate) fn string(n: usize, i: usize, k: i64) -> String {
    format!("{n}.{i}.{}", k.rem_euclid(1000))
}

/// Everything every process knows of the lab.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub(crate) dir: String,
    pub(crate) iface: String,
    pub(crate) nodes: Vec<String>,
    pub(crate) periods: Vec<Q>,
    pub(crate) lags: Vec<u8>,
    /// (reader, writer): the reader takes the writer's newest frame.
    pub(crate) free: Vec<(usize, usize)>,
    /// Nodes that run syncMode = free.
    pub(crate) free_running: Vec<usize>,
    /// Simulated seconds (exact), or a step count for every node.
    pub(crate) stop: Option<Q>,
    pub(crate) steps: u64,
    pub(crate) real_time_factor: f64,
    pub(crate) jitter_us: u64,
    pub(crate) pause: Option<(usize, u64, f64)>,
    pub(crate) kill: Option<(usize, u64)>,
    pub(crate) wait: Option<String>,
    pub(crate) library: Option<String>,
    /// `--start-jitter MS`: each process starts after a random 0..MS ms.
    pub(crate) start_jitter_ms: u64,
    /// `--first NODE`: its process starts first, the others after it.
    pub(crate) first: Option<usize>,
    /// `--ring NAME`: the emulated ring (with `--rfm2g-sim`), kept after the run.
    pub(crate) ring: Option<String>,
    /// `--redundant` (with `--rfm2g-sim`): every node on two boards of two
    /// rings, device `/dev/rfm2g0+/dev/rfm2g1`.
    pub(crate) redundant: bool,
    /// `--cut a:FROM..TO`: the first node cuts its board of that ring before
    /// its step FROM and mends it before TO.
    pub(crate) cuts: Vec<artefact_tests::Cut>,
}

impl Plan {
    pub(crate) fn steps_of(&self, me: usize) -> u64 {
        match self.stop {
            // stop / T, exactly.
            Some(s) => {
                let t = self.periods[me];
                (s.n * t.d / (s.d * t.n)) as u64
            }
            None => self.steps,
        }
    }

    /// Whether `me` waits for `peer` in lockstep.
    pub(crate) fn waits(&self, me: usize, peer: usize) -> bool {
        !self.free_running.contains(&me) && !self.free.contains(&(me, peer))
    }

    /// The peer's step that `me`'s step k takes in lockstep: the model.
    pub(crate) fn needed(&self, me: usize, peer: usize, k: u64) -> i64 {
        let lag = u64::from(self.lags[me]);
        let Some(behind) = k.checked_sub(lag) else {
            return -1;
        };
        let (a, b) = (self.periods[me], self.periods[peer]);
        (u128::from(behind) * a.n * b.d / (a.d * b.n)) as i64
    }
}

pub(crate) fn index_of(nodes: &[String], name: &str) -> Result<usize, String> {
    nodes
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| format!("no node `{name}` in --nodes"))
}

/// The options that name nodes or need one value per node: read whole, and
/// resolved once `--nodes` is known.
#[derive(Default)]
struct PerNode {
    first: Option<String>,
    periods: Option<String>,
    lags: Option<String>,
    free: Option<String>,
    sync: Option<String>,
    pause: Option<String>,
    kill: Option<String>,
}

/// The plan the command line gives, with `--me` and `--device` (a node's
/// process: the parent passes them).
pub(crate) fn parse(args: &[String]) -> Result<(Plan, Option<usize>, Option<String>), String> {
    let mut plan = Plan {
        dir: "target/fmu".into(),
        steps: 10_000,
        ..Plan::default()
    };
    let (mut me, mut device) = (None, None);
    let mut per_node = PerNode::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--dir" => plan.dir = value()?,
            "--interface" => plan.iface = value()?,
            "--nodes" => plan.nodes = value()?.split(',').map(str::to_owned).collect(),
            "--steps" => plan.steps = value()?.parse().map_err(|_| "--steps N")?,
            "--stop" => plan.stop = Some(Q::parse(&value()?)?),
            "--periods" => per_node.periods = Some(value()?),
            "--lags" => per_node.lags = Some(value()?),
            "--free" => per_node.free = Some(value()?),
            "--sync" => per_node.sync = Some(value()?),
            "--real-time-factor" => {
                plan.real_time_factor = value()?.parse().map_err(|_| "--real-time-factor F")?
            }
            "--jitter" => plan.jitter_us = value()?.parse().map_err(|_| "--jitter US")?,
            "--pause" => per_node.pause = Some(value()?),
            "--kill" => per_node.kill = Some(value()?),
            "--wait" => plan.wait = Some(value()?),
            "--me" => me = Some(value()?.parse().map_err(|_| "--me N")?),
            "--device" => device = Some(value()?),
            "--rfm2g-sim" => plan.library = Some(value()?),
            "--start-jitter" => {
                plan.start_jitter_ms = value()?.parse().map_err(|_| "--start-jitter MS")?
            }
            "--ring" => plan.ring = Some(value()?),
            "--redundant" => plan.redundant = true,
            "--cut" => plan
                .cuts
                .push(artefact_tests::Cut::parse(&value()?).ok_or("--cut a:FROM..TO or b:FROM..")?),
            "--first" => per_node.first = Some(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    per_node.resolve(&mut plan)?;
    Ok((plan, me, device))
}

impl PerNode {
    /// Puts the options into `plan`, whose nodes are known.
    fn resolve(self, plan: &mut Plan) -> Result<(), String> {
        let n = plan.nodes.len();
        let index = |name: &str| index_of(&plan.nodes, name);
        if let Some(first) = self.first {
            plan.first = Some(index(&first)?);
        }
        let (periods, lags) = (self.periods, self.lags);
        plan.periods = match periods {
            Some(p) => p.split(',').map(Q::parse).collect::<Result<_, _>>()?,
            None => vec![Q { n: 1, d: 1000 }; n],
        };
        plan.lags = match lags {
            Some(l) => l
                .split(',')
                .map(|x| x.parse().map_err(|_| format!("lag `{x}`")))
                .collect::<Result<_, _>>()?,
            None => vec![0; n],
        };
        if plan.periods.len() != n || plan.lags.len() != n {
            return Err("--periods and --lags need one value per node".into());
        }
        for pair in self.free.iter().flat_map(|f| f.split(',')) {
            let (a, b) = pair.split_once(':').ok_or("--free READER:WRITER,…")?;
            plan.free.push((index(a)?, index(b)?));
        }
        for s in self.sync.iter().flat_map(|s| s.split(',')) {
            let (a, mode) = s.split_once('=').ok_or("--sync NODE=free")?;
            if mode == "free" {
                plan.free_running.push(index(a)?);
            }
        }
        if let Some(p) = self.pause {
            let parts: Vec<&str> = p.split(':').collect();
            let [a, k, s] = parts[..] else {
                return Err("--pause NODE:STEP:SECONDS".into());
            };
            plan.pause = Some((
                index(a)?,
                k.parse().map_err(|_| "--pause step")?,
                s.parse().map_err(|_| "--pause seconds")?,
            ));
        }
        if let Some(k) = self.kill {
            let (a, at) = k.split_once(':').ok_or("--kill NODE:STEP")?;
            plan.kill = Some((index(a)?, at.parse().map_err(|_| "--kill step")?));
        }
        Ok(())
    }
}
