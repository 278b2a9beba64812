"""Flies one simulator of the formation (issue 48) from its SSP, the master's
own wiring: the archive `build-fmu --system` packs (examples/formation/
leader.toml, wingman.toml) holds the aircraft, its autopilot and the node's
coupling FMU, and the connections the master carries between them.

    cosim.py {libcosim|ecos} SSP --steps N --out FILE.json [--lag L] [--device DEV]

libcosim (libcosimpy): `CosimExecution.from_ssp_file`, the lag and device
set as initial values of the node's coupling FMU. ecos (ecospy): the SSP's
parameter sets by name (`formation`); the lag and device are the node's
parameter set's (the file's settings, `device = shm:formation`).

The log (JSON): per step k, `aircraft` (the aircraft's outputs after step
k), and for the wingman `received` (the leader's values its coupling FMU
output after step k) and `peer_step` (the leader's step they are of).
"""

import argparse
import json
import pathlib
import zipfile
from xml.etree import ElementTree

STATE = ["latitude", "longitude", "altitude", "roll", "pitch", "heading",
         "u", "v", "w", "p", "q", "r", "airspeed"]
STEP = 0.008
SSD = "{http://ssp-standard.org/SSP1/SystemStructureDescription}"


def node_of(ssp):
    """The node a simulator's SSP is: its system's name."""
    with zipfile.ZipFile(ssp) as z:
        root = ElementTree.fromstring(z.read("SystemStructure.ssd"))
    return root.find(f"{SSD}System").attrib["name"]


class Libcosim:
    def __init__(self, ssp, node, lag, device):
        from libcosimpy.CosimExecution import CosimExecution
        from libcosimpy.CosimObserver import CosimObserver

        self.execution = CosimExecution.from_ssp_file(str(ssp))
        self.index = {i.name.decode(): i.index for i in self.execution.slave_infos()}
        self.refs = {
            n: {v.name.decode(): v.reference for v in self.execution.slave_variables(i)}
            for n, i in self.index.items()
        }
        link = self.index[node]
        if lag is not None:
            self.execution.integer_initial_value(link, self.refs[node]["lag"], lag)
        if device is not None:
            self.execution.string_initial_value(link, self.refs[node]["device"], device)
        self.observer = CosimObserver.create_last_value()
        self.execution.add_observer(self.observer)

    def step(self):
        assert self.execution.step(), "a step failed"

    def reals(self, component, names):
        refs = [self.refs[component][n] for n in names]
        return dict(zip(names, self.observer.last_real_values(self.index[component], refs)))

    def integer(self, component, name):
        return self.observer.last_integer_values(self.index[component],
                                                 [self.refs[component][name]])[0]

    def close(self):
        # Freed here, while the interpreter runs: freed at its exit, the
        # execution unloads the pythonfmu FMUs without the GIL, and aborts.
        del self.observer
        del self.execution


class Ecos:
    def __init__(self, ssp, node, lag, device):
        from ecospy import EcosSimulation

        assert lag is None and device is None, "ecos takes them from the SSP's parameter sets"
        self.sim = EcosSimulation(step_size=STEP, ssp_path=str(ssp))
        assert self.sim.init(parameter_set="formation")

    def step(self):
        self.sim.step()

    def reals(self, component, names):
        return {n: self.sim.get_real(f"{component}::{n}") for n in names}

    def integer(self, component, name):
        return self.sim.get_integer(f"{component}::{name}")

    def close(self):
        self.sim.terminate()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("engine", choices=["libcosim", "ecos"])
    p.add_argument("ssp", type=pathlib.Path)
    p.add_argument("--steps", type=int, default=125 * 60)
    p.add_argument("--lag", type=int)
    p.add_argument("--device")
    p.add_argument("--out", type=pathlib.Path, required=True)
    args = p.parse_args()
    node = node_of(args.ssp)
    master = (Libcosim if args.engine == "libcosim" else Ecos)(args.ssp, node, args.lag,
                                                                args.device)
    log = []
    try:
        for k in range(args.steps):
            master.step()
            entry = {"k": k, "aircraft": master.reals("aircraft", STATE)}
            if node == "wingman":
                entry["received"] = master.reals(node, [f"leader.{n}" for n in STATE])
                entry["peer_step"] = master.integer(node, "leader.step")
                entry["slot_error"] = master.reals("keeper", ["slot_error"])["slot_error"]
            log.append(entry)
    finally:
        master.close()
    args.out.write_text(json.dumps({"node": node, "engine": args.engine, "steps": log}))


if __name__ == "__main__":
    main()
