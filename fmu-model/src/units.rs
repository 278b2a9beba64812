//! What each unit an FMU declares is in SI: its `<BaseUnit>`, from which a
//! master converts between units and checks connections (FMI 2.0, 2.2.2).
//! A unit not in the table is declared by name only, which FMI allows.

/// The exponents of kg, m, s, A, K, mol, cd and rad, then factor and offset:
/// value in SI = factor × value + offset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseUnit {
    pub exponents: [i8; 8],
    pub factor: f64,
    pub offset: f64,
}

/// The names of [`BaseUnit::exponents`], as FMI's attributes.
const BASE: [&str; 8] = ["kg", "m", "s", "A", "K", "mol", "cd", "rad"];

const fn si(kg: i8, m: i8, s: i8, k: i8, rad: i8, factor: f64) -> BaseUnit {
    BaseUnit {
        exponents: [kg, m, s, 0, k, 0, 0, rad],
        factor,
        offset: 0.0,
    }
}

/// Every unit this table knows, the ones of flight simulation first.
const UNITS: &[(&str, BaseUnit)] = &[
    ("s", si(0, 0, 1, 0, 0, 1.0)),
    ("ms", si(0, 0, 1, 0, 0, 1e-3)),
    ("m", si(0, 1, 0, 0, 0, 1.0)),
    ("km", si(0, 1, 0, 0, 0, 1e3)),
    ("ft", si(0, 1, 0, 0, 0, 0.3048)),
    ("nmi", si(0, 1, 0, 0, 0, 1852.0)),
    ("m/s", si(0, 1, -1, 0, 0, 1.0)),
    ("km/h", si(0, 1, -1, 0, 0, 1.0 / 3.6)),
    ("kn", si(0, 1, -1, 0, 0, 1852.0 / 3600.0)),
    ("ft/s", si(0, 1, -1, 0, 0, 0.3048)),
    ("ft/min", si(0, 1, -1, 0, 0, 0.3048 / 60.0)),
    ("m/s2", si(0, 1, -2, 0, 0, 1.0)),
    ("rad", si(0, 0, 0, 0, 1, 1.0)),
    ("deg", si(0, 0, 0, 0, 1, std::f64::consts::PI / 180.0)),
    ("rad/s", si(0, 0, -1, 0, 1, 1.0)),
    ("deg/s", si(0, 0, -1, 0, 1, std::f64::consts::PI / 180.0)),
    ("rad/s2", si(0, 0, -2, 0, 1, 1.0)),
    ("kg", si(1, 0, 0, 0, 0, 1.0)),
    ("N", si(1, 1, -2, 0, 0, 1.0)),
    ("Pa", si(1, -1, -2, 0, 0, 1.0)),
    ("hPa", si(1, -1, -2, 0, 0, 100.0)),
    ("K", si(0, 0, 0, 1, 0, 1.0)),
    (
        "degC",
        BaseUnit {
            offset: 273.15,
            ..si(0, 0, 0, 1, 0, 1.0)
        },
    ),
    ("Hz", si(0, 0, -1, 0, 0, 1.0)),
];

/// The base unit of `name`, if the table knows it.
pub fn base_unit(name: &str) -> Option<BaseUnit> {
    UNITS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

impl BaseUnit {
    /// The `<BaseUnit …/>` element: the exponents that are not 0, and the
    /// factor and offset when they are not 1 and 0.
    pub fn xml(&self) -> String {
        let mut attrs: Vec<String> = BASE
            .iter()
            .zip(self.exponents)
            .filter(|(_, e)| *e != 0)
            .map(|(name, e)| format!("{name}=\"{e}\""))
            .collect();
        if self.factor != 1.0 {
            attrs.push(format!("factor=\"{:?}\"", self.factor));
        }
        if self.offset != 0.0 {
            attrs.push(format!("offset=\"{:?}\"", self.offset));
        }
        format!("<BaseUnit {}/>", attrs.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attitude_units_have_their_si_base() {
        assert_eq!(base_unit("rad").unwrap().xml(), "<BaseUnit rad=\"1\"/>");
        assert_eq!(
            base_unit("m/s").unwrap().xml(),
            "<BaseUnit m=\"1\" s=\"-1\"/>"
        );
        assert_eq!(base_unit("s").unwrap().xml(), "<BaseUnit s=\"1\"/>");
        assert_eq!(
            base_unit("kn").unwrap().xml(),
            "<BaseUnit m=\"1\" s=\"-1\" factor=\"0.5144444444444445\"/>"
        );
        assert_eq!(base_unit("furlong"), None);
    }
}
