"""The leader's manoeuvre as an FMI 2.0 co-simulation FMU (built by pythonfmu):
the autopilot's setpoints over time, a table of (time, heading, altitude).
Straight and level, a right turn, a climb, a turn back left.
The throttle is fixed (0.6), below full, so that the wingman has power to
catch up.
"""

import math

from pythonfmu import Fmi2Causality, Fmi2Slave, Real

# (from time s, heading deg, altitude m): each row holds until the next.
SCHEDULE = [
    (0.0, 0.0, 1000.0),
    (20.0, 45.0, 1000.0),
    (40.0, 45.0, 1040.0),
    (55.0, 0.0, 1040.0),
]


class Manoeuvre(Fmi2Slave):
    author = "rfm-cosim"
    description = "The formation leader's manoeuvre: turns and a climb, as autopilot setpoints"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.throttle = 0.6
        self.heading_cmd = 0.0
        self.altitude_cmd = SCHEDULE[0][2]
        self.register_variable(Real("throttle", causality=Fmi2Causality.output,
                                    description="throttle lever [1]"))
        self.register_variable(Real("heading_cmd", causality=Fmi2Causality.output,
                                    description="heading to hold [rad]"))
        self.register_variable(Real("altitude_cmd", causality=Fmi2Causality.output,
                                    description="altitude to hold [m]"))

    def do_step(self, current_time, step_size):
        # In whole microseconds: masters add their steps up differently (FMPy
        # multiplies, ecos adds 0.008 again and again), and a row starting
        # at 20 s must start at the same step in all of them.
        t = round((current_time + step_size) * 1e6)
        for start, heading, altitude in SCHEDULE:
            if t >= round(start * 1e6):
                self.heading_cmd = math.radians(heading)
                self.altitude_cmd = altitude
        return True
