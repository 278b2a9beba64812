//! Where an interface's nodes live: each node's area of the coupling region
//! ([`rfm_frames::area`] says how an area is divided). Areas follow one another in
//! slot order from the start of the region (or sit at an `offset` the file
//! gives), passing over the structs the lab's own programs write (foreign
//! nodes, at their fixed offsets), and no two may overlap or pass the end of
//! the memory.

use std::fmt;
use std::ops::Range;

use super::declared::Declared;
use super::{descriptor, foreign, Interface};
use rfm_frames::area::{Area, ALIGN};
use rfm_frames::payload::Payload;

/// Why an interface's areas cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error(
        "node `{node}` needs bytes {start}..{end} of the coupling region (a ring of {ring} \
         frames), past the end of the {memory_size}-byte memory: give fewer or smaller signals, \
         bring the nodes' periods closer or lower max_lag (they set the ring), or declare the \
         memory the coupling has (memory_size = …, e.g. 67108864 for a 64 MiB RFM2g board)"
    )]
    TooLarge {
        node: String,
        start: u64,
        end: u64,
        ring: usize,
        memory_size: u64,
    },
    #[error(
        "node `{node}` (bytes {start}..{end}) overlaps node `{other}` (bytes \
         {other_start}..{other_end}): give it an offset of at least {at_least:#x} ({at_least}), \
         or none"
    )]
    Overlap {
        node: String,
        start: u64,
        end: u64,
        other: String,
        other_start: u64,
        other_end: u64,
        /// The first offset past `other` that the node may take (an FMU
        /// node's is a multiple of [`ALIGN`]).
        at_least: u64,
    },
    #[error("offset {offset} of node `{node}` is not a multiple of {ALIGN} bytes")]
    Misaligned { node: String, offset: u64 },
    #[error(
        "foreign node `{node}` (bytes {start}..{end} from regionOffset) passes the end of the \
         {memory_size}-byte memory: check its offset and fields, or declare the memory the \
         coupling has (memory_size = …)"
    )]
    PastMemory {
        node: String,
        start: u64,
        end: u64,
        memory_size: u64,
    },
}

impl MapError {
    /// The node the error is about.
    pub fn node(&self) -> &str {
        match self {
            MapError::TooLarge { node, .. }
            | MapError::Overlap { node, .. }
            | MapError::Misaligned { node, .. }
            | MapError::PastMemory { node, .. } => node,
        }
    }
}

/// Every node's area; the coupling's memory map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryMap {
    /// In slot order.
    pub areas: Vec<Area>,
    /// The foreign nodes' structs: (index in [`Interface::foreign`], bytes).
    pub foreign: Vec<(usize, Range<u64>)>,
    pub memory_size: u64,
}

impl MemoryMap {
    /// Places the areas of `interface`: each at the offset its node gives, or else
    /// right after the area of the node with the next lower slot.
    pub fn new(interface: &Interface) -> Result<MemoryMap, MapError> {
        let foreign = foreign_areas(interface)?;
        let mut order: Vec<usize> = (0..interface.nodes.len()).collect();
        order.sort_by_key(|&i| interface.nodes[i].slot);
        let mut areas: Vec<Area> = Vec::with_capacity(order.len());
        let mut next = 0u64;
        let declared = interface.declared();
        for i in order {
            let area = place((interface, &declared), i, next, &foreign)?;
            next = area.end();
            refuse_overlap(interface, &area, &areas, &foreign)?;
            areas.push(area);
        }
        Ok(MemoryMap {
            areas,
            foreign,
            memory_size: interface.memory_size,
        })
    }

    /// The area of node `index` (of [`Interface::nodes`]).
    pub fn area(&self, node: usize) -> &Area {
        self.areas
            .iter()
            .find(|a| a.node == node)
            .expect("every node has an area")
    }

    /// Bytes from the start of the region to the end of the last area or
    /// foreign struct: the region a node maps.
    pub fn len(&self) -> u64 {
        let foreign = self.foreign.iter().map(|(_, r)| r.end);
        self.areas
            .iter()
            .map(Area::end)
            .chain(foreign)
            .max()
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.areas.is_empty()
    }
}

