"""A JSBSim aircraft as an FMI 2.0 co-simulation FMU (built by pythonfmu).

The aircraft, its engine and systems come from the `jsbsim` package installed
in the master's Python (LGPL-2.1; nothing of its data is in this repository).
Its own autopilot (the c172x's: heading hold, altitude hold) flies it, or,
with the parameter `autopilot` false, the stick and pedals (aileron,
elevator, rudder inputs); the throttle and the wind are inputs too, the
state a coupling carries its outputs. JSBSim is deterministic: two runs with the same
parameters and inputs fly bit-identical trajectories.

Built by `scripts/formation.sh build`; see docs/src/guide/formation.md.
"""

import math
import tempfile

from pythonfmu import Boolean, Fmi2Causality, Fmi2Slave, Fmi2Variability, Real, String

FT = 0.3048
KT = 1852.0 / 3600.0

# The outputs: (FMI name, JSBSim property, factor to SI, unit, description).
STATE = [
    ("latitude", "position/lat-geod-rad", 1.0, "rad", "geodetic latitude"),
    ("longitude", "position/long-gc-rad", 1.0, "rad", "longitude"),
    ("altitude", "position/h-sl-meters", 1.0, "m", "height above mean sea level"),
    ("roll", "attitude/phi-rad", 1.0, "rad", "bank angle"),
    ("pitch", "attitude/theta-rad", 1.0, "rad", "pitch angle"),
    ("heading", "attitude/psi-rad", 1.0, "rad", "true heading"),
    ("u", "velocities/u-fps", FT, "m/s", "body x velocity"),
    ("v", "velocities/v-fps", FT, "m/s", "body y velocity"),
    ("w", "velocities/w-fps", FT, "m/s", "body z velocity"),
    ("p", "velocities/p-rad_sec", 1.0, "rad/s", "roll rate"),
    ("q", "velocities/q-rad_sec", 1.0, "rad/s", "pitch rate"),
    ("r", "velocities/r-rad_sec", 1.0, "rad/s", "yaw rate"),
    ("airspeed", "velocities/vc-kts", KT, "m/s", "calibrated airspeed"),
]


