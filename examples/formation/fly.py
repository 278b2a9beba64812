"""Flies the formation (issue 48) in FMPy, the masters' wiring done here as a
script: each simulator runs its aircraft FMU, its autopilot FMU and its node's
coupling FMU side by side, fixed step 8 ms (125 Hz), and carries outputs to inputs
between steps (Jacobi: every FMU steps, then every connection is carried).

    fly.py leader  --fmus DIR --device shm:NAME --lag L --steps N --out FILE.json
    fly.py wingman --fmus DIR --device shm:NAME --lag L --steps N --out FILE.json
    fly.py reference --fmus DIR --lag L --steps N --out FILE.json

`leader` and `wingman` are the two simulators (two processes, one coupling
FMU each, coupled over `device`); `reference` flies both aircraft in one
process without any coupling FMU, handing the wingman's autopilot the leader
state the coupling's rule names (the frame of the leader's step k - lag after
step k), so that its trajectory must equal the coupled wingman's bit for bit.
The log (JSON): `first`, the state the node's coupling FMU published at
initialization (its frame of step -1), and per step k: `sent` (what it set
into its coupling FMU before step k: its frame of step k), `received` (the
peer's values the coupling FMU output before step k), `peer_step` (the
peer's step whose frame it holds after step k), `own` (its aircraft's state
after step k).

DIR holds Aircraft.fmu, Manoeuvre.fmu, SlotKeeper.fmu (pythonfmu) and
formation_leader.fmu, formation_wingman.fmu (build-fmu), as
`scripts/formation.sh build` writes them.
"""

import argparse
import json
import math
import pathlib
import shutil
import tempfile

from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

STEP = 0.008
STATE = ["latitude", "longitude", "altitude", "roll", "pitch", "heading",
         "u", "v", "w", "p", "q", "r", "airspeed"]
STEERING = ["latitude", "longitude", "altitude", "heading", "airspeed"]
COMMANDS = ["heading_cmd", "altitude_cmd", "throttle"]
# Where the two aircraft start: the leader heading north, the wingman 150 m
# behind and 120 m to the right of it (its slot: 40 m behind, 40 m right).
START = {
    "leader": {"latitude0": 47.0, "longitude0": 8.0},
    "wingman": {"latitude0": 47.0 - 150.0 / 111195.0,
                "longitude0": 8.0 + 120.0 / (111195.0 * math.cos(math.radians(47.0)))},
}
COMMON = {"altitude0": 1000.0, "heading0": 0.0, "airspeed0": 50.0}


class Fmu:
    """One FMU instance, by variable name."""

    def __init__(self, path, name, unpacked):
        md = read_model_description(str(path))
        self.refs = {v.name: (v.valueReference, v.type) for v in md.modelVariables}
        self.slave = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(path), unpacked),
                               modelIdentifier=md.coSimulation.modelIdentifier,
                               instanceName=name)
        self.slave.instantiate()
        self.slave.setupExperiment(startTime=0.0)
        self.slave.enterInitializationMode()

    def set(self, values):
        for name, value in values.items():
            ref, kind = self.refs[name]
            if kind == "Real":
                self.slave.setReal([ref], [float(value)])
            elif kind in ("Integer", "Enumeration"):
                self.slave.setInteger([ref], [int(value)])
            elif kind == "Boolean":
                self.slave.setBoolean([ref], [bool(value)])
            else:
                self.slave.setString([ref], [str(value)])

    def reals(self, names):
        return dict(zip(names, self.slave.getReal([self.refs[n][0] for n in names])))

    def integer(self, name):
        return self.slave.getInteger([self.refs[name][0]])[0]

    def start(self):
        self.slave.exitInitializationMode()

    def step(self, k):
        self.slave.doStep(currentCommunicationPoint=k * STEP, communicationStepSize=STEP)

    def close(self):
        self.slave.terminate()
        self.slave.freeInstance()


def aircraft(fmus, unpacked, who):
    a = Fmu(fmus / "Aircraft.fmu", f"{who}-aircraft", unpacked / f"{who}-aircraft")
    a.set({**COMMON, **START[who]})
    return a


class Leader:
    """The leader's aircraft and manoeuvre; the coupling FMU, if any, is the caller's."""

    def __init__(self, fmus, unpacked):
        self.aircraft = aircraft(fmus, unpacked, "leader")
        self.manoeuvre = Fmu(fmus / "Manoeuvre.fmu", "manoeuvre", unpacked / "manoeuvre")

    def start(self):
        self.aircraft.start()
        self.manoeuvre.start()

    def fmus(self):
        return [self.aircraft, self.manoeuvre]

    def connect(self):
        self.aircraft.set(self.manoeuvre.reals(COMMANDS))

    def state(self):
        return self.aircraft.reals(STATE)