/// Node `i`'s area: at its own offset, or at `next` moved past the foreign
/// structs it would cover; inside the memory.
fn place(
    (interface, declared): (&Interface, &[Declared]),
    i: usize,
    next: u64,
    foreign: &[(usize, Range<u64>)],
) -> Result<Area, MapError> {
    let spec = &interface.nodes[i];
    let offset = match spec.offset {
        Some(o) if !o.is_multiple_of(ALIGN as u64) => {
            return Err(MapError::Misaligned {
                node: spec.name.clone(),
                offset: o,
            })
        }
        Some(o) => o,
        None => next,
    };
    let at = |offset| {
        Area::new(
            i,
            spec.slot,
            Payload::of(spec.signals.iter().map(|s| s.kind)),
            descriptor::encoded_len(&interface.name, spec, declared),
            offset,
            spec.ring_depth,
        )
    };
    let mut area = at(offset);
    if spec.offset.is_none() {
        // Placed after the foreign structs it would cover.
        while let Some((_, r)) = foreign
            .iter()
            .find(|(_, r)| r.start < area.end() && area.offset < r.end)
        {
            area = at(r.end.next_multiple_of(ALIGN as u64));
        }
    }
    if area.end() > interface.memory_size {
        return Err(MapError::TooLarge {
            node: spec.name.clone(),
            start: area.offset,
            end: area.end(),
            ring: area.depth,
            memory_size: interface.memory_size,
        });
    }
    Ok(area)
}

/// An area overlaps no area placed before it and no foreign struct.
fn refuse_overlap(
    interface: &Interface,
    area: &Area,
    areas: &[Area],
    foreign: &[(usize, Range<u64>)],
) -> Result<(), MapError> {
    let node = || interface.nodes[area.node].name.clone();
    if let Some(other) = areas.iter().find(|a| a.overlaps(area)) {
        return Err(MapError::Overlap {
            node: node(),
            start: area.offset,
            end: area.end(),
            other: interface.nodes[other.node].name.clone(),
            other_start: other.offset,
            other_end: other.end(),
            at_least: other.end().next_multiple_of(ALIGN as u64),
        });
    }
    if let Some((f, r)) = foreign
        .iter()
        .find(|(_, r)| r.start < area.end() && area.offset < r.end)
    {
        return Err(MapError::Overlap {
            node: node(),
            start: area.offset,
            end: area.end(),
            other: interface.foreign[*f].name.clone(),
            other_start: r.start,
            other_end: r.end,
            at_least: r.end.next_multiple_of(ALIGN as u64),
        });
    }
    Ok(())
}

/// The foreign nodes' structs, each inside the memory and apart from the others.
fn foreign_areas(interface: &Interface) -> Result<Vec<(usize, Range<u64>)>, MapError> {
    let mut out: Vec<(usize, Range<u64>)> = Vec::with_capacity(interface.foreign.len());
    for (i, node) in interface.foreign.iter().enumerate() {
        let r = node.offset..node.end();
        if r.end > interface.memory_size {
            return Err(MapError::PastMemory {
                node: node.name.clone(),
                start: r.start,
                end: r.end,
                memory_size: interface.memory_size,
            });
        }
        if let Some((j, other)) = out.iter().find(|(_, o)| o.start < r.end && r.start < o.end) {
            return Err(MapError::Overlap {
                node: node.name.clone(),
                start: r.start,
                end: r.end,
                other: interface.foreign[*j].name.clone(),
                other_start: other.start,
                other_end: other.end,
                // A struct's marker needs its width's alignment, at most 8.
                at_least: other.end.next_multiple_of(8),
            });
        }
        out.push((i, r));
    }
    Ok(out)
}

/// The map as `build-fmu` prints it: one line per node, in memory order.
#[derive(Debug)]
pub struct MapTable<'a> {
    pub interface: &'a Interface,
    pub map: &'a MemoryMap,
}

impl fmt::Display for MapTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<16} {:>4} {:>10} {:>10} {:>8} {:>8} {:>6} {:>8}  settings",
            "node", "slot", "offset", "bytes", "signals", "payload", "ring", "period"
        )?;
        let mut areas: Vec<&Area> = self.map.areas.iter().collect();
        areas.sort_by_key(|a| a.offset);
        for a in areas {
            let node = &self.interface.nodes[a.node];
            writeln!(
                f,
                "{:<16} {:>4} {:>#10x} {:>10} {:>8} {:>8} {:>6} {:>8}  {}",
                node.name,
                a.slot,
                a.offset,
                a.len,
                node.signals.len(),
                a.payload.len,
                a.depth,
                node.period.map_or("-".to_owned(), |p| format!("{p} s")),
                // The FMU's start values the file sets (its own and the top's).
                match self.interface.settings_of(a.node) {
                    s if s.is_empty() => "-".to_owned(),
                    s => s.to_string(),
                },
            )?;
        }
        for (i, r) in &self.map.foreign {
            let node = &self.interface.foreign[*i];
            writeln!(
                f,
                "{:<16} {:>4} {:>#10x} {:>10} {:>8} {:>8} {:>6} {:>8}  foreign: {}",
                node.name,
                "-",
                r.start,
                r.end - r.start,
                node.layout.elements(),
                node.layout.size,
                "-",
                "-",
                foreign::describe(node),
            )?;
        }
        write!(
            f,
            "{} of {} bytes used (from regionOffset)",
            self.map.len(),
            self.map.memory_size
        )
    }
}
