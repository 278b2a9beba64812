"""The formation's flight, told: the slot error after the join, the closest
the two aircraft came, and a picture of both tracks (ground track, altitude)
and the slot error over time.

    report.py LEADER.json WINGMAN.json [--picture FILE.png] [--join SECONDS]

The logs are what fly.py writes for the leader and the wingman.
"""

import argparse
import json
import math

EARTH = 6371000.0
STEP = 0.008


def summary(leader, wingman, join):
    """(largest slot error after `join` seconds, or None for a flight that
    ended before it; smallest separation after the first step), from the
    wingman's log."""
    after = [e["own"]["slot_error"] for e in wingman if e["k"] * STEP >= join]
    closest = min(e["own"]["separation"] for e in wingman[1:])
    return (max(after) if after else None), closest


def picture(leader, wingman, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lat0, lon0 = leader[0]["sent"]["latitude"], leader[0]["sent"]["longitude"]

    def track(log, key):
        north = [(e[key]["latitude"] - lat0) * EARTH for e in log]
        east = [(e[key]["longitude"] - lon0) * EARTH * math.cos(lat0) for e in log]
        return east, north

    t_l = [e["k"] * STEP for e in leader]
    t_w = [e["k"] * STEP for e in wingman]
    fig, (ground, alt, err) = plt.subplots(1, 3, figsize=(15, 4.8))
    for log, key, name in [(leader, "sent", "leader"), (wingman, "own", "wingman")]:
        east, north = track(log, key)
        ground.plot(east, north, label=name)
    ground.set(title="ground track", xlabel="east [m]", ylabel="north [m]")
    ground.set_aspect("equal", adjustable="datalim")
    ground.legend()
    alt.plot(t_l, [e["sent"]["altitude"] for e in leader], label="leader")
    alt.plot(t_w, [e["own"]["altitude"] for e in wingman], label="wingman")
    alt.set(title="altitude", xlabel="time [s]", ylabel="height above sea level [m]")
    alt.legend()
    err.plot(t_w[1:], [e["own"]["slot_error"] for e in wingman[1:]])
    err.set(title="the wingman's distance from its slot", xlabel="time [s]",
            ylabel="slot error [m]")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("leader")
    p.add_argument("wingman")
    p.add_argument("--picture")
    p.add_argument("--join", type=float, default=30.0)
    args = p.parse_args()
    leader = json.load(open(args.leader))["steps"]
    wingman = json.load(open(args.wingman))["steps"]
    worst, closest = summary(leader, wingman, args.join)
    held = (f"after the join ({args.join:.0f} s) the wingman stayed within {worst:.1f} m of "
            f"its slot" if worst is not None else
            f"the flight ended before the join ({args.join:.0f} s): fly longer to see the "
            f"slot held")
    print(f"formation: {len(wingman)} steps of 8 ms; {held}; the aircraft came no closer "
          f"than {closest:.1f} m")
    if args.picture:
        picture(leader, wingman, args.picture)
        print(f"formation: picture in {args.picture}")


if __name__ == "__main__":
    main()
