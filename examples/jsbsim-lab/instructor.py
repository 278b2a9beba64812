"""The instructor station's commands as an FMI 2.0 co-simulation FMU (built by
pythonfmu): a wind that rises at a chosen time. Its output goes, through the
ios node's coupling FMU, to the cockpit's JSBSim aircraft.
"""

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real


class Instructor(Fmi2Slave):
    author = "rfm-cosim"
    description = "An instructor station's commands: a wind from a chosen time"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.wind_at = 3.0
        self.wind = 15.0
        self.wind_speed = 0.0
        self.register_variable(Real("wind_at", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.fixed,
                                    description="when the wind rises [s]"))
        self.register_variable(Real("wind", causality=Fmi2Causality.parameter,
                                    variability=Fmi2Variability.fixed,
                                    description="the wind speed from then on [m/s]"))
        self.register_variable(Real("wind_speed", causality=Fmi2Causality.output,
                                    description="the wind commanded [m/s]"))

    def do_step(self, current_time, step_size):
        # In whole microseconds, as masters add their steps up differently.
        t = round((current_time + step_size) * 1e6)
        self.wind_speed = self.wind if t >= round(self.wind_at * 1e6) else 0.0
        return True
