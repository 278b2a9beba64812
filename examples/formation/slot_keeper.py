"""The wingman's autopilot as an FMI 2.0 co-simulation FMU (built by pythonfmu):
from its own aircraft's state and the leader's (which reaches it through the
coupling), the setpoints of its aircraft's autopilot and the throttle that
hold a slot beside and behind the leader.

The law: the slot is `slot_back` metres behind the leader along its heading
and `slot_right` to its right, at its altitude. Across: the heading to hold is
the leader's, turned towards the slot over `lookahead` metres, the error
damped by how fast it closes. Along: the airspeed to fly is the leader's plus
a correction for the distance to the slot (at most 6 m/s), which the throttle
follows with a proportional and an integral term. The leader's altitude is
held. Flat earth over the few hundred metres of a formation. The gains were
tuned on the c172x and the manoeuvre in manoeuvre.py: the slot error stays
under 45 m after the join, the aircraft never closer than 35 m.
"""

import math

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real

EARTH = 6371000.0
DAMPING = 20.0  # s: the cross-track error's rate, weighed against the error
CLOSING = 0.04  # (m/s)/m: airspeed asked per metre from the slot
CLOSING_MAX = 6.0  # m/s
THROTTLE_P = 0.3  # per m/s of airspeed error
THROTTLE_I = 0.05  # per m of airspeed error integrated
THROTTLE_I_MAX = 0.4
STATE = ["latitude", "longitude", "altitude", "heading", "airspeed"]


class SlotKeeper(Fmi2Slave):
    author = "rfm-cosim"
    description = "A wingman's autopilot: holds a slot beside the leader from the leader's state"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.slot_back = 40.0
        self.slot_right = 40.0
        self.lookahead = 200.0
        self.trim = 0.6
        self.heading_cmd = 0.0
        self.altitude_cmd = 0.0
        self.throttle = self.trim
        self.slot_error = 0.0
        self.separation = 0.0
        self.integral = 0.0
        for name, unit, what in [
            ("slot_back", "m", "slot: behind the leader, along its heading"),
            ("slot_right", "m", "slot: right of the leader"),
            ("lookahead", "m", "how far ahead the cross-track error is closed"),
            ("trim", "1", "throttle at the leader's speed"),
        ]:
            self.register_variable(Real(name, causality=Fmi2Causality.parameter,
                                        variability=Fmi2Variability.fixed, description=f"{what} [{unit}]"))
        for who in ["own", "leader"]:
            for s in STATE:
                setattr(self, f"{who}_{s}", 0.0)
                self.register_variable(Real(f"{who}_{s}", causality=Fmi2Causality.input,
                                            description=f"{s} of the {who} aircraft"))
        for name, unit, what in [
            ("heading_cmd", "rad", "heading the aircraft's autopilot holds"),
            ("altitude_cmd", "m", "altitude the aircraft's autopilot holds"),
            ("throttle", "1", "throttle lever"),
            ("slot_error", "m", "horizontal distance from the slot"),
            ("separation", "m", "distance to the leader"),
        ]:
            self.register_variable(Real(name, causality=Fmi2Causality.output, description=f"{what} [{unit}]"))

    def do_step(self, current_time, step_size):
        if self.leader_airspeed <= 0.0:
            # No leader state yet (a coupling's outputs before its first
            # step are zeros): fly on as the aircraft flies.
            self.heading_cmd = self.own_heading
            self.altitude_cmd = self.own_altitude
            self.throttle = self.trim
            return True
        psi = self.leader_heading
        d_n = (self.own_latitude - self.leader_latitude) * EARTH
        d_e = (self.own_longitude - self.leader_longitude) * EARTH * math.cos(self.leader_latitude)
        d_h = self.own_altitude - self.leader_altitude
        off_n = -self.slot_back * math.cos(psi) - self.slot_right * math.sin(psi)
        off_e = -self.slot_back * math.sin(psi) + self.slot_right * math.cos(psi)
        e_n, e_e = d_n - off_n, d_e - off_e
        ahead = e_n * math.cos(psi) + e_e * math.sin(psi)
        right = -e_n * math.sin(psi) + e_e * math.cos(psi)
        closing = self.own_airspeed * math.sin(self.own_heading - psi)
        turn = max(-0.5, min(0.5, math.atan2(right + DAMPING * closing, self.lookahead)))
        self.heading_cmd = (psi - turn) % (2.0 * math.pi)
        self.altitude_cmd = self.leader_altitude
        wanted = self.leader_airspeed + max(-CLOSING_MAX, min(CLOSING_MAX, -CLOSING * ahead))
        error = wanted - self.own_airspeed
        self.integral = max(-THROTTLE_I_MAX, min(THROTTLE_I_MAX,
                                                 self.integral + THROTTLE_I * error * step_size))
        self.throttle = max(0.0, min(1.0, self.trim + THROTTLE_P * error + self.integral))
        self.slot_error = math.hypot(ahead, right)
        self.separation = math.sqrt(d_n * d_n + d_e * d_e + d_h * d_h)
        return True