class Aircraft(Fmi2Slave):
    author = "rfm-cosim"
    description = "A JSBSim aircraft flown by its own autopilot (heading and altitude hold)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.aircraft = "c172x"
        self.rate = 125.0
        self.latitude0 = 47.0
        self.longitude0 = 8.0
        self.altitude0 = 1000.0
        self.heading0 = 0.0
        self.airspeed0 = 50.0
        self.heading_cmd = 0.0
        self.altitude_cmd = 1000.0
        self.throttle = 0.8
        self.wind_speed = 0.0
        self.wind_from = 1.5 * math.pi
        self.autopilot = True
        self.aileron = 0.0
        self.elevator = 0.0
        self.rudder = 0.0
        for name, _, _, _, _ in STATE:
            setattr(self, name, 0.0)
        self.fdm = None
        self.scratch = None
        self.register_variable(String("aircraft", causality=Fmi2Causality.parameter,
                                      variability=Fmi2Variability.fixed,
                                      description="JSBSim model, from the jsbsim package"))
        self.register_variable(Boolean("autopilot", causality=Fmi2Causality.parameter,
                                       variability=Fmi2Variability.fixed,
                                       description="flown by its autopilot (heading_cmd, "
                                       "altitude_cmd); false: by aileron, elevator, rudder"))
        for name, unit, what in [
            ("rate", "Hz", "JSBSim's own rate: a step of h seconds runs h x rate frames"),
            ("latitude0", "deg", "initial geodetic latitude"),
            ("longitude0", "deg", "initial longitude"),
            ("altitude0", "m", "initial height above mean sea level"),
            ("heading0", "deg", "initial true heading"),
            ("airspeed0", "m/s", "initial calibrated airspeed"),
        ]:
            self.register_variable(Real(name, causality=Fmi2Causality.parameter,
                                        variability=Fmi2Variability.fixed, description=f"{what} [{unit}]"))
        for name, unit, what in [
            ("heading_cmd", "rad", "heading the autopilot holds"),
            ("altitude_cmd", "m", "altitude the autopilot holds"),
            ("throttle", "1", "throttle lever, 0 to 1"),
            ("wind_speed", "m/s", "wind speed"),
            ("wind_from", "rad", "direction the wind blows from (true; 3/2 pi: from the west)"),
            ("aileron", "1", "stick left/right, -1 to 1, without the autopilot"),
            ("elevator", "1", "stick forward/back, -1 to 1, without the autopilot"),
            ("rudder", "1", "pedals, -1 to 1, without the autopilot"),
        ]:
            self.register_variable(Real(name, causality=Fmi2Causality.input, description=f"{what} [{unit}]"))
        for name, _, _, unit, what in STATE:
            self.register_variable(Real(name, causality=Fmi2Causality.output, description=f"{what} [{unit}]"))

    def exit_initialization_mode(self):
        import jsbsim

        # Quiet: an FMU prints nothing (JSBSim's banner and load messages
        # go to stdout otherwise).
        jsbsim.FGJSBBase().debug_lvl = 0
        fdm = jsbsim.FGFDMExec(None)
        fdm.set_debug_level(0)
        # Nor does it write into the master's working directory: the
        # c172x's own output directive opens JSBout172B.csv at load, so its
        # path is a directory of this instance's, removed at terminate.
        self.scratch = tempfile.TemporaryDirectory(prefix="jsbsim-")
        fdm.set_output_path(self.scratch.name)
        if not fdm.load_model(self.aircraft):
            raise RuntimeError(f"JSBSim has no aircraft `{self.aircraft}`")
        fdm.disable_output()
        fdm.set_dt(1.0 / self.rate)
        fdm["ic/lat-geod-deg"] = self.latitude0
        fdm["ic/long-gc-deg"] = self.longitude0
        fdm["ic/h-sl-ft"] = self.altitude0 / FT
        fdm["ic/psi-true-deg"] = self.heading0
        fdm["ic/vc-kts"] = self.airspeed0 / KT
        fdm["ic/gamma-deg"] = 0.0
        fdm.run_ic()
        fdm["propulsion/set-running"] = -1
        fdm["fcs/mixture-cmd-norm"] = 1.0
        fdm["ap/heading_hold"] = int(self.autopilot)
        fdm["ap/altitude_hold"] = int(self.autopilot)
        self.fdm = fdm
        self._command()
        self._publish()

    def _command(self):
        fdm = self.fdm
        if self.autopilot:
            fdm["ap/heading_setpoint"] = math.degrees(self.heading_cmd) % 360.0
            fdm["ap/altitude_setpoint"] = self.altitude_cmd / FT
        else:
            fdm["fcs/aileron-cmd-norm"] = min(max(self.aileron, -1.0), 1.0)
            fdm["fcs/elevator-cmd-norm"] = min(max(self.elevator, -1.0), 1.0)
            fdm["fcs/rudder-cmd-norm"] = min(max(self.rudder, -1.0), 1.0)
        fdm["fcs/throttle-cmd-norm"] = min(max(self.throttle, 0.0), 1.0)
        # The wind blows towards the opposite of where it comes from.
        fdm["atmosphere/wind-north-fps"] = -self.wind_speed * math.cos(self.wind_from) / FT
        fdm["atmosphere/wind-east-fps"] = -self.wind_speed * math.sin(self.wind_from) / FT

    def _publish(self):
        for name, prop, factor, _, _ in STATE:
            setattr(self, name, self.fdm[prop] * factor)

    def terminate(self):
        self.fdm = None
        if self.scratch is not None:
            self.scratch.cleanup()
            self.scratch = None

    def do_step(self, current_time, step_size):
        frames = step_size * self.rate
        n = round(frames)
        if n < 1 or abs(frames - n) > 1e-6:
            self.log(f"a step of {step_size} s is not a whole number of JSBSim frames "
                     f"at {self.rate} Hz")
            return False
        self._command()
        for _ in range(n):
            if not self.fdm.run():
                self.log("JSBSim stopped")
                return False
        self._publish()
        return True
