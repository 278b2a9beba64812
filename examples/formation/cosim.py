"""Runs one simulator from its SSP, the master's own wiring: the archive
`build-fmu --system` packs holds the node's coupling FMU beside the lab's own
FMUs (an aircraft, an autopilot) and the connections the master carries
between them. Used for the formation (examples/formation/leader.toml,
wingman.toml) and the three-rate lab with a JSBSim cockpit
(examples/jsbsim-lab/).

    cosim.py {libcosim|ecos} SSP --steps N --out FILE.json [--lag L] [--device DEV]
             [--log COMPONENT.VARIABLE ...] [--log-every N]

libcosim (libcosimpy): `CosimExecution.from_ssp_file`, the lag and device
set as initial values of the node's coupling FMU (the component named as
the system). ecos (ecospy): the SSP's parameter sets by name (the
interface's); the lag and device are the node's parameter set's.

The log (JSON): `node`, `engine`, and per logged step `k` with the value of
each `--log` variable after step k (Reals, Integers, Booleans).
"""

import argparse
import json
import pathlib
import zipfile
from xml.etree import ElementTree

SSD = "{http://ssp-standard.org/SSP1/SystemStructureDescription}"
SSV = "{http://ssp-standard.org/SSP1/SystemStructureParameterValues}"


def system_of(ssp):
    """The node a simulator's SSP is (its system's name), and the name of
    its parameter sets."""
    with zipfile.ZipFile(ssp) as z:
        root = ElementTree.fromstring(z.read("SystemStructure.ssd"))
        node = root.find(f"{SSD}System").attrib["name"]
        sets = ElementTree.fromstring(z.read(f"resources/{node}.ssv"))
    return node, sets.attrib["name"]


def types_of(ssp):
    """Each component's variables and their FMI types, from the model
    descriptions of the FMUs inside the SSP."""
    import io

    types = {}
    with zipfile.ZipFile(ssp) as z:
        root = ElementTree.fromstring(z.read("SystemStructure.ssd"))
        for c in root.iter(f"{SSD}Component"):
            with zipfile.ZipFile(io.BytesIO(z.read(c.attrib["source"]))) as fmu:
                md = ElementTree.fromstring(fmu.read("modelDescription.xml"))
            types[c.attrib["name"]] = {
                v.attrib["name"]: next(t.tag for t in v if t.tag in
                                       ("Real", "Integer", "Boolean", "String", "Enumeration"))
                for v in md.iter("ScalarVariable")
            }
    return types


class Libcosim:
    def __init__(self, ssp, node, lag, device, step):
        from libcosimpy.CosimExecution import CosimExecution
        from libcosimpy.CosimObserver import CosimObserver

        self.execution = CosimExecution.from_ssp_file(str(ssp))
        self.index = {i.name.decode(): i.index for i in self.execution.slave_infos()}
        self.vars = {
            n: {v.name.decode(): v for v in self.execution.slave_variables(i)}
            for n, i in self.index.items()
        }
        link = self.index[node]
        if lag is not None:
            self.execution.integer_initial_value(link, self.vars[node]["lag"].reference, lag)
        if device is not None:
            self.execution.string_initial_value(link, self.vars[node]["device"].reference,
                                                device)
        self.observer = CosimObserver.create_last_value()
        self.execution.add_observer(self.observer)

    def step(self):
        assert self.execution.step(), "a step failed"

    def get(self, component, name, kind):
        read = {"Real": self.observer.last_real_values,
                "Integer": self.observer.last_integer_values,
                "Boolean": self.observer.last_boolean_values}[kind]
        return read(self.index[component], [self.vars[component][name].reference])[0]

    def close(self):
        # Freed here, while the interpreter runs: freed at its exit, the
        # execution unloads the pythonfmu FMUs without the GIL, and aborts.
        del self.observer
        del self.execution


class Ecos:
    def __init__(self, ssp, node, lag, device, step):
        from ecospy import EcosSimulation

        assert lag is None and device is None, "ecos takes them from the SSP's parameter sets"
        self.sim = EcosSimulation(step_size=step, ssp_path=str(ssp))
        assert self.sim.init(parameter_set=system_of(ssp)[1])

    def step(self):
        self.sim.step()

    def get(self, component, name, kind):
        read = {"Real": self.sim.get_real, "Integer": self.sim.get_integer,
                "Boolean": self.sim.get_bool}[kind]
        return read(f"{component}::{name}")

    def close(self):
        self.sim.terminate()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("engine", choices=["libcosim", "ecos"])
    p.add_argument("ssp", type=pathlib.Path)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--step", type=float, required=True, help="the master's step, seconds")
    p.add_argument("--lag", type=int)
    p.add_argument("--device")
    p.add_argument("--log", nargs="*", default=[])
    p.add_argument("--log-every", type=int, default=1)
    p.add_argument("--out", type=pathlib.Path, required=True)
    args = p.parse_args()
    node, _ = system_of(args.ssp)
    engine = Libcosim if args.engine == "libcosim" else Ecos
    master = engine(args.ssp, node, args.lag, args.device, args.step)
    types = types_of(args.ssp)
    wanted = []
    for name in args.log:
        component, variable = name.split(".", 1)
        wanted.append((component, variable, types[component][variable]))
    log = []
    try:
        for k in range(args.steps):
            master.step()
            if k % args.log_every == 0:
                entry = {"k": k}
                for component, name, kind in wanted:
                    entry[f"{component}.{name}"] = master.get(component, name, kind)
                log.append(entry)
    finally:
        master.close()
    args.out.write_text(json.dumps({"node": node, "engine": args.engine, "steps": log}))


if __name__ == "__main__":
    main()