class Wingman:
    """The wingman's aircraft and autopilot; where the leader's state comes
    from is the caller's (the coupling FMU, or the reference's history)."""

    def __init__(self, fmus, unpacked):
        self.aircraft = aircraft(fmus, unpacked, "wingman")
        self.keeper = Fmu(fmus / "SlotKeeper.fmu", "keeper", unpacked / "keeper")

    def start(self):
        self.aircraft.start()
        self.keeper.start()

    def fmus(self):
        return [self.aircraft, self.keeper]

    def connect(self, leader):
        own = self.aircraft.reals(STEERING)
        self.keeper.set({f"own_{n}": own[n] for n in STEERING})
        self.keeper.set({f"leader_{n}": leader[n] for n in STEERING})
        self.aircraft.set(self.keeper.reals(COMMANDS))

    def state(self):
        out = self.aircraft.reals(STATE)
        out.update(self.keeper.reals(["slot_error", "separation"]))
        return out


def coupled(args, unpacked):
    """One simulator of the two: its aircraft, autopilot and coupling FMU."""
    who = args.role
    side = Leader(args.fmus, unpacked) if who == "leader" else Wingman(args.fmus, unpacked)
    link = Fmu(args.fmus / f"formation_{who}.fmu", who, unpacked / who)
    link.set({"device": args.device, "lag": args.lag, "startupTimeout": 60.0,
              "timeout": 20.0})
    side.start()
    peer = "wingman" if who == "leader" else "leader"
    own = side.state()
    first = {n: own[n] for n in STATE}
    link.set(first)
    if who == "wingman":
        link.set({"slot_error": 0.0})
    link.start()
    log = []
    for k in range(args.steps):
        # The connections, then every FMU's step.
        received = link.reals([f"{peer}.{n}" for n in STATE])
        if who == "leader":
            side.connect()
        else:
            side.connect({n: received[f"leader.{n}"] for n in STATE})
        own = side.state()
        sent = {n: own[n] for n in STATE}
        link.set(sent)
        if who == "wingman":
            link.set({"slot_error": own["slot_error"]})
        for f in side.fmus() + [link]:
            f.step(k)
        log.append({"k": k, "sent": sent, "own": side.state(),
                    "received": {n: received[f"{peer}.{n}"] for n in STATE},
                    "peer_step": link.integer(f"{peer}.step")})
    for f in side.fmus() + [link]:
        f.close()
    return {"role": who, "lag": args.lag, "first": first, "steps": log}


def reference(args, unpacked):
    """Both aircraft in one process, no coupling FMU: the wingman is handed,
    at its step k, the leader state its coupling FMU outputs after step
    k - 1: the frame the leader sent at its step max(k - 1 - lag, 0) (before
    the first step, the coupling FMU's start values: zeros)."""
    leader, wingman = Leader(args.fmus, unpacked), Wingman(args.fmus, unpacked)
    leader.start()
    wingman.start()
    sent = []  # sent[j]: what the leader sent at its step j
    log = []
    for k in range(args.steps):
        leader.connect()
        sent.append(leader.state())
        if k == 0:
            handed = {n: 0.0 for n in STATE}
        else:
            handed = sent[max(k - 1 - args.lag, 0)]
        wingman.connect(handed)
        for f in leader.fmus() + wingman.fmus():
            f.step(k)
        log.append({"k": k, "own": wingman.state(), "handed": handed,
                    "leader": leader.state()})
    for f in leader.fmus() + wingman.fmus():
        f.close()
    return {"role": "reference", "lag": args.lag, "steps": log}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("role", choices=["leader", "wingman", "reference"])
    p.add_argument("--fmus", type=pathlib.Path, required=True)
    p.add_argument("--device", default="shm:formation")
    p.add_argument("--lag", type=int, default=0)
    p.add_argument("--steps", type=int, default=125 * 60)
    p.add_argument("--out", type=pathlib.Path, required=True)
    args = p.parse_args()
    unpacked = pathlib.Path(tempfile.mkdtemp(prefix="formation-"))
    try:
        log = reference(args, unpacked) if args.role == "reference" else coupled(args, unpacked)
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)
    args.out.write_text(json.dumps(log))


if __name__ == "__main__":
    main()
